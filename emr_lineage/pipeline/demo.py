"""The sample pipeline end to end on local Spark, with the real OpenLineage listener.

:func:`run_demo` generates seeded data under ``<out>/lake``, runs the five jobs of ``jobs/``
in order, each with ``spark-submit`` as its own Spark application (as an EMR step runs it; its tables
Iceberg tables of a Hadoop catalog whose warehouse is the lake, :mod:`emr_lineage.spark.iceberg`), with
the listener writing ``<out>/events.jsonl`` (and, given a gateway URL, also sending each event
there); then loads the events (every one schema-checked),
builds the lineage graph, validates it against ``jobs/lineage_contract.yaml`` and writes
``<out>/report.html``. The CLI (``emr-lineage demo``) only renders progress and the summary.
A :class:`~emr_lineage.pipeline.definition.Scenario` other than ``standard`` runs more jobs
after the five and validates against its own contract.
"""

from __future__ import annotations

import runpy
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from emr_lineage.errors import EmrLineageError
from emr_lineage.lineage.contracts.check import ContractResult, validate
from emr_lineage.lineage.contracts.model import load_contract
from emr_lineage.lineage.events.reader import load_events
from emr_lineage.lineage.graph.from_events import build_graph
from emr_lineage.lineage.graph.model import LineageGraph
from emr_lineage.lineage.report.html import write_html
from emr_lineage.lineage.schemas.checks import require_schemas
from emr_lineage.pipeline.definition import (
    DEFAULT_ROWS,
    JOBS_DIR,
    MIN_ROWS,
    PIPELINE,
    SCENARIOS,
    STANDARD,
    Scenario,
    application_name,
    job_arguments,
    local_tables,
)
from emr_lineage.pipeline.resume import STATE, DemoState, jobs_left, load_state
from emr_lineage.pipeline.workdir import claimed_output_dir
from emr_lineage.processes import SHORT_LIVED_JVM
from emr_lineage.settings.model import OpenLineageSettings
from emr_lineage.spark import iceberg
from emr_lineage.spark.conf import APP_NAME_PROPERTY, DRIVER_CLASSPATH, ListenerConfig, local_listener_properties
from emr_lineage.spark.local import run_script

# What the demo creates in --out-dir (and may replace on a later run); nothing else there is touched.
DEMO_ENTRIES = ("lake", "warehouse", "metastore_db", "events.jsonl", "report.html", "spark.log", STATE)


class DemoError(EmrLineageError):
    """A step of the demo failed; the message names the step and the error."""


@dataclass
class JobRun:
    name: str
    seconds: float
    events: int  # lines the listener added to the events file


@dataclass
class DemoResult:
    out: Path
    lake: Path
    events_path: Path
    report_path: Path
    spark_log: Path
    rows: int
    resumed: tuple[str, ...] = ()  # the jobs an earlier run had done (--resume), not run again
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


@dataclass(frozen=True, kw_only=True)
class Lineage:
    """Where the demo's listener reports: its settings, the jar (and the Iceberg runtime beside it on the
    driver's classpath), and optionally a gateway (or Marquez) URL besides the events file, with that
    endpoint's Bearer key."""

    openlineage: OpenLineageSettings
    jar: Path
    iceberg_runtime: Path
    url: str | None = None
    api_key: str | None = None


def spark_properties(out: Path, lineage: Lineage | None, iceberg_runtime: Path) -> dict[str, str]:
    """Spark properties of a local demo run: the Iceberg catalog with the lake in ``out`` as its warehouse, the
    Iceberg runtime on the driver's classpath, and the listener before it (none when ``lineage`` is None: the
    benchmark's baseline)."""
    props = {
        "spark.sql.shuffle.partitions": "4",
        # The session catalog, for tables outside the Iceberg catalog (the benchmark's Parquet tables): a Derby
        # metastore and a warehouse in --out-dir.
        "spark.sql.warehouse.dir": str(out / "warehouse"),
        "spark.hadoop.javax.jdo.option.ConnectionURL": f"jdbc:derby:;databaseName={out / 'metastore_db'};create=true",
        # The jobs' JVMs live seconds: the C1 JIT and one GC thread halve their CPU (the demo: 62 s -> 34 s).
        "spark.driver.extraJavaOptions": f"-Dderby.system.home={out} {SHORT_LIVED_JVM}",
        **iceberg.hadoop_catalog_properties(str(out / "lake")),
        DRIVER_CLASSPATH: str(iceberg_runtime),
    }
    if lineage is not None:
        listener = ListenerConfig.for_settings(
            lineage.openlineage, api_url=lineage.url, events_file=str(out / "events.jsonl")
        )
        jars = {"jar": str(lineage.jar), "beside": [str(iceberg_runtime)]}
        props.update(local_listener_properties(listener, **jars, api_key=lineage.api_key))
    return props


