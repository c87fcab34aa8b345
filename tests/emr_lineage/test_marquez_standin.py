"""The Marquez stand-in (tests/emr_lineage/marquez_standin) answers every request a real Marquez
0.51.1 answered (tests/emr_lineage/fixtures/marquez-0.51) with the same status and body: each file
is replayed against a fresh MarquezModel in recorded order, and every answer must equal the
recorded one, allowing only ids and times the server made up (see ``Comparator``)."""

from __future__ import annotations

import datetime
import gzip
import json
import re
from collections.abc import Iterator
from dataclasses import dataclass, field
from functools import cache
from pathlib import Path
from typing import Any

import pytest

from tests.emr_lineage.marquez_standin import MarquezModel, Reply

FIXTURES = Path(__file__).parent / "fixtures" / "marquez-0.51"
UUID = re.compile(r"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}")
INSTANT = re.compile(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d{1,9})?Z")
LOGGED = re.compile(r"There was an error processing your request\. It has been logged \(ID [0-9a-f]+\)\.")
# Where each recording's server clock stood when its first request came (the probes' events are
# dated after it): Marquez orders jobs by updatedAt, which mixes event times and wall-clock times.
CLOCK_STARTS = {
    "exchanges": datetime.datetime(2026, 11, 27, 19, 2, tzinfo=datetime.UTC),
    "refusals": datetime.datetime(2026, 11, 27, 19, 13, tzinfo=datetime.UTC),
    "probes": datetime.datetime(2026, 11, 27, 19, 11, tzinfo=datetime.UTC),
}


# Lists whose order a real Marquez took from PostgreSQL's physical row order, which the model
# cannot know: compared as multisets here, everything else in these records still exact.
# raw/orders_stream's fields come from a join without ORDER BY; after its field rows were updated
# three times (events 110, 111, 116) PostgreSQL's heap put order_id last (a non-HOT update to
# another page); the model keeps them in schema order.
FIELDS_ORDER = "raw/orders_stream fields: PostgreSQL heap order after row updates"
NOT_REPRODUCED = {
    ("exchanges.jsonl:126", "$.datasets[15].fields"): FIELDS_ORDER,
    ("exchanges.jsonl:213", "$.fields"): FIELDS_ORDER,
    ("refusals.jsonl:41", "$.datasets[15].fields"): FIELDS_ORDER,
    ("refusals.jsonl:59", "$.datasets[15].fields"): FIELDS_ORDER,
    ("refusals.jsonl:118", "$.datasets[15].fields"): FIELDS_ORDER,
    ("refusals.jsonl:138", "$.datasets[15].fields"): FIELDS_ORDER,
    ("refusals.jsonl:158", "$.datasets[15].fields"): FIELDS_ORDER,
}


def load(name: str) -> list[dict[str, Any]]:
    with gzip.open(FIXTURES / f"{name}.jsonl.gz", "rt", encoding="utf-8") as lines:
        return [json.loads(line) for line in lines]


class TickingClock:
    """A wall clock that moves on a millisecond each time it is read."""

    def __init__(self, start: datetime.datetime) -> None:
        self.now = start

    def __call__(self) -> datetime.datetime:
        self.now += datetime.timedelta(milliseconds=1)
        return self.now


def to_instant(text: str) -> datetime.datetime:
    return datetime.datetime.fromisoformat(text.replace("Z", "+00:00"))


