"""``emr-lineage impact``: what a change to a dataset reaches (docs/analysis.md).

Exit status: 0 the report is printed; 1 ``--fail-on-downstream`` and something is downstream;
2 it could not run (no or two sources, an unknown dataset or column, bad --since/--until, an
unreadable events file, Marquez unreachable, a missing bucket); 130 interrupted.
"""

from __future__ import annotations

import sys

import click

from emr_lineage.analysis.impact import Impact, impact
from emr_lineage.analysis.sources import dump
from emr_lineage.cli.options import dataset_option, depth_option, format_option
from emr_lineage.cli.options_deprecated import deprecated_alias
from emr_lineage.cli.output import Command, fail
from emr_lineage.cli.sources import SourceRequest, print_notes, print_table, read_lineage, source_options
from emr_lineage.errors import EXIT_CHECK_FAILED


def _print_impact(report: Impact, fmt: str) -> None:
    if fmt == "json":
        click.echo(dump(report.as_dict()))
        return
    what = f"{report.dataset} column {report.column!r}" if report.column else report.dataset
    rows = [(a.distance, a.kind, a.label, a.field or "") for a in report.reached]
    if rows:
        print_table(f"{report.direction.capitalize()} of {what}", ("distance", "kind", "name", "column"), rows)
    print_notes(report.notes)
    counts = f"{len(report.jobs)} job(s), {len(report.datasets)} dataset(s)"
    if report.column:
        counts += f", {len(report.columns)} column(s)"
    matched = f" (matched: {', '.join(report.matched)})" if report.matched != [report.dataset] else ""
    click.echo(f"{counts} {report.direction} of {what}{matched}" if rows else f"nothing {report.direction} of {what}")


@click.command("impact", cls=Command)
@dataset_option()
@click.option("--column", metavar="NAME", help="One column of the dataset: follow column lineage instead.")
@click.option("--upstream", is_flag=True, help="What the dataset comes from, instead of what it feeds.")
@depth_option("Follow lineage at most N jobs from the dataset (default: all).")
@format_option(("table", "json"), "table")
@click.option(
    "--fail-on-downstream", is_flag=True, help="Exit 1 when any job or dataset is downstream (a CI gate on a change)."
)
@deprecated_alias("--fail-if-downstream", "fail_on_downstream", "--fail-on-downstream", is_flag=True)
@source_options("Answer from a lineage graph file, as emr-lineage graph --format json writes it.")
def impact_command(
    dataset: str,
    column: str | None,
    upstream: bool,
    depth: int | None,
    fmt: str,
    fail_on_downstream: bool,
    source: SourceRequest,
) -> None:
    """List the jobs, datasets and columns a change to a dataset reaches, with their distance."""
    if fail_on_downstream and upstream:
        fail("--fail-on-downstream does not apply with --upstream")
    lineage = read_lineage(source)
    direction = "upstream" if upstream else "downstream"
    report = impact(lineage, dataset, column=column, direction=direction, depth=depth)
    _print_impact(report, fmt)
    if fail_on_downstream and report.reached:
        sys.exit(EXIT_CHECK_FAILED)
