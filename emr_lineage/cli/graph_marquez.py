"""``graph --marquez`` and ``validate --marquez``: the graph of the raw events Marquez stored, read back
(``GET /api/v1/events/lineage``) and built as event files are, so both sources give the same graph."""

from __future__ import annotations

from typing import TYPE_CHECKING

import click

from emr_lineage.lineage.events.sources import EventsError
from emr_lineage.lineage.graph.from_events import build_graph

if TYPE_CHECKING:  # what only --marquez needs is imported when it is given: `graph --events` starts without it
    from emr_lineage.analysis.sources import Window
    from emr_lineage.lineage.contracts.model import Contract
    from emr_lineage.lineage.events.from_marquez import MarquezEvents
    from emr_lineage.lineage.graph.model import LineageGraph


def _window(since: str | None, until: str | None) -> Window:
    from emr_lineage.analysis.sources import Window

    return Window.of(since, until)


def _read(marquez_url: str, window: Window, timeout: float) -> MarquezEvents:
    """The events Marquez holds in the window; what was skipped on stderr."""
    from emr_lineage.lineage.events.from_marquez import read_marquez_events
    from emr_lineage.marquez.client import MarquezClient  # the HTTP stack, only for Marquez

    with MarquezClient(marquez_url, timeout=timeout) as client:
        read = read_marquez_events(client, window.since, window.until)
    for note in read.notes():
        click.echo(note, err=True)
    return read


def marquez_graph(
    marquez_url: str, since: str | None, until: str | None, level: str, timeout: float, runs: bool
) -> LineageGraph:
    """The graph of the events Marquez holds in the window (``runs``: with their history)."""
    window = _window(since, until)
    read = _read(marquez_url, window, timeout)
    if not read.events:
        where = " in the window" if not window.is_open else ""
        raise EventsError(f"{read.source}: Marquez holds no events{where} to build a graph from")
    graph = build_graph(read.events, level, runs=runs)
    graph.source = "marquez"
    return graph


def marquez_contract_graph(
    marquez_url: str, contract: Contract, parent_job: str | None, since: str | None, until: str | None, timeout: float
) -> LineageGraph:
    """The contract's graph from Marquez's events (:mod:`emr_lineage.lineage.contracts.marquez`)."""
    from emr_lineage.lineage.contracts.marquez import contract_graph
    from emr_lineage.lineage.events.from_marquez import runs_under

    window = _window(since, until)
    read = _read(marquez_url, window, timeout)
    events = runs_under(read.events, job_name=parent_job)
    if not events:  # else every contract edge would read as missing, a failed check rather than a wrong read
        where = " in the window" if not window.is_open else ""
        under = f" of a run under parent job {parent_job!r}" if parent_job else ""
        raise EventsError(f"{read.source}: Marquez holds no events{where}{under} to check the contract against")
    return contract_graph(events, contract)
