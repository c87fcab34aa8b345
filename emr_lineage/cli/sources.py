"""Where the analysis commands (impact, drift, audit, runs) read their events, and how they print
tables and notes; their options are ``emr_lineage.cli.options.source_options``."""

from __future__ import annotations

import shutil
import sys
from collections.abc import Sequence
from typing import Any

import click

from emr_lineage.analysis.impact import Lineage
from emr_lineage.analysis.sources import (
    AnalysisError,
    EventSource,
    Window,
    archive_s3_client,
    parse_archive_uri,
    parse_instant,
    read_archive,
    read_files,
    read_graph_file,
    read_marquez,
)
from emr_lineage.cli.output import fail
from emr_lineage.marquez.client import MarquezClient

# Off a terminal (CI logs, pipes, tests) tables are not folded: identifiers stay whole and greppable.
_UNFOLDED_WIDTH = 400


def read_source(
    events: Sequence[str],
    marquez_url: str | None,
    archive: str | None,
    since: str | None,
    until: str | None,
    timeout: float,
    skip_invalid: bool,
    graph_file: str | None = None,
    needs: str = "the events",
) -> EventSource:
    """The events of the one source given, in the window; its notes go to stderr. A graph file
    (``--graph``) holds no events: refused, saying what the command ``needs`` of them."""
    if sum(bool(s) for s in (events, marquez_url, archive, graph_file)) != 1:
        fail("give one source: --events PATH..., --marquez URL, --archive s3://bucket[/prefix] or --graph FILE")
    if graph_file:
        raise AnalysisError(
            f"--graph {graph_file}: a graph file holds the merged graph, not {needs}; give the events it was "
            "built from: --events, --archive or --marquez"
        )
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


def read_lineage(
    events: Sequence[str],
    marquez_url: str | None,
    archive: str | None,
    since: str | None,
    until: str | None,
    timeout: float,
    skip_invalid: bool,
    graph_file: str | None,
) -> Lineage:
    """The dataset and column lineage of the one source given: a graph file's own, or built from the events."""
    if not graph_file or events or marquez_url or archive:
        return Lineage.of(
            read_source(events, marquez_url, archive, since, until, timeout, skip_invalid, graph_file).events
        )
    if since is not None or until is not None:
        fail("--since/--until select events by their time; a graph file holds none (build it from that window)")
    return Lineage.of_graph(read_graph_file(graph_file))


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
