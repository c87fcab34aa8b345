"""revenue_daily, version 2: the same job (application ``revenue_daily``), evolving its table's schema in place.

The table ``orders_clean`` -> the table ``revenue_daily``. The demo's ``schema-change`` scenario runs it after
the pipeline, so the lineage holds two runs of one job writing one dataset with different schemas
(``emr-lineage drift`` shows it). It changes the schema of the Iceberg table version 1 wrote with Iceberg's DDL
through Spark SQL (each statement a commit of the table's metadata, no data file rewritten), then overwrites
the table's rows: a new snapshot of the same table, whose history keeps version 1's snapshot and schema.

* added: ``average_order_value`` (double, rounded to cents as ``revenue`` is);
* removed: ``customers``;
* retyped: ``orders``, int -> bigint. Iceberg changes a column's type in place only by a promotion (int ->
  bigint, float -> double, a decimal's precision widened), so ``revenue`` stays a double.

``order_date`` and ``revenue`` are unchanged and ``orders`` only widened, so their readers keep working.
Each statement runs only while the table still needs it: a rerun evolves nothing twice.

    spark-submit revenue_daily_v2.py --orders-table lakehouse.clean.orders_clean \
        --revenue-table lakehouse.curated.revenue_daily
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Mapping

import as_of  # jobs/as_of.py, beside this file (--py-files on EMR)
from pyspark.sql import DataFrame, SparkSession
from pyspark.sql import functions as F

APP_NAME = "revenue_daily"  # a new version of the job, not a new job
# Version 2's schema change, column -> Spark SQL type.
ADDED = {"average_order_value": "double"}
REMOVED = ("customers",)
WIDENED = {"orders": "bigint"}


def evolution(table: str, columns: Mapping[str, str]) -> list[str]:
    """The DDL that turns ``table``, whose columns are ``columns`` (name -> Spark SQL type, e.g. ``int``), into
    version 2's schema: only the statements it still needs."""
    statements = [
        f"ALTER TABLE {table} ADD COLUMN {name} {kind}" for name, kind in ADDED.items() if name not in columns
    ]
    statements += [f"ALTER TABLE {table} DROP COLUMN {name}" for name in REMOVED if name in columns]
    statements += [
        f"ALTER TABLE {table} ALTER COLUMN {name} TYPE {kind}"
        for name, kind in WIDENED.items()
        if columns.get(name, kind) != kind
    ]
    return statements


def daily_revenue_v2(orders: DataFrame) -> DataFrame:
    """Completed orders only: revenue, order count and average order value per day."""
    return (
        orders.where(F.col("status") == "completed")
        .groupBy("order_date")
        .agg(
            F.round(F.sum("order_value"), 2).alias("revenue"),
            F.count("order_id").alias("orders"),
            F.round(F.avg("order_value"), 2).alias("average_order_value"),
        )
        .orderBy("order_date")
    )


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description="clean orders -> daily revenue (schema version 2)")
    parser.add_argument("--orders-table", required=True, help="the clean orders' table: catalog.database.table")
    parser.add_argument("--revenue-table", required=True, help="the daily revenue's table: catalog.database.table")
    as_of.add_options(parser)
    args = parser.parse_args(argv)
    spark = SparkSession.builder.appName(APP_NAME).getOrCreate()
    try:
        pinned = as_of.pins(spark, args)  # before any change: a bad pins file leaves the table as it is
        columns = {f.name: f.dataType.simpleString() for f in spark.table(args.revenue_table).schema.fields}
        for statement in evolution(args.revenue_table, columns):
            spark.sql(statement)
        revenue = daily_revenue_v2(as_of.read_table(spark, args.orders_table, pinned)).coalesce(1)
        # Overwrite the evolved table's rows (a new snapshot); saveAsTable would replace the table, schema and all.
        revenue.writeTo(args.revenue_table).overwrite(F.lit(True))
    finally:
        spark.stop()
    return 0


if __name__ == "__main__":
    sys.exit(main())
