"""A compiled (Rust) validator of whole run events, from the same OpenLineage schemas.

``jsonschema`` (pure Python) checks an event in about 200 us; ``jsonschema-rs``
(https://github.com/Stranger6667/jsonschema, Rust) checks the same event against the same
documents in about 5 us. It only answers valid or not: when it says "not valid", the caller runs
the detailed ``jsonschema`` checks of :mod:`emr_lineage.lineage.schemas.checks`, which word the
problem and have the last say. So the compiled schema must never accept what the detailed checks
reject (it may reject more; that only costs time). It is built as:

* both: the structural rules every event must meet (:data:`_STRUCTURE`) and the event rule of every
  door as schema (:mod:`emr_lineage.lineage.schemas.rule_schema`);
* strict: ``RunEvent`` of ``OpenLineage.json``, and every facet map (run, job, dataset facets,
  input/output facets) also checked against each facet schema of the store, as the detailed
  checks do by facet key;
* lenient: the same with every ``required`` keyword removed from copies of the documents. The
  detailed lenient checks ignore an error that is only about absent required fields, including
  an ``anyOf`` whose every branch failed only so; the RunEvent documents have no ``not``, no
  ``oneOf`` and only one-branch ``anyOf`` under ``RunEvent``, where removing ``required`` is the
  same rule (the equivalence tests compare both on the reference fragments and mutations of them);
* canonical form: the tree above goes through ``jsonschema_rs.canonicalize`` (the same rules,
  ``allOf`` branches merged, one-branch ``anyOf`` unwrapped; experimental in jsonschema-rs, so a
  tree it does not take is compiled as it is) before it is compiled;
* formats: only those of :data:`CHECKED_FORMATS` (``uuid``, ``date-time``) are kept,
  and checked by the same functions (jsonschema-rs's own ``date-time`` accepts a leap second
  ``23:59:60``, ``rfc3339-validator`` does not), each value once (runIds and times repeat); the
  other formats are removed from the copies.
"""

from __future__ import annotations

import copy
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import jsonschema_rs
from jsonschema import FormatChecker

from emr_lineage.lineage.schemas.rule_schema import rule_schema

_FACET_MAP_PLACES = {
    "run": ("facets",),
    "job": ("facets",),
    "inputs": ("facets", "inputFacets"),
    "outputs": ("facets", "outputFacets"),
}


def _without(node: Any, drop_required: bool, formats: frozenset[str]) -> Any:
    """A copy of a schema without ``required`` (if asked) and without unchecked ``format``s.

    Only keyword positions are touched: ``required`` is a list of names and ``format`` a string
    there, whereas a property named so (under ``properties``) has a schema object as its value.
    """
    if isinstance(node, list):
        return [_without(item, drop_required, formats) for item in node]
    if not isinstance(node, Mapping):
        return node
    result = {}
    for key, value in node.items():
        if key == "required" and drop_required and isinstance(value, list):
            continue
        if key == "format" and isinstance(value, str):
            if value in formats and value in _FORMAT_PATTERNS and "pattern" not in node:
                result["pattern"] = _FORMAT_PATTERNS[value]
            elif value in formats:
                result[key] = _PYTHON_FORMAT + value  # a name of its own: jsonschema-rs keeps its built-ins first
            continue
        result[key] = _without(value, drop_required, formats)
    return result


# What every event must have, schemas or not (schemas._structural_problem), as schema: a job
# object with a namespace, dataset lists of objects with a name holding something ``str.strip``
# keeps (a character class of every character Python counts as whitespace, not a ``\\s`` whose
# meaning depends on the regex engine). So the Python structural check only runs to word a problem.
_WHITESPACE = "".join(chr(code) for code in range(0x3001) if chr(code).isspace())
_NAME = {"type": "string", "pattern": f"[^{_WHITESPACE}]"}
_NAMED_DATASETS = {
    "type": "array",
    "items": {"type": "object", "required": ["name"], "properties": {"name": _NAME}},
}
_STRUCTURE = {
    "type": "object",
    "required": ["job"],
    "properties": {
        "job": {
            "type": "object",
            "required": ["namespace"],
            "properties": {"namespace": {"type": "string", "minLength": 1}},
        },
        "inputs": _NAMED_DATASETS,
        "outputs": _NAMED_DATASETS,
    },
}


