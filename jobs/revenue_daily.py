"""revenue_daily: ``<lake>/clean/orders_clean`` -> ``<lake>/curated/revenue_daily`` (daily revenue).

spark-submit revenue_daily.py --lake s3://my-lake-bucket
"""

from __future__ import annotations

import argparse
import sys

from pyspark.sql import DataFrame, SparkSession
from pyspark.sql import functions as F

APP_NAME = "revenue_daily"


def lake_path(lake: str, relative: str) -> str:
    return f"{lake.rstrip('/')}/{relative}"


def daily_revenue(orders: DataFrame) -> DataFrame:
    """Completed orders only: revenue, order count and distinct customers per day."""
    return (
        orders.where(F.col("status") == "completed")
        .groupBy("order_date")
        .agg(
            F.round(F.sum("order_value"), 2).alias("revenue"),
            F.count("order_id").alias("orders"),
            F.countDistinct("customer_id").alias("customers"),
        )
        .orderBy("order_date")
    )


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description="clean orders -> daily revenue")
    parser.add_argument("--lake", required=True, help="lake base URI: s3://bucket on EMR, a local directory here")
    args = parser.parse_args(argv)
    spark = SparkSession.builder.appName(APP_NAME).getOrCreate()
    try:
        orders = spark.read.parquet(lake_path(args.lake, "clean/orders_clean"))
        daily_revenue(orders).coalesce(1).write.mode("overwrite").parquet(lake_path(args.lake, "curated/revenue_daily"))
    finally:
        spark.stop()
    return 0


if __name__ == "__main__":
    sys.exit(main())
