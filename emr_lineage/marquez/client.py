"""A small client of the Marquez HTTP API (0.51.x, ``/api/v1``).

Reads (lineage, column lineage, namespaces, jobs, datasets, runs) go through one
``requests`` session with ``urllib3`` retries (connect/read errors and 429/5xx, exponential
backoff) and a timeout on every call; list endpoints are paged with ``limit``/``offset``.
Replays (``POST /api/v1/lineage``) go through ``openlineage-python``'s own HTTP transport,
so event serialisation and its HTTP are the library's. Every failure is a
:class:`MarquezError` with one readable line (unreachable, timeout, HTTP status + Marquez's
message, a reply that is not JSON).
"""

from __future__ import annotations

import json
from collections.abc import Iterator, Mapping
from typing import Any
from urllib.parse import urljoin

import requests
from requests.adapters import HTTPAdapter
from urllib3.util import Retry

from emr_lineage.errors import EmrLineageError

API_PREFIX = "api/v1/"
DEFAULT_TIMEOUT = 10.0
DEFAULT_RETRIES = 3
DEFAULT_BACKOFF = 0.5
DEFAULT_PAGE_SIZE = 100
DEFAULT_DEPTH = 20
_RETRY_STATUSES = (429, 500, 502, 503, 504)


class MarquezError(EmrLineageError):
    """Marquez could not be reached or answered with an error; ``status`` is the HTTP status."""

    def __init__(self, message: str, status: int | None = None) -> None:
        super().__init__(message)
        self.status = status


class MarquezClient:
    """Client of one Marquez API, e.g. ``MarquezClient("http://localhost:5000")``."""

    def __init__(
        self,
        base_url: str,
        timeout: float = DEFAULT_TIMEOUT,
        retries: int = DEFAULT_RETRIES,
        backoff: float = DEFAULT_BACKOFF,
        page_size: int = DEFAULT_PAGE_SIZE,
    ) -> None:
        if not base_url.startswith(("http://", "https://")):
            raise MarquezError(f"Marquez URL must start with http:// or https://, got {base_url!r}")
        # Accept both http://host:5000 and http://host:5000/api/v1.
        root = base_url.rstrip("/")
        if root.endswith("/api/v1"):
            root = root[: -len("/api/v1")]
        self.base_url = root + "/"
        self.timeout = timeout
        self.retries = retries
        self.backoff = backoff
        self.page_size = page_size
        self.session = requests.Session()
        retry = Retry(
            total=retries,
            connect=retries,
            read=retries,
            status=retries,
            backoff_factor=backoff,
            status_forcelist=_RETRY_STATUSES,
            allowed_methods=frozenset({"GET"}),
            raise_on_status=False,  # the last response is returned and reported with its message
        )
        adapter = HTTPAdapter(max_retries=retry)
        self.session.mount("http://", adapter)
        self.session.mount("https://", adapter)
        self.session.headers["Accept"] = "application/json"

    # -- plumbing -------------------------------------------------------------------------

    def _url(self, path: str) -> str:
        return urljoin(self.base_url, API_PREFIX + path.lstrip("/"))

    def get(self, path: str, params: Mapping[str, Any] | None = None) -> Any:
        """GET ``/api/v1/<path>`` and return the decoded JSON (raises :class:`MarquezError`)."""
        url = self._url(path)
        try:
            response = self.session.get(url, params=params, timeout=self.timeout)
        except requests.exceptions.RetryError as exc:
            raise MarquezError(f"Marquez at {self.base_url} kept failing for GET {url}: {_reason(exc)}") from None
        except (requests.exceptions.Timeout, requests.exceptions.ConnectionError) as exc:
            if _is_timeout(exc):
                raise MarquezError(
                    f"Marquez at {self.base_url} timed out after {self.timeout:g}s (GET {url})"
                ) from None
            raise MarquezError(f"Marquez at {self.base_url} is unreachable: {_reason(exc)}") from None
        except requests.exceptions.RequestException as exc:
            raise MarquezError(f"GET {url} failed: {_reason(exc)}") from None
        return _decode(response, "GET", url)

    def _paged(self, path: str, key: str) -> Iterator[dict[str, Any]]:
        offset = 0
        while True:
            page = self.get(path, {"limit": self.page_size, "offset": offset})
            items = page.get(key) if isinstance(page, Mapping) else None
            if not isinstance(items, list):
                raise MarquezError(f"GET {self._url(path)}: reply has no {key!r} list")
            yield from items
            offset += len(items)
            total = page.get("totalCount")
            if len(items) < self.page_size or not items or (isinstance(total, int) and offset >= total):
                return

    # -- reads ----------------------------------------------------------------------------

    def lineage(self, node_id: str, depth: int = DEFAULT_DEPTH) -> dict[str, Any]:
        """``GET /lineage?nodeId=&depth=``: ``{"graph": [node, ...]}`` around a node."""
        reply = self.get("lineage", {"nodeId": node_id, "depth": depth})
        if not isinstance(reply, Mapping) or not isinstance(reply.get("graph"), list):
            raise MarquezError(f"GET {self._url('lineage')}: reply has no 'graph' list")
        return dict(reply)

    def column_lineage(self, node_id: str, depth: int = DEFAULT_DEPTH, with_downstream: bool = False) -> dict[str, Any]:
        """``GET /column-lineage``: DATASET_FIELD nodes around a dataset, field or job."""
        params = {"nodeId": node_id, "depth": depth, "withDownstream": str(with_downstream).lower()}
        reply = self.get("column-lineage", params)
        if not isinstance(reply, Mapping) or not isinstance(reply.get("graph"), list):
            raise MarquezError(f"GET {self._url('column-lineage')}: reply has no 'graph' list")
        return dict(reply)

    def namespaces(self) -> list[dict[str, Any]]:
        """All namespaces (paged)."""
        return list(self._paged("namespaces", "namespaces"))

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

    # -- writes ---------------------------------------------------------------------------

    def post_lineage(self, event: Any) -> int:
        """Replay one OpenLineage event (an ``openlineage.client`` event or its JSON dict)
        with ``openlineage-python``'s HTTP transport; returns the HTTP status."""
        from openlineage.client.transport.http import HttpConfig, HttpTransport

        # from_dict merges our retry settings into the library's defaults (status list, POST).
        transport = self._transport or HttpTransport(
            HttpConfig.from_dict(
                {
                    "url": self.base_url,
                    "endpoint": API_PREFIX + "lineage",
                    "timeout": self.timeout,
                    "retry": {
                        "total": self.retries,
                        "connect": self.retries,
                        "read": self.retries,
                        "backoff_factor": self.backoff,
                        "raise_on_status": False,
                    },
                }
            )
        )
        self._transport = transport
        try:
            response = transport.emit(event)
        except requests.exceptions.HTTPError as exc:
            raise MarquezError(
                f"POST {self._url('lineage')} -> HTTP {exc.response.status_code}: {_message(exc.response)}",
                exc.response.status_code,
            ) from None
        except requests.exceptions.RequestException as exc:
            if _is_timeout(exc):
                raise MarquezError(f"Marquez at {self.base_url} timed out after {self.timeout:g}s (POST)") from None
            raise MarquezError(f"Marquez at {self.base_url} is unreachable: {_reason(exc)}") from None
        return response.status_code

    _transport: Any = None

    def close(self) -> None:
        self.session.close()
        if self._transport is not None:
            self._transport.close()

    def __enter__(self) -> MarquezClient:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def _quote(part: str) -> str:
    from urllib.parse import quote

    return quote(part, safe="")


