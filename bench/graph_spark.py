"""Benchmark: the lineage graph on Spark (``emr-lineage graph --spark local[2]``'s job) beside the local
loader (``emr-lineage graph --events``: ``build_graph_streamed`` with its second process), on the same
generated events file, in one run.

The file holds the events of ``bench/graph_load.py`` (``bench/graph_build.py``'s generator: partial,
redelivered, out of order; one JSON line each). Measured, each side ``--runs`` times (median):

1. the local loader: ``emr-lineage graph --events FILE -o OUT`` in a subprocess (start-up and output
   included), wall time and peak RSS;
2. the Spark job on ``local[2]`` (2 executor cores), run by ``spark-submit`` as the CLI runs it: its wall
   time (JVM start-up and stop included), and from the job's report the seconds of the build (read,
   decode, check and merge in the partitions; merge and assembly on the driver; output), the driver's
   (Python) peak RSS and the graph's node count.

Both outputs must be the same bytes. Printed: events/s of each side, the Spark job's events per
executor core per second (the build seconds), and the driver's peak RSS per million graph nodes: the
sizing rule of docs/graph.md ("The graph on Spark").

Usage: ``.venv/bin/python bench/graph_spark.py [--events-count 1000000] [--runs 1]``
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

from graph_load import EVENTS_PER_APPLICATION, _event_lines, _run  # noqa: E402 - the load benchmark's file

from emr_lineage.cli.graph_job import GraphJob, job_script  # noqa: E402
from emr_lineage.spark.local import run_script  # noqa: E402

CORES = 2


def _spark_run(events: Path, output: Path, report: Path) -> dict[str, Any]:
    """The job on local[2] as ``graph --spark local[2]`` runs it: wall seconds and the job's report."""
    args = GraphJob(events=(str(events),)).arguments(str(output), str(report))
    properties = {"spark.master": f"local[{CORES}]", "spark.app.name": "emr_lineage_graph"}
    started = time.perf_counter()
    with (output.parent / "spark.log").open("wb") as log:
        status = run_script(job_script(), args, properties, stdout=log, stderr=log)
    wall = time.perf_counter() - started
    if status != 0:
        raise SystemExit(f"the Spark job failed (exit {status}); see {output.parent / 'spark.log'}")
    return {"wall": wall, **json.loads(report.read_text())}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--events-count", type=int, default=1_000_000, help="about this many events (whole apps)")
    parser.add_argument("--runs", type=int, default=1, help="runs of each side (the median is reported)")
    args = parser.parse_args(argv)
    apps = max(1, round(args.events_count / EVENTS_PER_APPLICATION))
    count = apps * EVENTS_PER_APPLICATION
    cli = str(Path(sys.executable).with_name("emr-lineage"))
    with tempfile.TemporaryDirectory(prefix="emr-lineage-bench-spark-") as tmp:
        path = Path(tmp) / "events.jsonl"
        with path.open("wb") as out:
            out.writelines(_event_lines(apps))
        size = path.stat().st_size
        print(
            f"machine: {os.cpu_count()} CPUs, load average {os.getloadavg()[0]:.1f}; Python {sys.version.split()[0]}; "
            f"file: {count:,} events, {size / 2**20:,.0f} MiB"
        )
        local_out, spark_out = Path(tmp) / "local.json", Path(tmp) / "spark.json"
        local = [_run([cli, "graph", "--events", str(path), "-o", str(local_out)]) for _ in range(args.runs)]
        if any(run["status"] for run in local):
            print(f"local loader failed: {local[0]['stderr']}")
            return 2
        spark = [_spark_run(path, spark_out, Path(tmp) / "report.json") for _ in range(args.runs)]
        same = local_out.read_bytes() == spark_out.read_bytes()
        local_wall = statistics.median(run["wall"] for run in local)
        spark_wall = statistics.median(run["wall"] for run in spark)
        build = statistics.median(run["seconds"]["build"] for run in spark)
        in_parts = statistics.median(run["seconds"]["partitions"] for run in spark)
        merge = statistics.median(run["seconds"]["merge"] for run in spark)
        rss, nodes = max(run["driver_peak_rss"] for run in spark), spark[0]["nodes"]
        grown = max(run["driver_peak_rss"] - run["driver_rss_at_start"] for run in spark)
        print(
            f"local loader (graph --events, 2 processes): {local_wall:6.2f}s = {count / local_wall:>9,.0f} events/s; "
            f"peak RSS {max(run['rss'] for run in local) / 2**20:,.0f} MiB"
        )
        print(
            f"Spark job on local[{CORES}] (spark-submit, JVM start and stop included): {spark_wall:6.2f}s = "
            f"{count / spark_wall:>9,.0f} events/s; build alone {build:.2f}s = {count / build:,.0f} events/s; "
            f"{spark[0]['parts']} partitions: {in_parts:.2f}s in the partitions = "
            f"{count / in_parts / CORES:,.0f} events per executor core per second, then {merge:.2f}s merging "
            "and assembling on the driver"
        )
        print(
            f"driver (Python) peak RSS {rss / 2**20:,.0f} MiB ({grown / 2**20:,.0f} MiB over its start-up) for "
            f"{nodes:,} graph nodes = {grown / 2**20 / (nodes / 1e6):,.0f} MiB per million nodes over start-up; "
            f"same graph bytes as the local loader: {same}"
        )
    print(f"load average at the end: {os.getloadavg()[0]:.1f}")
    return 0 if same else 1


if __name__ == "__main__":
    sys.exit(main())
