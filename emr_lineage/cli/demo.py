"""``emr-lineage demo``: the sample pipeline on local Spark with lineage, progress and a summary.

Exit status (docs/cli.md): 0 the pipeline ran and its lineage matches ``jobs/lineage_contract.yaml``;
1 a job failed, an event did not validate, or the lineage differs from the contract;
2 it could not run (bad options or settings, an --out it must not touch); 130 interrupted.
"""

from __future__ import annotations

import sys
from pathlib import Path

import click
from rich.console import Console
from rich.table import Table

from emr_lineage.analysis.drift import schema_changes
from emr_lineage.cli.gateway import api_key_from_env
from emr_lineage.cli.options import force_option, out_dir_option, rows_option, settings_options, url_option
from emr_lineage.cli.output import Command, fail, stdout_console
from emr_lineage.cli.progress import Steps, stderr_console
from emr_lineage.errors import EXIT_CHECK_FAILED
from emr_lineage.listener.maven import local_jars
from emr_lineage.pipeline.definition import (
    DEFAULT_ROWS,
    MIN_ROWS,
    REPRODUCE,
    SCENARIOS,
    STANDARD,
    application_name,
)
from emr_lineage.pipeline.demo import DemoError, DemoResult, JobRun, Lineage, run_demo, spark_properties
from emr_lineage.settings.loader import load_settings


def _summary(result: DemoResult) -> Table:
    scenario = "" if result.scenario is STANDARD else f", scenario {result.scenario.name}"
    table = Table(title=f"emr-lineage demo: {result.rows} orders{scenario}, lineage in {result.events_path}")
    for column, justify in (
        ("step", "left"),
        ("seconds", "right"),
        ("events", "right"),
        ("inputs", "left"),
        ("outputs", "left"),
    ):
        table.add_column(column, justify=justify)
    graph = result.graph
    if not result.resumed:
        table.add_row("generate data", f"{result.generate_seconds:.1f}", "", "", "")
    earlier = [(name, f"{name} (earlier run)", "-", "-") for name in result.resumed]
    ran = [(r.name, r.name, f"{r.seconds:.1f}", str(r.events)) for r in result.runs]
    for name, label, seconds, events in earlier + ran:
        inputs = outputs = ""
        if graph is not None:
            application = application_name(name)
            job_id = next((j for j in graph.jobs() if graph.nodes[j]["name"] == application), None)
            if job_id:
                inputs = "\n".join(_shorts(graph, graph.inputs_of(job_id)))
                outputs = "\n".join(_shorts(graph, graph.outputs_of(job_id)))
        table.add_row(label, seconds, events, inputs, outputs)
    table.add_row("validate + report", f"{result.validate_seconds:.1f}", "", "", "")
    n_jobs = len(graph.jobs()) if graph else 0
    n_datasets = len(graph.datasets()) if graph else 0
    n_edges = len(graph.edges()) if graph else 0
    table.add_row(
        "[bold]total[/bold]",
        f"[bold]{result.total_seconds:.1f}[/bold]",
        f"[bold]{result.events}[/bold]",
        f"{n_jobs} jobs, {n_datasets} datasets",
        f"{n_edges} edges",
    )
    return table


def _shorts(graph, dataset_ids: list[str]) -> list[str]:
    """Datasets as ``zone/name`` below the lake (a dataset's parts, such as a saved model's
    ``metadata`` and ``stages/...``, folded into ``zone/name/** (N parts)``), else the last path part."""
    counts: dict[str, int] = {}
    for dataset_id in dataset_ids:
        name = graph.nodes[dataset_id]["name"]
        marker = "/lake/"
        short = name.split(marker, 1)[1] if marker in name else name.rsplit("/", 1)[-1]
        parts = short.split("/")
        key = "/".join(parts[:2]) + ("/**" if len(parts) > 2 else "")
        counts[key] = counts.get(key, 0) + 1
    return [f"{key} ({n} parts)" if key.endswith("/**") else key for key, n in sorted(counts.items())]


def _run(
    out_dir: str, rows: int, lineage: Lineage, *, force: bool, resume: bool, scenario: str, notes: Console
) -> DemoResult:
    """The demo with its progress on stderr (the jobs' times as notes)."""
    jobs = SCENARIOS[scenario].jobs
    with Steps("generating data", 2 + len(jobs), console=notes) as steps:
        # A step is counted done when the next one starts, so each line names what is running now.
        def on_step(name: str) -> None:
            if name == "validate":
                steps.advance(steps.done + 1, what="validating lineage, writing report")
            else:
                steps.advance(steps.done, what="generating data")

        def on_job(name: str, run: JobRun | None) -> None:
            if run is None:  # counted by its place in the scenario: a resumed demo starts past the first
                steps.advance(jobs.index(name) + 1, what=f"running {name}")
            else:
                steps.note(f"{name}: {run.seconds:.1f}s, {run.events} lineage events")

        try:
            result = run_demo(
                out_dir,
                rows,
                lineage=lineage,
                force=force,
                resume=resume,
                scenario=scenario,
                on_step=on_step,
                on_job=on_job,
                schema_changes=schema_changes,
            )
        except DemoError as exc:
            steps.stop()
            fail(f"{exc} (Spark log: {Path(out_dir).resolve() / 'spark.log'})", EXIT_CHECK_FAILED)
        steps.advance(steps.total)
    return result