def generate_data(lake: Path, rows: int, *, seed: int | None = None) -> dict[str, int]:
    """The raw orders of ``jobs/generate_orders.py`` (its own seed unless ``seed``)."""
    generator = runpy.run_path(str(JOBS_DIR / "generate_orders.py"), run_name="generate_orders")
    return generator["generate"](lake, rows, **({} if seed is None else {"seed": seed}))


def _lines(path: Path) -> int:
    if not path.exists():
        return 0
    with path.open("rb") as handle:
        return sum(1 for _ in handle)


def python_error(log: Path, offset: int) -> str | None:
    """The last line of the last Python traceback written to ``log`` after ``offset`` (the exception
    and its message, e.g. ``...AnalysisException: [PATH_NOT_FOUND] Path does not exist: ...``)."""
    with log.open("rb") as handle:
        handle.seek(offset)
        lines = handle.read().decode("utf-8", "replace").splitlines()
    starts = [i for i, line in enumerate(lines) if line.startswith("Traceback (most recent call last):")]
    if not starts:
        return None
    return next((line.strip() for line in lines[starts[-1] + 1 :] if line and not line[0].isspace()), None)


def run_job(
    name: str,
    args: Sequence[str],
    properties: Mapping[str, str],
    *,
    log: Path,
    events: Path | None = None,
    class_archive: bool = True,
) -> JobRun:
    """Run ``jobs/<name>.py`` with ``args``, its output appended to ``log``; :class:`DemoError` when it fails.
    ``events``: the listener's events file, whose new lines the job is credited with."""
    before = _lines(events) if events else 0
    began = time.perf_counter()
    with log.open("ab") as output:
        logged = output.tell()
        status = run_script(
            JOBS_DIR / f"{name}.py",
            args,
            {**properties, APP_NAME_PROPERTY: application_name(name)},
            stdout=output,
            stderr=output,
            class_archive=class_archive,
        )
    if status != 0:
        reason = python_error(log, logged)
        raise DemoError(f"{name} failed: exit status {status}" + (f": {reason}" if reason else ""))
    return JobRun(name, time.perf_counter() - began, (_lines(events) - before) if events else 0)


def run_pipeline(
    lake: Path,
    properties: dict[str, str],
    *,
    log: Path,
    events: Path | None = None,
    jobs: Sequence[str] = PIPELINE,
    on_job: Callable[[str, JobRun | None], None] | None = None,
    class_archive: bool = True,
    tables: Mapping[str, str] | None = None,
) -> list[JobRun]:
    """Run the jobs in order (:func:`run_job`); raises :class:`DemoError` at the first failing job.
    ``class_archive``: see :func:`emr_lineage.spark.local.run_script`. ``tables``: the name of each table
    of the pipeline (default: the Iceberg catalog's, :func:`~emr_lineage.pipeline.definition.local_tables`)."""
    tables = local_tables() if tables is None else tables
    runs = []
    for name in jobs:
        if on_job:
            on_job(name, None)
        args = job_arguments(name, str(lake), tables)
        run = run_job(name, args, properties, log=log, events=events, class_archive=class_archive)
        runs.append(run)
        if on_job:
            on_job(name, run)
    return runs


