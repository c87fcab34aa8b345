"""``emr-lineage audit``: who read or wrote a dataset, and which versions; docs/analysis.md.

Exit status: 0 the report is printed; 2 it could not run (see ``emr-lineage impact``) or an unknown
``--dataset``; 130 interrupted.
"""

from __future__ import annotations

import click

from emr_lineage.analysis.audit import Audit, audit
from emr_lineage.analysis.runs import collect_runs, dataset_lines, format_time
from emr_lineage.analysis.sources import dump
from emr_lineage.cli.options import dataset_option, format_option, level_option
from emr_lineage.cli.output import Command
from emr_lineage.cli.sources import (
    RUNS_GRAPH_HELP,
    SourceRequest,
    print_notes,
    print_table,
    read_runs,
    source_options,
)
from emr_lineage.lineage.graph.history import INPUT, OUTPUT


def _print_audit(report: Audit, fmt: str) -> None:
    if fmt == "json":
        click.echo(dump(report.as_dict()))
        return
    rows = [
        (
            format_time(a.run.start),
            a.run.job,
            a.run.run_id,
            a.run.state,
            a.access,
            ", ".join(a.versions_read + a.versions_written),
            "\n".join(dataset_lines(a.run, INPUT)),
            "\n".join(dataset_lines(a.run, OUTPUT)),
        )
        for a in report.accesses
    ]
    if rows:
        title = f"Runs that read or wrote {report.dataset}"
        columns = ("start", "job", "run", "state", "access", "version", "inputs read", "outputs written")
        print_table(title, columns, rows)
    print_notes(report.notes)
    click.echo(f"{len(rows)} run(s) read or wrote {report.dataset} (from {report.source})")


@click.command("audit", cls=Command)
@dataset_option()
@level_option
@format_option(("table", "json"), "table")
@source_options(RUNS_GRAPH_HELP)
def audit_command(
    dataset: str,
    level: str,
    fmt: str,
    source: SourceRequest,
) -> None:
    """List the runs that read or wrote a dataset in a time window, with the versions each read and wrote."""
    recorded = read_runs(source)
    runs = collect_runs(recorded.history, level)
    report = audit(runs, recorded.lineage(), dataset, source=recorded.source, since=source.since, until=source.until)
    _print_audit(report, fmt)
