"""``graph --marquez`` and ``validate --marquez``: the graph of the raw events Marquez stored, read back
(``GET /api/v1/events/lineage``) and built as event files are, so both sources give the same graph
(:func:`emr_lineage.lineage.contracts.marquez.marquez_graph`); what was skipped goes to stderr."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import click

from emr_lineage.lineage.times import Window

if TYPE_CHECKING:  # what only --marquez needs is imported when it is given: `graph --events` starts without it
    from emr_lineage.lineage.contracts.model import Contract
    from emr_lineage.lineage.graph.model import LineageGraph


def _read(marquez_url: str, timeout: float, level: str, window: Window, **options: Any) -> LineageGraph:
    """:func:`~emr_lineage.lineage.contracts.marquez.marquez_graph` of the Marquez at ``marquez_url``; what
    it skipped on stderr."""
    from emr_lineage.lineage.contracts.marquez import marquez_graph as read_graph
    from emr_lineage.marquez.client import MarquezClient  # the HTTP stack, only for Marquez

    with MarquezClient(marquez_url, timeout=timeout) as client:
        graph, _ = read_graph(client, level, window, say=lambda note: click.echo(note, err=True), **options)
    return graph


def marquez_graph(
    marquez_url: str, since: str | None, until: str | None, level: str, timeout: float, runs: bool
) -> LineageGraph:
    """The graph of the events Marquez holds in the window (``runs``: with their history)."""
    return _read(marquez_url, timeout, level, Window.of(since, until), runs=runs)


def marquez_contract_graph(
    marquez_url: str, contract: Contract, parent_job: str | None, since: str | None, until: str | None, timeout: float
) -> LineageGraph:
    """The contract's graph from Marquez's events, of the runs under ``parent_job`` when given."""
    from emr_lineage.lineage.contracts.marquez import TO_CHECK_A_CONTRACT

    window = Window.of(since, until)
    return _read(marquez_url, timeout, contract.level, window, job_name=parent_job, purpose=TO_CHECK_A_CONTRACT)
