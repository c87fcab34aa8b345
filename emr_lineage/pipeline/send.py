"""Send OpenLineage events to a lineage endpoint: Marquez's ``POST /api/v1/lineage`` or the gateway's.

Used by ``emr-lineage gateway post`` (events from files). Events are read with
:func:`~emr_lineage.lineage.events.reader.load_events` and POSTed one after another, in the order
they were read (paths in the order given, lines in order), except that the events of one run are put
in ``eventTime`` order (stable: ties keep the read order) in the places that run's events held:
Marquez builds a run's state from its events, so START must arrive before COMPLETE even when a run's
events come from two files given in the wrong order. The OpenLineage listener writes each run's
events in that order already.

The one HTTP stack does the retries and the deadline of each request: a gateway answers 503
while its archive or queue is unavailable, and re-sending is safe (the gateway deduplicates by
content, Marquez takes an event twice without harm), so POSTs are retried too. What the server
answers decides what happens next:

* 2xx: posted;
* 3xx: not delivered (a write is never sent on where a server redirects it): listed with where it points,
  and nothing more is sent (every event would be redirected);
* 401 or 403: the key is refused: listed, and nothing more is sent (every event would be refused);
* another 4xx (400 bad event, 413 too large, 422...): that event is refused and listed, the
  others are still sent;
* 404 or 405 (not a lineage endpoint), 429 or 5xx once the retries are spent, unreachable, timed
  out: :class:`PostError`, nothing more is sent; the message says how many were posted before.
"""

from __future__ import annotations

import json
import os
from collections import defaultdict
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

from emr_lineage.errors import EmrLineageError
from emr_lineage.http import DEFAULT_TIMEOUT, HttpClient, HttpError, Reply, is_redirect
from emr_lineage.lineage.events.reader import load_events
from emr_lineage.lineage.times import by_event_time, event_time
from emr_lineage.marquez.api import LINEAGE_ENDPOINT, base_url

KEY_REFUSED = (401, 403)


def stops_sending(status: int) -> bool:
    """Whether every later event would get the same answer: a refused key, a redirect."""
    return status in KEY_REFUSED or is_redirect(status)


NOT_AN_ENDPOINT = (404, 405)


class PostError(EmrLineageError):
    """The endpoint cannot take events (exit 2): unreachable, not a lineage endpoint, unavailable."""


@dataclass(frozen=True)
class PendingEvent:
    """One event to send and where it was read: ``<path> event <n>`` (n counts from 1 per path)."""

    location: str
    event: dict[str, Any]

    def describe(self) -> str:
        """``events.jsonl event 3 (START of job ns/name, run 1b2c...)``: enough to find it again."""
        job = self.event.get("job") if isinstance(self.event.get("job"), dict) else {}
        run = self.event.get("run") if isinstance(self.event.get("run"), dict) else {}
        what = self.event.get("eventType") or "event"
        return f"{self.location} ({what} of job {job.get('namespace')}/{job.get('name')}, run {run.get('runId')})"


@dataclass(frozen=True)
class Refusal:
    """An event the server refused: where it was read, the HTTP status and the server's words."""

    event: PendingEvent
    status: int
    message: str  # ``POST url -> HTTP 400 (client error): <the server's message>``

    def describe(self) -> str:
        return f"{self.event.describe()}: {self.message}"


@dataclass
class PostResult:
    posted: int = 0
    refused: list[Refusal] = field(default_factory=list)
    not_sent: int = 0  # after the key was refused or the server redirected

    @property
    def ok(self) -> bool:
        return not self.refused and not self.not_sent


def read_events(paths: Iterable[str | os.PathLike[str]]) -> list[PendingEvent]:
    """The events of ``paths`` (as :func:`load_events` reads them), each with its location.

    Each path is loaded on its own so that an event's location names the path it came from.
    Raises :class:`~emr_lineage.lineage.events.reader.EventsError` (exit 2) at the first bad event.
    """
    pending: list[PendingEvent] = []
    for path in paths:
        where = "stdin" if os.fspath(path) == "-" else os.fspath(path)
        loaded = load_events([path])
        pending.extend(PendingEvent(f"{where} event {n}", e) for n, e in enumerate(loaded.events, start=1))
    return pending


def in_run_order(events: Sequence[PendingEvent]) -> list[PendingEvent]:
    """``events`` with each run's events in ``eventTime`` order, in the slots that run's events held.

    A run with an event whose time cannot be read keeps its read order.
    """
    slots: dict[Any, list[int]] = defaultdict(list)
    for index, pending in enumerate(events):
        run = pending.event.get("run")
        run_id = run.get("runId") if isinstance(run, dict) else None
        slots[run_id if isinstance(run_id, str) else ("no run id", index)].append(index)
    ordered = list(events)
    for indexes in slots.values():
        if len(indexes) < 2 or any(event_time(events[i].event) is None for i in indexes):
            continue
        for slot, index in zip(indexes, by_event_time(indexes, lambda i: events[i].event), strict=True):
            ordered[slot] = events[index]
    return ordered


def lineage_url(url: str) -> str:
    """The lineage endpoint under ``url``, a Marquez's or a gateway's base URL: ``http://host:5000``, with or
    without a pasted ``/api/v1`` or ``/api/v1/lineage`` (as ``run-local --url``); PostError when it is not
    an http(s) URL with a host (:func:`~emr_lineage.marquez.api.base_url`'s check)."""
    try:
        return base_url(url) + LINEAGE_ENDPOINT
    except ValueError as exc:
        raise PostError(f"--marquez {exc}") from None


def post_events(
    events: Sequence[PendingEvent],
    url: str,
    *,
    api_key: str | None = None,
    timeout: float = DEFAULT_TIMEOUT,
    on_result: Callable[[PendingEvent, Refusal | None], None] | None = None,
    client: HttpClient | None = None,
) -> PostResult:
    """POST ``events`` in order to ``url`` + the lineage endpoint (see the module's doc for what
    each answer does). ``on_result`` is called after each event with its refusal, or None."""
    target = lineage_url(url)
    headers = {"Content-Type": "application/json"}
    if api_key:
        headers["Authorization"] = f"Bearer {api_key}"
    own = client is None
    http = client or HttpClient(timeout=timeout, retry_methods=("POST",), headers=headers)
    result = PostResult()
    try:
        for index, pending in enumerate(events):
            reply = _post(http, target, pending, headers, result)
            refusal = None if reply.ok else Refusal(pending, reply.status, str(reply.error()))
            if refusal:
                result.refused.append(refusal)
            else:
                result.posted += 1
            if on_result:
                on_result(pending, refusal)
            if refusal and stops_sending(refusal.status):
                result.not_sent = len(events) - index - 1
                break
    finally:
        if own:
            http.close()
    return result


def _post(http: HttpClient, target: str, pending: PendingEvent, headers: dict[str, str], result: PostResult) -> Reply:
    def cannot(reason: str) -> PostError:
        before = f"{result.posted} event(s) posted before it" + (
            f", {len(result.refused)} refused" if result.refused else ""
        )
        return PostError(f"{reason} (at {pending.location}; {before}; posting them again is harmless)")

    body = json.dumps(pending.event, ensure_ascii=False).encode()
    try:
        reply = http.request("POST", target, data=body, headers=headers)
    except HttpError as exc:
        raise cannot(str(exc)) from None
    if reply.status in NOT_AN_ENDPOINT:
        raise cannot(f"{reply.error()}; is {target} a Marquez API or a lineage gateway?")
    if reply.status == 429 or reply.status >= 500:
        raise cannot(f"{reply.error()}, still after the retries")
    return reply
