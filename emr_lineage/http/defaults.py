"""The HTTP stack's defaults and what a status means, in a module of their own: a command's options show
them, and ``post`` reads a status, without importing ``requests`` (about 85 ms of start-up for commands that
never go on the network)."""

MIB = 1 << 20
DEFAULT_TIMEOUT = 10.0  # seconds for one whole request, retries included
DEFAULT_RETRIES = 3
DEFAULT_BACKOFF = 0.5  # urllib3 backoff factor: waits 0, 2×, 4×... this many seconds
DEFAULT_MAX_BYTES = 64 * MIB
RETRY_STATUSES = (429, 500, 502, 503, 504)


def is_redirect(status: int) -> bool:
    """An HTTP 3xx: the server points elsewhere (a write is never sent on: :mod:`emr_lineage.http.client`)."""
    return 300 <= status < 400