_PLAIN_FACET_KEYWORDS = frozenset({"$schema", "$id", "$defs", "type", "properties", "title", "description"})


def _every_facet_schema(facet_documents: list[Mapping[str, Any]]) -> dict[str, Any]:
    """One schema a facet map must meet: that of every facet document. A document that is only an
    object of named properties (each facet file defines one facet key) joins one ``properties``
    map, so a facet is looked up once instead of once per document; any other goes in whole."""
    properties: dict[str, Any] = {}
    whole: list[dict[str, Any]] = []
    for document in facet_documents:
        if set(document) <= _PLAIN_FACET_KEYWORDS and document.get("type") == "object":
            for key in document.get("properties", {}):
                pointer = key.replace("~", "~0").replace("/", "~1")
                reference = {"$ref": f"{document['$id']}#/properties/{pointer}"}
                properties[key] = {"allOf": [properties[key], reference]} if key in properties else reference
        else:
            whole.append({"$ref": document["$id"]})
    return {"allOf": [{"type": "object", "properties": properties}, *whole]}


def _event_schema(event_id: str, facet_documents: list[Mapping[str, Any]]) -> dict[str, Any]:
    """``RunEvent``, and the structural rules and the facet schemas in one tree (the same rules as
    an ``allOf`` of the three, with their ``properties`` merged where they meet: one walk of the
    event less, about 0.35 us)."""
    every_facet_schema = _every_facet_schema(facet_documents)

    def facet_maps(holder: str) -> dict[str, Any]:
        return {key: every_facet_schema for key in _FACET_MAP_PLACES[holder]}

    def named_datasets(holder: str) -> dict[str, Any]:
        item = _NAMED_DATASETS["items"]
        return {**_NAMED_DATASETS, "items": {**item, "properties": {**item["properties"], **facet_maps(holder)}}}

    job = _STRUCTURE["properties"]["job"]
    return {
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "allOf": [
            {"$ref": f"{event_id}#/$defs/RunEvent"},
            {
                **_STRUCTURE,
                "properties": {
                    "job": {**job, "properties": {**job["properties"], **facet_maps("job")}},
                    "run": {"properties": facet_maps("run")},
                    "inputs": named_datasets("inputs"),
                    "outputs": named_datasets("outputs"),
                },
            },
            rule_schema(_NAME, _MONTH_DAY),
        ],
    }


# The formats of the OpenLineage documents as patterns the compiled check runs natively (a Python
# callback per value costs about 2 us an event). Each accepts a subset of what ``FormatChecker``
# accepts, so it may send an unusual value to the worded checks, never let a bad one through:
# * uuid: ``uuid.UUID`` also takes braces, ``urn:uuid:`` and hex without dashes, which
#   ``jsonschema``'s ``is_uuid`` then refuses unless the dashes sit at 8, 13, 18 and 23;
# * date-time: rfc3339-validator's expression (https://github.com/naimetti/rfc3339-validator),
#   after ``str.upper()``, so ``t``/``z`` pass too; year 0 and days past the month's end
#   fail there; here 29 February always goes to the worded check (leap years are not spelt out),
#   and so does a leap second (``23:59:60``, which jsonschema-rs's own ``date-time`` accepts).
# ``[0-9]``, not ``\d``, which a Unicode-aware engine widens to other scripts' digits.
_HEX = "[0-9a-fA-F]"
_YEAR = "(?:[1-9][0-9]{3}|0[1-9][0-9]{2}|00[1-9][0-9]|000[1-9])"
_MONTH_DAY = "(?:(?:0[1-9]|1[0-2])-(?:0[1-9]|1[0-9]|2[0-8])|(?:0[13-9]|1[0-2])-(?:29|30)|(?:0[13578]|1[02])-31)"
_CLOCK = "(?:[01][0-9]|2[0-3]):[0-5][0-9]:[0-5][0-9](?:[.][0-9]+)?"
_OFFSET = "(?:[Zz]|[+-](?:[01][0-9]|2[0-3]):[0-5][0-9])"
_FORMAT_PATTERNS = {
    "uuid": f"^{_HEX}{{8}}-{_HEX}{{4}}-{_HEX}{{4}}-{_HEX}{{4}}-{_HEX}{{12}}$",
    "date-time": f"^{_YEAR}-{_MONTH_DAY}[Tt]{_CLOCK}{_OFFSET}$",
}
_FORMAT_ANSWERS_KEPT = 65_536
# The formats of the OpenLineage documents that are checked, named so that every place these checks
# run (the readers, the gateway's Lambda) checks the same ones: ``FormatChecker()`` alone checks
# whichever optional packages are installed. ``uri`` is the event rule's (Java's URI, as Marquez reads it).
CHECKED_FORMATS = ("uuid", "date-time")
_PYTHON_FORMAT = "emr-lineage-jsonschema:"


