"""The events Marquez stored, read back as event files are read: the same checks, so the same graph.

``GET /api/v1/events/lineage`` lists the raw RunEvents Marquez received (:meth:`MarquezClient.lineage_events`:
a window of event times, both ends inclusive, paged, oldest first, Marquez's added nulls dropped). Each
is checked as a line of an event file is (:func:`~emr_lineage.lineage.schemas.checks.check_event_with`,
the event rule included). Marquez may hold events stored before that rule, or from producers that never
went through the gateway: those are skipped and counted, never the reason a read fails.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any

from emr_lineage.lineage.schemas.checks import check_event_with, load_schemas
from emr_lineage.marquez.client import MarquezClient

_MAX_DETAILS = 5


@dataclass
class MarquezEvents:
    """The events read from Marquez that pass the checks, and what was skipped (``details``: the first few)."""

    source: str
    events: list[dict[str, Any]] = field(default_factory=list)
    skipped: int = 0
    details: list[str] = field(default_factory=list)

    def notes(self) -> list[str]:
        """What to say on stderr about the read."""
        if not self.skipped:
            return []
        first = f" (first: {self.details[0]})" if self.details else ""
        return [f"skipped {self.skipped} event(s) Marquez holds that fail the event checks{first}"]


def _where(event: Mapping[str, Any]) -> str:
    run = event.get("run") if isinstance(event.get("run"), dict) else {}
    return f"{event.get('eventType')} of run {run.get('runId')} at {event.get('eventTime')}"


def read_marquez_events(
    client: MarquezClient, since: dt.datetime | None = None, until: dt.datetime | None = None
) -> MarquezEvents:
    """Marquez's raw events with an event time in [``since``, ``until``] (open ends: all), checked."""
    client.probe()
    schemas = load_schemas()
    read = MarquezEvents(client.base_url)
    for event in client.lineage_events(since, until):
        problem = check_event_with(event, False, schemas)
        if problem is None:
            read.events.append(event)
            continue
        read.skipped += 1
        if len(read.details) < _MAX_DETAILS:
            read.details.append(f"{_where(event)}: {problem}")
    return read


def _parent_names(event: Mapping[str, Any]) -> Iterator[tuple[str | None, str | None]]:
    """(job name, run id) of the event's parent run and of its root run."""
    run = event.get("run")
    facets = run.get("facets") if isinstance(run, dict) else None
    parent = facets.get("parent") if isinstance(facets, dict) else None
    for part in (parent, parent.get("root") if isinstance(parent, dict) else None):
        if isinstance(part, dict):
            yield (part.get("job") or {}).get("name"), (part.get("run") or {}).get("runId")


def _run_id(event: Mapping[str, Any]) -> Any:
    run = event.get("run")
    return run.get("runId") if isinstance(run, dict) else None


def runs_under(
    events: Iterable[dict[str, Any]], *, job_name: str | None = None, run_id: str | None = None
) -> list[dict[str, Any]]:
    """The events of the runs whose parent or root run is that of ``job_name`` (or is ``run_id``), and of
    the runs under those: what one orchestrator run launched, its Spark applications and their actions.
    Neither given: every event."""
    events = list(events)
    if job_name is None and run_id is None:
        return events
    parents: dict[Any, set[tuple[str | None, str | None]]] = {}
    for event in events:  # every event of a run: one may lack the parent facet its others carry
        parents.setdefault(_run_id(event), set()).update(_parent_names(event))
    wanted = {
        run
        for run, names in parents.items()
        if any(
            (job_name is not None and name == job_name) or (run_id is not None and parent == run_id)
            for name, parent in names
        )
    }
    while True:  # an action whose parent facet names only its application
        more = {run for run, names in parents.items() if run not in wanted and any(p in wanted for _, p in names)}
        if not more:
            break
        wanted |= more
    return [event for event in events if _run_id(event) in wanted]
