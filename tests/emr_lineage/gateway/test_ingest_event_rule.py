"""The event rule at the gateway's door (Ingestor.answer against moto's S3 and SQS): an event Marquez could
not store and list back is 400 with one line naming the field; in a batch it is refused alone (207) and
the rest stored; no event or body, however mangled, is answered with a 5xx."""

from __future__ import annotations

import gzip
import json
import random
from pathlib import Path
from typing import Any

import pytest

from emr_lineage.gateway.ingest import Accepted, check_request
from emr_lineage.lineage.events.reader import load_events
from emr_lineage.lineage.schemas.checks import load_schemas
from tests.emr_lineage.gateway import test_ingestor
from tests.emr_lineage.gateway.events import PARENT_RUN_ID, ROOT_RUN_ID, RUN_ID, auth, event, facet
from tests.emr_lineage.gateway.test_ingestor import Aws, archived
from tests.emr_lineage.lineage.rule_events import dataset_event, listener_events, mutated_copy, value_paths

aws = test_ingestor.aws  # the fixture: moto's S3 bucket and FIFO queue

LINEAGE, BATCH = "/api/v1/lineage", "/api/v1/lineage/batch"
REFUSALS = Path(__file__).resolve().parents[1] / "fixtures" / "marquez-0.51" / "refusals.jsonl.gz"
# What the gateway takes of what a real Marquez 0.51.1 was sent: each of these Marquez stored and listed
# back as sent. It broke on, rewrote or refused every other (the rest of the recorded one-event POSTs).
MARQUEZ_KEEPS = {"eventType_OTHER", "dataset_event_2-0-2", "job_event_2-0-2"}
TOO_DEEP = "the event breaks the JSON rule: a value is nested in more than 200 objects and arrays"
NAMESPACE_CHARACTERS = "use letters, digits and _ - . @ + : /"


def _without(value: dict[str, Any], *path: str) -> dict[str, Any]:
    holder = value
    for step in path[:-1]:
        holder = holder[step]
    del holder[path[-1]]
    return value


def _symlinked(namespace: str) -> dict[str, Any]:
    value = event()
    symlinks = facet(
        "1-0-1/SymlinksDatasetFacet.json", identifiers=[{"namespace": namespace, "name": "t", "type": "TABLE"}]
    )
    value["outputs"][0]["facets"]["symlinks"] = symlinks
    return value


# Cases of those a real Marquez 0.51.1 was sent (the committed recordings, refusals.jsonl.gz): it stored some
# where its listings then broke (201), answered others 400, 422 or 500.
REFUSED = [
    (
        _symlinked("my db"),
        f"outputs[0].facets.symlinks.identifiers[0].namespace 'my db' has characters Marquez cannot hold (' '); "
        f"{NAMESPACE_CHARACTERS}",
    ),
    (
        event(outputs=[{"namespace": "s3://my lake", "name": "clean/orders"}]),
        f"outputs[0].namespace 's3://my lake' has characters Marquez cannot hold (' '); {NAMESPACE_CHARACTERS}",
    ),
    (event(job={"namespace": "emr-lineage-dev", "name": ""}), "job.name is blank"),
    (event(job={"namespace": "n" * 1100, "name": "app"}), "job.namespace is 1100 characters long; the limit is 255"),
    (
        _without(event(parent=PARENT_RUN_ID), "run", "facets", "parent", "_producer"),
        "run.facets.parent._producer is missing or not a string",
    ),
    (_without(event(), "producer"), "producer is missing or not a string"),
]


def _recorded_posts() -> list[tuple[str, str]]:
    """(case, body) of each plain one-event POST a real Marquez 0.51.1 was sent in its recordings."""
    with gzip.open(REFUSALS, "rt", encoding="utf-8") as lines:
        records = [json.loads(line) for line in lines]
    return [
        (r["case"], r["request_body"])
        for r in records
        if r.get("method") == "POST"
        and r["path"] == LINEAGE
        and "/" not in r["case"]
        and r["request_headers"] == {"Content-Type": "application/json"}
    ]


