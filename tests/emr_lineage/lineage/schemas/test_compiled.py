"""The compiled (jsonschema-rs) check never accepts what the worded checks refuse (the structural rules,
the jsonschema checks, then the event rule), in either mode, so ``check_event`` answers as the worded
checks do: on the reference fragments (as they are and completed), the generated pipeline events, the
real listener's events, and thousands of mutations of them. Where the compiled check refuses an event the
worded checks take, it is one of the cases it is documented to leave to them
(emr_lineage/lineage/schemas/rule_schema.py): names and URIs outside printable ASCII, a ``%`` escape in a
URI, a facet key over 63 characters, times in 1970 or 9999 and on 29 February, JobEvents and DatasetEvents."""

from __future__ import annotations

import copy
import json
import random
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from emr_lineage.lineage.event_rule import RUN_EVENT, event_kind, event_problem
from emr_lineage.lineage.schemas.checks import _structural_problem, check_event_with, detailed_problem, load_schemas
from tests.emr_lineage.lineage.rule_events import completed, listener_events, mutated_copy, value_paths

WRONG_VALUES = [5, -1.5, "x", "", None, True, [], {}, ["x"], {"a": 1}, "not-a-uuid", "2026-13-01T00:00:00Z"]
DATE_TIMES = [
    "2026-11-23T12:00:00Z",
    "2026-11-23T12:00:00.123456789+01:00",
    "2026-11-23t12:00:00z",
    "2026-11-23 12:00:00Z",
    "2026-11-23T12:00:00",
    "2026-02-29T12:00:00Z",
    "2024-02-29T12:00:00Z",
    "2026-11-23T24:00:00Z",
    "2026-11-23T23:59:60Z",
    "2026-11-23T12:00:00+25:00",
    "2026-11-23T12:00Z",
    "20261123T120000Z",
    "2026-11-23T12:00:00.Z",
    "2026-11-23T12:00:00,5Z",
    "+2026-11-23T12:00:00Z",
    "2026-1-23T12:00:00Z",
    "2026-11-23T12:00:00Z ",
    "2026-11-23T12:00:00\u0661Z",
    "1970-01-01T00:00:00Z",
    "1969-12-31T23:59:59Z",
    "9998-12-31T23:59:59.999999999Z",
    "9999-12-31T00:00:00Z",
    "2026-11-23T12:00:00.1234567890Z",
    "2026-11-23T12:00:00+18:00",
    "2026-11-23T12:00:00+18:01",
    "0001-01-01T00:00:00+14:00",
]
UUIDS = [
    "3f5e83fa-3480-44ff-99c5-ff943904e5e8",
    "3F5E83FA-3480-44FF-99C5-FF943904E5E8",
    "3f5e83fa348044ff99c5ff943904e5e8",
    "{3f5e83fa-3480-44ff-99c5-ff943904e5e8}",
    "urn:uuid:3f5e83fa-3480-44ff-99c5-ff943904e5e8",
    "3f5e83fa-3480-44ff-99c5-ff943904e5e",
    "3f5e83fa-3480-44ff-99c5-ff943904e5e8a",
    "3f5e83fa-3480-44ff-99c5_ff943904e5e8",
    "gf5e83fa-3480-44ff-99c5-ff943904e5e8",
    "00000000-0000-0000-0000-000000000000",
    "3f5e83fa-3480-94ff-f9c5-ff943904e5e8",
    "3f5e83fa-3480-44ff-99c5-ff943904e5\u0661\u0662",
]


@pytest.fixture(scope="module")
def schemas() -> Any:
    loaded = load_schemas()
    assert loaded is not None, "the tests check against the reference schemas (EMR_LINEAGE_SCHEMA_DIR)"
    return loaded


@pytest.fixture(scope="module")
def fragments(ol_fixtures_dir: Path) -> list[dict[str, Any]]:
    """The OpenLineage Spark integration's fragments, as they are (the event rule refuses them all)."""
    return [json.loads(path.read_text()) for path in sorted(ol_fixtures_dir.glob("ol_container_*.json"))]


