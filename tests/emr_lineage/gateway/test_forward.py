"""forward_batch: order, retries, permanent failures, group blocking; http_post against the fake Marquez."""

from __future__ import annotations

import json
import urllib.error
from collections.abc import Callable
from typing import Any

import pytest

from emr_lineage.gateway.forward import (
    DETAIL_ATTRIBUTE,
    MESSAGE_ID_ATTRIBUTE,
    STATUS_ATTRIBUTE,
    BatchResult,
    Outcome,
    dead_letter_message,
    forward_batch,
    http_post,
    receive_count,
)
from tests.emr_lineage.fake_marquez import Answer, FakeMarquez
from tests.emr_lineage.gateway.events import event


def record(message_id: str, group: str, label: str | None = None) -> dict[str, Any]:
    return {
        "messageId": message_id,
        "body": json.dumps({"label": label or message_id}),
        "attributes": {"MessageGroupId": group, "SequenceNumber": "1"},
    }


class Marquez:
    """A scripted ``post``: each label answers its listed statuses (exceptions are raised), then 201."""

    def __init__(self, script: dict[str, list[int | Exception]] | None = None) -> None:
        self.script = {label: list(answers) for label, answers in (script or {}).items()}
        self.posted: list[str] = []

    def __call__(self, body: bytes) -> tuple[int, str]:
        label = json.loads(body)["label"]
        self.posted.append(label)
        answers = self.script.get(label)
        answer = answers.pop(0) if answers else 201
        if isinstance(answer, Exception):
            raise answer
        return answer, "" if answer < 300 else f"scripted {answer}"


class Sleeps(list):
    def __call__(self, seconds: float) -> None:
        self.append(seconds)


def run(records: list[dict[str, Any]], post: Callable[[bytes], tuple[int, str]], **options: Any) -> BatchResult:
    options.setdefault("retries", 3)
    options.setdefault("sleep", Sleeps())
    return forward_batch(records, post, **options)


def test_records_are_posted_in_queue_order_and_all_delivered() -> None:
    marquez = Marquez()
    records = [record("m1", "A"), record("m2", "B"), record("m3", "A"), record("m4", "B")]
    result = run(records, marquez)
    assert marquez.posted == ["m1", "m2", "m3", "m4"]
    assert result.response == {"batchItemFailures": []}
    assert [o.outcome for o in result.outcomes] == ["delivered"] * 4


def test_retryable_failures_are_retried_with_exponential_backoff() -> None:
    sleeps = Sleeps()
    marquez = Marquez({"m1": [503, 429, ConnectionResetError("reset"), 408]})
    result = run([record("m1", "A"), record("m2", "A")], marquez, retries=4, sleep=sleeps, backoff=0.5)
    assert marquez.posted == ["m1"] * 5 + ["m2"]
    assert sleeps == [0.5, 1.0, 2.0, 4.0]
    assert result.response == {"batchItemFailures": []}
    assert result.outcomes[0].attempts == 5


def test_backoff_is_capped() -> None:
    sleeps = Sleeps()
    run([record("m1", "A")], Marquez({"m1": [500] * 6}), retries=5, sleep=sleeps, backoff=1.0, max_backoff=4.0)
    assert sleeps == [1.0, 2.0, 4.0, 4.0, 4.0]


def test_an_event_that_keeps_failing_is_reported_after_the_retries() -> None:
    marquez = Marquez({"m1": [500] * 10})
    result = run([record("m1", "A")], marquez, retries=2)
    assert marquez.posted == ["m1"] * 3
    assert result.response == {"batchItemFailures": [{"itemIdentifier": "m1"}]}
    assert (result.outcomes[0].outcome, result.outcomes[0].detail) == ("failed", "HTTP 500: scripted 500")


@pytest.mark.parametrize("status", [400, 401, 404, 422])
def test_a_permanent_4xx_is_not_retried_but_still_reported(status: int) -> None:
    marquez = Marquez({"m1": [status]})
    sleeps = Sleeps()
    result = run([record("m1", "A")], marquez, sleep=sleeps)
    assert marquez.posted == ["m1"] and sleeps == []
    assert result.response == {"batchItemFailures": [{"itemIdentifier": "m1"}]}
    assert result.outcomes[0].outcome == "permanent"


def test_a_failure_blocks_only_the_later_records_of_its_own_group() -> None:
    marquez = Marquez({"a2": [422]})
    records = [
        record("a1", "A"),
        record("b1", "B"),
        record("a2", "A"),
        record("b2", "B"),
        record("a3", "A"),
        record("c1", "C"),
        record("a4", "A"),
    ]
    result = run(records, marquez)
    assert marquez.posted == ["a1", "b1", "a2", "b2", "c1"]  # a3 and a4 never posted
    assert result.response == {
        "batchItemFailures": [{"itemIdentifier": "a2"}, {"itemIdentifier": "a3"}, {"itemIdentifier": "a4"}]
    }
    assert [o.outcome for o in result.outcomes] == [
        "delivered",
        "delivered",
        "permanent",
        "delivered",
        "blocked",
        "delivered",
        "blocked",
    ]


