"""The one HTTP stack of emr-lineage (see :mod:`emr_lineage.http.client`).

The client classes load on first use (``requests`` is slow to import); the defaults do not need it.
"""

from typing import Any

from emr_lineage.http.defaults import (
    DEFAULT_BACKOFF,
    DEFAULT_MAX_BYTES,
    DEFAULT_RETRIES,
    DEFAULT_TIMEOUT,
    MIB,
    RETRY_STATUSES,
    is_redirect,
)

_CLIENT_NAMES = ("HttpClient", "HttpError", "Reply")

__all__ = [
    "DEFAULT_BACKOFF",
    "DEFAULT_MAX_BYTES",
    "DEFAULT_RETRIES",
    "DEFAULT_TIMEOUT",
    "MIB",
    "RETRY_STATUSES",
    "HttpClient",
    "HttpError",
    "Reply",
    "is_redirect",
]


def __getattr__(name: str) -> Any:
    if name in _CLIENT_NAMES:
        from emr_lineage.http import client

        return getattr(client, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
