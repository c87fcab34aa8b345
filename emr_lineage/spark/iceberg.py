"""The Iceberg catalog of the sample pipeline's tables: its name and its Spark properties, spelled once.

The jobs name their tables ``<catalog>.<database>.<table>`` (:func:`table_name`), never a path, so the same
job code runs locally and on EMR; only the catalog's properties differ. Locally (``demo``, ``run-local``) it
is a Hadoop catalog (:func:`hadoop_catalog_properties`) whose warehouse is the lake directory, so a table of
database ``curated`` lives at ``<lake>/curated/<table>``, where a Glue database of that zone puts it on EMR.
The Iceberg runtime must be on the driver's classpath beside the listener (docs/listener.md): from
``spark.jars`` the listener cannot see Iceberg's classes and reports no Iceberg dataset.
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