def test_the_deadline_stops_retrying_and_leaves_the_rest_unposted() -> None:
    now = [0.0]
    sleeps = Sleeps()

    def sleep(seconds: float) -> None:
        sleeps(seconds)
        now[0] += seconds

    marquez = Marquez({"a1": [503] * 10})
    records = [record("a1", "A"), record("b1", "B")]
    result = run(records, marquez, retries=10, backoff=1.0, sleep=sleep, clock=lambda: now[0], deadline=3.5)
    assert marquez.posted == ["a1"] * 3 + ["b1"]  # slept 1 s and 2 s; 4 s more would pass the deadline
    assert sleeps == [1.0, 2.0]
    assert [o.outcome for o in result.outcomes] == ["out-of-time", "delivered"]
    now[0] = 10.0
    late = run([record("c1", "C")], marquez, clock=lambda: now[0], deadline=3.5)
    assert late.response == {"batchItemFailures": [{"itemIdentifier": "c1"}]} and "c1" not in marquez.posted


class Rejects(list):
    """A scripted ``reject``: records what it was handed, answers ``takes``."""

    def __init__(self, takes: bool = True) -> None:
        super().__init__()
        self.takes = takes

    def __call__(self, record: dict[str, Any], outcome: Outcome) -> bool:
        self.append((record["messageId"], outcome.outcome, outcome.status, outcome.detail))
        return self.takes


def test_a_rejected_event_is_handled_and_the_rest_of_its_run_goes_on() -> None:
    marquez = Marquez({"a2": [422]})
    rejects = Rejects()
    records = [record("a1", "A"), record("a2", "A"), record("b1", "B"), record("a3", "A")]
    result = run(records, marquez, reject=rejects)
    assert marquez.posted == ["a1", "a2", "b1", "a3"]  # a3 is not held behind a2
    assert rejects == [("a2", "permanent", 422, "HTTP 422: scripted 422")]
    assert result.response == {"batchItemFailures": []}  # a2 is deleted from the queue: the DLQ has it
    assert [(o.message_id, o.outcome, o.status) for o in result.rejected] == [("a2", "rejected", 422)]
    assert [o.outcome for o in result.outcomes] == ["delivered", "rejected", "delivered", "delivered"]


def test_a_rejection_that_fails_is_a_failure_that_blocks_its_run() -> None:
    marquez = Marquez({"a1": [400]})
    rejects = Rejects(takes=False)
    result = run([record("a1", "A"), record("a2", "A"), record("b1", "B")], marquez, reject=rejects)
    assert marquez.posted == ["a1", "b1"]
    assert [r[0] for r in rejects] == ["a1"]
    assert result.response == {"batchItemFailures": [{"itemIdentifier": "a1"}, {"itemIdentifier": "a2"}]}
    assert result.rejected == [] and [o.outcome for o in result.outcomes] == ["permanent", "blocked", "delivered"]


def test_only_permanent_failures_are_rejected() -> None:
    marquez = Marquez({"a1": [503, 503], "b1": [ConnectionRefusedError("down")] * 2})
    rejects = Rejects()
    result = run([record("a1", "A"), record("b1", "B")], marquez, retries=1, reject=rejects)
    assert rejects == [] and result.rejected == []
    assert [(o.outcome, o.status) for o in result.outcomes] == [("failed", 503), ("failed", None)]
    assert result.failed_ids == ["a1", "b1"]


def sqs_record(message_id: str, group: str, *, handle: str | None = "handle-1", count: str = "1") -> dict[str, Any]:
    found = record(message_id, group)
    found["attributes"]["ApproximateReceiveCount"] = count
    if handle is not None:
        found["receiptHandle"] = handle
    return found


def test_a_dead_letter_message_keeps_body_and_run_and_records_the_answer() -> None:
    rec = sqs_record("m1", "run-1")
    message = dead_letter_message(rec, Outcome("m1", "run-1", "permanent", 1, "HTTP 422", 422))
    assert message["MessageBody"] == rec["body"] and message["MessageGroupId"] == "run-1"
    assert message["MessageAttributes"] == {
        MESSAGE_ID_ATTRIBUTE: {"DataType": "String", "StringValue": "m1"},
        DETAIL_ATTRIBUTE: {"DataType": "String", "StringValue": "HTTP 422"},
        STATUS_ATTRIBUTE: {"DataType": "Number", "StringValue": "422"},
    }
    dedup = message["MessageDeduplicationId"]
    assert len(dedup) == 64 and set(dedup) <= set("0123456789abcdef")
    # One id per receive: the same receive again is the same id, a later receive (a redrive) a new one.
    again = dead_letter_message(rec, Outcome("m1", "run-1", "permanent", 1, "HTTP 422", 422))
    later = dead_letter_message(sqs_record("m1", "run-1", handle="handle-2"), Outcome("m1", "run-1", "permanent", 1))
    assert again["MessageDeduplicationId"] == dedup != later["MessageDeduplicationId"]
    assert "MessageDeduplicationId" in dead_letter_message(
        sqs_record("m1", "g", handle=None), Outcome("m1", "g", "x", 1)
    )


