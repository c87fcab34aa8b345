"""The sample pipeline with its tables in Iceberg beside the same pipeline writing Parquet tables, in one run.

Generates the seeded data (default: the demo's 50,000 orders) into two work directories, then runs the five
jobs of ``jobs/`` there again and again, alternating the two variants, each job with ``spark-submit`` on local
Spark with the real listener writing events to a file (the demo's properties, ``emr_lineage.pipeline.demo``):

* iceberg: the demo as it is: orders_clean, revenue_daily and customer_ltv are tables of the Iceberg catalog
  ``lakehouse`` (a Hadoop catalog whose warehouse is the lake);
* parquet: the same job files given tables of Spark's session catalog (``default.<table>``, Parquet, a Derby
  metastore: ``spark.sql.catalogImplementation=hive``) instead.

Both have the same driver classpath (the listener and the Iceberg runtime) and run without the class archive
(its classes are those of the Iceberg variant). Derived zones, the catalogs and the events are wiped between
runs; the raw data is kept. Prints every run (seconds per job, the listener's events and their bytes, the
datasets that carry a version facet) and the medians of each variant.

Usage: .venv/bin/python bench/iceberg_tables.py [--rows 50000] [--pairs 2] [--work DIR]
"""

from __future__ import annotations

import argparse
import json
import shutil
import statistics
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

from emr_lineage.listener.maven import local_jars
from emr_lineage.pipeline.definition import DEFAULT_ROWS, TABLE_ZONES, local_tables
from emr_lineage.pipeline.demo import Lineage, generate_data, run_pipeline, spark_properties
from emr_lineage.pipeline.workdir import remove_paths
from emr_lineage.settings.loader import load_settings

# Written by the jobs: the zones (Iceberg's tables are in them), the session catalog, the events.
DERIVED = ("lake/clean", "lake/curated", "lake/models", "warehouse", "metastore_db", "events.jsonl", "spark.log")
VARIANTS = {
    "iceberg": ({}, local_tables()),
    "parquet": ({"spark.sql.catalogImplementation": "hive"}, {table: f"default.{table}" for table in TABLE_ZONES}),
}


@dataclass(frozen=True)
class Run:
    variant: str
    seconds: float
    jobs: dict[str, float]
    events: int
    event_bytes: int
    versioned: int  # input or output datasets of the events with a version facet


def one_run(work: Path, variant: str, lineage: Lineage) -> Run:
    """Run the pipeline once in ``work`` as ``variant``."""
    remove_paths(work, DERIVED)
    extra, tables = VARIANTS[variant]
    properties = {**spark_properties(work, lineage, lineage.iceberg_runtime), **extra}
    events = work / "events.jsonl"
    began = time.perf_counter()
    runs = run_pipeline(
        work / "lake", properties, log=work / "spark.log", events=events, class_archive=False, tables=tables
    )
    seconds = time.perf_counter() - began
    lines = events.read_text(encoding="utf-8").splitlines()
    versioned = sum(
        1
        for line in lines
        for side in ("inputs", "outputs")
        for dataset in json.loads(line).get(side, [])
        if "version" in dataset.get("facets", {})
    )
    jobs = {r.name: r.seconds for r in runs}
    return Run(variant, seconds, jobs, len(lines), events.stat().st_size, versioned)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, default=DEFAULT_ROWS)
    parser.add_argument("--pairs", type=int, default=2, help="iceberg/parquet pairs (runs = 2 * pairs)")
    parser.add_argument("--work", type=Path, default=None, help="work directory (default: a temp dir)")
    args = parser.parse_args(argv)

    settings = load_settings("dev")
    jars = local_jars(settings.versions)
    lineage = Lineage(openlineage=settings.openlineage, jar=jars.listener, iceberg_runtime=jars.iceberg_runtime)
    root = (args.work or Path(tempfile.mkdtemp(prefix="iceberg-tables-"))).resolve()
    for variant in VARIANTS:
        generate_data(root / variant / "lake", args.rows)
    print(f"{args.rows} orders, {args.pairs} pairs, work in {root}")
    runs: list[Run] = []
    for pair in range(args.pairs):
        order = list(VARIANTS) if pair % 2 == 0 else list(reversed(VARIANTS))  # neither always runs first
        for variant in order:
            run = one_run(root / variant, variant, lineage)
            runs.append(run)
            per_job = " ".join(f"{name}={seconds:.1f}" for name, seconds in run.jobs.items())
            print(
                f"{variant:8} {run.seconds:6.1f}s  {run.events} events, {run.event_bytes} bytes, "
                f"{run.versioned} datasets with a version  ({per_job})"
            )
    summary(runs)
    if not args.work:
        shutil.rmtree(root, ignore_errors=True)
    return 0


def summary(runs: list[Run]) -> None:
    """The medians of each variant, and Iceberg's against Parquet's."""
    medians = {}
    for variant in VARIANTS:
        mine = [run for run in runs if run.variant == variant]
        medians[variant] = (
            statistics.median(run.seconds for run in mine),
            statistics.median(run.events for run in mine),
            statistics.median(run.event_bytes for run in mine),
        )
        seconds, events, size = medians[variant]
        jobs = {name: statistics.median(run.jobs[name] for run in mine) for name in mine[0].jobs}
        per_job = " ".join(f"{name}={value:.1f}" for name, value in jobs.items())
        print(f"median {variant:8} {seconds:6.1f}s  {events:.0f} events, {size:.0f} bytes  ({per_job})")
    (ice_s, ice_n, ice_b), (pq_s, pq_n, pq_b) = medians["iceberg"], medians["parquet"]
    print(
        f"iceberg / parquet: time {ice_s / pq_s - 1:+.1%}, events {ice_n / pq_n - 1:+.1%}, "
        f"event bytes {ice_b / pq_b - 1:+.1%}"
    )


if __name__ == "__main__":
    raise SystemExit(main())
