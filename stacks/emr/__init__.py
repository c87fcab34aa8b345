"""The EMR component: artifacts bucket, roles, security, Lake Formation grants and launch spec."""

from stacks.emr.stack import EmrStack

__all__ = ["EmrStack"]
