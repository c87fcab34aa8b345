"""ingest_orders: raw CSV ``<lake>/raw/orders/`` -> the cleaned, typed Iceberg table ``orders_clean``.

Plain PySpark, one self-contained file (spark-submit it as is). The table is named, never a path: the
session's catalog (an Iceberg catalog, see docs/pipeline.md) decides where it lives.

    spark-submit ingest_orders.py --lake s3://my-lake-bucket --orders-table lakehouse.clean.orders_clean
"""

from __future__ import annotations

import argparse
import sys

from pyspark.sql import DataFrame, SparkSession
from pyspark.sql import functions as F

APP_NAME = "ingest_orders"
RAW_COLUMNS = [
    "order_id",
    "customer_id",
    "order_ts",
    "product_category",
    "country",
    "quantity",
    "unit_price",
    "discount",
    "status",
]
VALID_STATUSES = ["completed", "cancelled", "returned"]


def lake_path(lake: str, relative: str) -> str:
    return f"{lake.rstrip('/')}/{relative}"


def read_raw_orders(spark: SparkSession, path: str) -> DataFrame:
    # Everything as string first: the raw files are dirty and typing happens in clean_orders.
    schema = ", ".join(f"{name} STRING" for name in RAW_COLUMNS)
    return spark.read.option("header", "true").schema(schema).csv(path)


def clean_orders(raw: DataFrame) -> DataFrame:
    """Type the columns, drop unusable rows and duplicate deliveries, derive order_value."""
    typed = raw.select(
        F.trim("order_id").alias("order_id"),
        F.trim("customer_id").alias("customer_id"),
        F.to_timestamp("order_ts", "yyyy-MM-dd HH:mm:ss").alias("order_ts"),
        F.lower(F.trim("product_category")).alias("product_category"),
        F.upper(F.trim("country")).alias("country"),
        F.col("quantity").cast("int").alias("quantity"),
        F.col("unit_price").cast("double").alias("unit_price"),
        F.coalesce(F.col("discount").cast("double"), F.lit(0.0)).alias("discount"),
        F.lower(F.trim("status")).alias("status"),
    )
    valid = typed.where(
        F.col("order_id").isNotNull()
        & F.col("customer_id").isNotNull()
        & F.col("order_ts").isNotNull()
        & (F.col("quantity") > 0)
        & (F.col("unit_price") > 0)
        & F.col("status").isin(VALID_STATUSES)
    )
    return valid.dropDuplicates(["order_id"]).select(
        "order_id",
        "customer_id",
        "order_ts",
        F.to_date("order_ts").alias("order_date"),
        "product_category",
        "country",
        "quantity",
        "unit_price",
        "discount",
        F.round(F.col("quantity") * F.col("unit_price") * (1 - F.col("discount")), 2).alias("order_value"),
        "status",
    )


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description="raw orders CSV -> the clean orders table")
    parser.add_argument("--lake", required=True, help="lake base URI: s3://bucket on EMR, a local directory here")
    parser.add_argument("--orders-table", required=True, help="the clean orders' table: catalog.database.table")
    args = parser.parse_args(argv)
    spark = SparkSession.builder.appName(APP_NAME).getOrCreate()
    try:
        cleaned = clean_orders(read_raw_orders(spark, lake_path(args.lake, "raw/orders/")))
        cleaned.write.mode("overwrite").saveAsTable(args.orders_table)
    finally:
        spark.stop()
    return 0


if __name__ == "__main__":
    sys.exit(main())
