"""Time the foundation workflows: setup from a fresh clone, a second setup, synth per env.

    .venv/bin/python bench/foundation_times.py [--runs 3] [--skip-setup]

Clones the current checkout (HEAD) into a temporary directory, so what is measured is what a
platform engineer gets from `git clone`. Package downloads come from the local pip/npm caches
when they are warm; the report says so. Prints one line per run and the medians.
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent


def timed(cmd: list[str], cwd: Path) -> float:
    start = time.perf_counter()
    result = subprocess.run(cmd, cwd=cwd, capture_output=True, text=True)
    elapsed = time.perf_counter() - start
    if result.returncode != 0:
        sys.exit(
            f"{' '.join(cmd)} failed in {cwd} (exit {result.returncode}):\n"
            f"{result.stdout[-2000:]}{result.stderr[-2000:]}"
        )
    return elapsed


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=3, help="synth runs per environment (default 3)")
    parser.add_argument("--skip-setup", action="store_true", help="time synth in this checkout only")
    args = parser.parse_args()

    with tempfile.TemporaryDirectory(prefix="emr-lineage-bench-", dir=REPO.parent) as tmp:
        if args.skip_setup:
            checkout = REPO
        else:
            checkout = Path(tmp) / "clone"
            subprocess.run(["git", "clone", "--quiet", str(REPO), str(checkout)], check=True)
            first = timed(["make", "setup"], checkout)
            print(f"make setup, fresh clone (pip/npm caches warm): {first:.1f} s")
            second = timed(["make", "setup"], checkout)
            print(f"make setup, second run: {second:.2f} s")
        for env in ("dev", "prod"):
            runs = [timed(["make", "synth", f"ENV={env}"], checkout) for _ in range(args.runs)]
            print(
                f"make synth ENV={env}: "
                + ", ".join(f"{r:.1f}" for r in runs)
                + f" s; median {statistics.median(runs):.1f} s"
            )


if __name__ == "__main__":
    main()