def test_of_what_a_real_marquez_was_sent_the_gateway_takes_only_what_it_kept_as_sent(aws: Aws) -> None:
    posts = _recorded_posts()
    assert {case for case, _ in posts} >= MARQUEZ_KEEPS | {"symlink_identifier_namespace_with_space", "no_producer"}
    ingestor = aws.ingestor()
    for case, body in posts:
        status, reply = ingestor.answer(LINEAGE, auth(), body.encode())
        assert status == (201 if case in MARQUEZ_KEEPS else 400), (case, reply)
        assert "\n" not in json.dumps(reply)


@pytest.mark.parametrize(("value", "reason"), REFUSED)
def test_an_event_marquez_cannot_hold_is_400_with_one_line_naming_the_field(
    aws: Aws, value: dict[str, Any], reason: str
) -> None:
    ingestor = aws.ingestor()
    assert ingestor.answer(LINEAGE, auth(), json.dumps(value).encode()) == (
        400,
        {"status": "rejected", "error": reason},
    )
    assert "\n" not in reason
    # In a batch, it alone is refused, with the same reason.
    status, reply = ingestor.answer(BATCH, auth(), json.dumps([event(eventType="START"), value]).encode())
    assert status == 207 and [a["index"] for a in reply["accepted"]] == [0]
    assert reply["failed_events"] == [{"index": 1, "status": 400, "reason": reason, "retriable": False}]
    assert archived(aws) == [event(eventType="START")] and len(aws.messages()) == 1


def _batch_around(bad: str) -> bytes:
    return f"[{json.dumps(event(eventType='START'))},\n{bad},\n{json.dumps(event(parent=PARENT_RUN_ID))}]".encode()


@pytest.mark.parametrize(
    ("bad", "reason"),
    [
        (
            json.dumps(event(eventTime="0001-01-01T00:00:00+14:00")),
            "eventTime: '0001-01-01T00:00:00+14:00' is out of range; Marquez lists events from "
            "1970-01-01T00:00:00+00:00 to before 9999-12-31T00:00:00+00:00",
        ),
        ("[" * 100_000 + "]" * 100_000, TOO_DEEP),
        (json.dumps(event())[:-1] + ', "x": ' + "[" * 100_000 + "]" * 100_000 + "}", TOO_DEEP),
        (
            json.dumps(event()).replace('"COMPLETE"', '"COMPLETE", "eventType": "FAIL"'),
            "the event breaks the JSON rule: duplicate key 'eventType'",
        ),
    ],
)
def test_a_batch_with_one_bad_event_stores_the_rest_and_refuses_it_alone(aws: Aws, bad: str, reason: str) -> None:
    status, reply = aws.ingestor().answer(BATCH, auth(), _batch_around(bad))
    assert status == 207 and reply["status"] == "partial_success"
    assert reply["summary"] == {"received": 3, "successful": 2, "failed": 1, "retriable": 0, "non_retriable": 1}
    assert reply["failed_events"] == [{"index": 1, "status": 400, "reason": reason, "retriable": False}]
    assert [a["index"] for a in reply["accepted"]] == [0, 2]
    stored = [event(eventType="START"), event(parent=PARENT_RUN_ID)]
    assert sorted(map(json.dumps, archived(aws))) == sorted(map(json.dumps, stored))
    assert len(aws.messages()) == 2


def test_one_event_of_100k_nested_brackets_is_400(aws: Aws) -> None:
    status, reply = aws.ingestor().answer(LINEAGE, auth(), ("[" * 100_000 + "]" * 100_000).encode())
    assert (status, reply["error"]) == (400, TOO_DEEP.replace("the event", "the body"))
    assert aws.archive_keys() == []


# --- no 5xx, whatever comes -------------------------------------------------------------------------------