def test_a_dead_letter_message_drops_its_attributes_rather_than_exceed_sqs_size() -> None:
    rec = sqs_record("m1", "run-1")
    outcome = Outcome("m1", "run-1", "permanent", 1, "HTTP 400", 400)
    body_bytes = len(rec["body"].encode())
    attributes = len(MESSAGE_ID_ATTRIBUTE + "String" + "m1") + len(DETAIL_ATTRIBUTE + "String" + "HTTP 400")
    attributes += len(STATUS_ATTRIBUTE + "Number" + "400")
    fits = dead_letter_message(rec, outcome, max_bytes=body_bytes + attributes)
    assert "MessageAttributes" in fits
    too_big = dead_letter_message(rec, outcome, max_bytes=body_bytes + attributes - 1)
    assert "MessageAttributes" not in too_big and too_big["MessageBody"] == rec["body"]


@pytest.mark.parametrize(("value", "count"), [("1", 1), ("7", 7), (None, 1), ("x", 1), ("0", 1)])
def test_receive_count_reads_the_sqs_attribute(value: str | None, count: int) -> None:
    rec = record("m1", "A")
    if value is not None:
        rec["attributes"]["ApproximateReceiveCount"] = value
    assert receive_count(rec) == count


# --- http_post against the test suite's fake Marquez -----------------------------------------


def test_http_post_posts_json_to_the_lineage_endpoint(marquez: FakeMarquez) -> None:
    for base in (marquez.url + "/", marquez.url + "/api/v1", marquez.url + "/api/v1/"):
        assert http_post(base, timeout=5)(json.dumps(event()).encode()) == (201, "")
    assert marquez.requests == ["POST /api/v1/lineage"] * 3  # never /api/v1/api/v1/lineage
    assert marquez.posted == [event()] * 3


def test_http_post_answers_statuses_and_raises_on_network_errors(marquez: FakeMarquez, closed_port_url: str) -> None:
    post = http_post(marquez.url, timeout=5)
    marquez.fail_next = [503]
    assert post(b"{}") == (503, "injected failure 503")
    # Marquez 0.51.1's own answer (tests/emr_lineage/fixtures/marquez-0.51, "body_not_json"): a 500 whose body
    # says 400, and its reason, for the log
    status, reason = post(b"not json")
    assert status == 500 and reason.startswith("Unrecognized token 'not': was expecting (JSON String")
    marquez.routes["POST /api/v1/lineage"] = lambda *_: Answer(302, {}, headers={"Location": "/elsewhere"})
    assert post(b"{}")[0] == 302  # not followed
    with pytest.raises(urllib.error.URLError):
        http_post(closed_port_url, timeout=5)(b"{}")
    with pytest.raises(ValueError, match="not an http"):
        http_post("file:///etc/passwd", timeout=5)


def test_forwarding_through_http_post_retries_a_503_then_gets_201(marquez: FakeMarquez) -> None:
    marquez.fail_next = [503]
    sleeps = Sleeps()
    records = [{"messageId": "m1", "body": json.dumps(event()), "attributes": {"MessageGroupId": "g"}}]
    result = forward_batch(records, http_post(marquez.url, timeout=5), retries=2, sleep=sleeps)
    assert result.response == {"batchItemFailures": []}
    assert sleeps == [0.5] and marquez.requests == ["POST /api/v1/lineage"] * 2
    assert marquez.posted == [event()]


def test_a_refusal_marquez_words_as_an_html_page_is_one_line_of_its_text() -> None:
    from emr_lineage.gateway.forward import reason_of

    page = (
        b"<html>\n<head><title>Error 400 Bad Request</title><style>h2{color:red}</style></head>\n"
        b"<body><h2>HTTP ERROR 400</h2><p>namespace &#39;emr lineage&#39; must contain only letters</p></body></html>"
    )
    assert reason_of(page) == "Error 400 Bad Request HTTP ERROR 400 namespace 'emr lineage' must contain only letters"
    assert reason_of(b'{"code": 400, "message": "Bad\\nRequest"}') == "Bad Request"
    assert reason_of(b"size must be <= 255 and > 0") == "size must be <= 255 and > 0"  # text, not a page
