"""A body of one event, checked as the gateway checks a request: decoded (gzip, the size limit), held to the
JSON rule, one JSON object, then the event's checks (:func:`~emr_lineage.lineage.door.event.check_event`).

The gateway's ingest checks each request by it (after the API key), and every reader of the archive checks
an archived body again by it (:func:`check_archived`: ``replay``, the analysis commands, the graph's Spark
job), so what the archive gives back is what the gateway took.
"""

from __future__ import annotations

from collections.abc import Mapping

from emr_lineage.errors import json_type
from emr_lineage.lineage.door.body import decoded, parsed
from emr_lineage.lineage.door.event import CheckedEvent, check_event
from emr_lineage.lineage.door.verdict import Rejected
from emr_lineage.lineage.schemas.checks import Schemas
from emr_lineage.marquez.api import LINEAGE_BATCH_ENDPOINT

# An archived body was accepted under the gateway's own size limit when it came: read back whole.
_ARCHIVED_SIZE_LIMIT = 1 << 40


def one_line_json(raw: bytes) -> bytes:
    """JSON text on one line: its CR and LF bytes made spaces. Valid JSON has line breaks only as
    whitespace between tokens (inside strings they must be escaped, RFC 8259 section 7), so the value
    is the same and a compact body is unchanged; Athena's line-based SerDes read one event per line."""
    return raw.replace(b"\r", b" ").replace(b"\n", b" ")


def check_body(
    headers: Mapping[str, str] | None, body: bytes, *, max_bytes: int, schemas: Schemas | None = None
) -> tuple[CheckedEvent, bytes] | Rejected:
    """The checked event of a body of one event, with the body's JSON bytes (decompressed).

    ``max_bytes`` bounds the body, decompressed too, and the canonical event (what SQS gets).
    ``schemas``: the OpenLineage schemas the event is checked against besides the event rule
    (:func:`~emr_lineage.lineage.schemas.checks.door_problem`); None, the event rule only.
    """
    data = decoded(headers, body, max_bytes=max_bytes)
    if isinstance(data, Rejected):
        return data
    value = parsed(data)
    if isinstance(value, Rejected):
        return value
    if isinstance(value, list):
        return Rejected(400, f"the body is a JSON array; send a batch to {LINEAGE_BATCH_ENDPOINT}")
    if not isinstance(value, dict):
        return Rejected(400, f"the body is a JSON {json_type(value)}, not an object (one OpenLineage event)")
    checked = check_event(value, max_bytes=max_bytes, schemas=schemas)
    return checked if isinstance(checked, Rejected) else (checked, data)


def check_archived(body: bytes) -> CheckedEvent | Rejected:
    """A body of the archive checked again as the gateway checks a request (no key; no size limit: it
    passed the gateway's when it came)."""
    checked = check_body(None, body, max_bytes=_ARCHIVED_SIZE_LIMIT)
    return checked if isinstance(checked, Rejected) else checked[0]
