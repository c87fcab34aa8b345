"""The one HTTP stack of emr-lineage: ``requests`` + ``urllib3`` retries, a deadline and a size cap per request.

Used by the Marquez client (reads and event replays); the listener jar comes through Maven instead
(:mod:`emr_lineage.listener.mvn`).

* **Retries** are urllib3's :class:`~urllib3.util.Retry`: connect and read errors and HTTP
  429/500/502/503/504, exponential backoff (``Retry-After`` honoured), GET only unless the
  client is told other methods are safe to repeat. There is no retry loop here.
* **Deadline.** ``timeout`` bounds the WHOLE request: connection, headers, body, every retry
  and every backoff wait. Each connect and socket read timeout is at most the time left; the
  retry policy stops when the next attempt would start past the deadline (the last answer,
  e.g. an HTTP 503, is then reported); the body is streamed with a monotonic deadline check
  between reads; and a watchdog shuts the request's socket down at the deadline, so a server
  that drips one byte at a time (status line, headers or body) cannot hold a command.
* **Size cap.** The body is streamed and the request stops past ``max_bytes`` (a declared
  ``Content-Length`` above it is refused before reading).
* **Redirects** are followed for reads only. A write is never sent on: requests would resend a POST
  that meets a 301 or 302 as a GET, and the 2xx of that GET would read as delivered. A 3xx is not
  :attr:`Reply.ok`; its error names where the server points.
* **Errors** are :class:`HttpError`, one line: unreachable, timed out after Xs, HTTP status +
  the server's message, reply too large, reply not JSON.
"""

from __future__ import annotations

import json as jsonlib
import time
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import urlsplit

import requests
from urllib3 import exceptions as urllib3_exceptions

from emr_lineage.errors import EmrLineageError, reason_of
from emr_lineage.http.deadline import Deadline, DeadlineAdapter, DeadlineRetry
from emr_lineage.http.defaults import (
    DEFAULT_BACKOFF,
    DEFAULT_MAX_BYTES,
    DEFAULT_RETRIES,
    DEFAULT_TIMEOUT,
    RETRY_STATUSES,
    is_redirect,
)

_READ_SIZE = 64 * 1024
_READS = frozenset({"GET", "HEAD"})  # the methods whose redirects are followed
_MESSAGE_CHARS = 200


class HttpError(EmrLineageError):
    """A request that could not be completed, or an answer that cannot be used (one line).

    ``kind`` is one of ``unreachable``, ``timeout``, ``status``, ``too_large``, ``not_json``,
    ``failed``; ``status`` is the HTTP status when there was an answer.
    """

    def __init__(self, message: str, *, kind: str, status: int | None = None) -> None:
        super().__init__(message)
        self.kind = kind
        self.status = status


# --- replies -----------------------------------------------------------------------------------


@dataclass(frozen=True)
class Reply:
    """A complete HTTP answer. ``body`` is empty when it went to a ``sink``; ``size`` counts it."""

    method: str
    url: str  # without the query string, as errors show it
    status: int
    headers: Mapping[str, str]
    body: bytes = b""
    size: int = 0

    @property
    def ok(self) -> bool:
        return 200 <= self.status < 300

    @property
    def redirected(self) -> bool:
        """A 3xx: not :attr:`ok`, and nothing was sent on where it points."""
        return is_redirect(self.status)

    @property
    def content_type(self) -> str:
        return self.headers.get("Content-Type") or "no content type"

    def json(self) -> Any:
        """The body decoded as JSON (:class:`HttpError` ``not_json`` when it is not)."""
        try:
            return jsonlib.loads(self.body)
        except ValueError:
            raise HttpError(
                f"{self.method} {self.url}: reply is not JSON ({self.content_type})",
                kind="not_json",
                status=self.status,
            ) from None

    def message(self) -> str:
        """The server's message on one line (:func:`~emr_lineage.errors.reason_of`: Marquez's Jackson
        messages run over lines, " at [Source: ..."), or ``no message``."""
        return reason_of(self.body, _MESSAGE_CHARS) or "no message"

    def error(self) -> HttpError:
        """``GET url -> HTTP 500 (server error): <message>`` as an :class:`HttpError`; for a 3xx, where to."""
        if self.redirected:
            where = self.headers.get("Location") or "no Location given"
            return HttpError(
                f"{self.method} {self.url} -> HTTP {self.status} (redirect to {where}): not sent on; "
                "give the URL it redirects to",
                kind="status",
                status=self.status,
            )
        kind = "client error" if self.status < 500 else "server error"
        return HttpError(
            f"{self.method} {self.url} -> HTTP {self.status} ({kind}): {self.message()}",
            kind="status",
            status=self.status,
        )

    def raise_for_status(self) -> Reply:
        if not self.ok:
            raise self.error()
        return self


# --- the client --------------------------------------------------------------------------------


