"""Where the analysis commands (impact, drift, audit, runs) read their events, their CI gate
(``--fail-on-change``), and how they print tables and notes: :func:`source_options` gives a command its
source as one :class:`SourceRequest`."""

from __future__ import annotations

import functools
from collections.abc import Callable, Sequence
from dataclasses import dataclass, fields
from typing import Any

import click

from emr_lineage.analysis.impact import Lineage
from emr_lineage.analysis.sources import (
    AnalysisError,
    EventSource,
    archive_s3_client,
    parse_archive_uri,
    read_archive,
    read_files,
    read_graph_file,
    read_marquez,
)
from emr_lineage.cli.options import (
    ARCHIVE_FORM,
    MARQUEZ_EVENTS,
    archive_option,
    events_option,
    graph_file_option,
    marquez_option,
    shared_option,
    since_option,
    skip_invalid_option,
    source_account_option,
    timeout_option,
    until_option,
)
from emr_lineage.cli.output import fail, stdout_console
from emr_lineage.lineage.graph.history import RunHistory
from emr_lineage.lineage.times import Window
from emr_lineage.marquez.client import MarquezClient


@dataclass(frozen=True)
class SourceRequest:
    """Where an analysis command reads: the values of its source options (one source of four)."""

    events: tuple[str, ...]
    marquez_url: str | None
    archive: str | None
    source_account: str | None
    graph_file: str | None
    since: str | None
    until: str | None
    timeout: float
    skip_invalid: bool


# --graph FILE of the commands that read runs (drift, audit, runs): impact reads any graph file.
RUNS_GRAPH_HELP = (
    "Answer from a lineage graph file written with its runs: emr-lineage graph --format json --with-runs -o FILE "
    "(one without runs is refused)."
)


def source_options(graph_help: str) -> Callable[[Callable[..., Any]], Callable[..., Any]]:
    """``--events``/``--marquez``/``--archive``/``--graph`` (one of them), ``--source-account`` (with
    ``--archive``), ``--since``/``--until``, ``--timeout``, ``--skip-invalid`` (each declared in
    :mod:`emr_lineage.cli.options`; ``--graph``'s help is ``graph_help``), passed to the command as one
    ``source``: :class:`SourceRequest`."""
    names = [f.name for f in fields(SourceRequest)]
    options = [
        events_option(),
        marquez_option(MARQUEZ_EVENTS),
        archive_option(help=f"Read the events of the lineage gateway's archive: {ARCHIVE_FORM}."),
        source_account_option(
            "With --archive: only the events the gateway received with this AWS account's key (12 digits; "
            "its own account, or a spoke's)."
        ),
        graph_file_option(graph_help),
        since_option(),
        until_option(),
        timeout_option(),
        skip_invalid_option,
    ]

    def decorate(function: Callable[..., Any]) -> Callable[..., Any]:
        @functools.wraps(function)
        def command(**kwargs: Any) -> Any:
            return function(source=SourceRequest(**{name: kwargs.pop(name) for name in names}), **kwargs)

        for option in reversed(options):
            command = option(command)
        return command

    return decorate


def read_source(request: SourceRequest) -> EventSource:
    """The events of the one source given (not a graph file: :func:`read_lineage` and :func:`read_runs`
    read those), in the window; its notes go to stderr."""
    events, marquez_url, archive, graph_file = request.events, request.marquez_url, request.archive, request.graph_file
    since, until = request.since, request.until
    if sum(bool(s) for s in (events, marquez_url, archive, graph_file)) != 1:
        fail("give one source: --events PATH..., --marquez URL, --archive s3://bucket[/prefix] or --graph FILE")
    _account_needs_archive(request)
    window = Window.of(since, until)
    if events:
        source = read_files(events, window, request.skip_invalid)
    elif marquez_url:
        with MarquezClient(marquez_url, timeout=request.timeout) as client:
            source = read_marquez(client, window)
    else:
        location = parse_archive_uri(archive or "")
        source = read_archive(archive_s3_client(), location, window, account=request.source_account)
    for note in source.notes:
        click.echo(note, err=True)
    if not source.events:
        where = " in the window" if not window.is_open else ""
        raise AnalysisError(f"{source.label}: no events{where} to analyse")
    return source


def _account_needs_archive(request: SourceRequest) -> None:
    if request.source_account and not request.archive:
        fail("--source-account selects archived events by the account whose key sent them: give --archive too")


def _graph_only(request: SourceRequest) -> str | None:
    """The graph file, when it is the one source given (``--since``/``--until`` do not apply to it)."""
    if not request.graph_file or request.events or request.marquez_url or request.archive:
        return None
    _account_needs_archive(request)
    if request.since is not None or request.until is not None:
        fail("--since/--until select events by their time; a graph file holds none (build it from that window)")
    return request.graph_file


def read_lineage(request: SourceRequest) -> Lineage:
    """The dataset and column lineage of the one source given: a graph file's own, or built from the events."""
    graph_file = _graph_only(request)
    if graph_file is None:
        return Lineage.of(read_source(request).events)
    return Lineage.of_graph(read_graph_file(graph_file))


@dataclass
class Recorded:
    """The runs of the one source given (``source``: events, marquez, archive or graph) and its lineage."""

    source: str
    label: str
    history: RunHistory
    lineage: Callable[[], Lineage]  # made when asked for (runs never asks)


def read_runs(request: SourceRequest) -> Recorded:
    """The runs of the one source given: a graph file's history (``graph --with-runs``), or the events'."""
    graph_file = _graph_only(request)
    if graph_file is not None:
        graph = read_graph_file(graph_file)
        if graph.history is None:
            raise AnalysisError(
                f"--graph {graph_file}: this graph file holds no runs; build it with them (emr-lineage graph "
                "--with-runs ... -o FILE) or give the events it was built from: --events, --archive or --marquez"
            )
        return Recorded("graph", graph_file, graph.history, lambda: Lineage.of_graph(graph))
    source = read_source(request)
    return Recorded(source.kind, source.label, RunHistory.of(source.events), lambda: Lineage.of(source.events))


def print_table(title: str, columns: Sequence[str], rows: Sequence[Sequence[Any]]) -> None:
    """One table on stdout (folded to the terminal, else whole)."""
    from rich.table import Table

    console = stdout_console()
    table = Table(title=title)
    for column in columns:
        table.add_column(column, overflow="fold")
    for row in rows:
        table.add_row(*("" if cell is None else str(cell) for cell in row))
    console.print(table)


def print_notes(notes: Sequence[str]) -> None:
    for note in notes:
        click.echo(f"note: {note}")


def fail_on_change_option(help: str) -> Callable[[Callable[..., Any]], Callable[..., Any]]:
    """``--fail-on-change``: a CI gate; ``help`` says which change."""
    return shared_option(
        "--fail-on-change", meaning="Exit 1 when the command finds a change (a CI gate).", help=help, is_flag=True
    )
