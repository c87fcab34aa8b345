"""The sample pipeline end to end on local Spark, with lineage captured locally.

:func:`run_demo` generates seeded data under ``<out>/lake``, runs the five jobs of ``jobs/``
in order in one local Spark driver (each job is its own Spark application, as on EMR), with
the capture writing ``<out>/events.jsonl``; then loads the events (every one schema-checked),
builds the lineage graph, validates it against ``jobs/lineage_contract.yaml`` and writes
``<out>/report.html``. The CLI (``emr-lineage demo``) only renders progress and the summary.
A :class:`~emr_lineage.pipeline.definition.Scenario` other than ``standard`` runs more jobs
after the five and validates against its own contract.
"""

from __future__ import annotations

import contextlib
import os
import runpy
import time
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from emr_lineage.errors import EmrLineageError
from emr_lineage.lineage.contract import load_contract
from emr_lineage.lineage.contract_check import ContractResult, validate
from emr_lineage.lineage.events import load_events
from emr_lineage.lineage.from_events import build_graph
from emr_lineage.lineage.graph import LineageGraph
from emr_lineage.lineage.report import write_html
from emr_lineage.lineage.schemas import require_schemas
from emr_lineage.pipeline.definition import DEFAULT_ROWS, JOBS_DIR, MIN_ROWS, PIPELINE, SCENARIOS, STANDARD, Scenario
from emr_lineage.pipeline.workdir import claimed_output_dir
from emr_lineage.spark.capture.run import JobFailed, run_job

# What the demo creates in --out (and may replace on a later run); nothing else there is touched.
DEMO_ENTRIES = ("lake", "warehouse", "metastore_db", "events.jsonl", "report.html", "spark.log")


class DemoError(EmrLineageError):
    """A step of the demo failed; the message names the step and the error."""


@dataclass
class JobRun:
    name: str
    seconds: float
    events: int
    capture_errors: int
    capture_busy_seconds: float = 0.0  # listener callbacks, on Spark's bus thread
    capture_finish_seconds: float = 0.0  # blocked at spark.stop() draining + flushing


@dataclass
class DemoResult:
    out: Path
    lake: Path
    events_path: Path
    report_path: Path
    spark_log: Path
    rows: int
    generate_seconds: float = 0.0
    runs: list[JobRun] = field(default_factory=list)
    events: int = 0
    graph: LineageGraph | None = None
    contract: ContractResult | None = None
    validate_seconds: float = 0.0
    scenario: Scenario = STANDARD

    @property
    def total_seconds(self) -> float:
        return self.generate_seconds + sum(r.seconds for r in self.runs) + self.validate_seconds


def spark_defaults(out: Path, events: Path | None, namespace: str) -> dict[str, str]:
    """Spark conf of a local demo run (the runner applies it unless a job sets a key itself)."""
    conf = {
        "spark.master": "local[2]",
        "spark.ui.enabled": "false",
        "spark.ui.showConsoleProgress": "false",
        "spark.sql.shuffle.partitions": "4",
        "spark.sql.warehouse.dir": str(out / "warehouse"),
        # customer_ltv's catalog: a Derby metastore in --out (Glue on EMR).
        "spark.hadoop.javax.jdo.option.ConnectionURL": f"jdbc:derby:;databaseName={out / 'metastore_db'};create=true",
        "spark.driver.extraJavaOptions": f"-Dderby.system.home={out}",
        "spark.openlineage.namespace": namespace,
    }
    if events is not None:
        conf["spark.openlineage.transport.type"] = "file"
        conf["spark.openlineage.transport.location"] = str(events)
    return conf


def generate_data(lake: Path, rows: int) -> dict[str, int]:
    generator = runpy.run_path(str(JOBS_DIR / "generate_orders.py"), run_name="generate_orders")
    return generator["generate"](lake, rows)


@contextlib.contextmanager
def stderr_to(path: Path) -> Iterator[None]:
    """Send fd 2 (Spark's JVM log, which inherits it when it starts) to ``path``."""
    saved = os.dup(2)
    with path.open("ab") as log:
        os.dup2(log.fileno(), 2)
    try:
        yield
    finally:
        os.dup2(saved, 2)
        os.close(saved)


