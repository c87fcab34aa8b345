"""The lineage Marquez holds, for ``emr-lineage graph --marquez``, ``validate --marquez`` and ``emr-lineage e2e``.

The raw events Marquez stored (:mod:`emr_lineage.lineage.events.from_marquez`), in a window of event
times and, for the jobs one orchestrator run launched, only that run's (``runs_under``), built into the
graph as event files are: a graph, and a contract held to it, are the same whichever source the events
came from. Marquez's own lineage view would not do: it puts an application's edges on its actions, keeps
only each job's latest completed version and renames a job run under a parent (docs/graph.md, "Marquez's
own lineage view").
"""

from __future__ import annotations

from collections.abc import Callable

from emr_lineage.lineage.events.from_marquez import MarquezEvents, read_marquez_events, runs_under
from emr_lineage.lineage.events.sources import EventsError
from emr_lineage.lineage.graph.from_events import build_graph
from emr_lineage.lineage.graph.model import LineageGraph
from emr_lineage.lineage.times import Window
from emr_lineage.marquez.client import MarquezClient

TO_BUILD_A_GRAPH = "to build a graph from"
TO_CHECK_A_CONTRACT = "to check the contract against"


def _unsaid(_note: str) -> None:
    pass


def marquez_graph(
    client: MarquezClient,
    level: str,
    window: Window | None = None,
    *,
    runs: bool = False,
    job_name: str | None = None,
    run_id: str | None = None,
    purpose: str | None = TO_BUILD_A_GRAPH,
    say: Callable[[str], None] = _unsaid,
) -> tuple[LineageGraph, MarquezEvents]:
    """The graph at ``level`` (source ``marquez``) of the events Marquez holds in ``window`` (None: all),
    and the read (what it skipped, said first through ``say``). ``runs``: with the runs' history;
    ``job_name``/``run_id``: only the runs launched under that parent (:func:`runs_under`).

    No event left is :class:`EventsError` ("Marquez holds no events ... <purpose>": an empty graph would
    read as every contract edge missing), unless ``purpose`` is None (the e2e reads until lineage arrives).
    """
    window = window or Window()
    read = read_marquez_events(client, window.since, window.until)
    for note in read.notes():
        say(note)
    events = runs_under(read.events, job_name=job_name, run_id=run_id)
    if not events and purpose is not None:
        where = " in the window" if not window.is_open else ""
        under = f" of a run under parent job {job_name!r}" if job_name else ""
        raise EventsError(f"{read.source}: Marquez holds no events{where}{under} {purpose}")
    return build_graph(events, level, runs=runs, source="marquez"), read
