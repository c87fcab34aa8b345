"""The Iceberg catalog's Spark properties (emr_lineage.spark.iceberg): one catalog name, its SQL extensions, a
Hadoop catalog's warehouse; and the classpath local runs put the runtime on."""

from __future__ import annotations

from emr_lineage.spark import iceberg
from emr_lineage.spark.conf import DRIVER_CLASSPATH, ListenerConfig, local_listener_properties


def test_a_hadoop_catalog_is_the_named_iceberg_catalog_with_its_warehouse_and_iceberg_s_sql() -> None:
    assert iceberg.hadoop_catalog_properties("/data/lake") == {
        "spark.sql.extensions": "org.apache.iceberg.spark.extensions.IcebergSparkSessionExtensions",
        "spark.sql.catalog.lakehouse": "org.apache.iceberg.spark.SparkCatalog",
        "spark.sql.catalog.lakehouse.type": "hadoop",
        "spark.sql.catalog.lakehouse.warehouse": "/data/lake",
    }


def test_another_kind_of_catalog_keeps_the_name_and_the_extensions() -> None:
    """What the EMR side builds on: the same catalog name with other options (Glue's, there)."""
    properties = iceberg.catalog_properties({"type": "glue", "warehouse": "s3://lake/"})
    assert properties[f"{iceberg.CATALOG_PROPERTY}.type"] == "glue"
    assert properties[iceberg.CATALOG_PROPERTY] == iceberg.SPARK_CATALOG_CLASS
    assert properties[iceberg.SQL_EXTENSIONS] == iceberg.EXTENSIONS


def test_a_table_is_named_in_the_catalog_by_database_and_name() -> None:
    assert iceberg.table_name("curated", "revenue_daily") == "lakehouse.curated.revenue_daily"


def test_the_runtime_goes_on_the_driver_s_classpath_after_the_listener() -> None:
    """Where the listener sees Iceberg's classes: beside it on the driver's classpath, not in spark.jars."""
    config = ListenerConfig(namespace="ns", timeout_ms=5000, events_file="/tmp/e.jsonl")
    properties = local_listener_properties(config, jar="/c/listener.jar", beside=["/c/iceberg.jar"])
    assert properties[DRIVER_CLASSPATH] == "/c/listener.jar:/c/iceberg.jar"
    assert "spark.jars" not in properties


def test_the_glue_catalog_is_the_named_catalog_with_glues_implementation_s3_io_its_warehouse_and_explicit_id() -> None:
    """EMR's: ``catalog-impl`` (the listener names a table by its Glue ARN only for that), never also ``type``
    (Iceberg refuses both); the catalog id explicit, as Hive's client gets it."""
    assert iceberg.glue_catalog_properties("s3://lake/curated/", catalog_id="123456789012") == {
        "spark.sql.extensions": "org.apache.iceberg.spark.extensions.IcebergSparkSessionExtensions",
        "spark.sql.catalog.lakehouse": "org.apache.iceberg.spark.SparkCatalog",
        "spark.sql.catalog.lakehouse.catalog-impl": "org.apache.iceberg.aws.glue.GlueCatalog",
        "spark.sql.catalog.lakehouse.io-impl": "org.apache.iceberg.aws.s3.S3FileIO",
        "spark.sql.catalog.lakehouse.warehouse": "s3://lake/curated/",
        "spark.sql.catalog.lakehouse.glue.id": "123456789012",
    }
