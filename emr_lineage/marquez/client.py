"""A small client of the Marquez HTTP API (0.51.x, ``/api/v1``): HTTP only, no contract knowledge.

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

from collections.abc import Iterator, Mapping
from typing import Any
from urllib.parse import quote

from emr_lineage.errors import EmrLineageError
from emr_lineage.http import (
    DEFAULT_BACKOFF,
    DEFAULT_MAX_BYTES,
    DEFAULT_RETRIES,
    DEFAULT_TIMEOUT,
    HttpClient,
    HttpError,
    Reply,
)
from emr_lineage.marquez.api import API_ROOT, DEFAULT_DEPTH, LINEAGE_ENDPOINT
from emr_lineage.marquez.api import base_url as marquez_base_url

DEFAULT_PAGE_SIZE = 100


class MarquezError(EmrLineageError):
    """Marquez could not be reached or answered with an error; ``status`` is the HTTP status."""

    def __init__(self, message: str, status: int | None = None) -> None:
        super().__init__(message)
        self.status = status


class NotMarquezError(MarquezError):
    """The server answers, but not as a Marquez API (exit 2, never "node unknown")."""


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
    ) -> None:
        try:  # http://host:5000 and http://host:5000/api/v1 are both accepted
            self.base_url = marquez_base_url(base_url) + "/"
        except ValueError as exc:
            raise MarquezError(f"Marquez URL: {exc}") from None
        self.timeout = timeout
        self.page_size = page_size
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

    def get(self, path: str, params: Mapping[str, Any] | None = None) -> Any:
        """GET ``/api/v1/<path>`` and return the decoded JSON (raises :class:`MarquezError`)."""
        reply = self._send("GET", self._url(path), params=params)
        if not reply.ok:
            raise self._suspect(str(reply.error()), reply.status) if reply.status == 404 else self._error(reply)
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

    def _graph(self, path: str, params: Mapping[str, Any]) -> dict[str, Any]:
        reply = self.get(path, params)
        if not isinstance(reply, Mapping) or not isinstance(reply.get("graph"), list):
            raise self._suspect(f"GET {self._url(path)}: reply has no 'graph' list")
        return dict(reply)

    def _paged(self, path: str, key: str, params: Mapping[str, Any] | None = None) -> Iterator[dict[str, Any]]:
        offset = 0
        while True:
            page = self.get(path, {**(params or {}), "limit": self.page_size, "offset": offset})
            items = page.get(key) if isinstance(page, Mapping) else None
            if not isinstance(items, list):
                raise self._suspect(f"GET {self._url(path)}: reply has no {key!r} list")
            yield from items
            offset += len(items)
            total = page.get("totalCount")
            if len(items) < self.page_size or not items or (isinstance(total, int) and offset >= total):
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

    def lineage(self, node_id: str, depth: int = DEFAULT_DEPTH) -> dict[str, Any]:
        """``GET /lineage?nodeId=&depth=``: ``{"graph": [node, ...]}`` around a node."""
        return self._graph("lineage", {"nodeId": node_id, "depth": depth})

    def column_lineage(self, node_id: str, depth: int = DEFAULT_DEPTH, with_downstream: bool = False) -> dict[str, Any]:
        """``GET /column-lineage``: DATASET_FIELD nodes around a dataset, field or job."""
        params = {"nodeId": node_id, "depth": depth, "withDownstream": str(with_downstream).lower()}
        return self._graph("column-lineage", params)

    def jobs(self, namespace: str) -> list[dict[str, Any]]:
        """All jobs of a namespace (paged)."""
        return list(self._paged(f"namespaces/{_quote(namespace)}/jobs", "jobs"))

    def datasets(self, namespace: str) -> list[dict[str, Any]]:
        """All datasets of a namespace (paged)."""
        return list(self._paged(f"namespaces/{_quote(namespace)}/datasets", "datasets"))

    def job(self, namespace: str, name: str) -> dict[str, Any]:
        return self.get(f"namespaces/{_quote(namespace)}/jobs/{_quote(name)}")

    def dataset(self, namespace: str, name: str) -> dict[str, Any]:
        return self.get(f"namespaces/{_quote(namespace)}/datasets/{_quote(name)}")

    def run(self, run_id: str) -> dict[str, Any]:
        """``GET /jobs/runs/{id}``."""
        return self.get(f"jobs/runs/{_quote(run_id)}")

    def lineage_events(self, after: str | None = None, before: str | None = None) -> Iterator[dict[str, Any]]:
        """``GET /events/lineage``: the raw OpenLineage events Marquez received, oldest first
        (``sortDirection=asc``), paged; ``after``/``before`` (ISO 8601) bound their event time."""
        params = {"sortDirection": "asc"}
        if after:
            params["after"] = after
        if before:
            params["before"] = before
        return self._paged("events/lineage", "events", params)

    # -- writes ---------------------------------------------------------------------------

    def post_lineage_body(self, body: bytes) -> int:
        """POST one event already serialised as JSON; returns the HTTP status (raises on an error)."""
        url = self.base_url + LINEAGE_ENDPOINT.lstrip("/")
        reply = self._send("POST", url, data=body, headers={"Content-Type": "application/json"})
        if not reply.ok:
            raise self._suspect(str(reply.error()), reply.status) if reply.status == 404 else self._error(reply)
        return reply.status

    def close(self) -> None:
        self.http.close()

    def __enter__(self) -> MarquezClient:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def _quote(part: str) -> str:
    return quote(part, safe="")