@click.command("demo", cls=Command)
@out_dir_option(
    "Write lake/, events.jsonl, report.html and spark.log here: a new or empty directory, or an earlier demo's.",
    old="--out",
    required=True,
)
@url_option
@force_option("Also use an --out-dir the demo did not make (your entries in it are kept, never deleted).")
@rows_option(MIN_ROWS, DEFAULT_ROWS)
@click.option(
    "--resume",
    is_flag=True,
    help="Continue the demo --out-dir holds (same --rows): run only the scenario's jobs it has not run, "
    "then validate all its events and write the report again.",
)
@click.option(
    "--scenario",
    type=click.Choice(list(SCENARIOS)),
    default=STANDARD.name,
    show_default=True,
    help="What to run: " + "; ".join(f"{s.name}: {s.summary}" for s in SCENARIOS.values()) + ".",
)
@settings_options
def demo_command(
    out_dir: str, url: str | None, force: bool, rows: int, resume: bool, scenario: str, env: str, cdk_json: Path
) -> None:
    """Run the sample pipeline on local Spark with the OpenLineage listener, validate its lineage, write the report.

    Each job runs with spark-submit and the pinned listener jar, with the pinned Iceberg runtime beside it
    (make setup fetches both), reporting in the OpenLineage namespace of ENV's settings. Its tables are
    Iceberg tables in DIR/lake (a Hadoop catalog).

    \b
    --scenario schema-change shows a schema drift end to end: after the pipeline,
    revenue_daily_v2 (a new version of revenue_daily) evolves the Iceberg table
    curated/revenue_daily in place (ALTER TABLE) and overwrites its rows, then
    revenue_weekly reads it; then try
      emr-lineage drift --dataset DIR/lake/curated/revenue_daily --events DIR/events.jsonl
    (details: docs/pipeline.md). After a standard demo,
      emr-lineage demo --scenario schema-change --resume --out-dir DIR --rows N
    runs only those two jobs; --resume also picks a failed demo up at the job that failed.

    \b
    --out-dir DIR holds lake/, events.jsonl, report.html and spark.log: a new or empty
    directory, or an earlier demo's (--force: also one the demo did not make; your entries are
    kept, never deleted).
    """
    settings = load_settings(env, cdk_json)
    jars = local_jars(settings.versions)
    lineage = Lineage(
        openlineage=settings.openlineage,
        jar=jars.listener,
        iceberg_runtime=jars.iceberg_runtime,
        url=url,
        api_key=api_key_from_env(),
    )
    console = stdout_console(tables=False)  # the summary, a report for a person: stdout
    notes = stderr_console()  # the progress on the way to it: stderr (docs/cli.md)
    result = _run(out_dir, rows, lineage, force=force, resume=resume, scenario=scenario, notes=notes)
    console.print(_summary(result))
    if url:
        notes.print(f"the listener also sent each event to {url} (delivery problems: {result.spark_log})")
    contract = result.contract
    console.print(f"report: {result.report_path}", soft_wrap=True)  # a path is never folded
    if contract is not None and contract.ok:
        console.print(f"[green]lineage matches {Path(contract.contract).name}: {len(contract.matched)} edges[/green]")
    else:
        for diff in contract.differences if contract else []:
            console.print(f"[red]{diff.status}[/red] {diff.as_dict()}", soft_wrap=True)
        sys.exit(EXIT_CHECK_FAILED)
    if scenario == REPRODUCE.name:
        _reproduce(result, lineage, console, notes)


def _last_run(events: Path, job: str) -> dict:
    from emr_lineage.analysis.pins import last_run
    from emr_lineage.lineage.events.reader import load_events
    from emr_lineage.lineage.graph.history import RunHistory

    return last_run(RunHistory.of(load_events([events]).events), job)


def _reproduce(result: DemoResult, lineage: Lineage, console: Console, notes: Console) -> None:
    """The reproduction after the pipeline (emr_lineage.pipeline.reproduce); exit 1 unless the rows are the same."""
    from emr_lineage.pipeline.reproduce import JOB, STEPS, reproduce

    with Steps("reproducing", len(STEPS), console=notes) as steps:
        try:
            done = reproduce(
                result.out,
                result.rows,
                properties=spark_properties(result.out, lineage, lineage.iceberg_runtime),
                check_properties=spark_properties(result.out, None, lineage.iceberg_runtime),
                last_run=_last_run,
                log=result.spark_log,
                events=result.events_path,
                step=lambda name: steps.advance(STEPS.index(name), what=name),
            )
        except DemoError as exc:
            steps.stop()
            fail(f"{exc} (Spark log: {result.spark_log})", EXIT_CHECK_FAILED)
        steps.advance(steps.total)
    first, changed, again = (run["runId"] for run in (done.first, done.changed, done.reproduced))
    console.print(f"{JOB}: first run {first}; pins in {done.pins_file}", soft_wrap=True)
    console.print(f"after orders_clean changed: run {changed}; as of the first run: run {again}", soft_wrap=True)
    events = result.events_path
    console.print(f"what changed: emr-lineage runs compare {first} {changed} --events {events}", soft_wrap=True)
    rows, changed_rows = done.rows, done.changed_rows
    differ = changed_rows["onlyInA"] + changed_rows["onlyInB"]
    console.print(f"the rerun on the changed orders: {differ} rows of {JOB} differ from the first run's")
    if not done.same_rows:
        console.print(f"[red]the run as of {first} did not give its rows again: {rows}[/red]", soft_wrap=True)
        sys.exit(EXIT_CHECK_FAILED)
    console.print(f"[green]reproduced: run {again} wrote the {rows['rowsA']} rows run {first} wrote[/green]")