def run_demo(
    out: str | Path,
    rows: int = DEFAULT_ROWS,
    *,
    lineage: Lineage,
    force: bool = False,
    resume: bool = False,
    scenario: str | Scenario = STANDARD,
    on_step: Callable[[str], None] | None = None,
    on_job: Callable[[str, JobRun | None], None] | None = None,
    schema_changes: Callable[[list[dict[str, Any]]], dict[str, list[Any]]] | None = None,
) -> DemoResult:
    """Run the scenario's jobs into ``out`` (claimed and locked, see :mod:`emr_lineage.pipeline.workdir`).

    ``resume``: continue the demo ``out`` holds, running only the scenario's jobs it has not run
    (:mod:`emr_lineage.pipeline.resume`). ``schema_changes`` (the caller's:
    :func:`emr_lineage.analysis.drift.schema_changes`) works out each dataset's schema changes from the
    listener's events, for the report's dataset panel.
    """
    if rows < MIN_ROWS:
        raise DemoError(f"--rows must be at least {MIN_ROWS}, got {rows}")
    if isinstance(scenario, str):
        if scenario not in SCENARIOS:
            raise DemoError(f"--scenario {scenario!r}: no such scenario (choose from {', '.join(SCENARIOS)})")
        scenario = SCENARIOS[scenario]
    require_schemas()  # the demo checks its events in strict mode: say so before Spark runs, not after
    if resume:  # refused before the directory is claimed: nothing written
        where = Path(out).expanduser().resolve()
        jobs_left(load_state(where), scenario, rows=rows, namespace=lineage.openlineage.namespace, out=where)
    with claimed_output_dir(out, DEMO_ENTRIES, force=force, clear=not resume) as claimed:
        state = load_state(claimed) if resume else None
        return _run_in(claimed, rows, lineage, scenario, on_step or (lambda _: None), on_job, schema_changes, state)


def _run_in(
    out: Path,
    rows: int,
    lineage: Lineage,
    scenario: Scenario,
    step: Callable[[str], None],
    on_job: Callable[[str, JobRun | None], None] | None,
    schema_changes: Callable[[list[dict[str, Any]]], dict[str, list[Any]]] | None = None,
    state: DemoState | None = None,
) -> DemoResult:
    """The demo in the claimed ``out``: from the start, or after the jobs ``state`` (--resume) records."""
    lake = out / "lake"
    result = DemoResult(out, lake, out / "events.jsonl", out / "report.html", out / "spark.log", rows)
    result.scenario = scenario
    namespace = lineage.openlineage.namespace
    if state is None:
        step("generate")
        began = time.perf_counter()
        generate_data(lake, rows)
        result.generate_seconds = time.perf_counter() - began
        state = DemoState(rows, namespace)
        state.save(out)
        jobs = scenario.jobs
    else:
        jobs = jobs_left(state, scenario, rows=rows, namespace=namespace, out=out)
        result.resumed = state.jobs

    def done(name: str, run: JobRun | None) -> None:
        nonlocal state
        if run is not None:
            state = state.with_job(name)
            state.save(out)
        if on_job:
            on_job(name, run)

    properties = spark_properties(out, lineage, lineage.iceberg_runtime)
    result.runs = run_pipeline(
        lake, properties, log=result.spark_log, events=result.events_path, jobs=jobs, on_job=done
    )

    step("validate")
    began = time.perf_counter()
    try:
        loaded = load_events([result.events_path], strict=True)
        contract = load_contract(scenario.contract)
    except ValueError as exc:  # EventsError / ContractError: one line naming file and line
        raise DemoError(str(exc)) from None
    result.events = len(loaded)
    result.graph = build_graph(loaded.events, level=contract.level)
    result.contract = validate(contract, result.graph, {"lake": str(lake), "namespace": lineage.openlineage.namespace})
    title = f"Sample pipeline lineage ({rows} orders)"
    if scenario is not STANDARD:
        title = f"Sample pipeline lineage ({rows} orders, scenario {scenario.name})"
    drift = schema_changes(loaded.events) if schema_changes else None
    write_html(result.report_path, result.graph, result.contract, title=title, drift=drift)
    result.validate_seconds = time.perf_counter() - began
    return result
