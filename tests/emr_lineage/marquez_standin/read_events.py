"""GET /api/v1/events/lineage (OpenLineageResource.getLineageEvents, R12-R14)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from .incoming import RUN_EVENT_TYPE
from .jtime import TimeParseError, db_time, parse_query_time
from .reply import Reply, error, ok
from .store import Store

DEFAULT_BEFORE = "2030-01-01T00:00:00+00:00"
DEFAULT_AFTER = "1970-01-01T00:00:00+00:00"


def _window(query: Mapping[str, str]) -> tuple[int, int] | Reply:
    try:
        before = db_time(parse_query_time(query.get("before", DEFAULT_BEFORE)))
        after = db_time(parse_query_time(query.get("after", DEFAULT_AFTER)))
    except TimeParseError as failure:
        return error(400, f"Parameter is invalid: {failure}")
    return before, after


def lineage_events(store: Store, query: Mapping[str, str], limit: int, offset: int) -> Reply:
    """Run events with after <= eventTime < before, by eventTime; totalCount counts every stored
    event of the window, DatasetEvents and JobEvents too."""
    window = _window(query)
    if isinstance(window, Reply):
        return window
    before, after = window
    direction = query.get("sortDirection", "desc").upper()
    if direction not in ("ASC", "DESC"):
        return error(404, "HTTP 404 Not Found")
    inside = [(seq, row) for seq, row in enumerate(store.t.events) if after <= row.event_time < before]
    runs = [(seq, row) for seq, row in inside if row.kind == RUN_EVENT_TYPE]
    # ORDER BY event_time only: equal times keep the order they were stored in (the recordings show
    # PostgreSQL's order of ties varying with the plan).
    sign = -1 if direction == "DESC" else 1
    runs.sort(key=lambda item: (sign * item[1].event_time, item[0]))
    events: list[Any] = [row.event for _, row in runs[offset : offset + limit]]
    return ok({"totalCount": len(inside), "events": events})
