"""The deadline of one HTTP request, enforced under ``requests``/``urllib3``.

A :class:`Deadline` is entered around one request. The connection classes cap every connect and
socket read timeout to the time left, :class:`DeadlineRetry` refuses a retry whose wait would end
past it, and a watchdog shuts the request's sockets down when it passes, so a server that drips
one byte at a time (status line, headers or body) cannot hold a command.
"""

from __future__ import annotations

import socket
import threading
from collections.abc import Callable
from contextvars import ContextVar
from typing import Any

from requests.adapters import HTTPAdapter
from urllib3 import connection as urllib3_connection
from urllib3 import exceptions as urllib3_exceptions
from urllib3.connectionpool import HTTPConnectionPool, HTTPSConnectionPool
from urllib3.util import Retry, Timeout


class Deadline:
    """The end of one request: the time left, and a watchdog that shuts its sockets down at the end."""

    def __init__(self, seconds: float, clock: Callable[[], float]) -> None:
        self.seconds = seconds
        self.clock = clock
        self.at = clock() + seconds
        self.fired = False
        self._sockets: list[socket.socket] = []
        self._lock = threading.Lock()
        self._timer = threading.Timer(seconds, self._fire)
        self._timer.daemon = True

    def remaining(self) -> float:
        return self.at - self.clock()

    def expired(self) -> bool:
        return self.fired or self.remaining() <= 0

    def cap(self, value: float | None) -> float:
        """A socket timeout no larger than the time left (never 0: that means non-blocking)."""
        left = max(self.remaining(), 0.001)
        return left if value is None else min(value, left)

    def watch(self, sock: socket.socket | None) -> None:
        if sock is None:
            return
        with self._lock:
            if self.fired:
                _shutdown(sock)
            elif all(s is not sock for s in self._sockets):
                self._sockets.append(sock)

    def _fire(self) -> None:
        with self._lock:
            self.fired = True
            for sock in self._sockets:
                _shutdown(sock)

    def __enter__(self) -> Deadline:
        self._token = _ACTIVE.set(self)
        self._timer.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._timer.cancel()
        _ACTIVE.reset(self._token)
        with self._lock:
            self._sockets.clear()


_ACTIVE: ContextVar[Deadline | None] = ContextVar("emr_lineage_http_deadline", default=None)


def _shutdown(sock: socket.socket) -> None:
    # The plain-socket shutdown, also for a TLS socket: a blocked recv() in the request's
    # thread returns at once, and the request fails (reported as timed out).
    try:
        socket.socket.shutdown(sock, socket.SHUT_RDWR)
    except OSError:
        pass


class DeadlineConnectionMixin:
    """Connect and read timeouts capped to the time left; sockets handed to the watchdog."""

    timeout: Any
    sock: socket.socket | None

    def _new_conn(self) -> socket.socket:
        deadline = _ACTIVE.get()
        if deadline is not None:
            self.timeout = deadline.cap(Timeout.resolve_default_timeout(self.timeout))
        sock = super()._new_conn()  # type: ignore[misc]
        if deadline is not None:
            deadline.watch(sock)
        return sock

    def request(self, *args: Any, **kwargs: Any) -> None:
        self._capped()
        super().request(*args, **kwargs)  # type: ignore[misc]

    def getresponse(self) -> Any:
        self._capped()
        return super().getresponse()  # type: ignore[misc]

    def _capped(self) -> None:
        deadline = _ACTIVE.get()
        if deadline is not None:
            self.timeout = deadline.cap(Timeout.resolve_default_timeout(self.timeout))
            deadline.watch(self.sock)


class _HTTPConnection(DeadlineConnectionMixin, urllib3_connection.HTTPConnection):
    pass


class _HTTPSConnection(DeadlineConnectionMixin, urllib3_connection.HTTPSConnection):
    pass


class _HTTPConnectionPool(HTTPConnectionPool):
    ConnectionCls = _HTTPConnection


class _HTTPSConnectionPool(HTTPSConnectionPool):
    ConnectionCls = _HTTPSConnection


_POOLS = {"http": _HTTPConnectionPool, "https": _HTTPSConnectionPool}


class DeadlineAdapter(HTTPAdapter):
    def init_poolmanager(self, *args: Any, **kwargs: Any) -> None:
        super().init_poolmanager(*args, **kwargs)
        self.poolmanager.pool_classes_by_scheme = dict(_POOLS)

    def proxy_manager_for(self, proxy: str, **proxy_kwargs: Any) -> Any:
        manager = super().proxy_manager_for(proxy, **proxy_kwargs)
        if not proxy.lower().startswith("socks"):
            manager.pool_classes_by_scheme = dict(_POOLS)
        return manager


class DeadlineRetry(Retry):
    """urllib3's retry policy, plus: no retry whose wait would end past the request's deadline.

    Out of time, it stops as when retries are exhausted: an error is raised, an HTTP answer
    (e.g. 503) is returned to be reported with the server's message.
    """

    def increment(
        self,
        method: str | None = None,
        url: str | None = None,
        response: Any = None,
        error: Exception | None = None,
        _pool: Any = None,
        _stacktrace: Any = None,
    ) -> DeadlineRetry:
        new = super().increment(method, url, response, error, _pool, _stacktrace)
        deadline = _ACTIVE.get()
        if deadline is not None and (deadline.expired() or new._wait(response) >= deadline.remaining()):
            reason = error or urllib3_exceptions.ResponseError(f"no time left for a retry within {deadline.seconds:g}s")
            raise urllib3_exceptions.MaxRetryError(_pool, url or "", reason) from reason
        return new

    def _wait(self, response: Any) -> float:
        """What :meth:`sleep` will wait before the next attempt."""
        if response is not None and self.respect_retry_after_header:
            after = self.get_retry_after(response)
            if after:
                return after
        return self.get_backoff_time()