# Values put anywhere in an event (a time with a lowercase "z" and a 5,000-digit integer are tested below too).
ODD_VALUES = [
    "2026-11-23T12:00:00z",
    5,
    -1.5,
    0,
    2**70,
    1e300,
    True,
    None,
    "",
    " ",
    "x y",
    "é",
    "\u2028",
    "\x85",
    "a\nb",
    "n" * 300,
    [],
    {},
    ["x"],
    {"a": 1},
    "not-a-uuid",
    RUN_ID.upper(),
    "2026-13-01T00:00:00Z",
    "0001-01-01T00:00:00+14:00",
    "9999-12-31T23:59:59-14:00",
    "2026-11-23T12:00:00+18:01",
    "2026-11-23T12:00:00+05:60",
    "2026-11-23t12:00:00Z",
    "2026-02-29T12:00:00Z",
    "2026-11-23T23:59:60Z",
    "https://e.com/a b",
    "https://e.com/%zz",
    "s3://b",
    "https://openlineage.io/spec/2-0-2/OpenLineage.json#/$defs/JobEvent",
    "https://openlineage.io/spec/2-0-2/OpenLineage.json#/$defs/DatasetEvent",
    "START",
    "DONE",
]


def _mutated_event(rng: random.Random) -> dict[str, Any]:
    value = event(parent=rng.choice([None, PARENT_RUN_ID]), root=rng.choice([None, ROOT_RUN_ID]))
    for _ in range(rng.choice([1, 1, 2, 3])):
        path = rng.choice([p for p in value_paths(value) if p])
        value = mutated_copy(value, path, rng.choice(ODD_VALUES), delete=rng.random() < 0.25)
    return value


def _mangled(raw: bytes, rng: random.Random) -> bytes:
    """``raw`` cut, spliced with bytes that break JSON or UTF-8, keys doubled, nested deep..."""
    at = rng.randrange(len(raw) + 1)
    how = rng.randrange(8)
    if how == 0:
        return raw[:at]
    if how == 1:
        return (
            raw[:at]
            + rng.choice([b"\x00", b"\xff", b"\xc3", b"\\u0000", b"\\ud800", b"NaN", b",", b"]", b"}"])
            + raw[at:]
        )
    if how == 2:
        return raw.replace(b'"job"', b'"job": 5, "job"', 1)
    if how == 3:
        return raw.replace(b'"inputs": [', b'"inputs": [' + b"[" * 300 + b"]" * 300 + b", ", 1)
    if how == 4:
        return b"\xef\xbb\xbf" + raw if rng.random() < 0.5 else raw + b" " + raw
    if how == 5:
        return gzip.compress(raw)[: rng.choice([None, 10, 30])]
    if how == 6:
        return raw.replace(b'"COMPLETE"', rng.choice([b"Infinity", b"-0", b"1e400", b"null", b'"\\u2028"']), 1)
    return raw.replace(b'"eventTime": "', b'"eventTime": "' + rng.choice([b"\\n", b"x", b"+", b"\\t"]), 1)


def _request(rng: random.Random) -> tuple[str, dict[str, str], bytes]:
    events = [_mutated_event(rng) if rng.random() < 0.8 else event() for _ in range(rng.choice([1, 1, 2, 5]))]
    batch = rng.random() < 0.4
    raw = json.dumps(events if batch else events[0], indent=rng.choice([None, 2])).encode()
    if rng.random() < 0.4:
        raw = _mangled(raw, rng)
    headers = auth()
    if raw[:2] == b"\x1f\x8b" and rng.random() < 0.5:
        headers["Content-Encoding"] = "gzip"
    if rng.random() < 0.05:
        headers = {}
    return rng.choice([BATCH, BATCH + "/"] if batch else [LINEAGE, LINEAGE + "/"]), headers, raw


def test_no_mangled_event_or_body_is_answered_with_a_5xx(aws: Aws) -> None:
    rng, ingestor = random.Random(20261127), aws.ingestor()
    statuses: dict[int, int] = {}
    for _ in range(400):
        path, headers, raw = _request(rng)
        status, reply = ingestor.answer(path, headers, raw)
        assert status < 500, (status, reply, raw[:300])
        reasons = [reply.get("error")] + [f["reason"] for f in reply.get("failed_events", [])]
        assert all("\n" not in reason for reason in reasons if reason is not None)
        statuses[status] = statuses.get(status, 0) + 1
    assert statuses.get(400, 0) > 100 and statuses.get(201, 0) > 30 and statuses.get(207, 0) > 10, statuses


