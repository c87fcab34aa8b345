"""``emr-lineage drift``: the schema history of a dataset and what each change reaches (docs/analysis.md).

Exit status: 0 the history is printed (informational); 1 ``--fail-on-change`` and the schema
changed; 2 it could not run (see ``emr-lineage impact``); 130 interrupted.
"""

from __future__ import annotations

import sys

import click

from emr_lineage.analysis.drift import Drift, drift
from emr_lineage.analysis.runs import collect_runs
from emr_lineage.analysis.sources import dump
from emr_lineage.cli.options import dataset_option, format_option
from emr_lineage.cli.output import Command
from emr_lineage.cli.sources import (
    RUNS_GRAPH_HELP,
    SourceRequest,
    fail_on_change_option,
    print_notes,
    print_table,
    read_runs,
    source_options,
)
from emr_lineage.errors import EXIT_CHECK_FAILED


def _print_drift(report: Drift, fmt: str) -> None:
    if fmt == "json":
        click.echo(dump(report.as_dict()))
        return
    changes = {id(c.version): c for c in report.changes}
    rows = []
    for index, version in enumerate(report.versions):
        change = changes.get(id(version))
        if index == 0:
            what = f"first seen: {len(version.fields)} field(s)"
        else:
            what = change.summary if change else "no change"
        time = version.time.isoformat() if version.time else ""
        rows.append((time, version.job, version.run_id, version.role, what))
    if rows:
        print_table(f"Schema history of {report.dataset}", ("time", "job", "run", "as", "change"), rows)
    for change in report.changes:
        when = change.version.time.isoformat() if change.version.time else change.version.run_id
        readers = ", ".join(job.name for job in change.readers) or "none"
        click.echo(f"{when}: {change.summary}; read by: {readers}")
        for reach in change.reaches:
            columns = ", ".join(f"{c.label}.{c.field}" for c in reach.columns) or "nothing through column lineage"
            jobs = ", ".join(j.name for j in reach.jobs)
            click.echo(f"  {reach.field} reaches {columns}" + (f" (through {jobs})" if jobs else ""))
    print_notes(report.notes)
    click.echo(f"{len(report.changes)} schema change(s) in {len(report.versions)} version(s) of {report.dataset}")


@click.command("drift", cls=Command)
@dataset_option()
@format_option(("table", "json"), "table")
@fail_on_change_option("Exit 1 when the schema changed in the events read.")
@source_options(RUNS_GRAPH_HELP)
def drift_command(
    dataset: str,
    fmt: str,
    fail_on_change: bool,
    source: SourceRequest,
) -> None:
    """Show a dataset's schema history (fields added, removed, retyped per run) and what each change reaches."""
    recorded = read_runs(source)
    report = drift(collect_runs(recorded.history), recorded.lineage(), dataset)
    _print_drift(report, fmt)
    if fail_on_change and report.changes:
        sys.exit(EXIT_CHECK_FAILED)
