"""emr_lineage.spark.catalogs: the Glue Data Catalog as Hive's metastore and as the Iceberg catalog, one builder for
the clusters and the EMR Serverless application."""

from __future__ import annotations

from emr_lineage.spark import iceberg
from emr_lineage.spark.catalogs import GLUE_CLIENT_FACTORY, catalog_configurations, glue_catalog_properties


def test_the_catalogs_are_glues_for_hive_and_for_the_iceberg_catalog_under_one_explicit_catalog_id() -> None:
    catalogs = catalog_configurations(glue_catalog_id="123456789012", warehouse="s3://lake/curated/")
    glue_defaults, hive_site = glue_catalog_properties("123456789012")
    glue_iceberg = iceberg.glue_catalog_properties("s3://lake/curated/", catalog_id="123456789012")
    assert catalogs == {"spark-defaults": {**glue_defaults, **glue_iceberg}, "spark-hive-site": hive_site}
    defaults = catalogs["spark-defaults"]
    # The listener's Glue ARNs, Hive's client and Iceberg's: no STS call to find the account (OpenLineage #4163).
    assert defaults["spark.glue.accountId"] == defaults[f"{iceberg.CATALOG_PROPERTY}.glue.id"] == "123456789012"
    assert hive_site == {
        "hive.metastore.client.factory.class": GLUE_CLIENT_FACTORY,
        "hive.metastore.glue.catalogid": "123456789012",
    }
