"""The demo's reproduction: a run of revenue_daily, its input changed, the job run again (it reads the new
data), then run as of the first run (``--as-of-run RUN_ID --pins FILE``, jobs/as_of.py), which must give the
first run's output row for row.

The steps after the standard pipeline, in the demo's --out-dir: the pins of the last revenue_daily run
(``pins.json``); new orders (another seed, a tenth more) and ingest_orders again, a new snapshot of
orders_clean; revenue_daily (the changed run); revenue_daily as of the first run (the reproduced run); then
revenue_daily's table at the first run's output snapshot against the reproduced run's, by
:mod:`emr_lineage.pipeline.same_rows` without the listener. Reading the lineage (the runs, their pins and
output versions) is the caller's ``last_run`` (the analysis layer), as the demo's drift is.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from emr_lineage.pipeline.definition import job_arguments, local_tables
from emr_lineage.pipeline.demo import DemoError, generate_data, run_job
from emr_lineage.spark.local import run_script

JOB = "revenue_daily"  # the job reproduced
OUTPUT_TABLE = "revenue_daily"  # its output table (definition.TABLE_ZONES)
CHANGE_SEED = 8  # the generator's seed for the changed orders (the demo's is 7)
PINS_FILE = "pins.json"
STEPS = ("change the input", "rerun", "reproduce", "check rows")  # what ``step`` is called with, in order
SAME_ROWS = Path(__file__).with_name("same_rows.py")

# (events file, job) -> the job's last run: {"runId", "pins": run_pins' document, "outputs": {table: version}}
LastRun = Callable[[Path, str], dict[str, Any]]


@dataclass
class Reproduction:
    first: dict[str, Any]
    changed: dict[str, Any]
    reproduced: dict[str, Any]
    pins_file: Path
    # same_rows' counts of the first run's output against the reproduced run's, and against the changed run's
    rows: dict[str, int] = field(default_factory=dict)
    changed_rows: dict[str, int] = field(default_factory=dict)

    @property
    def same_rows(self) -> bool:
        counts = self.rows
        return bool(counts) and counts["onlyInA"] == counts["onlyInB"] == 0 and counts["rowsA"] == counts["rowsB"]


def reproduce(
    out: Path,
    rows: int,
    *,
    properties: Mapping[str, str],
    check_properties: Mapping[str, str],
    last_run: LastRun,
    log: Path,
    events: Path,
    step: Callable[[str], None],
) -> Reproduction:
    """Run the reproduction in the demo ``out`` (its standard pipeline done); :class:`DemoError` when a step fails."""
    lake, tables = out / "lake", local_tables()
    first = last_run(events, JOB)
    pins_file = out / PINS_FILE
    pins_file.write_text(json.dumps(first["pins"], indent=2) + "\n", encoding="utf-8")
    result = Reproduction(first, {}, {}, pins_file)

    def job(name: str, *extra: str) -> None:
        run_job(name, [*job_arguments(name, str(lake), tables), *extra], properties, log=log, events=events)

    step("change the input")
    generate_data(lake, rows + max(1, rows // 10), seed=CHANGE_SEED)
    job("ingest_orders")
    step("rerun")
    job(JOB)
    result.changed = last_run(events, JOB)
    step("reproduce")
    job(JOB, "--as-of-run", first["runId"], "--pins", str(pins_file))
    result.reproduced = last_run(events, JOB)
    step("check rows")
    runs = (first, result.reproduced, result.changed)
    result.rows, result.changed_rows = _same_rows(out, tables[OUTPUT_TABLE], runs, check_properties, log)
    return result


def _same_rows(
    out: Path, table: str, runs: tuple[dict[str, Any], ...], properties: Mapping[str, str], log: Path
) -> list[dict[str, int]]:
    """same_rows' counts of the first run's output table against each other run's."""
    snapshots = [run["outputs"].get(table) for run in runs]
    if not all(snapshots):
        which = ", ".join(run["runId"] for run, snapshot in zip(runs, snapshots, strict=True) if not snapshot)
        raise DemoError(f"{JOB}: the lineage names no snapshot of {table} written by run {which}; no rows to compare")
    answer = out / ".same-rows.json"
    with log.open("ab") as output:
        status = run_script(SAME_ROWS, [table, str(answer), *snapshots], properties, stdout=output, stderr=output)
    if status != 0:
        raise DemoError(f"the row check of {table} failed: exit status {status} (see {log})")
    try:
        return json.loads(answer.read_text(encoding="utf-8"))
    finally:
        answer.unlink(missing_ok=True)