def run_pipeline(
    lake: Path,
    defaults: dict[str, str],
    *,
    capture: bool = True,
    jobs: Sequence[str] = PIPELINE,
    on_job: Callable[[str, JobRun | None], None] | None = None,
) -> list[JobRun]:
    """Run the jobs in order; raises :class:`DemoError` at the first failing job."""
    runs = []
    for name in jobs:
        if on_job:
            on_job(name, None)
        began = time.perf_counter()
        try:
            captures = run_job(JOBS_DIR / f"{name}.py", ["--lake", str(lake)], defaults, capture=capture)
        except JobFailed as exc:
            raise DemoError(str(exc)) from exc
        run = JobRun(
            name,
            time.perf_counter() - began,
            sum(c.counts["events"] for c in captures),
            sum(c.counts["errors"] for c in captures),
            sum(c.busy_seconds for c in captures),
            sum(c.finish_seconds for c in captures),
        )
        runs.append(run)
        if on_job:
            on_job(name, run)
    return runs


def run_demo(
    out: str | Path,
    rows: int = DEFAULT_ROWS,
    *,
    namespace: str,
    force: bool = False,
    scenario: str | Scenario = STANDARD,
    on_step: Callable[[str], None] | None = None,
    on_job: Callable[[str, JobRun | None], None] | None = None,
    schema_changes: Callable[[list[dict[str, Any]]], dict[str, list[Any]]] | None = None,
) -> DemoResult:
    """Run the scenario's jobs into ``out`` (claimed and locked, see :mod:`emr_lineage.pipeline.workdir`).

    ``schema_changes`` (the caller's: :func:`emr_lineage.analysis.drift.schema_changes`) works out
    each dataset's schema changes from the captured events, for the report's dataset panel.
    """
    if rows < MIN_ROWS:
        raise DemoError(f"--rows must be at least {MIN_ROWS}, got {rows}")
    if isinstance(scenario, str):
        if scenario not in SCENARIOS:
            raise DemoError(f"--scenario {scenario!r}: no such scenario (choose from {', '.join(SCENARIOS)})")
        scenario = SCENARIOS[scenario]
    require_schemas()  # the demo checks its events in strict mode: say so before Spark runs, not after
    with claimed_output_dir(out, DEMO_ENTRIES, force=force) as claimed:
        return _run_in(claimed, rows, namespace, scenario, on_step or (lambda _: None), on_job, schema_changes)


def _run_in(
    out: Path,
    rows: int,
    namespace: str,
    scenario: Scenario,
    step: Callable[[str], None],
    on_job: Callable[[str, JobRun | None], None] | None,
    schema_changes: Callable[[list[dict[str, Any]]], dict[str, list[Any]]] | None = None,
) -> DemoResult:
    lake = out / "lake"
    result = DemoResult(out, lake, out / "events.jsonl", out / "report.html", out / "spark.log", rows)
    result.scenario = scenario

    step("generate")
    began = time.perf_counter()
    generate_data(lake, rows)
    result.generate_seconds = time.perf_counter() - began

    with stderr_to(result.spark_log):
        defaults = spark_defaults(out, result.events_path, namespace)
        result.runs = run_pipeline(lake, defaults, jobs=scenario.jobs, on_job=on_job)

    step("validate")
    began = time.perf_counter()
    try:
        loaded = load_events([result.events_path], strict=True)
        contract = load_contract(scenario.contract)
    except ValueError as exc:  # EventsError / ContractError: one line naming file and line
        raise DemoError(str(exc)) from None
    result.events = len(loaded)
    result.graph = build_graph(loaded.events, level=contract.level)
    result.contract = validate(contract, result.graph, {"lake": str(lake), "namespace": namespace})
    title = f"Sample pipeline lineage ({rows} orders)"
    if scenario is not STANDARD:
        title = f"Sample pipeline lineage ({rows} orders, scenario {scenario.name})"
    drift = schema_changes(loaded.events) if schema_changes else None
    write_html(result.report_path, result.graph, result.contract, title=title, drift=drift)
    result.validate_seconds = time.perf_counter() - began
    return result