@dataclass
class Comparator:
    """Recorded vs model answers, equal but for what the server made up:
    - UUIDs the server generated at random: mapped one to one (the same model id must always
      stand for the same recorded id); ids that were sent in requests and name-based (version 3)
      ids, which Marquez computes from names (dataset, job and schema versions), must be equal;
    - wall-clock instants: a recorded instant that is no event's time (updatedAt after a rewrite,
      namespace createdAt, R18) matches any model instant that is no event's time either;
    - the log id in a 500's "It has been logged (ID ...)";
    - the order of a 422's "errors" messages (refusals.jsonl:6: it varied between runs) and of a
      dataset's "columnLineage" list (a java HashSet of objects without hashCode: random order);
    - the order among events with the same eventTime in /events/lineage (Marquez orders by
      eventTime only; the recorded order of the two events at 19:01:04.974Z changes with the query);
    - the lists of NOT_REPRODUCED, as multisets.
    Everything else exact, lists in order."""

    sent_ids: set[str] = field(default_factory=set)
    event_times: set[datetime.datetime] = field(default_factory=set)
    to_recorded: dict[str, str] = field(default_factory=dict)
    to_model: dict[str, str] = field(default_factory=dict)
    unordered: set[str] = field(default_factory=set)  # paths of this record compared as multisets

    def note_request(self, value: Any) -> None:
        text = json.dumps(value)
        self.sent_ids.update(UUID.findall(text))
        for found in re.findall(r'"eventTime": "([^"]+)"', text):
            try:
                moment = datetime.datetime.fromisoformat(found.replace("Z", "+00:00"))
            except ValueError:
                continue
            self.event_times.add(moment if moment.tzinfo else moment.replace(tzinfo=datetime.UTC))

    def diff(self, recorded: Any, actual: Any, path: str = "$") -> str | None:
        if isinstance(recorded, dict) and isinstance(actual, dict):
            if recorded.keys() != actual.keys():
                return f"{path}: keys {sorted(recorded.keys() ^ actual.keys())} differ"
            for key in recorded:
                found = self.diff(recorded[key], actual[key], f"{path}.{key}")
                if found:
                    return found
            return None
        if isinstance(recorded, list) and isinstance(actual, list):
            if len(recorded) != len(actual):
                return f"{path}: {len(actual)} items, recorded {len(recorded)}"
            if path.endswith((".columnLineage", "$.errors")) or path in self.unordered:
                return self._unordered(recorded, actual, path)
            if path == "$.events":
                return self._events(recorded, actual, path)
            for index, (one, other) in enumerate(zip(recorded, actual, strict=True)):
                found = self.diff(one, other, f"{path}[{index}]")
                if found:
                    return found
            return None
        if isinstance(recorded, str) and isinstance(actual, str):
            return self._strings(recorded, actual, path)
        if recorded != actual or type(recorded) is not type(actual):
            return f"{path}: {short(actual)} != recorded {short(recorded)}"
        return None

    def _unordered(self, recorded: list[Any], actual: list[Any], path: str) -> str | None:
        left = list(actual)
        for index, item in enumerate(recorded):
            match = next((i for i, other in enumerate(left) if self._matches(item, other, path)), None)
            if match is None:
                return f"{path}[{index}]: no answer item matches recorded {short(item)}"
            left.pop(match)
        return None

    def _matches(self, recorded: Any, actual: Any, path: str) -> bool:
        """A trial comparison: the id pairs it made are kept only if it matches."""
        saved = dict(self.to_recorded), dict(self.to_model)
        if self.diff(recorded, actual, path) is None:
            return True
        self.to_recorded, self.to_model = saved
        return False

    def _events(self, recorded: list[Any], actual: list[Any], path: str) -> str | None:
        """Runs of events with one eventTime compare as multisets, the runs in order."""
        start = 0
        while start < len(recorded):
            end = start + 1
            while end < len(recorded) and recorded[end].get("eventTime") == recorded[start].get("eventTime"):
                end += 1
            found = self._unordered(recorded[start:end], actual[start:end], f"{path}[{start}:{end}]")
            if found:
                return found
            start = end
        return None

    def _strings(self, recorded: str, actual: str, path: str) -> str | None:
        if recorded == actual and not UUID.fullmatch(recorded):
            return None
        if UUID.fullmatch(recorded) and UUID.fullmatch(actual):
            return self._ids(recorded, actual, path)
        if INSTANT.fullmatch(recorded) and INSTANT.fullmatch(actual):
            wall = to_instant(recorded) not in self.event_times
            if wall and to_instant(actual) not in self.event_times:
                return None
        if LOGGED.fullmatch(recorded) and LOGGED.fullmatch(actual):
            return None
        return None if recorded == actual else f"{path}: {short(actual)} != recorded {short(recorded)}"

    def _ids(self, recorded: str, actual: str, path: str) -> str | None:
        if recorded in self.sent_ids or actual in self.sent_ids or recorded[14] == "3":
            return None if recorded == actual else f"{path}: id {actual} != recorded {recorded}"
        known = self.to_recorded.get(actual)
        if known is None and recorded not in self.to_model:
            self.to_recorded[actual], self.to_model[recorded] = recorded, actual
            return None
        if known == recorded:
            return None
        if known is None:
            return f"{path}: recorded id {recorded} stands for model id {self.to_model[recorded]}, here {actual}"
        return f"{path}: model id {actual} stands for recorded {known}, here recorded {recorded}"


def short(value: Any) -> str:
    text = json.dumps(value)
    return text if len(text) <= 160 else text[:157] + "..."


@dataclass
class Outcome:
    """One replayed record: where it is, its case, and what differed (None: equal)."""

    where: str
    case: str
    problem: str | None


