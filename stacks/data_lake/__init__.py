"""The data lake component: lake bucket, KMS key, Glue databases, Lake Formation settings."""

from stacks.data_lake.stack import DataLakeStack

__all__ = ["DataLakeStack"]
