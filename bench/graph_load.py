"""Benchmark: `emr-lineage graph` and `validate` from an events file, end to end, beside the bare
decode of the same file, and the in-memory graph build, in one run.

The file holds the synthetic events of ``bench/graph_build.py`` (partial, redelivered, out of
order; about 1.4 KB an event), one JSON line each, written without holding the events in memory.
Measured in the same run, on the same file:

1. bare ``json.loads`` and bare ``orjson.loads`` of every line (what reading costs at the least);
2. ``emr-lineage graph --events FILE -o OUT`` and ``emr-lineage validate --contract C --events FILE``:
   the real CLI in a subprocess, with the OpenLineage schema checks (lenient), start-up and
   output included (validate's contract: see CONTRACT); the median wall time of ``--runs`` runs
   (the machine's speed varies by 10-25% from run to run; the fastest and slowest are printed
   too), CPU time and peak RSS (``os.wait4``: the largest process of the command, i.e. the CLI or
   its worker process; the largest of the runs);
3. ``build_graph`` over the same number of events held in memory (``graph_build.generate``),
   median of ``--repeat`` builds.

Targets (issue 14): graph and validate >= 100,000 events/s and within 5x of the bare orjson
decode; with ``--events-count 1000000`` under 15 s and under 1 GiB resident; the in-memory build
>= 200,000 events/s. Each figure is printed beside its target, met or not.

The schemas come from ``--schema-dir``, else ``$EMR_LINEAGE_SCHEMA_DIR``, else
``../shared/reference/openlineage/spec`` beside the checkout (the reference copy).

Usage: ``.venv/bin/python bench/graph_load.py [--events-count 200400] [--schema-dir DIR] [--runs 3] [--repeat 3]``
"""

from __future__ import annotations

import argparse
import gc
import json
import os
import random
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import orjson

sys.path.insert(0, str(Path(__file__).resolve().parent))

from graph_build import application_events, generate  # noqa: E402 - the events of the build benchmark

from emr_lineage.lineage.graph.from_events import build_graph  # noqa: E402

EVENTS_PER_APPLICATION = 1002  # 100 actions x 10 events + the application's START and COMPLETE
TARGET_RATE = 100_000
TARGET_RATIO = 5.0
TARGET_MILLION_SECONDS = 15.0
TARGET_RSS = 1 << 30
TARGET_BUILD_RATE = 200_000
# A contract of one job in a namespace of its own: every benchmark job is ignored (validate exits 1,
# the job is missing), so the figure is reading, checking, building and comparing, not printing
# 20,000 "unexpected" rows (what a contract of one application among many would do).
CONTRACT = """version: 1
description: the benchmark's validate run
level: application
namespace: emr-lineage-bench-contract
jobs:
  - name: app_0000
    inputs: [ "s3://bench-lake/app_0000/stage_0" ]
    outputs: [ "s3://bench-lake/app_0000/stage_100" ]
"""


def _event_lines(apps: int, seed: int = 7) -> Iterator[bytes]:
    """The lines of ``generate(apps, 100)``, in its order, one application in memory at a time."""
    rng = random.Random(seed)
    order = list(range(apps))
    rng.shuffle(order)
    for app_index in order:
        batch = application_events(app_index, 100)
        rng.shuffle(batch)
        for event in batch:
            yield json.dumps(event).encode() + b"\n"


def _decode_rate(path: Path, loads: Any) -> float:
    started = time.perf_counter()
    with path.open("rb") as lines:
        for line in lines:
            loads(line)
    return time.perf_counter() - started


def _run(command: list[str]) -> dict[str, Any]:
    """Run ``command``; its wall and CPU seconds, peak RSS (bytes) and exit status."""
    started = time.perf_counter()
    process = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    assert process.stderr is not None
    stderr = process.stderr.read()
    _, status, usage = os.wait4(process.pid, 0)
    process.returncode = os.waitstatus_to_exitcode(status)
    wall = time.perf_counter() - started
    return {
        "wall": wall,
        "cpu": usage.ru_utime + usage.ru_stime,
        "rss": usage.ru_maxrss * 1024,  # Linux reports KiB
        "status": process.returncode,
        "stderr": stderr.decode(errors="replace").strip(),
    }


def _schema_dir(given: str | None) -> str:
    if given:
        return given
    configured = os.environ.get("EMR_LINEAGE_SCHEMA_DIR")
    if configured:
        return configured
    return str(Path(__file__).resolve().parents[2] / "shared" / "reference" / "openlineage" / "spec")


