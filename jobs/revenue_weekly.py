"""revenue_weekly: ``<lake>/curated/revenue_daily`` -> ``<lake>/curated/revenue_weekly`` (weekly revenue).

A reader downstream of ``revenue_daily``: the demo's ``schema-change`` scenario runs it after
``revenue_daily_v2`` changed that dataset's schema. It uses only the columns both versions have
(``order_date``, ``revenue``, ``orders``), so it runs on either.

    spark-submit revenue_weekly.py --lake s3://my-lake-bucket
"""

from __future__ import annotations

import argparse
import sys

from pyspark.sql import DataFrame, SparkSession
from pyspark.sql import functions as F

APP_NAME = "revenue_weekly"


def lake_path(lake: str, relative: str) -> str:
    return f"{lake.rstrip('/')}/{relative}"


def weekly_revenue(daily: DataFrame) -> DataFrame:
    """Revenue and orders per week (weeks start on Monday)."""
    return (
        daily.groupBy(F.date_trunc("week", F.col("order_date")).cast("date").alias("week_start"))
        .agg(F.sum("revenue").cast("double").alias("revenue"), F.sum("orders").alias("orders"))
        .orderBy("week_start")
    )


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description="daily revenue -> weekly revenue")
    parser.add_argument("--lake", required=True, help="lake base URI: s3://bucket on EMR, a local directory here")
    args = parser.parse_args(argv)
    spark = SparkSession.builder.appName(APP_NAME).getOrCreate()
    try:
        daily = spark.read.parquet(lake_path(args.lake, "curated/revenue_daily"))
        weekly_revenue(daily).coalesce(1).write.mode("overwrite").parquet(
            lake_path(args.lake, "curated/revenue_weekly")
        )
    finally:
        spark.stop()
    return 0


if __name__ == "__main__":
    sys.exit(main())
