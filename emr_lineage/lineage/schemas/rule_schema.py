"""The event rule (:mod:`emr_lineage.lineage.event_rule`) of a RunEvent as JSON Schema, for the compiled check.

Checking an event of the event files in Python costs more than the rest of its reading, so the compiled
check (:mod:`emr_lineage.lineage.schemas.compiled`) carries the rule too. This schema must never accept
what :func:`~emr_lineage.lineage.event_rule.event_problem` refuses; it may refuse more, and does where a
limit is counted in bytes or a case is rare, so that the worded rule decides: names and URIs outside
printable ASCII, URIs with a ``%`` escape or an IPv6 host, times in 1970 or 9999, ``inputs`` or ``outputs``
that are null, JobEvents and DatasetEvents. Its
``required`` stays in lenient mode: the rule has no lenient mode. The equivalence tests hold both to it.
"""

from __future__ import annotations

from typing import Any

from emr_lineage.lineage.event_rule import EVENT_TYPES, NAME_MAX_BYTES, NAMESPACE_PATTERN, UUID_PATTERN

# Printable ASCII only: a character is a byte, and no line break.
_ASCII_NAME = {"type": "string", "pattern": rf"^[\x20-\x7E]{{1,{NAME_MAX_BYTES}}}$"}
# RFC 3986's unreserved and reserved characters but brackets, one '#' at most, no '%' (an escape or an
# IPv6 host goes to the worded rule).
_URI_CHARACTERS = r"[A-Za-z0-9\-._~:/?@!$&'()*+,;=]"
_URI = {"type": "string", "pattern": f"^{_URI_CHARACTERS}+(?:#{_URI_CHARACTERS}*)?$"}
# A year from 1971 to 9998 is in the rule's range whatever the offset; at most 9 fraction digits and an
# offset of at most 18 hours, as the rule reads a time.
_YEARS_IN_RANGE = "(?:197[1-9]|19[89][0-9]|[2-8][0-9]{3}|9[0-8][0-9]{2}|99[0-8][0-9]|999[0-8])"
_CLOCK = "(?:[01][0-9]|2[0-3]):[0-5][0-9]:[0-5][0-9](?:[.][0-9]{1,9})?"
_OFFSET = "(?:[Zz]|[+-](?:0[0-9]|1[0-7]):[0-5][0-9]|[+-]18:00)"


def _bounded(limit: int) -> dict[str, Any]:
    return {"type": "string", "pattern": rf"^[\x20-\x7E]{{0,{limit}}}$"}


def _required(fields: dict[str, Any]) -> dict[str, Any]:
    return {"type": "object", "required": sorted(fields), "properties": fields}


def _modelled(name: dict[str, Any], named: dict[str, Any], time: dict[str, Any]) -> dict[str, Any]:
    """The facets Marquez models: what each requires and its columns' limits (the rule's ``_MODELLED``)."""
    run = _required({"runId": {"type": "string", "pattern": UUID_PATTERN}})
    parent = _required({"run": run, "job": named})
    text = {"type": "string"}
    column_source = {
        **named,
        "required": ["field", "name", "namespace"],
        "properties": {**named["properties"], "field": name},
    }
    identifier = {
        **named,
        "required": ["name", "namespace", "type"],
        "properties": {**named["properties"], "type": _bounded(64)},
    }
    column = {
        **_required({"inputFields": {"type": "array", "items": column_source}}),
        "properties": {"inputFields": {"type": "array", "items": column_source}, "transformationType": _bounded(255)},
    }
    field = {**_required({"name": name}), "properties": {"name": name, "type": _bounded(2000)}}
    return {
        "parent": {**parent, "properties": {**parent["properties"], "root": parent}},
        "nominalTime": {
            **_required({"nominalStartTime": time}),
            "properties": {"nominalStartTime": time, "nominalEndTime": time},
        },
        "jobType": _required({"processingType": text, "integration": text, "jobType": text}),
        "sql": _required({"query": text}),
        "documentation": _required({"description": text}),
        "sourceCodeLocation": {"type": "object", "properties": {"url": _bounded(NAME_MAX_BYTES)}},
        "schema": {"type": "object", "properties": {"fields": {"type": "array", "items": field}}},
        "symlinks": _required({"identifiers": {"type": "array", "items": identifier}}),
        "columnLineage": _required({"fields": {"type": "object", "additionalProperties": column}}),
        "dataSource": _required({"name": name, "uri": _URI}),
        "lifecycleStateChange": _required({"lifecycleStateChange": _bounded(63)}),
    }


def rule_schema(name: dict[str, Any], month_day: str) -> dict[str, Any]:
    """The schema; ``name`` is the structural rules' non-blank name, ``month_day`` the date-time format's
    pattern of the days of the calendar (29 February goes to the worded rule)."""
    time = {"type": "string", "pattern": f"^{_YEARS_IN_RANGE}-{month_day}[Tt]{_CLOCK}{_OFFSET}$"}
    name = {"allOf": [name, _ASCII_NAME]}
    named = _required({"namespace": {"type": "string", "pattern": NAMESPACE_PATTERN}, "name": name})
    run = _required({"runId": {"type": "string", "pattern": UUID_PATTERN}})
    modelled = _modelled(name, named, time)
    facet = _required({"_producer": _URI, "_schemaURL": _URI})
    facets = {"type": "object", "propertyNames": {"maxLength": NAME_MAX_BYTES // 4}, "additionalProperties": facet}
    facets = {"allOf": [{**facets, "properties": {key: facet for key in modelled}}, {"properties": modelled}]}
    dataset = {
        **named,
        "properties": {**named["properties"], "facets": facets, "inputFacets": facets, "outputFacets": facets},
    }
    return {
        "type": "object",
        "required": ["eventTime", "eventType", "job", "producer", "run", "schemaURL"],
        "properties": {
            "eventTime": time,
            "producer": _URI,
            "schemaURL": {**_URI, "not": {"pattern": "/(?:JobEvent|DatasetEvent)$"}},
            "eventType": {"enum": sorted(EVENT_TYPES)},
            "run": {**run, "properties": {**run["properties"], "facets": facets}},
            "job": {**named, "properties": {**named["properties"], "facets": facets}},
            "inputs": {"type": "array", "items": dataset},
            "outputs": {"type": "array", "items": dataset},
        },
    }
