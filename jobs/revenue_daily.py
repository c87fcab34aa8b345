"""revenue_daily: the table ``orders_clean`` -> the table ``revenue_daily`` (daily revenue).

    spark-submit revenue_daily.py --orders-table lakehouse.clean.orders_clean \
        --revenue-table lakehouse.curated.revenue_daily
"""

from __future__ import annotations

import argparse
import sys

import as_of  # jobs/as_of.py, beside this file (--py-files on EMR)
from pyspark.sql import DataFrame, SparkSession
from pyspark.sql import functions as F

APP_NAME = "revenue_daily"


def daily_revenue(orders: DataFrame) -> DataFrame:
    """Completed orders only: revenue, order count and distinct customers per day."""
    return (
        orders.where(F.col("status") == "completed")
        .groupBy("order_date")
        .agg(
            F.round(F.sum("order_value"), 2).alias("revenue"),
            # An int (a day's count fits): revenue_daily_v2 widens it to bigint in place, a promotion Iceberg allows.
            F.count("order_id").cast("int").alias("orders"),
            F.countDistinct("customer_id").alias("customers"),
        )
        .orderBy("order_date")
    )


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description="clean orders -> daily revenue")
    parser.add_argument("--orders-table", required=True, help="the clean orders' table: catalog.database.table")
    parser.add_argument("--revenue-table", required=True, help="the daily revenue's table: catalog.database.table")
    as_of.add_options(parser)
    args = parser.parse_args(argv)
    spark = SparkSession.builder.appName(APP_NAME).getOrCreate()
    try:
        orders = as_of.read_table(spark, args.orders_table, as_of.pins(spark, args))
        daily_revenue(orders).coalesce(1).write.mode("overwrite").saveAsTable(args.revenue_table)
    finally:
        spark.stop()
    return 0


if __name__ == "__main__":
    sys.exit(main())
