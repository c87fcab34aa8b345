"""Each job's transformation on small data, results checked (shared Spark session)."""

from __future__ import annotations

import argparse
import datetime as dt

import pytest
from pyspark.sql import functions as F

RAW = [
    # order_id, customer_id, order_ts, category, country, quantity, unit_price, discount, status
    ("O1", "C1", "2026-08-01 10:00:00", "Books", " us", "2", "10.00", "0.10", "completed"),
    ("O1", "C1", "2026-08-01 10:00:00", "Books", " us", "2", "10.00", "0.10", "completed"),  # duplicate
    ("O2", "C2", "2026-08-01 11:30:00", "toys", "DE", "1", "25.50", "", "completed"),
    ("O3", "C1", "2026-08-02 09:00:00", "grocery", "US", "3", "4.00", "0.00", "cancelled"),
    ("O4", "C3", "2026-08-02 12:00:00", "home", "FR", "", "55.00", "0.00", "completed"),  # no quantity
    ("O5", "C3", "2026-08-02 13:00:00", "home", "FR", "-1", "55.00", "0.00", "completed"),  # bad quantity
    ("O6", "C2", "2026-08-02 14:00:00", "home", "FR", "1", "n/a", "0.00", "completed"),  # bad price
    ("O7", "C2", "2026-08-02 15:00:00", "books", "FR", "1", "12.00", "0.00", "test"),  # test order
    ("O8", "C2", "2026-08-02 16:00:00", "sports", "GB", "4", "20.00", "0.25", "completed"),
]


@pytest.fixture(scope="module")
def clean(spark, job):
    ingest = job("ingest_orders")
    raw = spark.createDataFrame(RAW, ingest.RAW_COLUMNS)
    return ingest.clean_orders(raw).cache()


def test_ingest_types_dedupes_and_drops_bad_rows(clean):
    rows = {r.order_id: r for r in clean.collect()}
    assert sorted(rows) == ["O1", "O2", "O3", "O8"]
    o1 = rows["O1"]
    assert o1.order_ts == dt.datetime(2026, 8, 1, 10, 0) and o1.order_date == dt.date(2026, 8, 1)
    assert (o1.product_category, o1.country, o1.quantity) == ("books", "US", 2)
    assert o1.order_value == pytest.approx(18.0)
    assert rows["O2"].discount == 0.0 and rows["O2"].order_value == pytest.approx(25.5)
    assert rows["O8"].order_value == pytest.approx(60.0)
    types = dict(clean.dtypes)
    assert types["quantity"] == "int" and types["unit_price"] == "double" and types["order_date"] == "date"


def test_revenue_daily_sums_completed_orders_per_day(clean, job):
    daily = job("revenue_daily").daily_revenue(clean)
    assert [r.asDict() for r in daily.collect()] == [
        {"order_date": dt.date(2026, 8, 1), "revenue": 43.5, "orders": 2, "customers": 2},
        {"order_date": dt.date(2026, 8, 2), "revenue": 60.0, "orders": 1, "customers": 1},
    ]
    assert dict(daily.dtypes)["orders"] == "int"  # version 2 widens it to bigint


def test_revenue_daily_v2_has_the_evolved_columns(clean, job):
    daily = job("revenue_daily_v2").daily_revenue_v2(clean)
    assert [r.asDict() for r in daily.collect()] == [
        {"order_date": dt.date(2026, 8, 1), "revenue": 43.5, "orders": 2, "average_order_value": 21.75},
        {"order_date": dt.date(2026, 8, 2), "revenue": 60.0, "orders": 1, "average_order_value": 60.0},
    ]
    assert daily.dtypes == [
        ("order_date", "date"),
        ("revenue", "double"),
        ("orders", "bigint"),
        ("average_order_value", "double"),
    ]


