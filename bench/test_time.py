#!/usr/bin/env python3
"""How long `make test` (or `make test-fast`) takes on this machine: wall time beside the CPU time it used.

    .venv/bin/python bench/test_time.py                  # one run of `make test`
    .venv/bin/python bench/test_time.py --runs 2         # median of two
    .venv/bin/python bench/test_time.py --fast           # `make test-fast`

The targets are at most 180 s wall on 2 cores for `make test`, under 60 s for `make test-fast`. CPU
time (user + system of every child process) is the baseline measured in the same run: it is what a
serial run could at best take, so wall / CPU shows what the parallel workers win.
"""

from __future__ import annotations

import argparse
import os
import resource
import statistics
import subprocess
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
TARGETS = {"test": 180, "test-fast": 59.999}


def one_run(target: str) -> tuple[float, float, str]:
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    started = time.perf_counter()
    proc = subprocess.run(["make", target], cwd=REPO, capture_output=True, text=True)
    wall = time.perf_counter() - started
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    summary = next((line for line in reversed(proc.stdout.splitlines()) if " passed" in line), "no pytest summary")
    if proc.returncode != 0:
        sys.exit(f"make {target} failed (exit {proc.returncode}):\n{proc.stdout[-3000:]}{proc.stderr[-2000:]}")
    return wall, cpu, summary.strip("= ")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--runs", type=int, default=1)
    parser.add_argument("--fast", action="store_true", help="time make test-fast instead")
    args = parser.parse_args()
    target = "test-fast" if args.fast else "test"
    limit = TARGETS[target]
    walls, cpus = [], []
    for number in range(1, args.runs + 1):
        wall, cpu, summary = one_run(target)
        walls.append(wall)
        cpus.append(cpu)
        print(f"run {number}: {wall:.0f} s wall, {cpu:.0f} s CPU ({summary})")
    wall, cpu = statistics.median(walls), statistics.median(cpus)
    verdict = "within" if wall <= limit else "OVER"
    print(
        f"make {target}: {wall:.1f} s wall (median of {args.runs}) for {cpu:.0f} s of CPU on {os.cpu_count()} "
        f"cores = {cpu / wall:.2f}x parallel; {verdict} the {TARGETS[target]:.0f} s target"
    )
    return 0 if wall <= limit else 1


if __name__ == "__main__":
    sys.exit(main())
