"""Ingestor against moto: the raw body archived, the canonical event queued on a FIFO queue."""

from __future__ import annotations

import datetime as dt
import json
from collections.abc import Iterator
from typing import Any

import boto3
import pytest
from botocore.exceptions import ClientError, EndpointConnectionError
from moto import mock_aws

from emr_lineage.gateway.ingest import DEDUP_WINDOW, Ingestor
from tests.emr_lineage.gateway.events import KEY, PARENT_RUN_ID, RECEIVED, RUN_ID, auth, body, clock, event
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

    def ingestor(self, s3: Any = None, sqs: Any = None) -> Ingestor:
        return Ingestor(
            s3 or self.s3,
            sqs or self.sqs,
            bucket=BUCKET,
            queue_url=self.queue_url,
            api_keys=(KEY,),
            max_bytes=1 << 20,
            clock=clock,
        )

    def messages(self) -> list[dict[str, Any]]:
        reply = self.sqs.receive_message(
            QueueUrl=self.queue_url, MaxNumberOfMessages=10, MessageSystemAttributeNames=["All"]
        )
        return reply.get("Messages", [])

    def keys(self) -> list[str]:
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
    (key,) = aws.keys()
    assert key.startswith(f"raw/date=2026-11-23/hour=17/{PARENT_RUN_ID}/")
    assert aws.s3.get_object(Bucket=BUCKET, Key=key)["Body"].read() == raw
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
    assert len(aws.keys()) == 2  # the same key twice: the archive is idempotent too


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
    assert status == 400 and reply["error"] == "eventType is missing or not a string"
    assert aws.keys() == [] and aws.messages() == []


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
    assert len(aws.keys()) == 1  # archived; the client's retry writes the same key
    assert aws.ingestor().handle(auth(), body(event()))[0] == 201
    assert len(aws.keys()) == 1 and len(aws.messages()) == 1


def test_a_network_failure_is_503(aws: Aws) -> None:
    unreachable = EndpointConnectionError(endpoint_url="https://s3.eu-west-1.amazonaws.com")
    status, reply = aws.ingestor(s3=Failing(unreachable)).handle(auth(), body(event()))
    assert status == 503 and "EndpointConnectionError: Could not connect" in reply["error"]
