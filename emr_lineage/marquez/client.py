"""A small client of the Marquez HTTP API (0.51.x, ``/api/v1``): HTTP only, no contract knowledge.

emr-lineage reads what Marquez stored as raw events (:meth:`MarquezClient.events_page`) and builds the
graph from them as from event files, so every source gives the same graph; Marquez's own lineage view
(``GET /api/v1/lineage``) shows only each job's latest completed version and puts a Spark application's
edges on its actions (docs/graph.md, "Marquez's own lineage view").

Every call goes through :mod:`emr_lineage.http`: urllib3 retries (connect/read errors and
429/5xx, exponential backoff), ``timeout`` as the deadline of each whole request (retries and
body included) and a cap on the reply size. List endpoints are paged with ``limit``/``offset``.
Replays (``POST /api/v1/lineage``) use the same stack; POST is retried too, Marquez takes an
event twice without harm.

A server that is not Marquez reads as :class:`NotMarquezError` ("not a Marquez API at URL"),
never as "node unknown": :meth:`MarquezClient.probe` checks that ``GET /api/v1/namespaces``
answers JSON with a ``namespaces`` list; it runs before a failed read is reported (an HTTP 404,
a reply that is not JSON or not Marquez's shape), and callers may run it up front.
Every failure is a :class:`MarquezError` with one readable line.
"""

from __future__ import annotations

import datetime
import json
from collections.abc import Iterator, Mapping
from typing import Any

from emr_lineage.errors import EXIT_CHECK_FAILED, EmrLineageError
from emr_lineage.http import (
    DEFAULT_BACKOFF,
    DEFAULT_MAX_BYTES,
    DEFAULT_RETRIES,
    DEFAULT_TIMEOUT,
    HttpClient,
    HttpError,
    Reply,
)
from emr_lineage.marquez.api import API_ROOT, EVENTS_ENDPOINT, LINEAGE_ENDPOINT
from emr_lineage.marquez.api import base_url as marquez_base_url

DEFAULT_PAGE_SIZE = 100
# Raw events come in larger pages: Marquez does not bound ``limit`` there (OpenLineageResource.java) and
# holds a page in memory, a few MB at this size.
EVENTS_PAGE_SIZE = 1000


class MarquezError(EmrLineageError):
    """Marquez could not be reached or answered with an error; ``status`` is the HTTP status."""

    def __init__(self, message: str, status: int | None = None) -> None:
        super().__init__(message)
        self.status = status


class NotMarquezError(MarquezError):
    """The server answers, but not as a Marquez API (exit 2, never "node unknown")."""


class NotDelivered(MarquezError):
    """An event the server answered with a redirect: it was not stored, and no later one would be (exit 1)."""

    exit_code = EXIT_CHECK_FAILED


