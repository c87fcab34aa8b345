"""Ingestor against moto: the raw body archived, the canonical event queued on a FIFO queue; what every
producer sends (gzip, static lineage, batches, paths)."""

from __future__ import annotations

import datetime as dt
import gzip
import json
from collections.abc import Iterator
from typing import Any

import boto3
import pytest
from botocore.exceptions import ClientError, EndpointConnectionError
from moto import mock_aws

from emr_lineage.gateway.ingest import DEDUP_WINDOW, Accepted, Ingestor, check_request
from emr_lineage.lineage.door.event import DATASET_EVENT, JOB_EVENT, RUN_EVENT
from tests.emr_lineage.gateway.events import KEY, PARENT_RUN_ID, RECEIVED, RUN_ID, auth, body, clock, event, facet
from tests.emr_lineage.lineage.rule_events import dataset_event, job_event
from tests.helpers import fake_aws_credentials

REGION = "eu-west-1"
BUCKET = "emr-lineage-dev-lineage-archive"


class Aws:
    def __init__(self) -> None:
        self.s3 = boto3.client("s3", region_name=REGION)
        self.sqs = boto3.client("sqs", region_name=REGION)
        self.s3.create_bucket(Bucket=BUCKET, CreateBucketConfiguration={"LocationConstraint": REGION})
        self.queue_url = self.sqs.create_queue(
            QueueName="x.fifo", Attributes={"FifoQueue": "true", "ContentBasedDeduplication": "false"}
        )["QueueUrl"]

    def ingestor(self, s3: Any = None, sqs: Any = None, max_batch_bytes: int = 1 << 22) -> Ingestor:
        return Ingestor(
            s3 or self.s3,
            sqs or self.sqs,
            bucket=BUCKET,
            queue_url=self.queue_url,
            api_keys=(KEY,),
            max_bytes=1 << 20,
            max_batch_bytes=max_batch_bytes,
            clock=clock,
        )

    def messages(self) -> list[dict[str, Any]]:
        reply = self.sqs.receive_message(
            QueueUrl=self.queue_url, MaxNumberOfMessages=10, MessageSystemAttributeNames=["All"]
        )
        return reply.get("Messages", [])

    def archive_keys(self) -> list[str]:
        return [o["Key"] for o in self.s3.list_objects_v2(Bucket=BUCKET).get("Contents", [])]


@pytest.fixture()
def aws(monkeypatch: pytest.MonkeyPatch) -> Iterator[Aws]:
    fake_aws_credentials(monkeypatch, REGION)
    with mock_aws():
        yield Aws()


def test_an_accepted_event_is_archived_raw_and_queued_canonical(aws: Aws) -> None:
    raw = body(event(parent=PARENT_RUN_ID))
    status, reply = aws.ingestor().handle(auth(), raw)
    assert status == 201
    assert reply["status"] == "accepted" and reply["runId"] == RUN_ID and reply["groupId"] == PARENT_RUN_ID
    (key,) = aws.archive_keys()
    assert key.startswith(f"raw/date=2026-11-23/hour=17/{PARENT_RUN_ID}/")
    # As received, on one line (body() pretty-prints: its line breaks are the only change).
    assert aws.s3.get_object(Bucket=BUCKET, Key=key)["Body"].read() == raw.replace(b"\n", b" ")
    (message,) = aws.messages()
    assert message["Attributes"]["MessageGroupId"] == PARENT_RUN_ID
    assert message["Attributes"]["MessageDeduplicationId"] == reply["dedupId"]
    queued = json.loads(message["Body"])
    assert queued["inputs"][0]["namespace"] == "s3://lake" and queued["run"]["runId"] == RUN_ID
    assert message["Body"] == json.dumps(queued, sort_keys=True, separators=(",", ":"))


