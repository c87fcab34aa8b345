"""The one HTTP stack of emr-lineage (see :mod:`emr_lineage.http.client`)."""

from emr_lineage.http.client import (
    DEFAULT_BACKOFF,
    DEFAULT_MAX_BYTES,
    DEFAULT_RETRIES,
    DEFAULT_TIMEOUT,
    MIB,
    RETRY_STATUSES,
    HttpClient,
    HttpError,
    Reply,
)

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
]