@dataclass
class HttpClient:
    """One session with the retry policy, the deadline and the size cap.

    ``service`` names the server in errors (``"Marquez at http://host:5000/"``); by default
    the URL's ``scheme://host``. ``clock`` is the monotonic clock of the deadline (tests).
    """

    timeout: float = DEFAULT_TIMEOUT
    retries: int = DEFAULT_RETRIES
    backoff: float = DEFAULT_BACKOFF
    max_bytes: int = DEFAULT_MAX_BYTES
    retry_methods: Iterable[str] = ("GET",)
    retry_statuses: Iterable[int] = RETRY_STATUSES
    headers: Mapping[str, str] = field(default_factory=dict)
    service: str | None = None
    clock: Callable[[], float] = time.monotonic

    def __post_init__(self) -> None:
        if self.timeout <= 0:
            raise ValueError(f"timeout must be positive, got {self.timeout!r}")
        retry = DeadlineRetry(
            total=self.retries,
            connect=self.retries,
            read=self.retries,
            status=self.retries,
            backoff_factor=self.backoff,
            status_forcelist=tuple(self.retry_statuses),
            allowed_methods=frozenset(m.upper() for m in self.retry_methods),
            raise_on_status=False,  # the last answer is returned and reported with its message
        )
        self.session = requests.Session()
        adapter = DeadlineAdapter(max_retries=retry)
        self.session.mount("http://", adapter)
        self.session.mount("https://", adapter)
        self.session.headers.update(self.headers)

    def request(
        self,
        method: str,
        url: str,
        *,
        params: Mapping[str, Any] | None = None,
        data: bytes | str | None = None,
        headers: Mapping[str, str] | None = None,
        sink: Callable[[bytes], object] | None = None,
        max_bytes: int | None = None,
        timeout: float | None = None,
    ) -> Reply:
        """Send one request within ``timeout`` (the client's by default) and read the whole answer.

        Any HTTP status is returned (see :meth:`Reply.raise_for_status`); transport problems,
        the deadline and the size cap raise :class:`HttpError`. With ``sink``, the body of a
        2xx answer is passed to it chunk by chunk instead of being kept in ``Reply.body``.
        """
        method = method.upper()
        seconds = self.timeout if timeout is None else timeout
        limit = self.max_bytes if max_bytes is None else max_bytes
        where = f"{method} {url}"
        with Deadline(seconds, self.clock) as deadline:
            try:
                with self.session.request(
                    method,
                    url,
                    params=params,
                    data=data,
                    headers=headers,
                    stream=True,
                    timeout=seconds,
                    allow_redirects=method in _READS,
                ) as response:
                    to_sink = sink if 200 <= response.status_code < 300 else None
                    body, size = _read_body(response, deadline, limit, to_sink, where)
                    return Reply(method, url, response.status_code, response.headers, body, size)
            except HttpError:
                raise
            except (requests.RequestException, urllib3_exceptions.HTTPError, OSError) as exc:
                raise self._failure(exc, deadline, method, url) from None

    def get(self, url: str, **kwargs: Any) -> Reply:
        return self.request("GET", url, **kwargs)

    def _failure(self, exc: BaseException, deadline: Deadline, method: str, url: str) -> HttpError:
        who = self.service or _server(url)
        if deadline.expired() or _is_timeout(exc):
            return HttpError(f"{who} timed out after {deadline.seconds:g}s ({method} {url})", kind="timeout")
        if isinstance(exc, requests.exceptions.ConnectionError):
            return HttpError(f"{who} is unreachable: {_reason(exc)} ({method} {url})", kind="unreachable")
        return HttpError(f"{method} {url} failed: {_reason(exc)}", kind="failed")

    def close(self) -> None:
        self.session.close()

    def __enter__(self) -> HttpClient:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def _read_body(
    response: requests.Response,
    deadline: Deadline,
    limit: int,
    sink: Callable[[bytes], object] | None,
    where: str,
) -> tuple[bytes, int]:
    def too_large(what: str) -> HttpError:
        return HttpError(f"{where}: reply too large ({what}, the limit is {limit} bytes)", kind="too_large")

    declared = response.headers.get("Content-Length", "")
    if declared.isdigit() and int(declared) > limit:
        raise too_large(f"{declared} bytes announced")
    chunks: list[bytes] = []
    size = 0
    while True:
        if deadline.expired():
            raise TimeoutError("deadline reached while reading the body")
        chunk = response.raw.read1(_READ_SIZE, decode_content=True)  # what has arrived, not a full buffer
        if not chunk:
            break
        size += len(chunk)
        if size > limit:
            raise too_large("more than that")
        if sink is not None:
            sink(chunk)
        else:
            chunks.append(chunk)
    if deadline.fired:  # the watchdog's shutdown looks like the end of a body without a length
        raise TimeoutError("deadline reached while reading the body")
    return b"".join(chunks), size


def _server(url: str) -> str:
    parts = urlsplit(url)
    return f"{parts.scheme}://{parts.netloc}" if parts.netloc else url


def _is_timeout(exc: BaseException) -> bool:
    # requests reports a read timeout after urllib3 retries as a ConnectionError wrapping
    # MaxRetryError(reason=ReadTimeoutError): look through the wrapping. A refused connection
    # (NewConnectionError) subclasses urllib3's TimeoutError: it is not a timeout.
    def timed_out(error: object) -> bool:
        return isinstance(error, urllib3_exceptions.TimeoutError | TimeoutError) and not isinstance(
            error, urllib3_exceptions.NewConnectionError
        )

    if isinstance(exc, requests.exceptions.ConnectTimeout):
        return not any(isinstance(getattr(a, "reason", None), urllib3_exceptions.NewConnectionError) for a in exc.args)
    if isinstance(exc, requests.exceptions.Timeout) or timed_out(exc):
        return True
    return any(timed_out(arg.reason if isinstance(arg, urllib3_exceptions.MaxRetryError) else arg) for arg in exc.args)


def _reason(exc: BaseException) -> str:
    # requests nests the root cause (e.g. ConnectionRefusedError) several levels deep.
    text = " ".join(str(exc).split())
    for marker in ("Caused by ", "] "):
        if marker in text:
            text = text.rsplit(marker, 1)[-1]
    return text.strip("()'\" ")[:_MESSAGE_CHARS] or type(exc).__name__