@pytest.fixture(scope="module")
def valid_events(fragments: list[dict[str, Any]], gen) -> list[dict[str, Any]]:
    """Events every check takes: the fragments completed, a sample of the real listener's, generated ones
    (the last, a generated one, is the one varied alone)."""
    return [completed(f) for f in fragments] + listener_events()[::29] + gen.pipeline("/tmp/lake")[:8]


@pytest.fixture(scope="module")
def corpus(fragments: list[dict[str, Any]], valid_events: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return fragments + valid_events


def _worded(event: Any, strict: bool, schemas: Any) -> str | None:
    """What check_event answers by its worded checks alone: structure, jsonschema, then the event rule."""
    return _structural_problem(event) or detailed_problem(event, strict, schemas) or event_problem(event)


_NAME_KEYS = frozenset({"namespace", "name", "field", "type", "transformationType", "lifecycleStateChange", "url"})
_URI_KEYS = frozenset({"producer", "schemaURL", "_producer", "_schemaURL", "uri"})
_TIME_KEYS = frozenset({"eventTime", "nominalStartTime", "nominalEndTime"})
_FACET_MAPS = frozenset({"facets", "inputFacets", "outputFacets"})
_PRINTABLE_ASCII = re.compile(r"[\x20-\x7e]*")


def _strings(node: Any, key: Any = None, holder: Any = None) -> Iterator[tuple[Any, Any, str]]:
    """(its key, the key of the object holding it, string) of every string value; of an object's keys,
    (None, the object's key, key)."""
    if isinstance(node, dict):
        for name, value in node.items():
            yield None, key, name
            yield from _strings(value, name, key)
    elif isinstance(node, list):
        for value in node:
            yield from _strings(value, key, holder)
    elif isinstance(node, str):
        yield key, holder, node


def refused_more(event: Any) -> str | None:
    """Which of the cases the compiled check is documented to leave to the worded checks ``event`` holds."""
    if not isinstance(event, dict):
        return None
    if event_kind(event) != RUN_EVENT:
        return "a JobEvent or DatasetEvent"
    if "inputs" in event and event["inputs"] is None or "outputs" in event and event["outputs"] is None:
        # Not in rule_schema.py's list: OpenLineage.json's "array" refuses null, which the worded checks
        # skip (detailed_problem checks datasets apart and reads null as none, as the event rule does).
        return "inputs or outputs is null"
    for key, holder, text in _strings(event):
        if key in _NAME_KEYS | _URI_KEYS and not _PRINTABLE_ASCII.fullmatch(text):
            return f"{key} {text!r} is not printable ASCII"
        if key in _URI_KEYS and ("%" in text or text.startswith("#")):
            return f"{key} {text!r} has a % escape or nothing before its '#'"
        if key in _TIME_KEYS and (text[:4] in ("1970", "9999") or text[4:10] == "-02-29"):
            return f"{key} {text!r} is in 1970, 9999 or on 29 February"
        if key is None and holder in _FACET_MAPS and len(text) > 63:
            return f"the facet key {text!r} is over 63 characters"
    return None


def assert_compiled_as_worded(event: Any, strict: bool, schemas: Any) -> str | None:
    """The compiled check passes only what the worded checks take, refuses more only in the documented cases,
    and ``check_event_with`` answers as the worded checks; the worded answer."""
    worded = _worded(event, strict, schemas)
    fast = schemas.compiled.is_valid(event, strict)
    if fast:
        assert worded is None, worded
    elif worded is None:
        assert refused_more(event) is not None, "the compiled check refuses it for no documented reason"
    assert check_event_with(event, strict, schemas) == worded
    return worded


@pytest.mark.parametrize("strict", [False, True])
def test_the_corpus_answers_as_the_worded_checks(schemas, fragments, valid_events, strict: bool) -> None:
    for event in fragments:
        problem = assert_compiled_as_worded(event, strict, schemas)
        assert problem is not None and not schemas.compiled.is_valid(event, strict)
        if not strict:  # lenient mode does not relax the event rule
            assert problem == "eventTime is missing or not a string"
    for event in valid_events:
        assert assert_compiled_as_worded(event, strict, schemas) is None
        assert schemas.compiled.is_valid(event, strict)  # the fast way


@pytest.mark.parametrize("strict", [False, True])
def test_mutations_answer_as_the_worded_checks(schemas, corpus, strict: bool) -> None:
    rng = random.Random(14 + strict)
    compared = rejected = 0
    for event in corpus:
        paths = [p for p in value_paths(event) if p]
        for path in rng.sample(paths, min(len(paths), 24)):
            for value in rng.sample(WRONG_VALUES, 3) + [None]:
                mutated = mutated_copy(event, path, value, delete=value is None and rng.random() < 0.5)
                rejected += assert_compiled_as_worded(mutated, strict, schemas) is not None
                compared += 1
    assert compared > 2000 and rejected > 1000


@pytest.mark.parametrize("strict", [False, True])
@pytest.mark.parametrize(("field", "values"), [("eventTime", DATE_TIMES), ("runId", UUIDS)])
def test_formats_answer_as_the_worded_checks(schemas, corpus, strict: bool, field: str, values: list[str]) -> None:
    for value in values:
        assert_compiled_as_worded(_with(corpus[-1], field, value), strict, schemas)


@pytest.mark.parametrize(
    ("path", "value"),
    [
        (("job", "name"), "café.load"),
        (("job", "name"), "a\tb"),
        (("producer",), "https://example.com/%41"),
        (("producer",), "https://example.com/é"),
        (("eventTime",), "1970-06-15T12:00:00Z"),
        (("eventTime",), "9999-12-30T12:00:00Z"),
        (("eventTime",), "2024-02-29T12:00:00Z"),
        (("run", "facets", "k" * 64), {"_producer": "https://example.com/p", "_schemaURL": "https://example.com/s"}),
        (("schemaURL",), "https://openlineage.io/spec/2-0-2/OpenLineage.json#/$defs/JobEvent"),
        (("outputs",), None),
    ],
)
def test_the_compiled_check_refuses_more_only_where_it_is_documented(
    schemas, valid_events, path: tuple[Any, ...], value: Any
) -> None:
    """Each case the compiled check leaves to the worded checks: it refuses, they take it, and
    ``refused_more`` (which the equivalence tests allow) names it."""
    event = mutated_copy(valid_events[-1], path, value, delete=False)
    assert refused_more(event) is not None
    for strict in (False, True):
        assert not schemas.compiled.is_valid(event, strict)
        assert _worded(event, strict, schemas) is None and check_event_with(event, strict, schemas) is None


def test_a_dataset_name_of_only_whitespace_is_refused_in_every_mode(schemas) -> None:
    for blank in [" ", "\t", "\u3000", "\x1c", "\u2028", "\x85"]:
        event = {"job": {"namespace": "n", "name": "j"}, "inputs": [{"namespace": "n", "name": blank}]}
        assert check_event_with(event, False, schemas) == "event.inputs[0].name is empty (a dataset needs a name)"


def _with(event: dict[str, Any], field: str, value: str) -> dict[str, Any]:
    mutated = copy.deepcopy(event)
    if field == "runId":
        mutated["run"]["runId"] = value
    else:
        mutated["eventTime"] = value
    return mutated


def _random_date_time(rng: random.Random) -> str:
    """Mostly well-formed date-times at the edges: days 28-31, February, year 0, odd offsets."""
    year = rng.choice(["0000", "0001", "1999", "2024", "2026", "2100", "9999"])
    month, day = (
        rng.choice(["01", "02", "04", "06", "09", "11", "12", "00", "13"]),
        rng.choice(["01", "28", "29", "30", "31", "32", "00"]),
    )
    clock = rng.choice(["00:00:00", "23:59:59", "23:59:60", "24:00:00", "12:60:00", "12:00:00.5", "12:00:00."])
    zone = rng.choice(["Z", "z", "+00:00", "-23:59", "+24:00", "+05:60", "", "+0100"])
    return f"{year}-{month}-{day}{rng.choice('Tt ')}{clock}{zone}"


@pytest.mark.parametrize("strict", [False, True])
def test_the_native_format_patterns_never_pass_what_the_format_checker_refuses(schemas, corpus, strict: bool) -> None:
    """uuid and date-time are patterns in the compiled check: a value they pass must pass the
    worded checks too, the event rule's time included (they may refuse more, which only sends the event
    to the worded checks)."""
    event, rng = corpus[-1], random.Random(31 + strict)
    values = [("eventTime", v) for v in DATE_TIMES] + [("runId", v) for v in UUIDS]
    values += [("eventTime", _random_date_time(rng)) for _ in range(600)]
    passed = 0
    for field, value in values:
        mutated = _with(event, field, value)
        if schemas.compiled.is_valid(mutated, strict):
            assert _worded(mutated, strict, schemas) is None, value
            passed += 1
    assert passed > 20


@pytest.mark.parametrize(
    ("field", "value"),
    [
        ("eventTime", "2026-11-23T12:00:00Z"),
        ("eventTime", "2026-11-23T12:00:00.123456789+01:00"),
        ("eventTime", "2026-11-23t12:00:00z"),
        ("eventTime", "2026-12-31T23:59:59-05:30"),
        ("runId", "3f5e83fa-3480-44ff-99c5-ff943904e5e8"),
        ("runId", "3F5E83FA-3480-44FF-99C5-FF943904E5E8"),
    ],
)
def test_usual_date_times_and_uuids_pass_the_compiled_check(schemas, corpus, field: str, value: str) -> None:
    """What the Spark listener sends takes the fast path (not the worded checks)."""
    assert schemas.compiled.is_valid(_with(corpus[-1], field, value), False)


def test_a_tree_canonicalization_refuses_is_compiled_as_it_is(schemas, corpus, monkeypatch: pytest.MonkeyPatch) -> None:
    """jsonschema-rs marks canonicalization experimental: if it refuses the event schema, the same
    tree is compiled without it and answers as the canonical form does."""
    import jsonschema_rs

    from emr_lineage.lineage.schemas import compiled as fast_schemas
    from emr_lineage.lineage.schemas.checks import _FACET_SCHEMAS

    documents = {path.name: json.loads(path.read_text()) for path in Path(schemas.directory).glob("*.json")}

    def refusing(*args: Any, **kwargs: Any) -> Any:
        raise jsonschema_rs.canonical.CanonicalizationError("not supported")

    monkeypatch.setattr(fast_schemas.jsonschema_rs, "canonicalize", refusing)
    plain = fast_schemas.compile_event_checks(documents, "OpenLineage.json", list(_FACET_SCHEMAS.values()))
    rng = random.Random(7)
    events = list(corpus)
    for event in corpus:
        paths = [p for p in value_paths(event) if p]
        for path in rng.sample(paths, min(len(paths), 20)):
            events.append(mutated_copy(event, path, rng.choice(WRONG_VALUES), delete=False))
    for strict in (False, True):
        answers = [plain.is_valid(event, strict) for event in events]
        assert answers == [schemas.compiled.is_valid(event, strict) for event in events]
        assert any(answers) and not all(answers)


# --- the event rule's refusals never take the fast way ----------------------------------------------------

_NOT_NAMESPACE_CHARACTERS = list(" #?%\\\"'<>[]{}|^`~!$&*(),;=\t\n\x00é\u2028") + ["\u3000", "😀"]
# UUIDS but the good ones (two cases) and the nil and version 9 UUIDs, which the rule takes, as Marquez does.
_BAD_UUIDS = [*UUIDS[2:9], UUIDS[-1], "00000000-0000-0000-0000-00000000000g", "", 5, None]
_OUT_OF_RANGE = [
    "1969-12-31T23:59:59.999Z",
    "1970-01-01T00:00:00+00:01",
    "0001-01-01T00:00:00+14:00",
    "9999-12-31T00:00:00Z",
    "9999-12-30T23:30:00-01:00",
    "9999-12-31T23:59:59.999999999+18:00",
]
# Offsets past 18:00, and none. (Offset minutes over 59 are not here: see test_event_rule.py.)
_BAD_OFFSETS = ["+18:01", "-18:01", "+19:00", "-23:59", "+24:00", "+99:00", "", "+0100", "+01", "Z+01:00", "UTC"]
_NOT_URIS = [
    "has space",
    "https://example.com/a b",
    'https://example.com/"q"',
    "https://example.com/<p>",
    "https://example.com/{x}",
    "https://example.com/a|b",
    "https://example.com/a\\b",
    "https://example.com/^",
    "https://example.com/`",
    "https://example.com/%zz",
    "https://example.com/100%",
    "https://example.com/#a#b",
    "https://example.com/\x7f",
    "https://example.com/\n",
    "",
    5,
    None,
]
_WRONG_EVENT_TYPES = ["DONE", "start", "Complete", "COMPLETED", "", " START", 5, None, ["START"]]


def _places(event: dict[str, Any]) -> dict[str, list[tuple[Any, ...]]]:
    """Where in ``event`` each kind of value the rule holds sits (paths), as far as the event has them."""
    places: dict[str, list[tuple[Any, ...]]] = {"named": [("job",)], "facet": [], "uuid": [("run", "runId")]}
    places["name"], places["time"] = [], [("eventTime",)]
    places["uri"] = [("producer",), ("schemaURL",)]
    maps = [(("run", "facets"), event["run"].get("facets")), (("job", "facets"), event["job"].get("facets"))]
    for side in ("inputs", "outputs"):
        for index, dataset in enumerate(event.get(side) or ()):
            places["named"].append((side, index))
            maps += [((side, index, key), dataset.get(key)) for key in _FACET_MAPS]
    for where, facets in maps:
        for key, facet in (facets or {}).items():
            places["facet"].append((*where, key))
            places["uri"] += [(*where, key, "_producer"), (*where, key, "_schemaURL")]
            if key == "parent":
                places["named"].append((*where, key, "job"))
                places["uuid"].append((*where, key, "run", "runId"))
                if "root" in facet:
                    places["named"].append((*where, key, "root", "job"))
                    places["uuid"].append((*where, key, "root", "run", "runId"))
            elif key == "symlinks":
                places["named"] += [(*where, key, "identifiers", i) for i in range(len(facet["identifiers"]))]
            elif key == "schema":
                places["name"] += [(*where, key, "fields", i, "name") for i in range(len(facet.get("fields", [])))]
            elif key == "columnLineage":
                for field, spec in facet["fields"].items():
                    for i in range(len(spec["inputFields"])):
                        places["named"].append((*where, key, "fields", field, "inputFields", i))
                        places["name"].append((*where, key, "fields", field, "inputFields", i, "field"))
            elif key == "dataSource":
                places["uri"].append((*where, key, "uri"))
                places["name"].append((*where, key, "name"))
            elif key == "nominalTime":
                places["time"].append((*where, key, "nominalStartTime"))
    places["name"] += [(*path, "name") for path in places["named"]]
    return places


def _get(event: Any, path: tuple[Any, ...]) -> Any:
    for step in path:
        event = event[step]
    return event


def _rule_breaking_mutation(event: dict[str, Any], rng: random.Random) -> tuple[str, dict[str, Any]]:
    """(kind, a copy of ``event`` changed so that it breaks the event rule in one place of that kind)."""
    places = _places(event)
    kind = rng.choice(
        ["namespace", "long name", "blank name", "facet field", "uuid", "time range", "offset", "uri", "type", "kind"]
    )
    if kind == "namespace":
        path = (*rng.choice(places["named"]), "namespace")
        text = _get(event, path)
        at = rng.randrange(len(text) + 1)
        if rng.random() < 0.2:  # or a good one, too long: more than 255 characters
            return kind, mutated_copy(event, path, rng.choice(["s3://b/", "arn:aws:glue:x"]) + "a" * 255, False)
        return kind, mutated_copy(event, path, text[:at] + rng.choice(_NOT_NAMESPACE_CHARACTERS) + text[at:], False)
    if kind == "long name":  # over 255 bytes: characters, or fewer characters of more bytes
        long = rng.choice(["n" * 256, "n" * 1100, "é" * 128, "😀" * 64, "a" * 200 + "é" * 28])
        return kind, mutated_copy(event, rng.choice(places["name"]), long, False)
    if kind == "blank name":
        blank = rng.choice(["", " ", "\t", "\u3000", "  \n", "a\nb", "a\rb", "a\u2028b", "a\x85b", 5, None])
        path = rng.choice(places["name"])
        return kind, mutated_copy(event, path, blank, delete=blank is None and rng.random() < 0.5)
    if kind == "facet field" and places["facet"]:
        path = (*rng.choice(places["facet"]), rng.choice(["_producer", "_schemaURL"]))
        return kind, mutated_copy(event, path, rng.choice([None, 5, "", {}]), delete=rng.random() < 0.7)
    if kind == "uuid":
        value = rng.choice(_BAD_UUIDS)
        return kind, mutated_copy(event, rng.choice(places["uuid"]), value, delete=value is None and rng.random() < 0.5)
    if kind == "time range":
        return kind, mutated_copy(event, rng.choice(places["time"]), rng.choice(_OUT_OF_RANGE), False)
    if kind == "offset":
        path = rng.choice(places["time"])
        time = re.sub(r"([Zz]|[+-][0-9]{2}:[0-9]{2})$", "", _get(event, path))
        return kind, mutated_copy(event, path, time + rng.choice(_BAD_OFFSETS), False)
    if kind == "uri":
        value = rng.choice(_NOT_URIS)
        return kind, mutated_copy(event, rng.choice(places["uri"]), value, delete=value is None and rng.random() < 0.5)
    if kind == "type":
        value = rng.choice(_WRONG_EVENT_TYPES)
        return kind, mutated_copy(event, ("eventType",), value, delete=value is None and rng.random() < 0.5)
    # Another kind in the schemaURL: a RunEvent read as a DatasetEvent has no dataset; as a JobEvent, it is
    # held to what a JobEvent holds, here a dataset or job namespace with a space.
    spec = "https://openlineage.io/spec/2-0-2/OpenLineage.json#/$defs/"
    if rng.random() < 0.5:
        return "kind", mutated_copy(event, ("schemaURL",), spec + "DatasetEvent", False)
    mutated = mutated_copy(event, ("schemaURL",), spec + "JobEvent", False)
    named = _get(mutated, rng.choice([p for p in places["named"] if p[0] in ("job", "inputs", "outputs")]))
    named["namespace"] += " x"
    return "kind", mutated


def test_what_the_event_rule_refuses_never_passes_the_compiled_check(schemas, valid_events) -> None:
    """Seeded random mutations of valid events, each breaking the event rule in one place (a namespace with a
    character Marquez cannot hold or too long, a long or blank name, a facet without _producer, a bad UUID,
    a time out of range or with a bad offset, a producer or facet URI Java cannot read, a wrong eventType,
    another kind in the schemaURL): event_problem refuses each, and the compiled check in both modes."""
    rng = random.Random(2026)
    kinds: dict[str, int] = {}
    for _ in range(3000):
        kind, mutated = _rule_breaking_mutation(rng.choice(valid_events), rng)
        problem = event_problem(mutated)
        assert problem is not None, (kind, mutated)
        for strict in (False, True):
            assert not schemas.compiled.is_valid(mutated, strict), (kind, problem)
        kinds[kind] = kinds.get(kind, 0) + 1
    assert len(kinds) == 10 and min(kinds.values()) > 200, kinds