def test_revenue_daily_v2_evolves_only_what_the_table_still_needs(job):
    evolution = job("revenue_daily_v2").evolution
    table = "lakehouse.curated.revenue_daily"
    version_1 = {"order_date": "date", "revenue": "double", "orders": "int", "customers": "bigint"}
    assert evolution(table, version_1) == [
        f"ALTER TABLE {table} ADD COLUMN average_order_value double",
        f"ALTER TABLE {table} DROP COLUMN customers",
        f"ALTER TABLE {table} ALTER COLUMN orders TYPE bigint",
    ]
    added = {**version_1, "average_order_value": "double"}  # a run that stopped after its first ALTER
    assert evolution(table, added) == [
        f"ALTER TABLE {table} DROP COLUMN customers",
        f"ALTER TABLE {table} ALTER COLUMN orders TYPE bigint",
    ]
    version_2 = {"order_date": "date", "revenue": "double", "orders": "bigint", "average_order_value": "double"}
    assert evolution(table, version_2) == []


def test_customer_ltv_writes_the_table_it_is_given(spark, clean, job):
    ltv = job("customer_ltv")
    spark.sql("CREATE DATABASE IF NOT EXISTS ltv_test")
    spark.sql("DROP TABLE IF EXISTS ltv_test.customer_ltv")
    table = ltv.build_customer_ltv(spark, clean, "ltv_test.customer_ltv")
    rows = {r.customer_id: r for r in table.collect()}
    assert sorted(rows) == ["C1", "C2"]  # C1's cancelled order does not count
    assert (rows["C2"].orders, rows["C2"].lifetime_value, rows["C2"].avg_order_value) == (2, 85.5, 42.75)
    assert rows["C2"].first_order_date == dt.date(2026, 8, 1) and rows["C2"].last_order_date == dt.date(2026, 8, 2)
    assert spark.catalog.tableExists("ltv_test.customer_ltv")
    again = ltv.build_customer_ltv(spark, clean.where("customer_id = 'C2'"), "ltv_test.customer_ltv")
    assert [r.customer_id for r in again.collect()] == ["C2"]  # each run replaces the table's content


@pytest.fixture(scope="module")
def generated(spark, job, tmp_path_factory):
    """Generated sample data, cleaned by ingest_orders, and the trained model saved like train_model."""
    lake = tmp_path_factory.mktemp("lake")
    job("generate_orders").generate(lake, 3000, seed=21)
    ingest = job("ingest_orders")
    orders = ingest.clean_orders(ingest.read_raw_orders(spark, str(lake / "raw/orders"))).cache()
    model = job("train_model").train(orders)
    model.write().overwrite().save(str(lake / "models/order_value_model"))
    return lake, orders, model


def test_train_model_predicts_order_value(generated):
    _, orders, model = generated
    scored = model.transform(orders.where("status = 'completed'"))
    error = scored.select(F.avg(F.abs(F.col("prediction") - F.col("order_value"))).alias("mae")).first().mae
    mean_value = orders.select(F.avg("order_value")).first()[0]
    assert error < 0.05 * mean_value


def test_score_stream_scores_every_valid_new_order(spark, generated, job, tmp_path):
    from pyspark.ml import PipelineModel

    lake, _, _ = generated
    score_stream = job("score_stream")
    model = PipelineModel.load(str(lake / "models/order_value_model"))
    args = argparse.Namespace(lake=str(lake), kafka_bootstrap=None, kafka_topic=None)
    scored = score_stream.score(model, score_stream.prepare_features(score_stream.read_order_stream(spark, args)))
    query = score_stream.write_scores(scored, str(tmp_path / "scores"), str(tmp_path / "checkpoint"))
    query.awaitTermination(120)
    assert not query.isActive
    result = spark.read.parquet(str(tmp_path / "scores"))
    raw = spark.read.option("header", "true").csv(str(lake / "raw/orders_stream"))
    valid = raw.where("cast(quantity as int) > 0 and cast(unit_price as double) > 0").count()
    assert result.count() == valid
    assert result.columns == ["order_id", "customer_id", "order_ts", "predicted_value"]
    joined = result.join(raw, "order_id").select(
        "predicted_value", (F.col("quantity") * F.col("unit_price") * (1 - F.col("discount"))).alias("value")
    )
    mae = joined.select(F.avg(F.abs(F.col("predicted_value") - F.col("value")))).first()[0]
    assert mae < 5.0