def test_a_resent_event_is_deduplicated_by_the_fifo_queue(aws: Aws) -> None:
    ingestor = aws.ingestor()
    first = ingestor.handle(auth(), body(event()))
    again = ingestor.handle(auth(), json.dumps(event()).encode())  # other whitespace, same event
    other = ingestor.handle(auth(), body(event(eventType="FAIL")))
    assert [first[0], again[0], other[0]] == [201, 201, 201]
    assert first[1]["dedupId"] == again[1]["dedupId"] != other[1]["dedupId"]
    bodies = [json.loads(m["Body"])["eventType"] for m in aws.messages()]
    assert bodies == ["COMPLETE", "FAIL"]
    assert len(aws.archive_keys()) == 2  # the same key twice: the archive is idempotent too


def test_a_resend_within_the_window_is_not_queued_again_even_after_the_first_was_delivered(aws: Aws) -> None:
    now = {"t": RECEIVED}
    ingestor = Ingestor(
        aws.s3,
        aws.sqs,
        bucket=BUCKET,
        queue_url=aws.queue_url,
        api_keys=(KEY,),
        max_bytes=1 << 20,
        clock=lambda: now["t"],
    )
    assert ingestor.handle(auth(), body(event()))[0] == 201
    (delivered,) = aws.messages()
    aws.sqs.delete_message(QueueUrl=aws.queue_url, ReceiptHandle=delivered["ReceiptHandle"])  # forwarded
    now["t"] = RECEIVED + DEDUP_WINDOW - dt.timedelta(seconds=1)
    status, reply = ingestor.handle(auth(), body(event()))
    assert (status, reply["duplicate"]) == (201, True) and aws.messages() == []
    now["t"] = RECEIVED + DEDUP_WINDOW  # past the window: a new send, as SQS would take it
    status, reply = ingestor.handle(auth(), body(event()))
    assert status == 201 and "duplicate" not in reply and len(aws.messages()) == 1


def test_a_rejected_event_touches_neither_archive_nor_queue(aws: Aws) -> None:
    assert aws.ingestor().handle({}, body(event())) == (
        401,
        {"status": "rejected", "error": "missing or wrong Authorization: Bearer <key>"},
    )
    status, reply = aws.ingestor().handle(auth(), b"{}")
    assert status == 400 and reply["error"] == "eventTime is missing or not a string"
    assert aws.archive_keys() == [] and aws.messages() == []


class Failing:
    """A client whose every call raises ``error``."""

    def __init__(self, error: Exception) -> None:
        self.error = error

    def __getattr__(self, name: str) -> Any:
        def call(**_: Any) -> Any:
            raise self.error

        return call


def test_a_missing_bucket_is_503_on_one_line_and_nothing_is_queued(aws: Aws) -> None:
    ingestor = aws.ingestor()
    ingestor.bucket = "no-such-bucket"
    status, reply = ingestor.handle(auth(), body(event()))
    assert status == 503 and reply["status"] == "unavailable"
    assert reply["error"].startswith("archiving the event failed, retry later (NoSuchBucket: ")
    assert "\n" not in reply["error"]
    assert aws.messages() == []


def test_a_queue_failure_is_503_and_the_retry_succeeds(aws: Aws) -> None:
    down = ClientError({"Error": {"Code": "ServiceUnavailable", "Message": "try\nlater"}}, "SendMessage")
    status, reply = aws.ingestor(sqs=Failing(down)).handle(auth(), body(event()))
    assert status == 503
    assert reply["error"] == (
        "queueing the event failed, retry later (ServiceUnavailable: An error occurred (ServiceUnavailable) "
        "when calling the SendMessage operation: try later)"
    )
    assert len(aws.archive_keys()) == 1  # archived; the client's retry writes the same key
    assert aws.ingestor().handle(auth(), body(event()))[0] == 201
    assert len(aws.archive_keys()) == 1 and len(aws.messages()) == 1


def test_a_network_failure_is_503(aws: Aws) -> None:
    unreachable = EndpointConnectionError(endpoint_url="https://s3.eu-west-1.amazonaws.com")
    status, reply = aws.ingestor(s3=Failing(unreachable)).handle(auth(), body(event()))
    assert status == 503 and "EndpointConnectionError: Could not connect" in reply["error"]


# --- what every producer sends -------------------------------------------------------------------

