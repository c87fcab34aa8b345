"""Pure helpers of the plan reader: URI normalisation and node names."""

from __future__ import annotations

import pytest

from emr_lineage.spark.capture.facets import action_job_name
from emr_lineage.spark.capture.plan import OutputRef, QueryLineage, TableRef, normalize_uri, snake_case


@pytest.mark.parametrize(
    ("uri", "expected"),
    [
        ("file:/lake/models/m/stages/0_SQLTransformer_ab12/data", "file:/lake/models/m"),
        (
            "s3://bucket/models/order_value_model/stages/4_LinearRegression_9f/data/",
            "s3://bucket/models/order_value_model",
        ),
        ("file:/lake/clean/orders_clean/", "file:/lake/clean/orders_clean"),
        ("file:/lake/stages/data", "file:/lake/stages/data"),  # not an ML stage layout
    ],
)
def test_normalize_uri(uri, expected):
    assert normalize_uri(uri) == expected


@pytest.mark.parametrize(
    ("name", "expected"),
    [
        ("Execute InsertIntoHadoopFsRelationCommand", "execute_insert_into_hadoop_fs_relation_command"),
        ("CollectLimit", "collect_limit"),
        ("WriteToMicroBatchDataSourceV1", "write_to_micro_batch_data_source_v1"),
        ("ingest-orders app", "ingest_orders_app"),
        ("HDFSScan", "hdfs_scan"),
    ],
)
def test_snake_case(name, expected):
    assert snake_case(name) == expected


def test_action_job_name_suffix_is_last_two_path_parts_or_table():
    by_path = QueryLineage(
        "execute_insert_into_hadoop_fs_relation_command", [], [OutputRef("s3://b/curated/revenue_daily")]
    )
    assert action_job_name("revenue_daily", by_path) == (
        "revenue_daily.execute_insert_into_hadoop_fs_relation_command.curated_revenue_daily"
    )
    by_table = QueryLineage(
        "execute_create_data_source_table_as_select_command",
        [],
        [OutputRef("file:/w/customer_ltv", table=TableRef("default", "customer_ltv"))],
    )
    assert action_job_name("customer_ltv", by_table).endswith(".default_customer_ltv")
    assert action_job_name("train_model", QueryLineage("collect_limit", [], [])) == "train_model.collect_limit"
