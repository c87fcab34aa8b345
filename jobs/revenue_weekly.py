"""revenue_weekly: the table ``revenue_daily`` -> ``<lake>/curated/revenue_weekly`` (weekly revenue, Parquet).

A reader downstream of ``revenue_daily``: the demo's ``schema-change`` scenario runs it after
``revenue_daily_v2`` evolved that table's schema. It uses only the columns both versions have
(``order_date``, ``revenue``, ``orders``: an int in version 1, a bigint in version 2), so it runs on either.

    spark-submit revenue_weekly.py --lake s3://my-lake-bucket --revenue-table lakehouse.curated.revenue_daily
"""

from __future__ import annotations

import argparse
import sys

import as_of  # jobs/as_of.py, beside this file (--py-files on EMR)
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
    parser.add_argument("--revenue-table", required=True, help="the daily revenue's table: catalog.database.table")
    as_of.add_options(parser)
    args = parser.parse_args(argv)
    spark = SparkSession.builder.appName(APP_NAME).getOrCreate()
    try:
        daily = as_of.read_table(spark, args.revenue_table, as_of.pins(spark, args))
        weekly_revenue(daily).coalesce(1).write.mode("overwrite").parquet(
            lake_path(args.lake, "curated/revenue_weekly")
        )
    finally:
        spark.stop()
    return 0


if __name__ == "__main__":
    sys.exit(main())
