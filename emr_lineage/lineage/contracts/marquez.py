"""A contract's lineage as Marquez holds it, for ``emr-lineage validate --marquez`` and ``emr-lineage e2e``.

The raw events Marquez stored (:mod:`emr_lineage.lineage.events.from_marquez`), in a window of event
times and, for the jobs one orchestrator run launched, only that run's (``runs_under``), built into the
graph as event files are: the contract is held to the same graph whichever source the events came from. Marquez's own
lineage view would not do: it puts an application's edges on its actions, keeps only each job's latest
completed version and renames a job run under a parent (docs/graph.md, "Marquez's own lineage view").
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from emr_lineage.lineage.contracts.model import Contract
from emr_lineage.lineage.graph.from_events import build_graph
from emr_lineage.lineage.graph.model import LineageGraph


def contract_graph(events: Iterable[dict[str, Any]], contract: Contract) -> LineageGraph:
    """The graph at the contract's level of Marquez's events, as it is built from event files."""
    graph = build_graph(events, contract.level)
    graph.source = "marquez"
    return graph
