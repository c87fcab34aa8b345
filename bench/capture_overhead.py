"""Overhead of the local lineage capture on the sample pipeline (capture on vs off).

Generates the seeded data once (default 1M orders), then runs the five jobs of ``jobs/`` again
and again, alternating capture on and off, each run in a fresh Python process with its own
local Spark driver (``local[2]``, as in the demo), so JVM start-up and warm-up are paid
equally. Derived zones, catalog and events are wiped between runs; the raw data is reused.
Prints every run (per-job seconds) and the median overhead: median(on) / median(off) - 1.
Target: <= 5 %.

Usage: .venv/bin/python bench/capture_overhead.py [--rows 1000000] [--pairs 3] [--work DIR]
"""

from __future__ import annotations

import argparse
import json
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from emr_lineage.pipeline.definition import PIPELINE
from emr_lineage.pipeline.demo import generate_data, run_pipeline, spark_defaults, stderr_to
from emr_lineage.pipeline.workdir import remove_paths

# Written by the jobs (the score_stream checkpoint lives under lake/curated).
DERIVED = ("lake/clean", "lake/curated", "lake/models", "warehouse", "metastore_db", "events.jsonl")


def one_run(work: Path, capture: bool) -> dict:
    """Run the pipeline once in this process; return per-job seconds and event count."""
    remove_paths(work, DERIVED)
    events = work / "events.jsonl"
    defaults = spark_defaults(work, events if capture else None, "bench")
    began = time.perf_counter()
    with stderr_to(work / "spark.log"):
        runs = run_pipeline(work / "lake", defaults, capture=capture)
    total = time.perf_counter() - began
    count = len(events.read_text().splitlines()) if events.exists() else 0
    return {
        "capture": capture,
        "total": total,
        "jobs": {r.name: r.seconds for r in runs},
        "events": count,
        "busy": sum(r.capture_busy_seconds for r in runs),
        "finish": sum(r.capture_finish_seconds for r in runs),
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, default=1_000_000)
    parser.add_argument("--pairs", type=int, default=3, help="on/off pairs (runs = 2 * pairs)")
    parser.add_argument("--work", type=Path, default=None, help="work directory (default: a temp dir)")
    parser.add_argument("--one-run", choices=["on", "off"], help=argparse.SUPPRESS)
    args = parser.parse_args(argv)

    if args.one_run:
        print(json.dumps(one_run(args.work, args.one_run == "on")))
        return 0

    work = args.work or Path(tempfile.mkdtemp(prefix="capture-overhead-"))
    work = work.resolve()
    began = time.perf_counter()
    generate_data(work / "lake", args.rows)
    print(f"generated {args.rows} orders in {time.perf_counter() - began:.1f}s under {work}")
    results: dict[bool, list[float]] = {True: [], False: []}
    busy: list[float] = []
    waits: list[float] = []
    header = (
        "run  capture  total_s  " + "  ".join(f"{name:>13}" for name in PIPELINE) + "  events  listener_s  stop_wait_s"
    )
    print(header)
    order = [False, True] * args.pairs  # alternating, so drift in machine load hits both
    for index, capture in enumerate(order, start=1):
        proc = subprocess.run(
            [sys.executable, __file__, "--one-run", "on" if capture else "off", "--work", str(work)],
            capture_output=True,
            text=True,
        )
        if proc.returncode != 0:
            print(f"run {index} failed:\n{proc.stdout}{proc.stderr}", file=sys.stderr)
            return 1
        run = json.loads(proc.stdout.strip().splitlines()[-1])
        results[capture].append(run["total"])
        jobs = "  ".join(f"{run['jobs'][name]:>13.1f}" for name in PIPELINE)
        print(
            f"{index:>3}  {'on ' if capture else 'off'}      {run['total']:>7.1f}  {jobs}  {run['events']:>6}"
            f"  {run['busy']:>10.2f}  {run['finish']:>11.2f}",
            flush=True,
        )
        if capture:
            busy.append(run["busy"])
            waits.append(run["finish"])
    on, off = statistics.median(results[True]), statistics.median(results[False])
    print(f"median pipeline time: capture off {off:.1f}s, capture on {on:.1f}s")
    print(f"median overhead ratio: {on / off:.3f} ({(on / off - 1) * 100:+.1f} %), target <= +5 %")
    # The capture's own cost, immune to machine-load noise: work on Spark's listener thread
    # (concurrent with the job) and time the job is blocked at spark.stop() (serial).
    print(
        f"capture work per pipeline (median): {statistics.median(busy):.2f}s on the listener thread, "
        f"{statistics.median(waits):.2f}s blocked at stop = {statistics.median(waits) / off * 100:.1f} % "
        f"of the capture-off time"
    )
    if not args.work:
        shutil.rmtree(work, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
