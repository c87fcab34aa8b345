"""MarquezModel: Marquez 0.51.1's HTTP API over an in-memory model, one lock for every request."""

from __future__ import annotations

import datetime
import json
import random
import threading
from collections.abc import Callable, Mapping
from typing import Any

from .incoming import read_event
from .jtime import db_time, from_datetime
from .names import InvalidName, path_segments
from .reply import ACCEPTED, Reply, ReplyError, error, jersey_page, not_found, server_error
from .routes import BadParam, get, known
from .store import Store
from .write_events import store_event

Clock = Callable[[], datetime.datetime]
LINEAGE_URL = "/api/v1/lineage"


def utc_now() -> datetime.datetime:
    return datetime.datetime.now(datetime.UTC)


class MarquezModel:
    """Answers requests as Marquez 0.51.1 does, computed from the state its POSTs built.

    ``clock`` stands for the wall clock of Marquez and its PostgreSQL (a job's updatedAt after an
    upsert, a dataset's updatedAt after a completed run, the default namespace's createdAt);
    event-derived times come from the events. ``seed`` makes the random UUIDs and log ids
    repeatable."""

    def __init__(self, clock: Clock = utc_now, seed: int = 0) -> None:
        self._clock = clock
        self._lock = threading.Lock()
        self._rng = random.Random(seed)
        self.store = Store(self._wall, self._rng.getrandbits(32))

    def _wall(self) -> int:
        return db_time(from_datetime(self._clock()))

    def reset(self) -> None:
        """An empty database, as Marquez's migrations leave it (only the default namespace)."""
        with self._lock:
            self.store = Store(self._wall, self._rng.getrandbits(32))

    def post(self, event: Mapping[str, Any]) -> Reply:
        """POST one event as the project's client does."""
        body = json.dumps(event).encode()
        return self.handle("POST", LINEAGE_URL, {}, body, {"Content-Type": "application/json"})

    def handle(
        self, method: str, path: str, query: Mapping[str, str], body: bytes, headers: Mapping[str, str]
    ) -> Reply:
        """One request: ``path`` percent-encoded as sent, ``query`` decoded, ``headers`` any case."""
        parts = path_segments(path.split("?", 1)[0])
        with self._lock:
            try:
                return self._route(method.upper(), parts, query, body, headers)
            except ReplyError as failure:
                return failure.reply
            except BadParam:
                return not_found()
            except Exception:  # noqa: BLE001 - Marquez logs any other failure of a read and answers 500
                return server_error(self._rng)

    def _route(
        self, method: str, parts: list[str], query: Mapping[str, str], body: bytes, headers: Mapping[str, str]
    ) -> Reply:
        if parts[:2] != ["api", "v1"]:
            return not_found()
        rest = parts[2:]
        if rest == ["lineage"] and method == "POST":
            return self._post(body, headers)
        if method != "GET":
            return error(405, "HTTP 405 Method Not Allowed") if known(rest) else not_found()
        return get(self.store, rest, query)

    def _post(self, body: bytes, headers: Mapping[str, str]) -> Reply:
        incoming = read_event(body, headers)
        if isinstance(incoming, Reply):
            return incoming
        try:
            store_event(self.store, incoming)  # the raw event first, then the model (W4)
        except InvalidName:  # an IllegalArgumentException while storing: 400
            return jersey_page(400, LINEAGE_URL)
        except Exception:  # noqa: BLE001 - any other failure while storing: 500
            return jersey_page(500, LINEAGE_URL)
        return ACCEPTED