def _verdict(ok: bool) -> str:
    return "met" if ok else "NOT met"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--events-count", type=int, default=200_400, help="about this many events (whole apps)")
    parser.add_argument("--schema-dir", default=None)
    parser.add_argument("--runs", type=int, default=3, help="runs of each CLI command (the median is reported)")
    parser.add_argument("--repeat", type=int, default=3, help="in-memory builds (the median is reported)")
    parser.add_argument("--skip-build", action="store_true", help="skip the in-memory build")
    args = parser.parse_args(argv)
    apps = max(1, round(args.events_count / EVENTS_PER_APPLICATION))
    count = apps * EVENTS_PER_APPLICATION
    schema_dir = _schema_dir(args.schema_dir)
    cli = str(Path(sys.executable).with_name("emr-lineage"))
    results: list[bool] = []
    with tempfile.TemporaryDirectory(prefix="emr-lineage-bench-") as tmp:
        path = Path(tmp) / "events.jsonl"
        with path.open("wb") as out:
            for line in _event_lines(apps):
                out.write(line)
        size = path.stat().st_size
        contract = Path(tmp) / "contract.yaml"
        contract.write_text(CONTRACT)
        print(
            f"machine: {os.cpu_count()} CPUs, load average {os.getloadavg()[0]:.1f}; Python {sys.version.split()[0]}; "
            f"file: {count:,} events, {size / 2**20:,.0f} MiB, {size / count:,.0f} bytes/event; schemas: {schema_dir}"
        )
        bare_json = _decode_rate(path, json.loads)
        bare_orjson = _decode_rate(path, orjson.loads)
        print(f"bare json.loads of each line:   {bare_json:6.2f}s = {count / bare_json:>9,.0f} events/s")
        print(f"bare orjson.loads of each line: {bare_orjson:6.2f}s = {count / bare_orjson:>9,.0f} events/s")
        start_up = _run([cli, "graph", "--help"])  # the command's own imports (subcommands load lazily)
        print(f"CLI start-up (emr-lineage graph --help): {start_up['wall']:.2f}s (included below)")

        commands = {
            "graph": [cli, "graph", "--events", str(path), "--schema-dir", schema_dir, "-o", str(Path(tmp) / "g.json")],
            # The runs' history too (issue 25): no target of its own, its cost beside graph's in the same run.
            "graph --with-runs": [
                cli,
                "graph",
                "--events",
                str(path),
                "--schema-dir",
                schema_dir,
                "--with-runs",
                "-o",
                str(Path(tmp) / "r.json"),
            ],
            "validate": [
                cli,
                "validate",
                "--contract",
                str(contract),
                "--events",
                str(path),
                "--schema-dir",
                schema_dir,
            ],
        }
        walls_of: dict[str, float] = {}
        for name, command in commands.items():
            runs = [_run(command) for _ in range(max(1, args.runs))]
            failed = next((run for run in runs if run["status"] not in (0, 1)), None)
            if failed is not None:
                print(f"{name}: exit {failed['status']}: {failed['stderr']}")
                return 2
            walls = sorted(run["wall"] for run in runs)
            wall, rss = statistics.median(walls), max(run["rss"] for run in runs)
            cpu = statistics.median(run["cpu"] for run in runs)
            rate, ratio = count / wall, wall / bare_orjson
            if name == "graph --with-runs":
                print(
                    f"{name} (median of {len(runs)}): {wall:6.2f}s = {rate:>9,.0f}/s, {wall / walls_of['graph']:.2f}x "
                    f"graph's time; CPU {cpu:.1f}s; peak RSS {rss / 2**20:,.0f} MiB; output "
                    f"{(Path(tmp) / 'r.json').stat().st_size / 2**20:,.1f} MiB (graph's "
                    f"{(Path(tmp) / 'g.json').stat().st_size / 2**20:,.1f} MiB) [no target]"
                )
                continue
            walls_of[name] = wall
            ok = rate >= TARGET_RATE and ratio <= TARGET_RATIO
            line = (
                f"{name} end to end (schema checks, exit {runs[0]['status']}, median of {len(runs)}): {wall:6.2f}s "
                f"= {rate:>9,.0f}/s ({count / walls[-1]:,.0f}-{count / walls[0]:,.0f}/s), {ratio:.1f}x the orjson "
                f"decode; CPU {cpu:.1f}s; peak RSS {rss / 2**20:,.0f} MiB "
                f"[target >= {TARGET_RATE:,}/s and <= {TARGET_RATIO:.0f}x: {_verdict(ok)}]"
            )
            run = {"wall": wall, "rss": rss}
            results.append(ok)
            if args.events_count >= 1_000_000:
                big_ok = run["wall"] < TARGET_MILLION_SECONDS and run["rss"] < TARGET_RSS
                line += f" [1M target < {TARGET_MILLION_SECONDS:.0f}s and < 1 GiB: {_verdict(big_ok)}]"
                results.append(big_ok)
            print(line)
    if not args.skip_build:
        events = generate(apps, 100)
        walls = []
        for _ in range(args.repeat):
            gc.collect()
            started = time.perf_counter()
            build_graph(events)
            walls.append(time.perf_counter() - started)
        rate = count / statistics.median(walls)
        ok = rate >= TARGET_BUILD_RATE
        results.append(ok)
        print(
            f"in-memory build_graph (median of {args.repeat}): {statistics.median(walls):.2f}s = {rate:,.0f} events/s "
            f"(best {count / min(walls):,.0f}/s) [target >= {TARGET_BUILD_RATE:,}/s: {_verdict(ok)}]"
        )
    print(f"load average at the end: {os.getloadavg()[0]:.1f}")
    return 0 if all(results) else 1


if __name__ == "__main__":
    sys.exit(main())
