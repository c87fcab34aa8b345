"""``emr-lineage runs``: runs with state, times, and the version and rows of each input and output; ``emr-lineage
runs compare RUN_A RUN_B``: what differs between two runs of one job; docs/analysis.md.

Exit status: 0 the runs or the differences are printed; 1 ``compare --fail-on-change`` found an input read at
another version; 2 it could not run (see ``emr-lineage impact``), a ``--job`` no run has (in the window), a run
id not found, or two runs of different jobs; 130 interrupted.
"""

from __future__ import annotations

import click

from emr_lineage.analysis.compare import Comparison, DatasetDiff, compare, find_run
from emr_lineage.analysis.pins import run_pins
from emr_lineage.analysis.runs import (
    collect_runs,
    counts_suffix,
    dataset_lines,
    format_duration,
    format_time,
    select_runs,
)
from emr_lineage.analysis.sources import AnalysisError, dump
from emr_lineage.analysis.table_history import TableSnapshots
from emr_lineage.cli.options import format_option, job_option, level_option
from emr_lineage.cli.output import Command, CommandGroup, GroupArgument, warn
from emr_lineage.cli.sources import (
    RUNS_GRAPH_HELP,
    SourceRequest,
    fail_on_change_option,
    print_table,
    read_runs,
    source_options,
)
from emr_lineage.errors import EXIT_CHECK_FAILED
from emr_lineage.lineage.graph.history import INPUT, OUTPUT


@click.group("runs", cls=CommandGroup, subcommand_metavar="[RUN_ID] | compare RUN_A RUN_B")
@click.argument("run_id", cls=GroupArgument, metavar="RUN_ID", required=False)
@click.option(
    "--pins",
    is_flag=True,
    help="With RUN_ID: print the run's pins (the snapshot of each Iceberg table it read) as JSON, for a job's "
    "--as-of-run RUN_ID --pins FILE (jobs/as_of.py).",
)
@job_option("Only the runs of this Spark job, by name (an application's name keeps its actions' runs too).")
@level_option
@format_option(("table", "json"), "table")
@source_options(RUNS_GRAPH_HELP)
def runs_group(run_id: str | None, pins: bool, job: str | None, level: str, fmt: str, source: SourceRequest) -> None:
    """List runs: state (the final eventType), start, end, duration, and each input read and output written with its
    version (an Iceberg table's snapshot id) and rows; RUN_ID: that run only. `runs compare RUN_A RUN_B`: what differs
    between two runs of one job."""
    if pins and run_id is None:
        raise AnalysisError("--pins: give the RUN_ID whose pins to print (emr-lineage runs RUN_ID --pins ...)")
    recorded = read_runs(source)
    since, until = source.since, source.until
    window = f" from {since or 'the start'} to {until or 'the end'}" if since or until else ""
    runs = select_runs(collect_runs(recorded.history, level), job, where=f"{recorded.label}{window}")
    if run_id is not None:
        runs = [find_run(runs, recorded.history, run_id, f"{recorded.label}{window}")]
        if pins:
            click.echo(dump(run_pins(runs[0])))
            return
    if fmt == "json":
        click.echo(dump({"source": recorded.source, "runs": [r.as_dict() for r in runs]}))
        return
    rows = [
        (
            format_time(r.start),
            format_time(r.end),
            format_duration(r.duration),
            r.job,
            r.run_id,
            r.state,
            "\n".join(dataset_lines(r, INPUT)),
            "\n".join(dataset_lines(r, OUTPUT)),
        )
        for r in runs
    ]
    if rows:
        print_table("Runs", ("start", "end", "duration", "job", "run", "state", "inputs", "outputs"), rows)
    click.echo(f"{len(rows)} run(s)" + (f" of job {job}" if job else ""))


@runs_group.command("compare", cls=Command)
@click.argument("run_a", metavar="RUN_A")
@click.argument("run_b", metavar="RUN_B")
@fail_on_change_option("Exit 1 when run B read an input at another version than run A (this rerun read other data).")
@level_option
@format_option(("table", "json"), "table")
@source_options(RUNS_GRAPH_HELP)
def compare_command(run_a: str, run_b: str, fail_on_change: bool, level: str, fmt: str, source: SourceRequest) -> None:
    """Show what differs between two runs of one job: each input's version (and what changed in the table between
    them), output versions and rows, input and output schemas, and the properties the listener reported."""
    recorded = read_runs(source)
    tables = TableSnapshots()
    result = compare(
        recorded.history,
        run_a,
        run_b,
        where=recorded.label,
        source=recorded.source,
        level=level,
        table_snapshots=tables,
    )
    for problem in tables.problems:
        warn(f"{problem}; what changed there is from the events alone")
    if fmt == "json":
        click.echo(dump(result.as_dict()))
    else:
        _print_comparison(result)
    if fail_on_change and result.inputs_changed:
        raise SystemExit(EXIT_CHECK_FAILED)


def _side(diff: DatasetDiff, index: int) -> str:
    if not diff.present[index]:
        return "(not read)" if diff.role == INPUT else "(not written)"
    return (",".join(diff.versions[index]) or "(no version)") + counts_suffix(diff.counts[index])


def _between(diff: DatasetDiff) -> str:
    if diff.changed is None:
        return "no version reported: cannot tell"
    if not diff.changed:
        return "same version"
    if not all(diff.present):
        return "read by one run only"
    lines = ["other version"]
    if diff.snapshots is not None:
        added = sum(s.added_records or 0 for s in diff.snapshots)
        deleted = sum(s.deleted_records or 0 for s in diff.snapshots)
        operations = ", ".join(s.operation for s in diff.snapshots)
        lines.append(f"table: {len(diff.snapshots)} snapshot(s) between ({operations}), +{added:,} -{deleted:,} rows")
    for write in diff.writes:
        rows = (write["statistics"] or {}).get("rowCount")
        written = f"{','.join(write['versions']) or 'no version'}" + (f", {rows:,} rows" if rows is not None else "")
        lines.append(f"written by {write['job']} run {write['runId']} ({written})")
    return "\n".join(lines)


def _print_comparison(result: Comparison) -> None:
    first, second = result.runs
    for label, run in (("A", first), ("B", second)):
        click.echo(f"run {label}: {run.run_id}  {run.job}  {run.state}  started {format_time(run.start) or '?'}")
    if result.inputs:
        rows = [(d.uri, _side(d, 0), _side(d, 1), _between(d)) for d in result.inputs]
        print_table("Inputs", ("dataset", "run A", "run B", "what changed"), rows)
    if result.outputs:
        rows = [(d.uri, _side(d, 0), _side(d, 1)) for d in result.outputs]
        print_table("Outputs", ("dataset", "run A", "run B"), rows)
    for diff in result.schemas:
        changes = [f"+{f['name']} {f['type']}" for f in diff["added"]]
        changes += [f"-{f['name']} {f['type']}" for f in diff["removed"]]
        changes += [f"~{f['name']} {f['from']}->{f['to']}" for f in diff["retyped"]]
        click.echo(f"schema of {diff['role']} {diff['dataset']}: {', '.join(changes)}")
    if result.properties:
        rows = [(p["name"], p["runA"] or "", p["runB"] or "") for p in result.properties]
        print_table("Properties", ("property", "run A", "run B"), rows)
    changed = result.inputs_changed
    click.echo(
        f"{len(changed)} of {len(result.inputs)} input(s) read at another version, {len(result.schemas)} schema "
        f"change(s), {len(result.properties)} property change(s) (from {result.source})"
    )