BATCH = "/api/v1/lineage/batch"


def archived(aws: Aws) -> list[Any]:
    return [json.loads(aws.s3.get_object(Bucket=BUCKET, Key=key)["Body"].read()) for key in aws.archive_keys()]


def test_a_pretty_printed_body_is_archived_on_one_line_with_the_same_value(aws: Aws) -> None:
    # CRLF and LF line breaks, and an escaped newline inside a string that must stay escaped.
    value = event()
    value["job"]["facets"] = {
        "documentation": facet("1-1-0/DocumentationJobFacet.json", description="line one\nline two")
    }
    raw = json.dumps(value, indent=4).replace("\n", "\r\n").encode()
    assert aws.ingestor().handle(auth(), raw)[0] == 201
    (key,) = aws.archive_keys()
    archived_body = aws.s3.get_object(Bucket=BUCKET, Key=key)["Body"].read()
    assert b"\n" not in archived_body and b"\r" not in archived_body
    assert json.loads(archived_body) == value
    assert archived_body == raw.replace(b"\r\n", b"  ")  # every other byte as received
    # Replay and the analysis commands re-check archived bodies with the gateway's checks: they pass.
    assert isinstance(check_request(auth(), archived_body, api_keys=(KEY,), max_bytes=1 << 20), Accepted)


def test_a_compact_body_is_archived_byte_for_byte(aws: Aws) -> None:
    raw = json.dumps(event(), separators=(",", ":"), ensure_ascii=False).encode()
    assert aws.ingestor().handle(auth(), raw)[0] == 201
    (key,) = aws.archive_keys()
    assert aws.s3.get_object(Bucket=BUCKET, Key=key)["Body"].read() == raw


def test_gzip_with_or_without_the_header_is_one_event(aws: Aws) -> None:
    ingestor = aws.ingestor()
    raw = json.dumps(event()).encode()
    with_header = ingestor.answer("/api/v1/lineage", {**auth(), "Content-Encoding": "gzip"}, gzip.compress(raw))
    without = ingestor.answer("/api/v1/lineage", auth(), gzip.compress(raw, compresslevel=3))
    assert with_header[0] == 201 and without == (201, {**with_header[1], "duplicate": True})
    (key,) = aws.archive_keys()
    assert aws.s3.get_object(Bucket=BUCKET, Key=key)["Body"].read() == raw  # archived decompressed


def test_static_lineage_is_archived_and_queued_in_its_own_group(aws: Aws) -> None:
    ingestor = aws.ingestor()
    job = ingestor.answer("/api/v1/lineage", auth(), json.dumps(job_event()).encode())
    dataset = ingestor.answer("/api/v1/lineage/", auth(), json.dumps(dataset_event()).encode())
    assert (job[0], job[1]["kind"], dataset[0], dataset[1]["kind"]) == (201, JOB_EVENT, 201, DATASET_EVENT)
    assert "runId" not in job[1] and "runId" not in dataset[1]
    groups = {m["Attributes"]["MessageGroupId"] for m in aws.messages()}
    assert groups == {job[1]["groupId"], dataset[1]["groupId"]}
    assert sorted(key.split("/")[3] for key in aws.archive_keys()) == sorted(groups)  # one archive folder per group


def test_a_batch_is_checked_event_by_event_and_stored_in_order(aws: Aws) -> None:
    events = [event(eventType="START"), job_event(), {"eventTime": "2026-11-21T12:00:00Z"}, event(), dataset_event()]
    status, reply = aws.ingestor().answer(BATCH, auth(), json.dumps(events).encode())
    assert status == 207 and reply["status"] == "partial_success"
    assert reply["summary"] == {"received": 5, "successful": 4, "failed": 1, "retriable": 0, "non_retriable": 1}
    (failed,) = reply["failed_events"]
    assert (failed["index"], failed["status"], failed["retriable"]) == (2, 400, False)
    assert failed["reason"] == "producer is missing or not a string"
    assert [(a["index"], a["kind"]) for a in reply["accepted"]] == [
        (0, RUN_EVENT),
        (1, JOB_EVENT),
        (3, RUN_EVENT),
        (4, DATASET_EVENT),
    ]
    run_messages = [json.loads(m["Body"]) for m in aws.messages() if m["Attributes"]["MessageGroupId"] == RUN_ID]
    assert [m["eventType"] for m in run_messages] == ["START", "COMPLETE"]  # the run's order kept
    assert sorted(map(json.dumps, archived(aws))) == sorted(json.dumps(events[i]) for i in (0, 1, 3, 4))


