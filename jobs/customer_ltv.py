"""customer_ltv: Spark SQL over the table ``orders_clean`` creating the table ``customer_ltv``.

Both are named, never paths: Iceberg tables of the session's catalog (the Glue Data Catalog on EMR,
a Hadoop catalog in the lake directory when run locally; docs/pipeline.md). Each run replaces the
table's content with a new snapshot.

    spark-submit customer_ltv.py --orders-table lakehouse.clean.orders_clean --ltv-table lakehouse.curated.customer_ltv
"""

from __future__ import annotations

import argparse
import sys

import as_of  # jobs/as_of.py, beside this file (--py-files on EMR)
from pyspark.sql import DataFrame, SparkSession

APP_NAME = "customer_ltv"

LTV_SQL = """
SELECT customer_id,
       COUNT(order_id)              AS orders,
       ROUND(SUM(order_value), 2)   AS lifetime_value,
       ROUND(AVG(order_value), 2)   AS avg_order_value,
       MIN(order_date)              AS first_order_date,
       MAX(order_date)              AS last_order_date
FROM orders_clean
WHERE status = 'completed'
GROUP BY customer_id
"""


def build_customer_ltv(spark: SparkSession, orders: DataFrame, table: str) -> DataFrame:
    """(Re)write the table ``table`` from the orders and return it."""
    orders.createOrReplaceTempView("orders_clean")
    spark.sql(LTV_SQL).write.mode("overwrite").saveAsTable(table)
    return spark.table(table)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description="clean orders -> the customer_ltv table")
    parser.add_argument("--orders-table", required=True, help="the clean orders' table: catalog.database.table")
    parser.add_argument("--ltv-table", required=True, help="the customer LTV table: catalog.database.table")
    as_of.add_options(parser)
    args = parser.parse_args(argv)
    spark = SparkSession.builder.appName(APP_NAME).getOrCreate()
    try:
        orders = as_of.read_table(spark, args.orders_table, as_of.pins(spark, args))
        build_customer_ltv(spark, orders, args.ltv_table)
    finally:
        spark.stop()
    return 0


if __name__ == "__main__":
    sys.exit(main())
