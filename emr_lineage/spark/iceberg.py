"""The Iceberg catalog of the sample pipeline's tables: its name and its Spark properties, spelled once.

The jobs name their tables ``<catalog>.<database>.<table>`` (:func:`table_name`), never a path, so the same
job code runs locally and on EMR; only the catalog's properties differ. Locally (``demo``, ``run-local``) it
is a Hadoop catalog (:func:`hadoop_catalog_properties`) whose warehouse is the lake directory, so a table of
database ``curated`` lives at ``<lake>/curated/<table>``, where a Glue database of that zone puts it on EMR.
The Iceberg runtime must be on the driver's classpath beside the listener (docs/listener.md): from
``spark.jars`` the listener cannot see Iceberg's classes and reports no Iceberg dataset.
On EMR it is the Glue Data Catalog (:func:`glue_catalog_properties`) with EMR's own Iceberg runtime: on a
cluster's classpath by the ``iceberg-defaults`` classification, and in ``spark.jars`` of an EMR Serverless job
run (:data:`EMR_RUNTIME_JAR`), where the listener is in ``spark.jars`` too (emr_lineage.spark.conf).
Properties: https://iceberg.apache.org/docs/1.10.0/spark-configuration/#catalogs
"""

from __future__ import annotations

from collections.abc import Mapping

# The catalog's name in Spark; on EMR the same name will be the Glue catalog's.
CATALOG = "lakehouse"
SPARK_CATALOG_CLASS = "org.apache.iceberg.spark.SparkCatalog"
# MERGE INTO, ALTER TABLE ... ADD PARTITION FIELD, the procedures: Iceberg's SQL, beside Spark's.
EXTENSIONS = "org.apache.iceberg.spark.extensions.IcebergSparkSessionExtensions"
SQL_EXTENSIONS = "spark.sql.extensions"
CATALOG_PROPERTY = f"spark.sql.catalog.{CATALOG}"
# Iceberg's Glue catalog and S3 file IO (Iceberg's AWS module, in EMR's runtime):
# https://iceberg.apache.org/docs/1.10.0/aws/#glue-catalog
GLUE_CATALOG_CLASS = "org.apache.iceberg.aws.glue.GlueCatalog"
S3_FILE_IO_CLASS = "org.apache.iceberg.aws.s3.S3FileIO"
# EMR's Iceberg Spark runtime on every EMR Serverless worker, which a job run names in spark.jars:
# https://docs.aws.amazon.com/emr/latest/EMR-Serverless-UserGuide/using-iceberg.html
EMR_RUNTIME_JAR = "/usr/share/aws/iceberg/lib/iceberg-spark3-runtime.jar"


def table_name(database: str, table: str) -> str:
    """A table of the catalog as the jobs take it, e.g. ``lakehouse.curated.revenue_daily``."""
    return f"{CATALOG}.{database}.{table}"


def catalog_properties(options: Mapping[str, str]) -> dict[str, str]:
    """Spark properties that make :data:`CATALOG` an Iceberg catalog with ``options`` (``type``,
    ``warehouse``, ...), and load Iceberg's SQL extensions."""
    return {
        SQL_EXTENSIONS: EXTENSIONS,
        CATALOG_PROPERTY: SPARK_CATALOG_CLASS,
        **{f"{CATALOG_PROPERTY}.{key}": value for key, value in options.items()},
    }


def hadoop_catalog_properties(warehouse: str) -> dict[str, str]:
    """:func:`catalog_properties` of a Hadoop catalog (tables as directories, no metastore) in ``warehouse``:
    local runs, with the lake directory as the warehouse."""
    return catalog_properties({"type": "hadoop", "warehouse": warehouse})


def glue_catalog_properties(warehouse: str, *, catalog_id: str) -> dict[str, str]:
    """:func:`catalog_properties` of the Glue Data Catalog ``catalog_id`` (EMR): a table of a Glue database with a
    location (each zone's) lives there, ``<location>/<table>``, any other at ``<warehouse>/<database>.db/<table>``
    (Iceberg's GlueCatalog); S3FileIO writes them.

    ``catalog-impl``, not the ``type`` ``glue`` Iceberg also takes: the listener (1.53.0) names an Iceberg table by
    its Glue ARN only for a catalog whose ``catalog-impl`` ends in ``GlueCatalog`` (as Hive's otherwise). The catalog
    id explicit (``glue.id``), as for Hive's client (OpenLineage #4163: no STS call from private subnets).
    """
    return catalog_properties(
        {"catalog-impl": GLUE_CATALOG_CLASS, "io-impl": S3_FILE_IO_CLASS, "warehouse": warehouse, "glue.id": catalog_id}
    )
