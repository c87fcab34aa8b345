"""customer_ltv: Spark SQL over ``<lake>/clean/orders_clean`` creating the catalog table ``customer_ltv``.

The table lives in the session's catalog: the Glue Data Catalog on EMR (Hive support with the
Glue client factory), a local Derby metastore + warehouse directory when run locally.

    spark-submit customer_ltv.py --lake s3://my-lake-bucket [--database analytics]
"""

from __future__ import annotations

import argparse
import re
import sys

from pyspark.sql import DataFrame, SparkSession

APP_NAME = "customer_ltv"
TABLE = "customer_ltv"

LTV_SQL = """
CREATE TABLE {table} USING parquet AS
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


def lake_path(lake: str, relative: str) -> str:
    return f"{lake.rstrip('/')}/{relative}"


def build_customer_ltv(spark: SparkSession, orders: DataFrame, database: str = "default") -> DataFrame:
    """(Re)create ``<database>.customer_ltv`` from the orders and return the table."""
    if not re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*", database):
        raise ValueError(f"--database must be a plain identifier, got {database!r}")
    table = f"{database}.{TABLE}"
    orders.createOrReplaceTempView("orders_clean")
    spark.sql(f"CREATE DATABASE IF NOT EXISTS {database}")
    spark.sql(f"DROP TABLE IF EXISTS {table}")
    spark.sql(LTV_SQL.format(table=table))
    return spark.table(table)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description="clean orders -> catalog table customer_ltv")
    parser.add_argument("--lake", required=True, help="lake base URI: s3://bucket on EMR, a local directory here")
    parser.add_argument("--database", default="default", help="catalog database of the table (default: default)")
    args = parser.parse_args(argv)
    spark = SparkSession.builder.appName(APP_NAME).enableHiveSupport().getOrCreate()
    try:
        orders = spark.read.parquet(lake_path(args.lake, "clean/orders_clean"))
        build_customer_ltv(spark, orders, args.database)
    finally:
        spark.stop()
    return 0


if __name__ == "__main__":
    sys.exit(main())
