"""Overhead of the real OpenLineage Spark listener on the sample pipeline (listener on vs off).

Generates the seeded data once (default 1M orders), then runs the five jobs of ``jobs/`` again and
again, alternating listener off and on, each job with ``spark-submit`` on local Spark (``local[2]``,
as ``emr-lineage demo`` runs them): on = the pinned jar on the driver's classpath and the listener writing
events to a file (the demo's properties), off = the same properties without the listener. Derived
zones, catalog and events are wiped between runs; the raw data is reused. Prints every run (seconds
per job) and the median overhead: median(on) / median(off) - 1. Target: <= 3 %. Both without the class
archive (emr_lineage.spark.class_archive), which exists for the listener's classpath only.

Then the listener's cost per Spark application, alone: a tiny application (1,000 rows written and read
back) run again and again, alternating without and with the listener; the difference of the medians
is what every application pays for the listener, whatever its data.

Usage: .venv/bin/python bench/listener_overhead.py [--rows 1000000] [--pairs 3] [--tiny-rounds 6] [--work DIR]
(``--pairs 0`` skips the pipeline.)
"""

from __future__ import annotations

import argparse
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path

from emr_lineage.listener.maven import local_jars
from emr_lineage.pipeline.definition import PIPELINE
from emr_lineage.pipeline.demo import Lineage, generate_data, run_pipeline, spark_properties
from emr_lineage.pipeline.workdir import remove_paths
from emr_lineage.settings.loader import load_settings
from emr_lineage.spark.local import run_script

# Written by the jobs (the score_stream checkpoint lives under lake/curated).
DERIVED = ("lake/clean", "lake/curated", "lake/models", "warehouse", "metastore_db", "events.jsonl", "spark.log")


def one_run(work: Path, lineage: Lineage, on: bool) -> tuple[float, dict[str, float], int]:
    """Run the pipeline once, with the listener when ``on``; return (total seconds, seconds per job, events
    written). The Iceberg runtime is on the classpath either way: the jobs' tables are Iceberg's."""
    remove_paths(work, DERIVED)
    events = work / "events.jsonl"
    began = time.perf_counter()
    properties = spark_properties(work, lineage if on else None, lineage.iceberg_runtime)
    runs = run_pipeline(work / "lake", properties, log=work / "spark.log", events=events, class_archive=False)
    total = time.perf_counter() - began
    return total, {r.name: r.seconds for r in runs}, sum(r.events for r in runs)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, default=1_000_000)
    parser.add_argument("--pairs", type=int, default=3, help="off/on pairs (runs = 2 * pairs)")
    parser.add_argument("--tiny-rounds", type=int, default=6, help="off/on rounds of the tiny application")
    parser.add_argument("--work", type=Path, default=None, help="work directory (default: a temp dir)")
    args = parser.parse_args(argv)

    settings = load_settings("dev")
    jars = local_jars(settings.versions)
    lineage = Lineage(openlineage=settings.openlineage, jar=jars.listener, iceberg_runtime=jars.iceberg_runtime)
    work = (args.work or Path(tempfile.mkdtemp(prefix="listener-overhead-"))).resolve()
    if args.pairs:
        pipeline(work, args.rows, args.pairs, lineage)
    if args.tiny_rounds:
        per_application(work, args.tiny_rounds, lineage)
    if not args.work:
        shutil.rmtree(work, ignore_errors=True)
    return 0


TINY = """
import sys
from pyspark.sql import SparkSession
spark = SparkSession.builder.appName("tiny").getOrCreate()
spark.range(1000).selectExpr("id", "id * 2 AS twice").write.mode("overwrite").parquet(sys.argv[1])
spark.read.parquet(sys.argv[1]).groupBy().sum("twice").collect()
spark.stop()
"""


def per_application(work: Path, rounds: int, lineage: Lineage) -> None:
    """Median seconds of a tiny application without and with the listener, alternating."""
    script = work / "tiny.py"
    script.write_text(TINY)
    properties = {on: spark_properties(work, lineage if on else None, lineage.iceberg_runtime) for on in (False, True)}
    times: dict[bool, list[float]] = {False: [], True: []}
    with (work / "tiny.log").open("ab") as log:
        for _ in range(rounds):
            for on in (False, True):
                began = time.perf_counter()
                status = run_script(
                    script, [str(work / "tiny")], properties[on], stdout=log, stderr=log, class_archive=False
                )
                times[on].append(time.perf_counter() - began)
                if status != 0:
                    raise SystemExit(f"the tiny application failed (exit status {status}); see {work / 'tiny.log'}")
    off, on = statistics.median(times[False]), statistics.median(times[True])
    print(f"tiny application, {rounds} rounds: without the listener {off:.2f}s, with it {on:.2f}s (median)")
    print(f"the listener's cost per application: {on - off:+.2f}s")


def pipeline(work: Path, rows: int, pairs: int, lineage: Lineage) -> None:
    began = time.perf_counter()
    generate_data(work / "lake", rows)
    print(f"generated {rows} orders in {time.perf_counter() - began:.1f}s under {work}; listener {lineage.jar}")
    print("run  listener  total_s  " + "  ".join(f"{name:>13}" for name in PIPELINE) + "  events")
    totals: dict[bool, list[float]] = {True: [], False: []}
    for index, on in enumerate([False, True] * pairs, start=1):  # alternating: load drift hits both
        total, jobs, events = one_run(work, lineage, on)
        totals[on].append(total)
        per_job = "  ".join(f"{jobs[name]:>13.1f}" for name in PIPELINE)
        print(f"{index:>3}  {'on ' if on else 'off'}       {total:>7.1f}  {per_job}  {events:>6}", flush=True)
    on, off = statistics.median(totals[True]), statistics.median(totals[False])
    print(f"median pipeline time: listener off {off:.1f}s, listener on {on:.1f}s")
    print(f"median overhead ratio: {on / off:.3f} ({(on / off - 1) * 100:+.1f} %), target <= +3 %")


if __name__ == "__main__":
    sys.exit(main())
