"""What the model answers, and Marquez's error answers as the recordings show them."""

from __future__ import annotations

import random
from dataclasses import dataclass
from typing import Any

JSON = "application/json"


@dataclass(frozen=True)
class Reply:
    """One HTTP answer: a status, a body (a JSON value, text or bytes, None for no body) and the
    Content-Type (None when Marquez sends none, as for an accepted POST)."""

    status: int
    body: Any = None
    content_type: str | None = JSON


ACCEPTED = Reply(201, "", None)


def ok(body: Any) -> Reply:
    return Reply(200, body)


def error(status: int, message: str) -> Reply:
    """Dropwizard's ErrorMessage body."""
    return Reply(status, {"code": status, "message": message})


def not_found(message: str = "HTTP 404 Not Found") -> Reply:
    return error(404, message)


def invalid(*messages: str, status: int = 422) -> Reply:
    """A bean-validation answer: {"errors": [...]}."""
    return Reply(status, {"errors": list(messages)})


_REASONS = {400: "Bad Request", 500: "Internal Server Error"}


def jersey_page(status: int, url: str, message: str | None = None) -> Reply:
    """Jetty's JSON error page for a response without an entity (a failed POST)."""
    body = {"servlet": "jersey", "message": message or _REASONS[status], "url": url, "status": str(status)}
    return Reply(status, body)


def server_error(rng: random.Random) -> Reply:
    """Dropwizard's logged 500: the id is random on every answer."""
    log_id = f"{rng.getrandbits(64):016x}"
    return error(500, f"There was an error processing your request. It has been logged (ID {log_id}).")


def namespace_not_found(name: str) -> Reply:
    return not_found(f"Namespace '{name}' not found.")


def job_not_found(name: str) -> Reply:
    return not_found(f"Job '{name}' not found.")


def dataset_not_found(name: str) -> Reply:
    return not_found(f"Dataset '{name}' not found.")


def run_not_found(run_id: str) -> Reply:
    return not_found(f"Run '{run_id}' not found.")


class ReplyError(Exception):
    """Raised deep in a read or write to answer with ``reply``."""

    def __init__(self, reply: Reply) -> None:
        super().__init__(reply.status)
        self.reply = reply
