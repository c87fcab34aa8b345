"""revenue_daily, version 2: the same job (application ``revenue_daily``) with a changed output schema.

The table ``orders_clean`` -> the table ``revenue_daily``, replacing what version 1 wrote. The demo's
``schema-change`` scenario runs it after the pipeline, so the lineage holds two runs of one job writing
one dataset with different schemas (``emr-lineage drift`` shows it):

* added: ``average_order_value`` (decimal(18,2));
* removed: ``customers``;
* retyped: ``revenue``, double -> decimal(18,2) (money as an exact decimal).

``order_date`` and ``orders`` are unchanged, so readers of those two keep working.

    spark-submit revenue_daily_v2.py --orders-table lakehouse.clean.orders_clean \
        --revenue-table lakehouse.curated.revenue_daily
"""

from __future__ import annotations

import argparse
import sys

from pyspark.sql import DataFrame, SparkSession
from pyspark.sql import functions as F

APP_NAME = "revenue_daily"  # a new version of the job, not a new job
MONEY = "decimal(18,2)"


def daily_revenue_v2(orders: DataFrame) -> DataFrame:
    """Completed orders only: revenue (decimal), order count and average order value per day."""
    return (
        orders.where(F.col("status") == "completed")
        .groupBy("order_date")
        .agg(
            F.sum("order_value").cast(MONEY).alias("revenue"),
            F.count("order_id").alias("orders"),
            F.avg("order_value").cast(MONEY).alias("average_order_value"),
        )
        .orderBy("order_date")
    )


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description="clean orders -> daily revenue (schema version 2)")
    parser.add_argument("--orders-table", required=True, help="the clean orders' table: catalog.database.table")
    parser.add_argument("--revenue-table", required=True, help="the daily revenue's table: catalog.database.table")
    args = parser.parse_args(argv)
    spark = SparkSession.builder.appName(APP_NAME).getOrCreate()
    try:
        orders = spark.table(args.orders_table)
        revenue = daily_revenue_v2(orders).coalesce(1)
        revenue.write.mode("overwrite").saveAsTable(args.revenue_table)
    finally:
        spark.stop()
    return 0


if __name__ == "__main__":
    sys.exit(main())
