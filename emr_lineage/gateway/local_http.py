"""Local mode's HTTP side: the ingest served by waitress (https://docs.pylonsproject.org/projects/waitress/).

waitress, not the standard library's development server, because a gateway in front of Spark
clusters meets what that server does not handle: keep-alive connections, chunked request bodies
(waitress de-chunks them), bursts of connections (a listen backlog of :data:`BACKLOG`, not 5),
clients that stall or vanish (closed after :data:`IDLE_SECONDS` without a byte; a hang-up mid-body
is dropped without a traceback), and bodies over the limit: waitress reads a body up to
:data:`READ_UP_TO` before the application sees it, so a client sending more than the gateway's
limit gets a 413 it can read (with a JSON reason) instead of a reset connection; above that cap
waitress itself answers 413 and closes.

The WSGI application answers ``POST`` to the lineage endpoints (trailing slash allowed) through
``ingest(path, headers, body)``, ``GET /healthz`` through ``health()``, anything else 404/405; an
error inside is one line through ``log`` and a 500, never a traceback.
"""

from __future__ import annotations

import json
import logging
import threading
from collections.abc import Callable, Iterable, Mapping
from http import HTTPStatus
from typing import Any

from waitress import wasyncore
from waitress.server import create_server

from emr_lineage.marquez.api import LINEAGE_BATCH_ENDPOINT, LINEAGE_ENDPOINT

HEALTH_PATH = "/healthz"
BACKLOG = 1024  # pending connections the kernel queues (waitress's default; the stdlib server's is 5)
THREADS = 8  # requests handled at once (each waits on S3 and SQS)
IDLE_SECONDS = 30  # a connection with no byte for this long is closed (a stalled or idle client)
CONNECTION_LIMIT = 1000  # open connections at once
READ_UP_TO = 64 << 20  # bytes of body read (and refused with a readable 413) before waitress refuses itself

Answer = tuple[int, dict[str, Any]]
Ingest = Callable[[str, Mapping[str, str], bytes], Answer]


def _headers(environ: Mapping[str, Any]) -> dict[str, str]:
    headers = {key[5:].replace("_", "-").lower(): value for key, value in environ.items() if key.startswith("HTTP_")}
    for key in ("CONTENT_TYPE", "CONTENT_LENGTH"):
        if environ.get(key):
            headers[key.replace("_", "-").lower()] = environ[key]
    return headers


def wsgi_app(
    ingest: Ingest, health: Callable[[], Answer], log: Callable[[str], None]
) -> Callable[..., Iterable[bytes]]:
    """The gateway as a WSGI application."""

    def route(environ: Mapping[str, Any]) -> tuple[int, dict[str, Any], dict[str, str]]:
        method, path = environ["REQUEST_METHOD"], environ.get("PATH_INFO") or "/"
        lineage = path.rstrip("/") in (LINEAGE_ENDPOINT, LINEAGE_BATCH_ENDPOINT)
        if path.rstrip("/") == HEALTH_PATH and method in ("GET", "HEAD"):
            return (*health(), {})
        if lineage and method != "POST":
            return 405, {"status": "rejected", "error": "only POST is accepted here"}, {"Allow": "POST"}
        if not lineage:
            served = f"POST {LINEAGE_ENDPOINT}, POST {LINEAGE_BATCH_ENDPOINT} and GET {HEALTH_PATH}"
            return 404, {"status": "rejected", "error": f"only {served} are served"}, {}
        body = environ["wsgi.input"].read()  # waitress has it all, at most READ_UP_TO bytes
        status, answer = ingest(path, _headers(environ), body)
        extra = {"WWW-Authenticate": "Bearer"} if status == 401 else {"Retry-After": "5"} if status == 503 else {}
        return status, answer, extra

    def app(environ: dict[str, Any], start_response: Callable[..., Any]) -> Iterable[bytes]:
        try:
            status, answer, extra = route(environ)
        except Exception as exc:  # noqa: BLE001 - one line and a 500, never a traceback
            request = f"{environ.get('REQUEST_METHOD')} {environ.get('PATH_INFO')}"
            log(f"gateway: {request} failed: {type(exc).__name__}: {' '.join(str(exc).split())}")
            status, answer, extra = 500, {"status": "error", "error": "the gateway failed; see its log"}, {}
        data = json.dumps(answer).encode()
        headers = [("Content-Type", "application/json"), ("Content-Length", str(len(data))), *extra.items()]
        start_response(f"{status} {HTTPStatus(status).phrase}", headers)
        return [data]

    return app


class _OneLine(logging.Filter):
    """waitress's own log records (a task queue backing up, a socket error) on one line each, no traceback."""

    def filter(self, record: logging.LogRecord) -> bool:
        record.exc_info, record.exc_text, record.stack_info = None, None, None
        return True


def serve(app: Callable[..., Iterable[bytes]], port: int, *, idle_seconds: int = IDLE_SECONDS) -> Any:
    """A waitress server of ``app`` bound to 127.0.0.1:``port`` (0: any free port); ``run()`` serves.
    A connection without a byte for ``idle_seconds`` is closed (looked for every half of that)."""
    logger = logging.getLogger("waitress")
    if not logger.handlers:
        handler = logging.StreamHandler()
        handler.setFormatter(logging.Formatter("gateway: %(message)s"))
        handler.addFilter(_OneLine())
        logger.addHandler(handler)
        logger.setLevel(logging.WARNING)
        logger.propagate = False
    return create_server(
        app,
        host="127.0.0.1",
        port=port,
        threads=THREADS,
        backlog=BACKLOG,
        channel_timeout=idle_seconds,
        cleanup_interval=max(1, idle_seconds // 2),
        connection_limit=CONNECTION_LIMIT,
        max_request_body_size=READ_UP_TO,
        expose_tracebacks=False,
        ident="emr-lineage-gateway",
        clear_untrusted_proxy_headers=True,
    )


def close(server: Any, loop: threading.Thread, timeout: float = 5.0) -> None:
    """Stop a :func:`serve` server whose ``run()`` is ``loop``, from another thread: the loop closes
    every connection and the listening socket, then returns; the worker threads end (each wait up to
    ``timeout``); then the trigger that woke the loop is closed.

    The trigger (a pipe) stays open until nothing can write to it: closed by the loop (as waitress's
    own ``close()`` does), it could be gone before ``pull_trigger`` wrote its byte (the loop, woken
    by a worker's pull, runs the thunk just queued: EBADF), or its number reused by a new file that
    a late pull would write into."""

    def close_all() -> None:
        for channel in list(server._map.values()):  # noqa: SLF001 - waitress's connection map
            if channel is server:
                wasyncore.dispatcher.close(server)  # the listening socket (its own close() closes the trigger)
            elif channel is not server.trigger:
                channel.close()
        server.trigger.del_channel()  # out of the loop's map, so run() returns

    server.trigger.pull_trigger(close_all)
    loop.join(timeout)
    server.task_dispatcher.shutdown(timeout=timeout)
    if not loop.is_alive() and not server.task_dispatcher.threads:  # nothing runs or pulls any more
        close_all()  # (nothing is left, unless the loop ended before it ran the close)
        server.trigger.close()
