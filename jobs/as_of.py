"""Read a job's Iceberg inputs at the snapshots an earlier run read: any job can use it.

    parser = argparse.ArgumentParser()
    as_of.add_options(parser)                      # --as-of-run RUN_ID, --pins FILE
    args = parser.parse_args()
    pins = as_of.pins(spark, args)                 # {} without --pins: every table as it is now
    orders = as_of.read_table(spark, "lakehouse.clean.orders_clean", pins)

FILE is what ``emr-lineage runs RUN_ID --pins > FILE`` writes from the lineage: that run's id and the
snapshot id of each Iceberg table it read, by catalog table name. ``--as-of-run`` names the run the
pins must be of (a guard against the wrong file). A local path or any URI Hadoop reads (``s3://`` on
EMR); it is read through Hadoop's file system, not a Spark job, so the pins file is no input in the
lineage. A table the pins do not name is read as it is now, with a warning on stderr.
"""

from __future__ import annotations

import argparse
import json
import sys
from typing import Any


def add_options(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--as-of-run", metavar="RUN_ID", help="read each input as this run read it (needs --pins)")
    parser.add_argument("--pins", metavar="FILE", help="the pins of --as-of-run: emr-lineage runs RUN_ID --pins > FILE")


def _read_text(spark: Any, uri: str) -> str:
    jvm = spark.sparkContext._jvm
    path = jvm.org.apache.hadoop.fs.Path(uri)
    stream = path.getFileSystem(spark.sparkContext._jsc.hadoopConfiguration()).open(path)
    try:
        return jvm.org.apache.commons.io.IOUtils.toString(stream, "UTF-8")
    finally:
        stream.close()


def pins(spark: Any, args: argparse.Namespace) -> dict[str, str]:
    """The snapshot id of each pinned table (catalog table name -> snapshot id); {} without ``--pins``."""
    if not args.pins:
        if args.as_of_run:
            raise SystemExit(f"error: --as-of-run {args.as_of_run} needs --pins FILE (emr-lineage runs RUN_ID --pins)")
        return {}
    try:
        document = json.loads(_read_text(spark, args.pins))
        run_id, tables = document["runId"], document["tables"]
    except Exception as exc:  # noqa: BLE001 - any unreadable file is one line, not a traceback
        java = getattr(exc, "java_exception", None)  # a Hadoop error through py4j: its own message, not the stack
        why = str(java.toString()) if java is not None else f"{type(exc).__name__}: {exc}"
        raise SystemExit(f"error: --pins {args.pins}: not a pins file ({why.splitlines()[0]})") from None
    if args.as_of_run and args.as_of_run != run_id:
        raise SystemExit(f"error: --pins {args.pins} pins run {run_id}, not --as-of-run {args.as_of_run}")
    return {str(table): str(snapshot) for table, snapshot in tables.items()}


def read_table(spark: Any, table: str, pinned: dict[str, str]) -> Any:
    """The table ``table`` at its pinned snapshot, else as it is now (a warning when other tables are pinned)."""
    if table in pinned:
        return spark.read.option("snapshot-id", pinned[table]).table(table)
    if pinned:
        print(f"warning: {table} is not pinned: read as it is now", file=sys.stderr)
    return spark.table(table)
