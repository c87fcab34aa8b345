"""Where the Marquez HTTP API lives on its server: the one place ``/api/v1`` is written.

Standard library only: the Spark configuration (``spark.openlineage.transport.endpoint``) and the Marquez
client both take their paths from here.
"""

from __future__ import annotations

import datetime as dt
from urllib.parse import urlsplit

API_ROOT = "/api/v1"
LINEAGE_ENDPOINT = f"{API_ROOT}/lineage"  # POST: OpenLineage events; GET: the lineage graph
# POST: a JSON array of OpenLineage events, the OpenLineage spec's batch endpoint
# (https://github.com/OpenLineage/OpenLineage/pull/4109). Marquez has none
# (https://github.com/MarquezProject/marquez/issues/2918): the lineage gateway serves it and
# forwards each event to LINEAGE_ENDPOINT.
LINEAGE_BATCH_ENDPOINT = f"{LINEAGE_ENDPOINT}/batch"
EVENTS_ENDPOINT = f"{API_ROOT}/events/lineage"  # GET: the raw events Marquez stored, by event time
# The event times Marquez lists back. GET /events/lineage reads event_time >= after and < before, with
# after=1970-01-01T00:00Z and before=2030-01-01T00:00Z unless given (OpenLineageResource.java,
# OpenLineageDao.java): readers send both ends, events are held to this range where they come in
# (emr_lineage.lineage.event_rule), and the end stays a day short of the last day Python's datetime holds.
EARLIEST_EVENT_TIME = dt.datetime(1970, 1, 1, tzinfo=dt.UTC)
LATEST_EVENT_TIME = dt.datetime(9999, 12, 31, tzinfo=dt.UTC)  # exclusive


def http_url(url: str, example: str = "http://localhost:5000") -> str:
    """``url`` without surrounding blanks; ValueError, saying what is wrong and giving ``example``, when it is
    not an http(s) URL with a host, or has a query or fragment (a base URL: callers add paths to it)."""
    text = url.strip()
    try:
        parts = urlsplit(text)
        parts.port  # noqa: B018 - parses the port: ValueError when it is not a number
    except ValueError:  # urllib's own words ("Invalid IPv6 URL") would not tell the user what to type
        raise ValueError(f"{url!r} is not a URL: its host or port cannot be read, e.g. {example}") from None
    if parts.scheme not in ("http", "https") or not parts.hostname:
        raise ValueError(f"{url!r} is not an http(s) URL with a host, e.g. {example}")
    if parts.query or parts.fragment:
        raise ValueError(f"{url!r} has a query or fragment; give the base URL, e.g. {example}")
    return text


def without_api_path(url: str) -> str:
    """``url`` (or a URL's path) without a trailing slash and a pasted ``/api/v1`` or ``/api/v1/lineage``."""
    return url.rstrip("/").removesuffix(LINEAGE_ENDPOINT).removesuffix(API_ROOT).rstrip("/")


def base_url(url: str) -> str:
    """A Marquez's (or the lineage gateway's) base URL, without a trailing slash, ``/api/v1`` or
    ``/api/v1/lineage`` (all commonly pasted); ValueError, saying what is wrong, when ``url`` is not an
    http(s) URL with a host (:func:`http_url`)."""
    return without_api_path(http_url(url))
