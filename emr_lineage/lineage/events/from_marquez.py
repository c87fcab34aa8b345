"""The events Marquez stored, read back as event files are read: the same checks, so the same graph.

``GET /api/v1/events/lineage`` lists the raw RunEvents Marquez received (:func:`stored_events`: a window of
event times, both ends inclusive, paged, oldest first, Marquez's added nulls dropped). Each
is checked as a line of an event file is (:func:`~emr_lineage.lineage.schemas.checks.check_event_with`,
the event rule included). Marquez may hold events stored before that rule, or from producers that never
went through the gateway: those are skipped and counted, never the reason a read fails.
"""

from __future__ import annotations

import datetime as dt
import json
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any

from emr_lineage.lineage.events.reader import Skipped
from emr_lineage.lineage.schemas.checks import check_event_with, load_schemas
from emr_lineage.lineage.times import event_time
from emr_lineage.marquez.api import EARLIEST_EVENT_TIME, LATEST_EVENT_TIME
from emr_lineage.marquez.client import MarquezClient, MarquezError


@dataclass
class MarquezEvents(Skipped):
    """The events read from Marquez (``source``: its base URL) that pass the checks, and what was skipped."""

    source: str = ""
    events: list[dict[str, Any]] = field(default_factory=list)

    def notes(self) -> list[str]:
        """What to say on stderr about the read."""
        return self.skipped_notes("event(s) Marquez holds that fail the event checks")


_MICROSECOND = dt.timedelta(microseconds=1)  # the precision of the times Marquez stores


def _instant(event: Mapping[str, Any]) -> dt.datetime:
    moment = event_time(event)
    if moment is None:  # Marquez requires one: an event without one is not what it stored
        raise MarquezError(f"Marquez answered an event without a readable eventTime: {str(event)[:200]}")
    return moment


def _same(event: Mapping[str, Any]) -> str:
    """What makes two reads of one stored event the same (its whole JSON)."""
    return json.dumps(event, sort_keys=True, separators=(",", ":"))


def stored_events(
    client: MarquezClient, since: dt.datetime | None = None, until: dt.datetime | None = None
) -> Iterator[dict[str, Any]]:
    """The raw events Marquez stored with an event time from ``since`` to ``until``, both inclusive (open
    ends: the event rule's range), oldest first. Marquez's ``before`` is exclusive: ``until`` plus a
    microsecond is sent. Pages follow event time, not an offset: Marquez orders the events of one instant
    differently from one read to the next, and events arriving meanwhile would move an offset; so each page
    starts at the last time read, and the events of that instant already given are not given again."""
    after = since or EARLIEST_EVENT_TIME
    before = min(until, LATEST_EVENT_TIME - _MICROSECOND) + _MICROSECOND if until else LATEST_EVENT_TIME
    size = client.events_page_size
    seen: set[str] = set()  # the events of instant ``after`` already given
    while True:
        page = client.events_page(after, before)
        yield from (event for event in page if _instant(event) != after or _same(event) not in seen)
        if len(page) < size:
            return
        last = _instant(page[-1])
        if last == after:  # a whole page of one instant: the rest of it by offset, then past it
            yield from _rest_of_instant(client, after, seen | {_same(event) for event in page})
            after, seen = after + _MICROSECOND, set()
            continue
        seen = {_same(event) for event in page if _instant(event) == last}
        after = last


def _rest_of_instant(client: MarquezClient, instant: dt.datetime, seen: set[str]) -> Iterator[dict[str, Any]]:
    offset = client.events_page_size
    while True:
        rest = client.events_page(instant, instant + _MICROSECOND, offset)
        yield from (event for event in rest if _same(event) not in seen)
        if len(rest) < client.events_page_size:
            return
        offset += len(rest)


def _where(event: Mapping[str, Any]) -> str:
    run = event.get("run") if isinstance(event.get("run"), dict) else {}
    return f"{event.get('eventType')} of run {run.get('runId')} at {event.get('eventTime')}"


def read_marquez_events(
    client: MarquezClient, since: dt.datetime | None = None, until: dt.datetime | None = None
) -> MarquezEvents:
    """Marquez's raw events with an event time in [``since``, ``until``] (open ends: all), checked."""
    client.probe()
    schemas = load_schemas()
    read = MarquezEvents(source=client.base_url)
    for event in stored_events(client, since, until):
        problem = check_event_with(event, False, schemas)
        if problem is None:
            read.events.append(event)
        else:
            read.skip(f"{_where(event)}: {problem}")
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
