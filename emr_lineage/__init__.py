"""emr-lineage: OpenLineage lineage for Spark on Amazon EMR, with Marquez."""

__version__ = "0.1.0"
