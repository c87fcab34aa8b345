"""Benchmark: ``emr-lineage validate --marquez`` beside ``validate --events`` on the same events, one run.

The events are the sample pipeline's real ones (the 117 the OpenLineage Spark listener wrote, as a real
Marquez 0.51.1 was fed them: tests/emr_lineage/fixtures/marquez-0.51/events.jsonl.gz), copied with new run
ids and later times until ``--events-count`` is reached, so every copy is another run of the pipeline.
They go into the Marquez stand-in of the tests (tests/emr_lineage/marquez_standin: a real Marquez cannot
run on the development machines; the stand-in answers GET /api/v1/events/lineage as a real one does, in
Python, so its own time is part of what is measured) and into a JSON Lines file. Measured:

1. ``validate --contract jobs/lineage_contract.yaml --events FILE``, the real CLI, median of ``--runs``;
2. ``validate ... --marquez URL``, the same, reading the raw events back over HTTP;
3. the read alone: a process that only reads every page (``lineage.events.from_marquez.stored_events``).

Each command's wall time and CPU time (its own process's: the stand-in answers in this one), median of
``--runs``, and the stand-in's own time answering (what a Marquez does in Java on its own machine).

Target: the raw-events read is not the slow part of ``validate --marquez`` at 10,000 events: what reading
the events from Marquez costs the command beyond reading them from the file (its CPU, the same events
checked, built and compared either way) is less than half of its CPU.

Usage: ``.venv/bin/python bench/marquez_read.py [--events-count 10000] [--runs 3]``
"""

from __future__ import annotations

import argparse
import gzip
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
import uuid
from datetime import timedelta
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from emr_lineage.lineage.times import parse_time  # noqa: E402
from tests.emr_lineage import fake_marquez  # noqa: E402
from tests.emr_lineage.fake_marquez import FakeMarquez, serve  # noqa: E402

CORPUS = REPO / "tests/emr_lineage/fixtures/marquez-0.51/events.jsonl.gz"
CONTRACT = REPO / "jobs/lineage_contract.yaml"
LAKE = "lake=/lake-root/lake"


def copies(count: int) -> list[dict[str, Any]]:
    """``count`` events: the corpus again and again, each copy with run ids of its own, an hour later."""
    with gzip.open(CORPUS, "rt") as lines:
        corpus = [json.loads(line) for line in lines]
    events: list[dict[str, Any]] = []
    copy = 0
    while len(events) < count:
        text = "\n".join(json.dumps(e) for e in corpus)
        for run_id in {e["run"]["runId"] for e in corpus}:
            text = text.replace(run_id, str(uuid.uuid4()))
        for event in map(json.loads, text.splitlines()):
            moment = parse_time(event["eventTime"]) + timedelta(hours=copy)
            event["eventTime"] = moment.isoformat().replace("+00:00", "Z")
            events.append(event)
        copy += 1
    return events[:count]


def serving_time(marquez: FakeMarquez) -> list[float]:
    """The stand-in's own time answering (its model, and writing the JSON), summed from now on: a real
    Marquez answers in Java, on another machine."""
    total = [0.0]

    def timed(function: Any) -> Any:
        def run(*args: Any) -> Any:
            started = time.perf_counter()
            try:
                return function(*args)
            finally:
                total[0] += time.perf_counter() - started

        return run

    marquez.model.handle = timed(marquez.model.handle)  # type: ignore[method-assign]
    fake_marquez._encode = timed(fake_marquez._encode)
    return total


def timed(command: list[str], runs: int) -> tuple[float, float, int]:
    """(median wall seconds, median CPU seconds of the process, exit status) of ``command``."""
    walls, cpus, status = [], [], 0
    for _ in range(runs):
        started = time.perf_counter()
        process = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        _, code, usage = os.wait4(process.pid, 0)
        walls.append(time.perf_counter() - started)
        cpus.append(usage.ru_utime + usage.ru_stime)
        status = os.waitstatus_to_exitcode(code)
    return statistics.median(walls), statistics.median(cpus), status


READ_ONLY = (
    "import sys; from emr_lineage.marquez.client import MarquezClient; "
    "from emr_lineage.lineage.events.from_marquez import stored_events; "
    "n = sum(1 for _ in stored_events(MarquezClient(sys.argv[1], timeout=120))); assert n > 0"
)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--events-count", type=int, default=10_000)
    parser.add_argument("--runs", type=int, default=3)
    args = parser.parse_args(argv)
    cli = str(Path(sys.executable).with_name("emr-lineage"))
    events = copies(args.events_count)
    server = serve(FakeMarquez())
    marquez = next(server)
    started = time.perf_counter()
    marquez.store(events)
    print(f"{len(events):,} events in the stand-in ({time.perf_counter() - started:.1f}s to POST them)")
    served = serving_time(marquez)
    with tempfile.TemporaryDirectory(prefix="emr-lineage-bench-") as tmp:
        path = Path(tmp) / "events.jsonl"
        path.write_text("".join(json.dumps(e) + "\n" for e in events))
        base = [cli, "validate", "--contract", str(CONTRACT), "--var", LAKE]
        file_wall, file_cpu, file_status = timed([*base, "--events", str(path)], args.runs)
        served[0] = 0.0
        marquez_wall, marquez_cpu, marquez_status = timed(
            [*base, "--marquez", marquez.url, "--timeout", "120"], args.runs
        )
        serving = served[0] / args.runs
    read_wall, read_cpu, _ = timed([sys.executable, "-c", READ_ONLY, marquez.url], args.runs)
    server.close()
    n = len(events)
    rate = n / file_wall
    print(f"validate --events:  {file_wall:.2f}s = {rate:,.0f} events/s, CPU {file_cpu:.2f}s (exit {file_status})")
    print(
        f"validate --marquez: {marquez_wall:.2f}s = {n / marquez_wall:,.0f} events/s, CPU {marquez_cpu:.2f}s "
        f"(exit {marquez_status}); the stand-in answering it (model, JSON; Marquez's own work): {serving:.2f}s"
    )
    print(f"  --marquez / --events: {marquez_wall / file_wall:.2f}x the time, {marquez_cpu / file_cpu:.2f}x the CPU")
    print(f"the raw-events read alone (a process that only reads them): {read_wall:.2f}s, CPU {read_cpu:.2f}s")
    extra = (marquez_cpu - file_cpu) / marquez_cpu
    verdict = "met" if extra < 0.5 else "NOT met"
    print(
        f"  reading over HTTP instead of a file: {extra:.0%} of validate --marquez's CPU "
        f"[target: not the slow part (< 50%): {verdict}]; the rest of its time waits on the stand-in"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