def test_a_gzip_batch_all_accepted_is_200(aws: Aws) -> None:
    events = [event(eventType="START"), event()]
    headers = {**auth(), "Content-Encoding": "gzip"}
    status, reply = aws.ingestor().answer(BATCH + "/", headers, gzip.compress(json.dumps(events).encode()))
    assert (status, reply["status"], reply["failed_events"]) == (200, "success", [])


def test_a_batch_refused_as_a_whole_stores_nothing(aws: Aws) -> None:
    ingestor = aws.ingestor(max_batch_bytes=2000)
    cases = [
        ({}, json.dumps([event()]).encode(), 401, "Authorization"),
        (auth(), json.dumps(event()).encode(), 400, "JSON array of events, not a JSON object"),
        (auth(), b"[]", 400, "the batch is empty"),
        (auth(), json.dumps([{}] * 101).encode(), 413, "the batch has 101 events; the limit is 100"),
        (auth(), gzip.compress(json.dumps([event()] * 50).encode()), 413, "decompressed"),
        (auth(), json.dumps([{"eventTime": "2026-11-21T12:00:00Z"}]).encode(), 400, "producer is missing"),
    ]
    for headers, raw, status, fragment in cases:
        got_status, reply = ingestor.answer(BATCH, headers, raw)
        assert got_status == status, (fragment, reply)
        assert fragment in (reply.get("error") or reply["failed_events"][0]["reason"])
    assert aws.archive_keys() == [] and aws.messages() == []


class FailingSecondSend:
    """An SQS client whose second send fails once."""

    def __init__(self, sqs: Any) -> None:
        self.sqs, self.sends = sqs, 0

    def __getattr__(self, name: str) -> Any:
        return getattr(self.sqs, name)

    def send_message(self, **kwargs: Any) -> Any:
        self.sends += 1
        if self.sends == 2:
            raise ClientError({"Error": {"Code": "ServiceUnavailable", "Message": "later"}}, "SendMessage")
        return self.sqs.send_message(**kwargs)


def test_a_storage_failure_stops_the_batch_and_the_resend_completes_it(aws: Aws) -> None:
    bad = {"eventTime": "2026-11-21T12:00:00Z"}
    events = [event(eventType="START"), event(eventType="RUNNING"), bad, event()]
    ingestor = aws.ingestor(sqs=FailingSecondSend(aws.sqs))
    status, reply = ingestor.answer(BATCH, auth(), json.dumps(events).encode())
    assert status == 503 and reply["summary"]["retriable"] == 2 and reply["summary"]["successful"] == 1
    failed = [(f["index"], f["status"], f["retriable"]) for f in reply["failed_events"]]
    assert failed == [(1, 503, True), (2, 400, False), (3, 503, True)]  # nothing after the failure is queued
    depth = aws.sqs.get_queue_attributes(QueueUrl=aws.queue_url, AttributeNames=["ApproximateNumberOfMessages"])
    assert depth["Attributes"]["ApproximateNumberOfMessages"] == "1"  # START alone
    status, reply = ingestor.answer(BATCH, auth(), json.dumps(events).encode())  # the client sends it again
    assert status == 207 and reply["accepted"][0]["duplicate"] is True
    assert [json.loads(m["Body"])["eventType"] for m in aws.messages()] == ["START", "RUNNING", "COMPLETE"]


def test_other_paths_are_404(aws: Aws) -> None:
    status, reply = aws.ingestor().answer("/api/v1/lineage/other", auth(), b"{}")
    assert status == 404 and BATCH in reply["error"]