def _is_timeout(exc: BaseException) -> bool:
    # requests reports a read timeout after urllib3 retries as a ConnectionError wrapping
    # MaxRetryError(reason=ReadTimeoutError): look through the wrapping.
    # A refused connection (NewConnectionError) subclasses urllib3's timeout: not a timeout.
    from urllib3.exceptions import MaxRetryError, NewConnectionError
    from urllib3.exceptions import TimeoutError as Urllib3Timeout

    def timed_out(error: object) -> bool:
        return isinstance(error, Urllib3Timeout) and not isinstance(error, NewConnectionError)

    if isinstance(exc, requests.exceptions.ConnectTimeout):
        return not any(isinstance(getattr(a, "reason", None), NewConnectionError) for a in exc.args)
    if isinstance(exc, requests.exceptions.Timeout):
        return True
    return any(timed_out(arg.reason if isinstance(arg, MaxRetryError) else arg) for arg in exc.args)


def _reason(exc: BaseException) -> str:
    # requests nests the root cause (e.g. ConnectionRefusedError) several levels deep.
    text = str(exc)
    for marker in ("Caused by ", "] "):
        if marker in text:
            text = text.rsplit(marker, 1)[-1]
    return text.strip("()'\" ")[:200] or type(exc).__name__


def _message(response: requests.Response) -> str:
    try:
        body = response.json()
    except ValueError:
        return (response.text or response.reason or "").strip()[:200] or "no message"
    if isinstance(body, Mapping):
        return str(body.get("message") or body.get("error") or json.dumps(body))[:200]
    return json.dumps(body)[:200]


def _decode(response: requests.Response, method: str, url: str) -> Any:
    if response.status_code >= 400:
        kind = "client error" if response.status_code < 500 else "server error"
        raise MarquezError(
            f"{method} {url} -> HTTP {response.status_code} ({kind}): {_message(response)}", response.status_code
        )
    try:
        return response.json()
    except ValueError:
        raise MarquezError(
            f"{method} {url}: reply is not JSON ({response.headers.get('Content-Type', 'no content type')})"
        ) from None
