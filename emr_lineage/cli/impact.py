"""``emr-lineage impact``, and the event sources every analysis command reads (docs/analysis.md).

Exit status: 0 the report is printed; 1 ``--fail-if-downstream`` and something is downstream;
2 it could not run (no or two sources, an unknown dataset or column, bad --since/--until, an
unreadable events file, Marquez unreachable, a missing bucket); 130 interrupted.
"""

from __future__ import annotations

import shutil
import sys
from collections.abc import Callable, Sequence
from typing import Any

import click

from emr_lineage.analysis.impact import Impact, Lineage, impact
from emr_lineage.analysis.sources import (
    AnalysisError,
    EventSource,
    Window,
    archive_s3_client,
    dump,
    parse_archive_uri,
    parse_instant,
    read_archive,
    read_files,
    read_marquez,
)
from emr_lineage.cli.output import Command, fail
from emr_lineage.errors import EXIT_CHECK_FAILED
from emr_lineage.http import DEFAULT_TIMEOUT
from emr_lineage.marquez.client import MarquezClient

# Off a terminal (CI logs, pipes, tests) tables are not folded: identifiers stay whole and greppable.
_UNFOLDED_WIDTH = 400


def source_options(function: Callable[..., Any]) -> Callable[..., Any]:
    """``--events``/``--marquez``/``--archive`` (one of them), ``--since``/``--until``, ``--timeout``,
    ``--skip-invalid``: where an analysis command reads its events."""
    options = [
        click.option(
            "--events", "events", multiple=True, metavar="PATH", help="OpenLineage events: files or directories."
        ),
        click.option("--marquez", "marquez_url", metavar="URL", help="Marquez API base URL (its raw lineage events)."),
        click.option(
            "--archive", metavar="S3URI", help="The lineage gateway's archive: s3://bucket or s3://bucket/prefix."
        ),
        click.option("--since", metavar="ISO", help="Only events at or after this time (ISO 8601, UTC by default)."),
        click.option("--until", metavar="ISO", help="Only events at or before this time."),
        click.option(
            "--timeout",
            type=click.FloatRange(min=0.1),
            default=DEFAULT_TIMEOUT,
            show_default=True,
            help="Marquez HTTP timeout, seconds.",
        ),
        click.option("--skip-invalid", is_flag=True, help="Skip malformed events in files (counted on stderr)."),
    ]
    for option in reversed(options):
        function = option(function)
    return function


def read_source(
    events: Sequence[str],
    marquez_url: str | None,
    archive: str | None,
    since: str | None,
    until: str | None,
    timeout: float,
    skip_invalid: bool,
) -> EventSource:
    """The events of the one source given, in the window; its notes go to stderr."""
    if sum(bool(s) for s in (events, marquez_url, archive)) != 1:
        fail("give one source: --events PATH..., --marquez URL or --archive s3://bucket[/prefix]")
    window = Window(
        parse_instant(since, "--since") if since is not None else None,
        parse_instant(until, "--until") if until is not None else None,
    )
    if events:
        source = read_files(events, window, skip_invalid)
    elif marquez_url:
        with MarquezClient(marquez_url, timeout=timeout) as client:
            source = read_marquez(client, window)
    else:
        source = read_archive(archive_s3_client(), parse_archive_uri(archive or ""), window)
    for note in source.notes:
        click.echo(note, err=True)
    if not source.events:
        where = " in the window" if not window.is_open else ""
        raise AnalysisError(f"{source.label}: no events{where} to analyse")
    return source


def print_table(title: str, columns: Sequence[str], rows: Sequence[Sequence[Any]]) -> None:
    """One table on stdout (folded to the terminal, else whole)."""
    from rich.console import Console
    from rich.table import Table

    width = shutil.get_terminal_size((160, 40)).columns if sys.stdout.isatty() else _UNFOLDED_WIDTH
    console = Console(file=sys.stdout, width=max(width, 100), highlight=False, soft_wrap=False)
    table = Table(title=title)
    for column in columns:
        table.add_column(column, overflow="fold")
    for row in rows:
        table.add_row(*("" if cell is None else str(cell) for cell in row))
    console.print(table)


def print_notes(notes: Sequence[str]) -> None:
    for note in notes:
        click.echo(f"note: {note}")


format_option = click.option(
    "--format", "fmt", type=click.Choice(("table", "json")), default="table", show_default=True
)
dataset_option = click.option(
    "--dataset",
    required=True,
    metavar="ID",
    help="The dataset: s3://bucket/path, a local path, or table:<name> / table:<db>.<name> (as in contracts).",
)


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
@dataset_option
@click.option("--column", metavar="NAME", help="One column of the dataset: follow column lineage instead.")
@click.option("--upstream", is_flag=True, help="What the dataset comes from, instead of what it feeds.")
@click.option("--depth", type=click.IntRange(min=1), metavar="N", help="At most N jobs away (default: all).")
@format_option
@click.option(
    "--fail-if-downstream", is_flag=True, help="Exit 1 when any job or dataset is downstream (a CI gate on a change)."
)
@source_options
def impact_command(
    dataset: str,
    column: str | None,
    upstream: bool,
    depth: int | None,
    fmt: str,
    fail_if_downstream: bool,
    events: tuple[str, ...],
    marquez_url: str | None,
    archive: str | None,
    since: str | None,
    until: str | None,
    timeout: float,
    skip_invalid: bool,
) -> None:
    """List the jobs, datasets and columns a change to a dataset reaches, with their distance."""
    if fail_if_downstream and upstream:
        fail("--fail-if-downstream does not apply with --upstream")
    source = read_source(events, marquez_url, archive, since, until, timeout, skip_invalid)
    direction = "upstream" if upstream else "downstream"
    report = impact(Lineage.of(source.events), dataset, column=column, direction=direction, depth=depth)
    _print_impact(report, fmt)
    if fail_if_downstream and report.reached:
        sys.exit(EXIT_CHECK_FAILED)
