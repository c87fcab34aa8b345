"""The compiled (jsonschema-rs) check never accepts what the worded jsonschema checks reject, in
either mode, so ``check_event`` answers as it did before it existed: on the reference fragments,
the generated pipeline events, and thousands of mutations of them."""

from __future__ import annotations

import copy
import json
import random
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from emr_lineage.lineage.schemas.checks import _structural_problem, check_event_with, detailed_problem, load_schemas

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
def corpus(ol_fixtures_dir: Path, gen) -> list[dict[str, Any]]:
    events = [json.loads(path.read_text()) for path in sorted(ol_fixtures_dir.glob("ol_container_*.json"))]
    return events + gen.pipeline("/tmp/lake")[:8]


def _before(event: Any, strict: bool, schemas: Any) -> str | None:
    """What check_event answered before the compiled check: structure, then jsonschema."""
    return _structural_problem(event) or detailed_problem(event, strict, schemas)


def _paths(node: Any, path: tuple[Any, ...] = ()) -> Iterator[tuple[Any, ...]]:
    yield path
    if isinstance(node, dict):
        for key, value in node.items():
            yield from _paths(value, (*path, key))
    elif isinstance(node, list):
        for index, value in enumerate(node):
            yield from _paths(value, (*path, index))


def _mutated(event: dict[str, Any], path: tuple[Any, ...], value: Any, delete: bool) -> dict[str, Any]:
    copied = copy.deepcopy(event)
    holder = copied
    for step in path[:-1]:
        holder = holder[step]
    if delete and isinstance(holder, dict):
        del holder[path[-1]]
    else:
        holder[path[-1]] = copy.deepcopy(value)
    return copied


@pytest.mark.parametrize("strict", [False, True])
def test_the_corpus_answers_as_before(schemas, corpus, strict: bool) -> None:
    for event in corpus:
        assert check_event_with(event, strict, schemas) == _before(event, strict, schemas)


@pytest.mark.parametrize("strict", [False, True])
def test_mutations_answer_as_before(schemas, corpus, strict: bool) -> None:
    rng = random.Random(14 + strict)
    compared = rejected = 0
    for event in corpus:
        paths = [p for p in _paths(event) if p]
        for path in rng.sample(paths, min(len(paths), 60)):
            for value in rng.sample(WRONG_VALUES, 4) + [None]:
                mutated = _mutated(event, path, value, delete=value is None and rng.random() < 0.5)
                expected = _before(mutated, strict, schemas)
                assert check_event_with(mutated, strict, schemas) == expected, (path, value)
                compared += 1
                rejected += expected is not None
    assert compared > 2000 and rejected > 500


@pytest.mark.parametrize("strict", [False, True])
@pytest.mark.parametrize(("field", "values"), [("eventTime", DATE_TIMES), ("runId", UUIDS)])
def test_formats_answer_as_before(schemas, corpus, strict: bool, field: str, values: list[str]) -> None:
    event = corpus[-1]
    for value in values:
        mutated = copy.deepcopy(event)
        if field == "runId":
            mutated["run"]["runId"] = value
        else:
            mutated["eventTime"] = value
        assert check_event_with(mutated, strict, schemas) == _before(mutated, strict, schemas), value


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
    worded check too (they may refuse more, which only sends the event to the worded check)."""
    event, rng = corpus[-1], random.Random(31 + strict)
    values = [("eventTime", v) for v in DATE_TIMES] + [("runId", v) for v in UUIDS]
    values += [("eventTime", _random_date_time(rng)) for _ in range(600)]
    passed = 0
    for field, value in values:
        mutated = _with(event, field, value)
        if schemas.compiled.is_valid(mutated, strict):
            assert _before(mutated, strict, schemas) is None, value
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
        paths = [p for p in _paths(event) if p]
        for path in rng.sample(paths, min(len(paths), 20)):
            events.append(_mutated(event, path, rng.choice(WRONG_VALUES), delete=False))
    for strict in (False, True):
        answers = [plain.is_valid(event, strict) for event in events]
        assert answers == [schemas.compiled.is_valid(event, strict) for event in events]
        assert any(answers) and not all(answers)