def format_checker() -> FormatChecker:
    """The checker of :data:`CHECKED_FORMATS` (a missing package fails here, not silently)."""
    return FormatChecker(formats=CHECKED_FORMATS)


def _same_format_check(checker: FormatChecker, name: str) -> Any:
    """``FormatChecker``'s answer for format ``name``, remembered per value."""
    answers: dict[str, bool] = {}

    def conforms(value: str) -> bool:
        answer = answers.get(value)
        if answer is None:
            if len(answers) >= _FORMAT_ANSWERS_KEPT:
                answers.clear()
            answer = answers[value] = checker.conforms(value, name)
        return answer

    return conforms


@dataclass(frozen=True)
class CompiledEventChecks:
    """``is_valid(event, strict)`` for both modes, compiled once per schema directory."""

    strict: Any
    lenient: Any

    def is_valid(self, event: Any, strict: bool) -> bool:
        return (self.strict if strict else self.lenient).is_valid(event)

    def validator(self, strict: bool) -> Any:
        """``is_valid`` of one mode, as a function of the event (for a hot loop)."""
        return (self.strict if strict else self.lenient).is_valid


def compile_event_checks(documents: Mapping[str, Mapping[str, Any]], event_file: str, facet_files: list[str]) -> Any:
    """The compiled checks of the store's ``documents`` (file name -> schema)."""
    checker = format_checker()
    formats = frozenset(checker.checkers)
    same_checks = {_PYTHON_FORMAT + name: _same_format_check(checker, name) for name in formats}
    event_id = documents[event_file]["$id"]
    facet_documents = [documents[name] for name in facet_files]

    def compiled(drop_required: bool) -> Any:
        copies = [_without(copy.deepcopy(dict(d)), drop_required, formats) for d in documents.values()]
        registry = jsonschema_rs.Registry([(document["$id"], document) for document in copies])
        # jsonschema-rs's canonical form of the same rules (allOf branches merged, one-branch
        # anyOf unwrapped): about 10% less time an event. Canonicalization is marked experimental
        # there (https://docs.rs/jsonschema/latest/jsonschema/canonical/): a tree it does not take
        # is compiled as it is, and the equivalence tests compare the result with the worded checks.
        schema = _event_schema(event_id, facet_documents)
        try:
            schema = jsonschema_rs.canonicalize(schema, registry=registry, validate_formats=True).to_json_schema()
        except ValueError:  # CanonicalizationError, e.g. a pattern it cannot compile: the compile below says so
            pass
        return jsonschema_rs.validator_for(
            schema,
            registry=registry,
            validate_formats=True,
            formats=same_checks,
            ignore_unknown_formats=False,
        )

    return CompiledEventChecks(strict=compiled(False), lenient=compiled(True))