def test_a_lowercase_z_event_time_the_rule_takes_is_not_a_5xx(aws: Aws) -> None:
    status, _ = aws.ingestor().answer(LINEAGE, auth(), json.dumps(event(eventTime="2026-11-23T12:00:00z")).encode())
    assert status == 201


def test_an_integer_of_5000_digits_is_a_400_not_a_5xx(aws: Aws) -> None:
    raw = json.dumps(event()).replace('"COMPLETE"', '"COMPLETE", "x": ' + "1" * 5000).encode()
    assert aws.ingestor().answer(LINEAGE, auth(), raw)[0] == 400


def _mutated_listener_event(events: list[dict[str, Any]], rng: random.Random) -> dict[str, Any]:
    """A real listener event (facets of every modelled kind) with one or two values made odd."""
    value = rng.choice(events)
    for _ in range(rng.choice([1, 1, 2])):
        value = mutated_copy(value, rng.choice([p for p in value_paths(value) if p]), rng.choice(ODD_VALUES))
    return value


def test_the_gateway_takes_exactly_the_events_the_readers_read(tmp_path: Path) -> None:
    """Each event, sent to the gateway and read from an event file, with the same schemas: taken by both
    or refused by both (the OpenLineage schemas' facet types as much as the event rule)."""
    schemas = load_schemas()
    assert schemas is not None, "the tests check against the reference schemas (make setup)"
    rng, events = random.Random(20261128), listener_events()
    verdicts: dict[tuple[bool, bool], int] = {}
    for index in range(300):
        value = _mutated_listener_event(events, rng) if index % 6 else rng.choice(events)
        raw = json.dumps(value).encode()
        taken = isinstance(check_request(None, raw, api_keys=None, max_bytes=1 << 20, schemas=schemas), Accepted)
        (tmp_path / "one.jsonl").write_bytes(raw + b"\n")
        read = len(load_events([tmp_path / "one.jsonl"], skip_invalid=True)) == 1
        assert taken == read, value
        verdicts[taken, read] = verdicts.get((taken, read), 0) + 1
    assert verdicts[True, True] > 60 and verdicts[False, False] > 100, verdicts


@pytest.mark.parametrize(
    ("facets", "reason"),
    [
        (
            {"schema": facet("1-2-0/SchemaDatasetFacet.json", fields=[{"name": "a", "type": "int", "description": 5}])},
            "event.dataset.facets.schema.fields[0].description: 5 is not of type 'string'",
        ),
        (
            {"version": facet("1-0-1/DatasetVersionDatasetFacet.json", datasetVersion=5)},
            "event.dataset.facets.version.datasetVersion: 5 is not of type 'string'",
        ),
    ],
)
def test_a_dataset_event_is_checked_against_the_openlineage_schemas_too(facets: dict, reason: str) -> None:
    """What the event rule lets through and a facet's own schema does not."""
    value = dataset_event()
    value["dataset"]["facets"] = facets
    schemas = load_schemas()
    got = check_request(None, json.dumps(value).encode(), api_keys=None, max_bytes=1 << 20, schemas=schemas)
    assert not isinstance(got, Accepted) and (got.status, got.reason) == (400, reason)
    assert isinstance(
        check_request(None, json.dumps(dataset_event()).encode(), api_keys=None, max_bytes=1 << 20, schemas=schemas),
        Accepted,
    )
    both = dataset_event(job={"namespace": "n", "name": "j"}, run={"runId": RUN_ID})
    got = check_request(None, json.dumps(both).encode(), api_keys=None, max_bytes=1 << 20, schemas=schemas)
    assert "holds no 'job' and 'run'" in got.reason