class MarquezClient:
    """Client of one Marquez API, e.g. ``MarquezClient("http://localhost:5000")``."""

    def __init__(
        self,
        base_url: str,
        timeout: float = DEFAULT_TIMEOUT,
        retries: int = DEFAULT_RETRIES,
        backoff: float = DEFAULT_BACKOFF,
        page_size: int = DEFAULT_PAGE_SIZE,
        max_bytes: int = DEFAULT_MAX_BYTES,
        events_page_size: int = EVENTS_PAGE_SIZE,
    ) -> None:
        try:  # http://host:5000 and http://host:5000/api/v1 are both accepted
            self.base_url = marquez_base_url(base_url) + "/"
        except ValueError as exc:
            raise MarquezError(f"Marquez URL: {exc}") from None
        self.timeout = timeout
        self.page_size = page_size
        self.events_page_size = events_page_size
        self.http = HttpClient(
            timeout=timeout,
            retries=retries,
            backoff=backoff,
            max_bytes=max_bytes,
            retry_methods=("GET", "POST"),
            headers={"Accept": "application/json"},
            service=f"Marquez at {self.base_url}",
        )
        self._is_marquez = False

    # -- plumbing -------------------------------------------------------------------------

    def _url(self, path: str) -> str:
        return f"{self.base_url}{API_ROOT.strip('/')}/{path.lstrip('/')}"

    def _send(self, method: str, url: str, **kwargs: Any) -> Reply:
        try:
            return self.http.request(method, url, **kwargs)
        except HttpError as exc:
            raise MarquezError(str(exc), exc.status) from None

    def get(self, path: str, params: Mapping[str, Any] | None = None, *, without_nulls: bool = False) -> Any:
        """GET ``/api/v1/<path>`` and return the decoded JSON (raises :class:`MarquezError`); ``without_nulls``:
        without the object keys whose value is null (:func:`without_nulls`)."""
        reply = self._send("GET", self._url(path), params=params)
        if not reply.ok:
            raise self._suspect(str(reply.error()), reply.status) if reply.status == 404 else self._error(reply)
        if without_nulls:
            try:
                return without_nulls_json(reply.body)
            except ValueError:
                raise self._suspect(f"{reply.method} {reply.url}: reply is not JSON ({reply.content_type})") from None
        try:
            return reply.json()
        except HttpError as exc:
            raise self._suspect(str(exc)) from None

    @staticmethod
    def _error(reply: Reply) -> MarquezError:
        return MarquezError(str(reply.error()), reply.status)

    def _suspect(self, message: str, status: int | None = None) -> MarquezError:
        """The error of a read a non-Marquez server would also fail (404, not JSON, another
        shape): :class:`NotMarquezError` when the server is not Marquez, else ``message``."""
        self.require_marquez()
        return MarquezError(message, status)

    def _paged(self, path: str, key: str, params: Mapping[str, Any] | None = None) -> Iterator[dict[str, Any]]:
        size = self.page_size
        offset = 0
        while True:
            page = self.get(path, {**(params or {}), "limit": size, "offset": offset})
            items = page.get(key) if isinstance(page, Mapping) else None
            if not isinstance(items, list):
                raise self._suspect(f"GET {self._url(path)}: reply has no {key!r} list")
            yield from items
            offset += len(items)
            total = page.get("totalCount")
            if len(items) < size or not items or (isinstance(total, int) and offset >= total):
                return

    # -- is it Marquez? -------------------------------------------------------------------

    def probe(self) -> None:
        """Check once that the server is a Marquez API: ``GET /api/v1/namespaces?limit=1``
        answers JSON with a ``namespaces`` list.

        Raises :class:`NotMarquezError` when it does not (HTTP 404, not JSON, another shape),
        :class:`MarquezError` when the server cannot be asked (unreachable, timeout, 5xx...).
        """
        if self._is_marquez:
            return
        url = self._url("namespaces")
        reply = self._send("GET", url, params={"limit": 1})
        if reply.status == 404:
            raise self._not_marquez(f"GET {url} -> HTTP 404")
        if not reply.ok:
            raise self._error(reply)
        try:
            body = reply.json()
        except HttpError:
            raise self._not_marquez(f"GET {url} answered {reply.content_type}, not JSON") from None
        if not isinstance(body, Mapping) or not isinstance(body.get("namespaces"), list):
            raise self._not_marquez(f"GET {url} answered JSON without a 'namespaces' list")
        self._is_marquez = True

    def require_marquez(self) -> None:
        """:meth:`probe`, keeping only its verdict "not Marquez" (other failures are the caller's to report)."""
        try:
            self.probe()
        except NotMarquezError:
            raise
        except MarquezError:
            pass

    def _not_marquez(self, evidence: str) -> NotMarquezError:
        return NotMarquezError(f"not a Marquez API at {self.base_url} ({evidence}); give the Marquez API base URL")

    # -- reads ----------------------------------------------------------------------------

    def namespaces(self) -> list[dict[str, Any]]:
        """Every namespace (``GET /namespaces``, paged): one row Marquez cannot read back makes the page
        that holds it answer 500, so the whole list shows what ``?limit=1`` would not."""
        return list(self._paged("namespaces", "namespaces"))

    def events_page(self, after: datetime.datetime, before: datetime.datetime, offset: int = 0) -> list[dict[str, Any]]:
        """One page of ``GET /events/lineage``: the raw RunEvents Marquez stored with ``after <= eventTime <
        before`` (Marquez's own bounds: ``after`` inclusive, ``before`` exclusive), oldest first, from
        ``offset``, at most ``events_page_size``; as their producer sent them, without the null-valued keys
        Marquez adds for the facets and fields it models. Both bounds are always sent: Marquez's defaults
        are 1970-01-01 and 2030-01-01 (OpenLineageResource.java). How to page through a window is
        :func:`emr_lineage.lineage.events.from_marquez.stored_events`'s."""
        params = {"sortDirection": "asc", "after": after.isoformat(), "before": before.isoformat()}
        path = EVENTS_ENDPOINT.removeprefix(API_ROOT)
        page = self.get(path, {**params, "limit": self.events_page_size, "offset": offset}, without_nulls=True)
        events = page.get("events") if isinstance(page, Mapping) else None
        if not isinstance(events, list):
            raise self._suspect(f"GET {self._url(path)}: reply has no 'events' list")
        return events

    # -- writes ---------------------------------------------------------------------------

    def post_lineage_body(self, body: bytes) -> int:
        """POST one event already serialised as JSON; returns the HTTP status (raises on an error)."""
        url = self.base_url + LINEAGE_ENDPOINT.lstrip("/")
        reply = self._send("POST", url, data=body, headers={"Content-Type": "application/json"})
        if reply.redirected:
            raise NotDelivered(str(reply.error()), reply.status)
        if not reply.ok:
            raise self._suspect(str(reply.error()), reply.status) if reply.status == 404 else self._error(reply)
        return reply.status

    def close(self) -> None:
        self.http.close()

    def __enter__(self) -> MarquezClient:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def _without_null_pairs(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    return {key: value for key, value in pairs if value is not None}


def without_nulls_json(body: bytes) -> Any:
    """The JSON value of ``body`` without the object keys whose value is null, dropped as each object is
    decoded (no walk after). Marquez writes a null for each facet and field it models that an event lacks
    (``run.facets.nominalTime``, a schema field's ``description``...), which no producer sent and the
    OpenLineage schema does not allow. ValueError when it is not JSON."""
    return json.loads(body, object_pairs_hook=_without_null_pairs)
