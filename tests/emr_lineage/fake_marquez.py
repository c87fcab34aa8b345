"""The one fake Marquez of the test suite: a ThreadingHTTPServer on 127.0.0.1 with a route table.

:class:`FakeMarquez` holds what the server answers (lineage replies by node id, or successive
``phases`` of Marquez; namespaces, jobs, datasets, runs) and what it received (``requests``,
``posted``). ``routes`` maps ``"METHOD /path/pattern"`` (``*`` is one path segment) to a function
of the state and the :class:`Request`, returning an :class:`Answer`; an unrouted request gets
``fallback`` (Marquez's JSON 404). A test replaces or removes routes to make the server misbehave:
``routes.clear()`` is a server that is not Marquez, ``Answer(drip=...)`` sends one byte at
a time, a large body tests a size cap. ``reset()`` puts the defaults back.

Used by the conftest's session-wide stand-in (Marquez's own reference replies) and by the e2e
tests (lineage built from the demo's events, ``phases`` moving on between polls).
"""

from __future__ import annotations

import datetime
import json
import threading
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field
from http import HTTPStatus
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import parse_qs, unquote, urlsplit

from emr_lineage.marquez.api import API_ROOT

API = API_ROOT


@dataclass(frozen=True)
class Answer:
    """What the server sends: a status and a body (a JSON value, or bytes sent as they are)."""

    status: int
    body: Any = None
    content_type: str | None = None  # default: application/json for JSON, text/html for bytes
    headers: Mapping[str, str] = field(default_factory=dict)
    drip: float = 0.0  # seconds before each byte of the body (and of the head with drip_head)
    drip_head: bool = False  # drip the status line and headers too
    content_length: bool = True  # False: no Content-Length; the body ends when the connection closes


@dataclass(frozen=True)
class Request:
    method: str
    path: str  # without the query string
    parts: tuple[str, ...]  # unquoted path segments
    query: dict[str, str]
    body: bytes
    headers: Mapping[str, str] = field(default_factory=dict)  # names lowercased


Route = Callable[["FakeMarquez", Request], Answer]


def not_found(message: str) -> Answer:
    return Answer(404, {"code": 404, "message": message})


def _lineage(state: FakeMarquez, request: Request) -> Answer:
    node = request.query.get("nodeId", "")
    reply = state.lineage_of(node)
    if isinstance(reply, Answer):
        return reply
    return Answer(200, reply) if reply is not None else not_found(f"node {node} not found")


def _column_lineage(state: FakeMarquez, request: Request) -> Answer:
    node = request.query.get("nodeId", "")
    reply = state.column_lineage.get(node)
    if isinstance(reply, Answer):
        return reply
    return Answer(200, reply) if reply is not None else not_found(f"node {node} not found")


def _page(key: str, items: list[dict[str, Any]], query: dict[str, str]) -> Answer:
    limit, offset = int(query.get("limit", 100)), int(query.get("offset", 0))
    body: dict[str, Any] = {key: items[offset : offset + limit]}
    if key != "namespaces":
        body["totalCount"] = len(items)
    return Answer(200, body)


def _namespaces(state: FakeMarquez, request: Request) -> Answer:
    return _page("namespaces", state.namespaces, request.query)


def _namespace_items(state: FakeMarquez, request: Request) -> Answer:
    namespace, kind = request.parts[-2], request.parts[-1]
    items = (state.jobs if kind == "jobs" else state.datasets).get(namespace)
    return _page(kind, items, request.query) if items is not None else not_found(f"Namespace '{namespace}' not found")


def _run(state: FakeMarquez, request: Request) -> Answer:
    run = state.runs.get(request.parts[-1])
    return Answer(200, run) if run else not_found(f"Run '{request.parts[-1]}' not found")


def _post_lineage(state: FakeMarquez, request: Request) -> Answer:
    try:
        event = json.loads(request.body)
    except ValueError:
        return Answer(400, {"code": 400, "message": "Unable to process JSON"})
    if not isinstance(event, dict) or not ("job" in event or "dataset" in event):
        # Marquez takes a RunEvent or JobEvent (with a job) and a DatasetEvent (with a dataset)
        return Answer(422, {"code": 422, "message": "job must not be null"})
    state.posted.append(event)
    return Answer(201, {})


def bearer_only(key: str, route: Route = _post_lineage) -> Route:
    """``route`` behind a Bearer key, as the lineage gateway is: another key or none is a 401."""

    def guarded(state: FakeMarquez, request: Request) -> Answer:
        if request.headers.get("authorization") != f"Bearer {key}":
            return Answer(401, {"code": 401, "message": "missing or wrong API key"})
        return route(state, request)

    return guarded


def _lineage_events(state: FakeMarquez, request: Request) -> Answer:
    """``GET /events/lineage``: the raw events of ``state.events``, filtered by event time
    (``after``/``before``), sorted by ``sortDirection`` (Marquez's default: desc), paged."""
    after, before = request.query.get("after"), request.query.get("before")

    def moment(text: str) -> datetime.datetime:
        value = datetime.datetime.fromisoformat(text)
        return value if value.tzinfo else value.replace(tzinfo=datetime.UTC)

    events = [
        e
        for e in state.events
        if (after is None or moment(e["eventTime"]) >= moment(after))
        and (before is None or moment(e["eventTime"]) <= moment(before))
    ]
    events.sort(key=lambda e: moment(e["eventTime"]), reverse=request.query.get("sortDirection", "desc") != "asc")
    return _page("events", events, request.query)


