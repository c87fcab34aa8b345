"""What an OpenLineage event must be to be taken anywhere: one rule at every door.

Standard library only: the gateway's ingest Lambda carries it (``gateway/config.py``). The gateway
(Lambda and local mode), ``post``, ``replay`` and every reader of event files, of the archive or of
Marquez's raw events hold each event to :func:`event_problem`, so what one of them takes the others
take, and Marquez 0.51 can store it and list it back (docs/gateway.md, "The event rule"). It is the union of:

* what the OpenLineage 2-0-2 spec requires (https://openlineage.io/spec/2-0-2/OpenLineage.json): an
  RFC 3339 ``eventTime`` with an offset, a ``producer`` and a ``schemaURL``; a RunEvent's ``run.runId``
  (a UUID), ``job`` and ``eventType`` (one of the spec's six); every facet's ``_producer`` and ``_schemaURL``;
* what Marquez 0.51.1 can hold (MarquezProject/marquez, ``api/src/main``):
  - namespaces of letters, digits and ``_ - . @ + : /`` (``common/models/NamespaceName.java``). Marquez
    rewrites other characters of a job namespace to ``_`` (``db/OpenLineageDao.java``, formatNamespaceName:
    lineage lands under another name) and keeps them in output, symlink and static-event namespaces, where
    one bad row makes GET /api/v1/namespaces answer 500 for everyone. ``;`` and ``=``, which its
    NamespaceName allows, are refused too: formatNamespaceName rewrites them, so a dataset namespace that
    holds one is stored twice, as sent and rewritten;
  - names (job, dataset, schema field, source) that are not blank and hold no line break: a blank one is
    refused after its row is written and breaks its listing; a line break breaks GET /api/v1/lineage
    (``service/models/NodeId.java`` matches ids without DOTALL);
  - at most :data:`NAME_MAX_BYTES` bytes for every namespace, name, field name and facet key: the
    ``VARCHAR(255)`` columns (``dataset_fields.name``, the facet tables' ``name``), the ``DATASET_NAME``
    type that cuts names at 255 and confuses two datasets alike up to there, and PostgreSQL's B-tree row
    limit (2,704 bytes) on the indexes that hold a job's namespace and name twice;
  - URIs Java reads (``producer``, ``schemaURL``, each facet's ``_producer`` and ``_schemaURL``, a data
    source's ``uri``): Marquez answers 500 and stores nothing otherwise;
  - the kind of event the ``schemaURL`` names (``service/models/EventTypeResolver.java``: its last ``/``
    segment, ``RunEvent``, ``JobEvent`` or ``DatasetEvent``; anything else is a RunEvent);
  - an event time Marquez lists back (:data:`~emr_lineage.marquez.api.EARLIEST_EVENT_TIME` to before
    :data:`~emr_lineage.marquez.api.LATEST_EVENT_TIME`), with at most 9 fraction digits and an offset of
    at most 18 hours (what ``FlexibleDateTimeDeserializer.java`` reads).

The facets Marquez models get the fields it requires and its columns' limits (:data:`_MODELLED`); the JSON
text itself (duplicate keys, NaN, nesting, NULs) is :mod:`emr_lineage.lineage.event_json`'s.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from typing import Any

from emr_lineage.errors import json_type
from emr_lineage.lineage.times import parse_time
from emr_lineage.marquez.api import EARLIEST_EVENT_TIME, LATEST_EVENT_TIME

RUN_EVENT, JOB_EVENT, DATASET_EVENT = "RunEvent", "JobEvent", "DatasetEvent"
# The spec's RunEvent.eventType enum.
EVENT_TYPES = frozenset({"START", "RUNNING", "COMPLETE", "ABORT", "FAIL", "OTHER"})
NAME_MAX_BYTES = 255
NAMESPACE_CHARACTERS = "letters, digits and _ - . @ + : /"
# The patterns are also the compiled check's (emr_lineage.lineage.schemas.compiled), hence anchored.
NAMESPACE_PATTERN = rf"^[A-Za-z0-9_\-.@+:/]{{1,{NAME_MAX_BYTES}}}$"
# The textual UUID (RFC 9562 section 4): Marquez would make a name-based UUID of anything else.
UUID_PATTERN = r"^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$"
# An RFC 3339 date-time (section 5.6), the spec's date-time format; the calendar is datetime's to check.
_DATE_TIME = re.compile(
    r"[0-9]{4}-[0-9]{2}-[0-9]{2}[Tt][0-9]{2}:[0-9]{2}:[0-9]{2}(?:[.]([0-9]+))?([Zz]|[+-]([0-9]{2}):([0-5][0-9]))?"
)
_NAMESPACE = re.compile(NAMESPACE_PATTERN)
_NOT_NAMESPACE = re.compile(r"[^A-Za-z0-9_\-.@+:/]")
_UUID = re.compile(UUID_PATTERN)
# Line breaks as Java's regular expressions see them (java.util.regex.Pattern, "Line terminators").
_LINE_BREAK = re.compile("[\n\r\x85\u2028\u2029]")
# What java.net.URI refuses (RFC 2396 section 2.4.3: "unwise" and excluded characters, brackets outside
# an IPv6 host as RFC 2732 allows them), and a % that starts no escape.
_NOT_URI = re.compile(r'[\x00-\x20"<>\\^`{|}\x7f\[\]]|%(?![0-9A-Fa-f]{2})')
_IPV6_HOST = re.compile(r"^[A-Za-z][A-Za-z0-9+.-]*://(?:[^/?#@]*@)?\[[0-9A-Fa-f:.]+\]")
_FACET_MAPS = ("facets", "inputFacets", "outputFacets")


def quoted(value: Any, limit: int = 80) -> str:
    text = repr(value)
    return text if len(text) <= limit else text[: limit - 4] + "...'"


def too_long(value: str, limit: int = NAME_MAX_BYTES) -> bool:
    """More than ``limit`` bytes in UTF-8 (what PostgreSQL counts for its indexes; at most 4 a character)."""
    return len(value) > limit or (not value.isascii() and len(value.encode("utf-8", "surrogatepass")) > limit)


def namespace_problem(value: Any, where: str) -> str | None:
    """Why ``value`` cannot be a namespace in Marquez, or None."""
    if type(value) is str and _NAMESPACE.fullmatch(value):
        return None
    if not isinstance(value, str) or not value:
        return f"{where} is missing or not a string"
    if too_long(value):
        return f"{where} is {len(value)} characters long; the limit is {NAME_MAX_BYTES}"
    bad = "".join(sorted(set(_NOT_NAMESPACE.findall(value))))
    return f"{where} {quoted(value)} has characters Marquez cannot hold ({bad!r}); use {NAMESPACE_CHARACTERS}"


def name_problem(value: Any, where: str) -> str | None:
    """Why ``value`` cannot be a name (job, dataset, field, source): a string that is not blank, holds no line
    break and fits in :data:`NAME_MAX_BYTES`; None when it can."""
    if not isinstance(value, str):
        return f"{where} is missing or not a string"
    if not value.strip():
        return f"{where} is blank"
    if too_long(value):
        return f"{where} is {len(value.encode('utf-8', 'surrogatepass'))} bytes long; the limit is {NAME_MAX_BYTES}"
    if _LINE_BREAK.search(value):
        return f"{where} {quoted(value)} holds a line break, which Marquez's lineage graph cannot hold"
    return None


def named_problem(value: Any, where: str) -> str | None:
    """``value`` is an object with a namespace and a name Marquez can hold."""
    if not isinstance(value, dict):
        return f"{where} is missing or not an object"
    return namespace_problem(value.get("namespace"), f"{where}.namespace") or name_problem(
        value.get("name"), f"{where}.name"
    )


def uuid_problem(value: Any, where: str) -> str | None:
    if type(value) is str and _UUID.fullmatch(value):
        return None
    if not isinstance(value, str):
        return f"{where} is missing or not a string"
    return f"{where}: {quoted(value)} is not a UUID"


def uri_problem(value: Any, where: str) -> str | None:
    """``value`` is a URI Java reads (java.net.URI): not empty, no space, quote, angle bracket... nor a stray %."""
    if not isinstance(value, str) or not value:
        return f"{where} is missing or not a string"
    host = _IPV6_HOST.match(value)
    bad = _NOT_URI.search(value, host.end() if host else 0)
    if bad is not None or value.count("#") > 1:
        what = repr(bad.group()) if bad is not None else "a second '#'"
        return f"{where} {quoted(value)} is not a URI ({what} must be percent-encoded)"
    return None


def event_kind(event: Mapping[str, Any]) -> str:
    """The kind Marquez reads an event as: the last ``/`` segment of its ``schemaURL``."""
    url = event.get("schemaURL")
    tail = url.rsplit("/", 1)[-1] if isinstance(url, str) else ""
    return tail if tail in (JOB_EVENT, DATASET_EVENT) else RUN_EVENT


def time_problem(value: Any, where: str = "eventTime") -> str | None:
    """Why ``value`` is not an event time Marquez reads, stores and lists back, or None."""
    if not isinstance(value, str) or not value:
        return f"{where} is missing or not a string"
    form = _DATE_TIME.fullmatch(value)
    if form is None:
        return f"{where}: {quoted(value)} is not an RFC 3339 date-time (e.g. 2026-11-27T19:00:21.736Z)"
    fraction, offset, hours, minutes = form.groups()
    if offset is None:
        return f"{where}: {quoted(value)} has no UTC offset"
    if (fraction and len(fraction) > 9) or (hours and (int(hours), int(minutes)) > (18, 0)):
        return f"{where}: {quoted(value)} has more than 9 fraction digits or an offset beyond 18:00"
    try:
        moment = parse_time(value)
    except ValueError:
        return f"{where}: {quoted(value)} is not a date and time of the calendar"
    except OverflowError:  # e.g. 0001-01-01T00:00:00+14:00, before the first moment in UTC
        moment = None
    if moment is None or not EARLIEST_EVENT_TIME <= moment < LATEST_EVENT_TIME:
        return (
            f"{where}: {quoted(value)} is out of range; Marquez lists events from "
            f"{EARLIEST_EVENT_TIME.isoformat()} to before {LATEST_EVENT_TIME.isoformat()}"
        )
    return None


# --- the facets Marquez models (service/models/LineageEvent.java, db/OpenLineageDao.java) -----------------


def _text_problem(facet: Mapping[str, Any], field: str, where: str, limit: int | None = None) -> str | None:
    """``facet[field]`` is a string (Marquez requires it), within ``limit`` bytes (its column's) when given."""
    value = facet.get(field)
    if not isinstance(value, str):
        return f"{where}.{field} is missing or not a string"
    if limit is not None and too_long(value, limit):
        return f"{where}.{field} is over {limit} bytes, more than Marquez's column holds"
    return None


def _parent(facet: Mapping[str, Any], where: str) -> str | None:
    """The parent run (a UUID) and job (Marquez makes a job of it); so the ``root``, when given."""
    parts = [(facet, where)] + ([(facet["root"], f"{where}.root")] if facet.get("root") is not None else [])
    for part, place in parts:
        if not isinstance(part, dict):
            return f"{place} is not an object"
        run = part.get("run")
        problem = uuid_problem(run.get("runId") if isinstance(run, dict) else None, f"{place}.run.runId")
        if problem or (problem := named_problem(part.get("job"), f"{place}.job")):
            return problem
    return None


def _nominal_time(facet: Mapping[str, Any], where: str) -> str | None:
    problem = time_problem(facet.get("nominalStartTime"), f"{where}.nominalStartTime")
    if problem is None and facet.get("nominalEndTime") is not None:
        problem = time_problem(facet["nominalEndTime"], f"{where}.nominalEndTime")
    return problem


def _each(items: Any, where: str, check: Callable[[Any, str], str | None], *, optional: bool = False) -> str | None:
    """The first problem of the items of a list (``check(item, "where[i]")``); a list must be there unless
    ``optional`` (then None is none)."""
    if items is None and optional:
        return None
    if not isinstance(items, list):
        return f"{where} is not a list" if optional else f"{where} is missing or not a list"
    for index, item in enumerate(items):
        if problem := check(item, f"{where}[{index}]"):
            return problem
    return None


def _schema_field(field: Any, where: str) -> str | None:
    """Named as a name must be (``dataset_fields.name`` is VARCHAR(255)); a type, when given, within what the
    index over (dataset, name, type) holds."""
    if not isinstance(field, dict):
        return f"{where} is not an object"
    problem = name_problem(field.get("name"), f"{where}.name")
    if problem is None and field.get("type") is not None:
        problem = _text_problem(field, "type", where, 2000)
    return problem


def _identifier(identifier: Any, where: str) -> str | None:
    return named_problem(identifier, where) or _text_problem(identifier, "type", where, 64)


def _column_source(source: Any, where: str) -> str | None:
    return named_problem(source, where) or name_problem(source.get("field"), f"{where}.field")


def _column_lineage(facet: Mapping[str, Any], where: str) -> str | None:
    fields = facet.get("fields")
    if not isinstance(fields, dict):
        return f"{where}.fields is missing or not an object"
    for field, spec in fields.items():
        place = f"{where}.fields.{field}"
        sources = spec.get("inputFields") if isinstance(spec, dict) else None
        if problem := _each(sources, f"{place}.inputFields", _column_source):
            return problem
        if spec.get("transformationType") is not None and (
            problem := _text_problem(spec, "transformationType", place, 255)
        ):
            return problem
    return None


def _data_source(facet: Mapping[str, Any], where: str) -> str | None:
    return name_problem(facet.get("name"), f"{where}.name") or uri_problem(facet.get("uri"), f"{where}.uri")


def _source_code_location(facet: Mapping[str, Any], where: str) -> str | None:
    return _text_problem(facet, "url", where, NAME_MAX_BYTES) if facet.get("url") is not None else None


_MODELLED = {
    "parent": _parent,
    "nominalTime": _nominal_time,
    "jobType": lambda facet, where: next(
        (p for f in ("processingType", "integration", "jobType") if (p := _text_problem(facet, f, where))), None
    ),
    "sql": lambda facet, where: _text_problem(facet, "query", where),
    "documentation": lambda facet, where: _text_problem(facet, "description", where),
    "sourceCodeLocation": _source_code_location,
    "schema": lambda facet, where: _each(facet.get("fields"), f"{where}.fields", _schema_field, optional=True),
    "symlinks": lambda facet, where: _each(facet.get("identifiers"), f"{where}.identifiers", _identifier),
    "columnLineage": _column_lineage,
    "dataSource": _data_source,
    "lifecycleStateChange": lambda facet, where: _text_problem(facet, "lifecycleStateChange", where, 63),
}


def facets_problem(facets: Any, where: str) -> str | None:
    """A facet map: an object whose every facet is an object with a ``_producer`` and ``_schemaURL`` that
    are URIs, under a key Marquez's facet tables hold; then the limits of the facets Marquez models."""
    if facets is None:
        return None
    if not isinstance(facets, dict):
        return f"{where} is not an object"
    for key, facet in facets.items():
        if not isinstance(facet, dict):
            return f"{where}.{key} is not an object"
        if too_long(key):
            return f"{where}: the facet key {quoted(key)} is over {NAME_MAX_BYTES} bytes"
        for field in ("_producer", "_schemaURL"):
            if problem := uri_problem(facet.get(field), f"{where}.{key}.{field}"):
                return problem
    for key, check in _MODELLED.items():
        if key in facets and (problem := check(facets[key], f"{where}.{key}")):
            return problem
    return None


def dataset_problem(dataset: Any, where: str) -> str | None:
    """One dataset: named as Marquez can hold it, and its facet maps."""
    problem = named_problem(dataset, where)
    for key in _FACET_MAPS:
        if problem is None and dataset.get(key) is not None:
            problem = facets_problem(dataset[key], f"{where}.{key}")
    return problem


def _datasets_problem(event: Mapping[str, Any]) -> str | None:
    return _each(event.get("inputs"), "inputs", dataset_problem, optional=True) or _each(
        event.get("outputs"), "outputs", dataset_problem, optional=True
    )


def _job_problem(job: Any) -> str | None:
    return named_problem(job, "job") or facets_problem(job.get("facets"), "job.facets")


def _run_problem(event: Mapping[str, Any]) -> str | None:
    event_type = event.get("eventType")
    if not isinstance(event_type, str):
        return "eventType is missing or not a string"
    if event_type not in EVENT_TYPES:
        return f"eventType {quoted(event_type)} is not one of {', '.join(sorted(EVENT_TYPES))}"
    run = event.get("run")
    if not isinstance(run, dict):
        return "run is missing or not an object"
    return (
        uuid_problem(run.get("runId"), "run.runId")
        or facets_problem(run.get("facets"), "run.facets")
        or _job_problem(event.get("job"))
        or _datasets_problem(event)
    )


def event_problem(event: Any) -> str | None:
    """Why ``event`` (a decoded JSON value) is not an OpenLineage event Marquez can store and list back,
    in one line that says where; None when it is one."""
    if not isinstance(event, dict):
        return f"the event is a JSON {json_type(event)}, not an object"
    problem = time_problem(event.get("eventTime")) or uri_problem(event.get("producer"), "producer")
    if problem or (problem := uri_problem(event.get("schemaURL"), "schemaURL")):
        return problem
    kind = event_kind(event)
    if kind == RUN_EVENT:
        return _run_problem(event)
    if kind == JOB_EVENT:
        return _job_problem(event.get("job")) or _datasets_problem(event)
    return dataset_problem(event.get("dataset"), "dataset")
