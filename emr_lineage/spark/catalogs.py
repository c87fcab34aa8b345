"""The catalogs every Spark application of an environment gets on EMR, by configuration classification: the Glue
Data Catalog as Hive's metastore and as the Iceberg catalog :data:`~emr_lineage.spark.iceberg.CATALOG`.

One builder (:func:`catalog_configurations`) for the clusters' configurations (the launch spec and the
long-running cluster: :func:`emr_lineage.spark.conf.emr_configurations`) and the EMR Serverless application's
(stacks/emr/serverless.py). The catalog id is explicit everywhere: the listener then builds Glue names without
an STS call, which fails in private subnets without an STS endpoint (OpenLineage #4163).
"""

from __future__ import annotations

from emr_lineage.spark import iceberg

# EMR classifications (configuration API names).
SPARK_DEFAULTS = "spark-defaults"
SPARK_HIVE_SITE = "spark-hive-site"
# EMR on EC2 (6.5+) puts its Iceberg runtime on the nodes' Spark classpath, where the listener is; EMR Serverless
# has no such classification: https://docs.aws.amazon.com/emr/latest/ReleaseGuide/emr-iceberg-use-spark-cluster.html
ICEBERG_DEFAULTS = "iceberg-defaults"
ICEBERG_ENABLED = {"iceberg.enabled": "true"}
GLUE_CLIENT_FACTORY = "com.amazonaws.glue.catalog.metastore.AWSGlueDataCatalogHiveClientFactory"
# The catalog id the listener puts in Glue ARNs.
GLUE_ACCOUNT_PROPERTY = "spark.glue.accountId"


def glue_catalog_properties(catalog_id: str) -> tuple[dict[str, str], dict[str, str]]:
    """(spark-defaults, spark-hive-site) entries for the Glue Data Catalog ``catalog_id`` as Hive's metastore."""
    spark_defaults = {GLUE_ACCOUNT_PROPERTY: catalog_id}
    hive_site = {
        "hive.metastore.client.factory.class": GLUE_CLIENT_FACTORY,
        "hive.metastore.glue.catalogid": catalog_id,
    }
    return spark_defaults, hive_site


def catalog_configurations(*, glue_catalog_id: str, warehouse: str) -> dict[str, dict[str, str]]:
    """Classification -> properties: the Glue Data Catalog ``glue_catalog_id`` as Hive's metastore
    (:func:`glue_catalog_properties`) and as the Iceberg catalog whose warehouse is ``warehouse``
    (:func:`emr_lineage.spark.iceberg.glue_catalog_properties`)."""
    glue_defaults, hive_site = glue_catalog_properties(glue_catalog_id)
    return {
        SPARK_DEFAULTS: {**glue_defaults, **iceberg.glue_catalog_properties(warehouse, catalog_id=glue_catalog_id)},
        SPARK_HIVE_SITE: hive_site,
    }
