"""The one Marquez of the test suite: a ThreadingHTTPServer on 127.0.0.1 in front of the Marquez 0.51.1
stand-in (:mod:`tests.emr_lineage.marquez_standin`), which answers as the recordings of a real Marquez show.

:class:`FakeMarquez` holds the stand-in (``model``) and what the server received (``requests``, and
``posted``: the events the stand-in accepted). Tests put lineage in Marquez as producers do, by POSTing
events (:meth:`FakeMarquez.store`), or let it arrive between reads (``phases``: each a callable giving the
events that arrive when that phase is reached, the first at the first request). ``routes`` overrides
requests (``"METHOD /path/pattern"``, ``*`` is one path segment) with a function of the state and the
:class:`Request` returning an :class:`Answer`, to make the server misbehave: ``Answer(drip=...)`` sends one
byte at a time, a large body tests a size cap; :meth:`FakeMarquez.not_marquez` makes it a server that is
not Marquez. ``reset()`` puts the defaults back and empties the stand-in's database.
"""

from __future__ import annotations

import gzip
import json
import threading
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field
from http import HTTPStatus
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import parse_qs, unquote, urlsplit

from emr_lineage.marquez.api import API_ROOT
from tests.emr_lineage.marquez_standin import MarquezModel

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
    raw: bool = False  # the stand-in's answer: its Content-Type as it is, none when it has none


@dataclass(frozen=True)
class Request:
    method: str
    path: str  # without the query string
    raw_path: str  # as sent: percent-encoded
    parts: tuple[str, ...]  # unquoted path segments
    query: dict[str, str]
    body: bytes
    headers: Mapping[str, str] = field(default_factory=dict)  # names lowercased


Route = Callable[["FakeMarquez", Request], Answer]


def _model_answer(state: FakeMarquez, request: Request) -> Answer:
    """What the Marquez stand-in answers."""
    reply = state.model.handle(request.method, request.raw_path, request.query, request.body, request.headers)
    body = reply.body.encode() if isinstance(reply.body, str) else reply.body
    return Answer(reply.status, body, content_type=reply.content_type, raw=True)


def _post_lineage(state: FakeMarquez, request: Request) -> Answer:
    """The stand-in's answer to an event; one it accepted is kept in ``posted`` too."""
    answer = _model_answer(state, request)
    if answer.status == 201:
        state.posted.append(
            json.loads(gzip.decompress(request.body) if request.body[:2] == b"\x1f\x8b" else request.body)
        )
    return answer


def bearer_only(key: str, route: Route = _post_lineage) -> Route:
    """``route`` behind a Bearer key, as the lineage gateway is: another key or none is a 401."""

    def guarded(state: FakeMarquez, request: Request) -> Answer:
        if request.headers.get("authorization") != f"Bearer {key}":
            return Answer(401, {"code": 401, "message": "missing or wrong API key"})
        return route(state, request)

    return guarded


def marquez_routes() -> dict[str, Route]:
    """The routes the server answers itself before the stand-in: a POSTed event is also kept in ``posted``."""
    return {f"POST {API}/lineage": _post_lineage}


COMPACT = (",", ":")  # Marquez's Jackson writes JSON without spaces
NOT_MARQUEZ = Answer(404, {"code": 404, "message": "HTTP 404 Not Found"})


@dataclass
class FakeMarquez:
    """The stand-in and what the server received; ``phases`` of events that arrive between reads (e2e)."""

    url: str = ""
    model: MarquezModel = field(default_factory=MarquezModel)
    phases: list[Callable[[], list[dict[str, Any]]]] = field(default_factory=list)
    phase: int = 0
    arrived: int = -1  # the last phase whose events are in the stand-in
    routes: dict[str, Route] = field(default_factory=marquez_routes)
    fallback: Answer | None = None  # None: the stand-in answers; else this answer (a server that is not Marquez)
    posted: list[dict[str, Any]] = field(default_factory=list)
    requests: list[str] = field(default_factory=list)
    fail_next: list[int] = field(default_factory=list)  # statuses to answer before serving
    delay_seconds: float = 0.0
    stopped: threading.Event = field(default_factory=threading.Event)

    def reset(self) -> None:
        self.model.reset()
        self.phases, self.phase, self.arrived = [], 0, -1
        self.posted.clear()
        self.requests.clear()
        self.fail_next.clear()
        self.delay_seconds = 0.0
        self.routes = marquez_routes()
        self.fallback = None

    def store(self, events: list[dict[str, Any]]) -> None:
        """Put ``events`` in Marquez as a producer does (each POSTed to the stand-in, which must take it)."""
        for event in events:
            reply = self.model.post(event)
            assert reply.status == 201, f"the Marquez stand-in refused an event: {reply.status} {reply.body}"

    def not_marquez(self, fallback: Answer = NOT_MARQUEZ) -> None:
        """From now on, a server that is not Marquez: ``fallback`` for every request."""
        self.routes.clear()
        self.fallback = fallback

    # -- e2e phases ----------------------------------------------------------------------

    def advance(self, _seconds: float = 0.0) -> None:
        self.phase = min(self.phase + 1, len(self.phases) - 1)

    def _arrive(self) -> None:
        while self.arrived < min(self.phase, len(self.phases) - 1):
            self.arrived += 1
            self.store(self.phases[self.arrived]())

    def lineage_reads(self) -> int:
        return sum(1 for r in self.requests if r.startswith(f"GET {API}/events/lineage"))

    # -- routing -------------------------------------------------------------------------

    def route(self, request: Request) -> Answer:
        self._arrive()
        for pattern, handler in self.routes.items():
            method, _, path = pattern.partition(" ")
            wanted = [p for p in path.split("/") if p]
            if (
                method == request.method
                and len(wanted) == len(request.parts)
                and all(w in ("*", part) for w, part in zip(wanted, request.parts, strict=True))
            ):
                return handler(self, request)
        return self.fallback if self.fallback is not None else _model_answer(self, request)


def _encode(answer: Answer) -> tuple[bytes, str | None]:
    if answer.raw:  # the stand-in's: its bytes, JSON or none, with its Content-Type or none
        body = answer.body
        return (
            b"" if body is None else body if isinstance(body, bytes) else json.dumps(body, separators=COMPACT).encode()
        ), answer.content_type
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
                raw_path=parts.path,
                parts=tuple(unquote(p) for p in parts.path.split("/") if p),
                query={k: v[0] for k, v in parse_qs(parts.query).items()},
                body=body,
                headers={name.lower(): value for name, value in self.headers.items()},
            )
            self._write(state.route(request))

        do_GET = do_POST = do_PUT = do_DELETE = _serve  # noqa: N815 - http.server API

        def _write(self, answer: Answer) -> None:
            data, content_type = _encode(answer)
            head = [f"HTTP/1.1 {answer.status} {HTTPStatus(answer.status).phrase}"]
            head += [f"Content-Type: {content_type}"] if content_type else []
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
