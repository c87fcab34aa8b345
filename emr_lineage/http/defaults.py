"""The HTTP stack's defaults, in a module of their own: a command's options show them without
importing ``requests`` (about 85 ms of start-up for commands that never go on the network)."""

MIB = 1 << 20
DEFAULT_TIMEOUT = 10.0  # seconds for one whole request, retries included
DEFAULT_RETRIES = 3
DEFAULT_BACKOFF = 0.5  # urllib3 backoff factor: waits 0, 2×, 4×... this many seconds
DEFAULT_MAX_BYTES = 64 * MIB
RETRY_STATUSES = (429, 500, 502, 503, 504)
