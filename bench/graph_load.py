"""Benchmark: `emr-lineage graph --events FILE` end to end, beside the bare JSON decode of the same file.

The file holds the synthetic events of ``bench/graph_build.py`` (partial, duplicated, out of
order), one JSON line each. Measured in the same run, on the same file:

1. baseline: ``json.loads`` of every line (what reading the file costs at the least);
2. ``load_events`` with the OpenLineage schema checks (lenient mode), then ``build_graph``:
   what the ``graph`` and ``validate`` commands do before printing.

The schemas come from ``--schema-dir`` / ``EMR_LINEAGE_SCHEMA_DIR`` / the user cache (see
``emr-lineage schemas fetch``); without them only structural checks run, which the output says.

Usage: ``.venv/bin/python bench/graph_load.py [--apps 200] [--actions 100] [--schema-dir DIR]``
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from graph_build import generate  # noqa: E402 - the same synthetic events as the build benchmark

from emr_lineage.lineage.events import load_events  # noqa: E402
from emr_lineage.lineage.from_events import build_graph  # noqa: E402
from emr_lineage.lineage.schemas import load_schemas  # noqa: E402


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--apps", type=int, default=200)
    parser.add_argument("--actions", type=int, default=100)
    parser.add_argument("--schema-dir", default=None)
    args = parser.parse_args(argv)
    events = generate(args.apps, args.actions)
    with tempfile.TemporaryDirectory(prefix="emr-lineage-bench-") as tmp:
        path = Path(tmp) / "events.jsonl"
        path.write_text("".join(json.dumps(e) + "\n" for e in events), encoding="utf-8")
        size = path.stat().st_size
        del events
        print(
            f"machine: {os.cpu_count()} CPUs, load average {os.getloadavg()[0]:.1f}; Python {sys.version.split()[0]}; "
            f"file: {size / 2**20:,.0f} MiB, {size / (args.apps * (args.actions * 10 + 2)):,.0f} bytes/event"
        )

        started = time.perf_counter()
        with path.open(encoding="utf-8") as lines:
            decoded = sum(1 for line in lines if json.loads(line))
        bare = time.perf_counter() - started
        print(f"baseline, bare json.loads of each line: {decoded:,} events in {bare:.1f}s = {decoded / bare:,.0f}/s")

        schemas = load_schemas(args.schema_dir)
        started = time.perf_counter()
        loaded = load_events([path], schema_directory=args.schema_dir)
        graph = build_graph(loaded.events)
        full = time.perf_counter() - started
        checks = "with OpenLineage schema checks" if schemas else "structural checks only (no schemas found)"
        print(
            f"load_events ({checks}) + build_graph: {len(loaded):,} events in {full:.1f}s = "
            f"{len(loaded) / full:,.0f}/s, {full / bare:.0f}x the bare decode ({len(graph.jobs())} jobs)"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
