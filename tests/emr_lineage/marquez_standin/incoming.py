"""Reading a POST /api/v1/lineage body as Marquez does: media type, gzip, Jackson's parse and type
errors (Marquez answers them with HTTP 500 and a {"code": 400} body), the event's type from its
schemaURL (EventTypeResolver), bean validation (422) and the event as Marquez stores it."""

from __future__ import annotations

import gzip
import json
import zlib
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from .jtime import TimeParseError, Zoned, format_zoned, parse_event_time
from .reply import Reply, error, invalid
from .schema import DATASET_EVENT, JOB_EVENT, RUN_EVENT, Shape, canonical, violations

RUN_EVENT_TYPE, DATASET_EVENT_TYPE, JOB_EVENT_TYPE = "RUN_EVENT", "DATASET_EVENT", "JOB_EVENT"
_CLASSES = {
    RUN_EVENT_TYPE: ("marquez.service.models.LineageEvent", RUN_EVENT),
    DATASET_EVENT_TYPE: ("marquez.service.models.DatasetEvent", DATASET_EVENT),
    JOB_EVENT_TYPE: ("marquez.service.models.JobEvent", JOB_EVENT),
}
_SOURCE = "[Source: REDACTED (`StreamReadFeature.INCLUDE_SOURCE_IN_LOCATION` disabled); line: {}, column: {}]"


@dataclass(frozen=True)
class Incoming:
    kind: str  # RUN_EVENT, DATASET_EVENT or JOB_EVENT
    event: dict[str, Any]  # as Marquez writes it back
    event_time: Zoned
    stored: dict[str, Any]  # as Marquez binds it and stores its facets (no modelled nulls)


def _jackson_error(message: str) -> Reply:
    """Marquez's JsonProcessingExceptionMapper: a 500 whose body says 400."""
    return Reply(500, {"code": 400, "message": message})


def _location(text: str, index: int) -> str:
    line = text.count("\n", 0, index) + 1
    column = index - (text.rfind("\n", 0, index) + 1) + 1
    return _SOURCE.format(line, column)


def _syntax_error(text: str, failure: json.JSONDecodeError) -> Reply:
    """Jackson's message for a body that is not JSON."""
    start = failure.pos
    if start < len(text) and (text[start].isalnum() or text[start] in "_$"):
        end = start
        while end < len(text) and (text[end].isalnum() or text[end] in "_$"):
            end += 1
        consumed = min(end + 1, len(text))  # Jackson reads the char that ends the token
        return _jackson_error(
            f"Unrecognized token '{text[start:end]}': was expecting (JSON String, Number, Array, Object or token "
            f"'null', 'true' or 'false')\n at {_location(text, consumed)}"
        )
    if start >= len(text):
        return _jackson_error(f"Unexpected end-of-input\n at {_location(text, len(text))}")
    char = text[start]
    return _jackson_error(
        f"Unexpected character ('{char}' (code {ord(char)})): expected a valid value (JSON String, Number, Array, "
        f"Object or token 'null', 'true' or 'false')\n at {_location(text, start + 1)}"
    )


def _event_kind(value: dict[str, Any]) -> str:
    """EventTypeResolver: the last '/'-segment of schemaURL; anything else is a RunEvent."""
    url = value.get("schemaURL")
    if not isinstance(url, str) or "/" not in url:
        return RUN_EVENT_TYPE
    last = url[url.rfind("/") :]
    return {"/DatasetEvent": DATASET_EVENT_TYPE, "/JobEvent": JOB_EVENT_TYPE}.get(last, RUN_EVENT_TYPE)


def _decode(body: bytes, headers: Mapping[str, str]) -> bytes:
    if headers.get("content-encoding", "").strip().lower() == "gzip":
        return gzip.decompress(body)
    return body


def _media_ok(headers: Mapping[str, str]) -> bool:
    media = headers.get("content-type")
    return media is None or media.split(";")[0].strip().lower() in ("application/json", "*/*", "application/*")


def _bind_times(value: dict[str, Any], class_name: str, text: str) -> Zoned | Reply:
    raw = value.get("eventTime")
    if raw is None:
        return Zoned(0)
    if not isinstance(raw, str):
        return _jackson_error(f"Cannot deserialize value of type `java.time.ZonedDateTime` from {type(raw).__name__}")
    try:
        return parse_event_time(raw)
    except TimeParseError as failure:
        where = text.find(json.dumps(raw))
        return _jackson_error(
            f'Cannot deserialize value of type `java.time.ZonedDateTime` from String "{raw}": Failed to deserialize '
            f"java.time.ZonedDateTime: (java.time.format.DateTimeParseException) {failure}\n"
            f' at {_location(text, max(where, 0) + 1)} (through reference chain: {class_name}["eventTime"])'
        )


def _check_objects(value: dict[str, Any], shape: Shape, class_name: str) -> Reply | None:
    """Jackson's type errors for a modelled object or list given as something else."""
    for name, inner in shape.nested.items():
        child = value.get(name)
        wanted = dict if isinstance(inner, Shape) else (list if inner[0] == "list" else dict)
        if child is not None and not isinstance(child, wanted):
            return _jackson_error(
                f"Cannot deserialize value of type `{wanted.__name__}` from {type(child).__name__} value "
                f'(through reference chain: {class_name}["{name}"])'
            )
    return None


def read_event(body: bytes, headers: Mapping[str, str]) -> Incoming | Reply:
    """The event of a POST, or the answer Marquez gives instead of storing it."""
    headers = {name.lower(): value for name, value in headers.items()}
    if not _media_ok(headers):
        return error(415, "HTTP 415 Unsupported Media Type")
    try:
        text = _decode(body, headers).decode("utf-8")
    except (OSError, EOFError, zlib.error, UnicodeDecodeError):
        return error(400, "Unable to process JSON")
    if not text:
        return invalid("The request body must not be null")
    try:
        value = json.loads(text)
    except json.JSONDecodeError as failure:
        return _syntax_error(text, failure)
    if value is None:
        return invalid("The request body must not be null")
    if not isinstance(value, dict):
        token = {list: "Array value (token `JsonToken.START_ARRAY`)"}.get(type(value), f"{type(value).__name__} value")
        start = len(text) - len(text.lstrip())
        return _jackson_error(
            f"Cannot deserialize value of type `marquez.service.models.LineageEvent` from {token}\n"
            f" at {_location(text, start)}"
        )
    kind = _event_kind(value)
    class_name, shape = _CLASSES[kind]
    failure = _check_objects(value, shape, class_name)
    if failure:
        return failure
    moment = _bind_times(value, class_name, text)
    if isinstance(moment, Reply):
        return moment
    problems = violations(value, shape)
    if problems:
        return invalid(*problems)
    event = canonical(value, shape)
    event["eventTime"] = format_zoned(moment)
    return Incoming(kind, event, moment, canonical(value, shape, nulls=False))