def compare(comparator: Comparator, where: str, record: dict[str, Any], reply: Reply) -> str | None:
    comparator.unordered = {path for (line, path) in NOT_REPRODUCED if line == where}
    if reply.status != record["status"]:
        return f"status {reply.status} != recorded {record['status']}: {short(reply.body)}"
    if reply.content_type != record["content_type"]:
        return f"content type {reply.content_type} != recorded {record['content_type']}"
    body = "" if reply.body is None else reply.body
    return comparator.diff(record["body"], body)


def _note_sent(comparator: Comparator, body: Any) -> None:
    if isinstance(body, str) and body.startswith("{"):
        try:
            body = json.loads(body)
        except ValueError:
            return
    if isinstance(body, dict):
        comparator.note_request(body)


def _send(model: MarquezModel, comparator: Comparator, record: dict[str, Any], body: Any) -> Reply:
    _note_sent(comparator, body)
    if record["method"] == "GET":
        return model.handle("GET", record["path"], record["query"], b"", {})
    headers = record.get("request_headers") or {"Content-Type": "application/json"}
    raw = body.encode() if isinstance(body, str) else json.dumps(body).encode()
    if headers.get("Content-Encoding") == "gzip":
        raw = gzip.compress(raw)
    return model.handle(record["method"], record["path"], record["query"], raw, headers)


def _repost_corpus(model: MarquezModel, comparator: Comparator, events: list[dict[str, Any]]) -> None:
    for event in events:
        comparator.note_request(event)
        assert model.post(event).status == 201


def replay(name: str) -> Iterator[Outcome]:
    """Replay one recording file against a fresh model, in recorded order."""
    events = load("events")
    model = MarquezModel(clock=TickingClock(CLOCK_STARTS[name]))
    comparator = Comparator()
    if name == "refusals":  # recorded on the database the corpus built (README, B)
        _repost_corpus(model, comparator, events)
    for line, record in enumerate(load(name), 1):
        if "method" not in record:  # a reset-db.sh marker
            model.reset()
            if "re-POSTed" in record.get("note", ""):
                _repost_corpus(model, comparator, events)
            continue
        body = events[record["event_line"] - 1] if "event_line" in record else record.get("request_body")
        reply = _send(model, comparator, record, body)
        where = f"{name}.jsonl:{line}"
        yield Outcome(where, record.get("case", ""), compare(comparator, where, record, reply))


@cache
def outcomes(name: str) -> tuple[Outcome, ...]:
    """Each file is replayed once per test session; its tests read their cases from it."""
    return tuple(replay(name))


def cases(name: str) -> list[str]:
    return list(dict.fromkeys(r["case"].split("/")[0] for r in load(name) if "case" in r))


def failures(name: str, case: str | None = None) -> list[str]:
    return [
        f"{o.where} ({o.case}): {o.problem}"
        for o in outcomes(name)
        if o.problem and (case is None or o.case.split("/")[0] == case)
    ]


def test_every_exchange_of_the_corpus_is_answered_as_marquez_answered() -> None:
    problems = failures("exchanges")
    assert not problems, f"{len(problems)} answers differ:\n" + "\n".join(problems[:20])


@pytest.mark.parametrize("case", cases("refusals"))
def test_a_refused_or_unusual_event_and_its_after_effects_are_answered_as_recorded(case: str) -> None:
    problems = failures("refusals", case)
    assert not problems, f"{len(problems)} answers differ:\n" + "\n".join(problems[:20])


@pytest.mark.parametrize("case", cases("probes"))
def test_a_probe_scenario_is_answered_as_recorded(case: str) -> None:
    problems = failures("probes", case)
    assert not problems, f"{len(problems)} answers differ:\n" + "\n".join(problems[:20])


def test_the_answers_come_from_what_was_posted() -> None:
    """Not a cassette: after the first application's seven events only its two jobs exist."""
    model = MarquezModel(clock=TickingClock(CLOCK_STARTS["exchanges"]))
    for event in load("events")[:7]:
        assert model.post(event).status == 201
    reply = model.handle("GET", "/api/v1/namespaces/emr-lineage-dev/jobs", {}, b"", {})
    names = [job["name"] for job in reply.body["jobs"]]
    assert names == ["ingest_orders", "ingest_orders.adaptive_spark_plan.clean_orders_clean"]
    lineage = model.handle("GET", "/api/v1/lineage", {"nodeId": "job:emr-lineage-dev:revenue_daily"}, b"", {})
    assert lineage.body == {"code": 404, "message": "Job 'revenue_daily' not found."}