def marquez_routes() -> dict[str, Route]:
    """The Marquez API routes the tools use."""
    return {
        f"GET {API}/lineage": _lineage,
        f"GET {API}/column-lineage": _column_lineage,
        f"GET {API}/namespaces": _namespaces,
        f"GET {API}/namespaces/*/jobs": _namespace_items,
        f"GET {API}/namespaces/*/datasets": _namespace_items,
        f"GET {API}/jobs/runs/*": _run,
        f"GET {API}/events/lineage": _lineage_events,
        f"POST {API}/lineage": _post_lineage,
    }


FALLBACK = not_found("HTTP 404 Not Found")


@dataclass
class FakeMarquez:
    """What the server answers and what it received. ``phases`` (successive states of Marquez,
    each a lineage reply or None before any lineage arrived) replace ``lineage`` when set:
    a node in the current reply gets the whole reply, any other node a 404."""

    url: str = ""
    lineage: dict[str, Any] = field(default_factory=dict)  # nodeId -> reply (or an Answer)
    column_lineage: dict[str, Any] = field(default_factory=dict)
    namespaces: list[dict[str, Any]] = field(default_factory=list)
    jobs: dict[str, list[dict[str, Any]]] = field(default_factory=dict)
    datasets: dict[str, list[dict[str, Any]]] = field(default_factory=dict)
    runs: dict[str, dict[str, Any]] = field(default_factory=dict)
    events: list[dict[str, Any]] = field(default_factory=list)  # raw lineage events (GET /events/lineage)
    phases: list[Callable[[], dict[str, Any] | None]] = field(default_factory=list)
    phase: int = 0
    routes: dict[str, Route] = field(default_factory=marquez_routes)
    fallback: Answer = FALLBACK
    posted: list[dict[str, Any]] = field(default_factory=list)
    requests: list[str] = field(default_factory=list)
    fail_next: list[int] = field(default_factory=list)  # statuses to answer before serving
    delay_seconds: float = 0.0
    stopped: threading.Event = field(default_factory=threading.Event)

    def reset(self) -> None:
        self.posted.clear()
        self.events.clear()
        self.requests.clear()
        self.fail_next.clear()
        self.delay_seconds = 0.0
        self.routes = marquez_routes()
        self.fallback = FALLBACK

    # -- e2e phases ----------------------------------------------------------------------

    def advance(self, _seconds: float = 0.0) -> None:
        self.phase = min(self.phase + 1, len(self.phases) - 1)

    def reply(self) -> dict[str, Any] | None:
        return self.phases[self.phase]() if self.phases else None

    def lineage_reads(self) -> int:
        return sum(1 for r in self.requests if r.startswith(f"GET {API}/lineage"))

    def lineage_of(self, node: str) -> Any:
        if self.phases:
            reply = self.reply()
            return reply if reply is not None and any(n["id"] == node for n in reply["graph"]) else None
        return self.lineage.get(node)

    # -- routing -------------------------------------------------------------------------

    def route(self, request: Request) -> Answer:
        for pattern, handler in self.routes.items():
            method, _, path = pattern.partition(" ")
            wanted = [p for p in path.split("/") if p]
            if (
                method == request.method
                and len(wanted) == len(request.parts)
                and all(w in ("*", part) for w, part in zip(wanted, request.parts, strict=True))
            ):
                return handler(self, request)
        return self.fallback


def _encode(answer: Answer) -> tuple[bytes, str]:
    if isinstance(answer.body, bytes):
        return answer.body, answer.content_type or "text/html"
    return json.dumps(answer.body).encode(), answer.content_type or "application/json"


def _handler(state: FakeMarquez) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def log_message(self, *args: Any) -> None:  # quiet test output
            return

        def _serve(self) -> None:
            body = self.rfile.read(int(self.headers.get("Content-Length") or 0))
            state.requests.append(f"{self.command} {self.path}")
            if state.delay_seconds:
                state.stopped.wait(state.delay_seconds)
            if state.fail_next:
                status = state.fail_next.pop(0)
                self._write(Answer(status, {"code": status, "message": f"injected failure {status}"}))
                return
            parts = urlsplit(self.path)
            request = Request(
                method=self.command,
                path=parts.path,
                parts=tuple(unquote(p) for p in parts.path.split("/") if p),
                query={k: v[0] for k, v in parse_qs(parts.query).items()},
                body=body,
                headers={name.lower(): value for name, value in self.headers.items()},
            )
            self._write(state.route(request))

        do_GET = do_POST = do_PUT = do_DELETE = _serve  # noqa: N815 - http.server API

        def _write(self, answer: Answer) -> None:
            data, content_type = _encode(answer)
            head = [f"HTTP/1.1 {answer.status} {HTTPStatus(answer.status).phrase}", f"Content-Type: {content_type}"]
            if answer.content_length:
                head.append(f"Content-Length: {len(data)}")
            else:
                head.append("Connection: close")
                self.close_connection = True
            head += [f"{name}: {value}" for name, value in answer.headers.items()]
            raw_head = ("\r\n".join(head) + "\r\n\r\n").encode()
            try:
                if not answer.drip:
                    self.wfile.write(raw_head + data)
                    return
                self.close_connection = True
                if not answer.drip_head:
                    self.wfile.write(raw_head)
                dripped = raw_head + data if answer.drip_head else data
                for index in range(len(dripped)):
                    if state.stopped.wait(answer.drip):
                        return
                    self.wfile.write(dripped[index : index + 1])
            except (BrokenPipeError, ConnectionResetError):
                self.close_connection = True  # the client gave up (timeouts, caps)

    return Handler


def serve(state: FakeMarquez) -> Iterator[FakeMarquez]:
    """Run ``state``'s server on 127.0.0.1 (a free port) while the generator is suspended."""
    server = ThreadingHTTPServer(("127.0.0.1", 0), _handler(state))
    server.daemon_threads = True
    state.url = f"http://127.0.0.1:{server.server_address[1]}"
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield state
    finally:
        state.stopped.set()
        server.shutdown()
        server.server_close()
