"""The Lambda handlers with fake ALB and SQS events: moto for S3, SQS and Secrets Manager."""

from __future__ import annotations

import base64
import gzip
import json
import os
from collections.abc import Iterator
from typing import Any

import boto3
import pytest
from botocore.stub import Stubber
from moto import mock_aws

from emr_lineage.aws.archive import group_of, source_account
from emr_lineage.gateway import aws_lambda, config
from emr_lineage.gateway.config import GatewayConfigError
from tests.emr_lineage.fake_marquez import FakeMarquez
from tests.emr_lineage.gateway.events import KEY, PARENT_RUN_ID, ROOT_RUN_ID, RUN_ID, auth, body, event
from tests.helpers import fake_aws_credentials

REGION = "eu-west-1"
BUCKET = "archive"
HUB = "123456789012"  # the gateway's account (moto's)
SPOKE, OTHER_SPOKE = "210987654321", "345678901234"
SPOKE_KEY, OTHER_SPOKE_KEY = "spoke-key", "other-spoke-key"


class Stack:
    """What the CDK stack creates for the ingest Lambda, in moto, and the Lambda's environment."""

    def __init__(self, monkeypatch: pytest.MonkeyPatch) -> None:
        self.s3 = boto3.client("s3", region_name=REGION)
        self.sqs = boto3.client("sqs", region_name=REGION)
        self.secrets = boto3.client("secretsmanager", region_name=REGION)
        self.s3.create_bucket(Bucket=BUCKET, CreateBucketConfiguration={"LocationConstraint": REGION})
        attributes = {"FifoQueue": "true", "ContentBasedDeduplication": "false"}
        self.queue_url = self.sqs.create_queue(QueueName="x.fifo", Attributes=attributes)["QueueUrl"]
        self.secret_arn = self.secrets.create_secret(Name="gateway-key", SecretString=KEY)["ARN"]
        self.spoke_secrets = {
            account: self.secrets.create_secret(Name=f"gateway/spokes/{account}", SecretString=key)["ARN"]
            for account, key in ((SPOKE, SPOKE_KEY), (OTHER_SPOKE, OTHER_SPOKE_KEY))
        }
        for name, value in {
            config.ARCHIVE_BUCKET: BUCKET,
            config.QUEUE_URL: self.queue_url,
            config.API_KEY_SECRET_ARN: self.secret_arn,
            config.GATEWAY_ACCOUNT: HUB,
            config.SPOKE_KEY_SECRETS: json.dumps(self.spoke_secrets),
        }.items():
            monkeypatch.setenv(name, value)
        monkeypatch.delenv(config.MAX_EVENT_BYTES, raising=False)

    def archived(self) -> list[str]:
        return [o["Key"] for o in self.s3.list_objects_v2(Bucket=BUCKET).get("Contents", [])]

    def messages(self) -> list[dict[str, Any]]:
        reply = self.sqs.receive_message(
            QueueUrl=self.queue_url, MaxNumberOfMessages=10, MessageSystemAttributeNames=["All"]
        )
        return reply.get("Messages", [])


@pytest.fixture()
def stack(monkeypatch: pytest.MonkeyPatch) -> Iterator[Stack]:
    fake_aws_credentials(monkeypatch, REGION)
    aws_lambda.reset()
    with mock_aws():
        yield Stack(monkeypatch)
    aws_lambda.reset()


def alb_event(raw: bytes, headers: dict[str, str], *, base64_body: bool = True, method: str = "POST") -> dict:
    return {
        "requestContext": {"elb": {"targetGroupArn": "arn:aws:elasticloadbalancing:eu-west-1:1:targetgroup/g/1"}},
        "httpMethod": method,
        "path": "/api/v1/lineage",
        "queryStringParameters": {},
        "headers": {name.lower(): value for name, value in headers.items()},
        "body": base64.b64encode(raw).decode() if base64_body else raw.decode(),
        "isBase64Encoded": base64_body,
    }


def reply(response: dict[str, Any]) -> tuple[int, dict[str, Any]]:
    assert set(response) == {"statusCode", "statusDescription", "headers", "body", "isBase64Encoded"}
    assert response["isBase64Encoded"] is False and response["headers"]["Content-Type"] == "application/json"
    return response["statusCode"], json.loads(response["body"])


def test_an_alb_event_with_a_base64_body_is_accepted_and_queued(stack: Stack) -> None:
    response = aws_lambda.ingest_handler(alb_event(body(event(parent=PARENT_RUN_ID)), auth()), None)
    assert response["statusDescription"] == "201 Created"
    status, payload = reply(response)
    assert status == 201 and payload["runId"] == RUN_ID
    (message,) = stack.messages()
    assert message["Attributes"]["MessageGroupId"] == PARENT_RUN_ID
    (key,) = stack.archived()
    assert key.startswith("raw/date=") and source_account(key) == HUB  # the gateway's own key: its account


def test_a_gzip_batch_on_the_batch_path_is_stored_event_by_event(stack: Stack) -> None:
    """The ALB hands the Lambda a binary body base64-encoded; the path picks the endpoint."""
    events = [event(eventType="START"), event()]
    alb = alb_event(gzip.compress(json.dumps(events).encode()), {**auth(), "Content-Encoding": "gzip"})
    alb["path"] = "/api/v1/lineage/batch/"
    status, payload = reply(aws_lambda.ingest_handler(alb, None))
    assert (status, payload["status"], payload["summary"]["successful"]) == (200, "success", 2)
    assert [json.loads(m["Body"])["eventType"] for m in stack.messages()] == ["START", "COMPLETE"]


def test_a_plain_text_body_and_multi_value_headers_are_read_too(stack: Stack) -> None:
    alb = alb_event(body(event()), {}, base64_body=False)
    del alb["headers"]
    alb["multiValueHeaders"] = {"authorization": [f"Bearer {KEY}"], "content-type": ["application/json"]}
    response = aws_lambda.ingest_handler(alb, None)
    assert response["statusCode"] == 201
    assert response["multiValueHeaders"]["Content-Type"] == ["application/json"] and "headers" not in response


def status_with(key: str) -> int:
    return reply(aws_lambda.ingest_handler(alb_event(body(event()), auth(key=key)), None))[0]


def test_a_rotation_reaches_warm_containers_and_the_previous_key_still_works(
    stack: Stack, monkeypatch: pytest.MonkeyPatch
) -> None:
    now = [1000.0]
    monkeypatch.setattr(aws_lambda, "monotonic", lambda: now[0])
    assert status_with(KEY) == 201
    stack.secrets.put_secret_value(SecretId=stack.secret_arn, SecretString="rotated")
    assert status_with("rotated") == 401  # the container still holds what it read
    now[0] += aws_lambda.KEY_CACHE_SECONDS
    assert status_with("rotated") == 201  # read again after the cache time
    assert status_with(KEY) == 201  # clients not yet given the new key keep reporting
    stack.secrets.put_secret_value(SecretId=stack.secret_arn, SecretString="rotated-again")
    now[0] += aws_lambda.KEY_CACHE_SECONDS
    assert status_with("rotated-again") == 201 and status_with("rotated") == 201
    status, payload = reply(aws_lambda.ingest_handler(alb_event(body(event()), auth(key=KEY)), None))
    assert status == 401 and payload["error"] == "missing or wrong Authorization: Bearer <key>"


def test_each_spokes_key_archives_its_events_under_that_account(stack: Stack) -> None:
    for key, run_id in ((SPOKE_KEY, RUN_ID), (OTHER_SPOKE_KEY, PARENT_RUN_ID), (KEY, ROOT_RUN_ID)):
        assert reply(aws_lambda.ingest_handler(alb_event(body(event(run_id=run_id)), auth(key=key)), None))[0] == 201
    assert {group_of(k): source_account(k) for k in stack.archived()} == {
        RUN_ID: SPOKE,
        PARENT_RUN_ID: OTHER_SPOKE,
        ROOT_RUN_ID: HUB,
    }
    assert aws_lambda.accepted_keys(config.IngestConfig.from_env(os.environ)) == {
        KEY: HUB,
        SPOKE_KEY: SPOKE,
        OTHER_SPOKE_KEY: OTHER_SPOKE,
    }


def test_a_batch_with_a_spokes_key_archives_every_event_under_that_account(stack: Stack) -> None:
    alb = alb_event(json.dumps([event(eventType="START"), event()]).encode(), auth(key=SPOKE_KEY))
    alb["path"] = "/api/v1/lineage/batch"
    assert reply(aws_lambda.ingest_handler(alb, None))[0] == 200
    assert [source_account(k) for k in stack.archived()] == [SPOKE, SPOKE]


def test_a_spokes_rotation_loses_nothing(stack: Stack, monkeypatch: pytest.MonkeyPatch) -> None:
    """The spoke's clients move to the new value at their pace: until the following put, the previous
    one is still that spoke's, and the new one is accepted once the container reads the secret again."""
    now = [1000.0]
    monkeypatch.setattr(aws_lambda, "monotonic", lambda: now[0])
    arn = stack.spoke_secrets[SPOKE]
    assert status_with(SPOKE_KEY) == 201
    stack.secrets.put_secret_value(SecretId=arn, SecretString="spoke-rotated")
    assert status_with("spoke-rotated") == 401  # the container still holds what it read
    now[0] += aws_lambda.KEY_CACHE_SECONDS
    assert status_with("spoke-rotated") == 201 and status_with(SPOKE_KEY) == 201
    stack.secrets.put_secret_value(SecretId=arn, SecretString="spoke-rotated-again")
    now[0] += aws_lambda.KEY_CACHE_SECONDS
    assert status_with("spoke-rotated-again") == 201 and status_with("spoke-rotated") == 201
    assert status_with(SPOKE_KEY) == 401  # the following put retired it
    assert {source_account(k) for k in stack.archived()} == {SPOKE}  # every accepted event: the spoke's


def test_a_spoke_secret_gone_refuses_that_spoke_only(stack: Stack, caplog: pytest.LogCaptureFixture) -> None:
    stack.secrets.delete_secret(SecretId=stack.spoke_secrets[SPOKE], ForceDeleteWithoutRecovery=True)
    assert status_with(SPOKE_KEY) == 401
    assert status_with(OTHER_SPOKE_KEY) == 201 and status_with(KEY) == 201
    assert f"the key of spoke account {SPOKE} is refused until its secret is fixed" in caplog.text


def test_a_spoke_secret_without_a_key_refuses_that_spoke_only_until_it_is_fixed(
    stack: Stack, monkeypatch: pytest.MonkeyPatch
) -> None:
    now = [1000.0]
    monkeypatch.setattr(aws_lambda, "monotonic", lambda: now[0])
    arn = stack.spoke_secrets[SPOKE]
    stack.secrets.update_secret(SecretId=arn, SecretString=json.dumps({"key": "misnamed"}))
    assert (status_with(SPOKE_KEY), status_with("misnamed"), status_with(OTHER_SPOKE_KEY)) == (401, 401, 201)
    stack.secrets.put_secret_value(SecretId=arn, SecretString="fixed")
    assert status_with("fixed") == 401  # read again only after the cache time, as a good secret is
    now[0] += aws_lambda.KEY_CACHE_SECONDS
    assert status_with("fixed") == 201


def test_a_spoke_secret_unreadable_for_now_is_503(stack: Stack) -> None:
    """A throttled read may succeed on the client's retry: 503, not a 401 that client would not retry."""
    secrets = aws_lambda.client("secretsmanager")
    with Stubber(secrets) as stubber:
        for stage in (aws_lambda.CURRENT, aws_lambda.PREVIOUS):
            stubber.add_response(
                "get_secret_value",
                {"ARN": stack.secret_arn, "SecretString": KEY} if stage == aws_lambda.CURRENT else {},
                {"SecretId": stack.secret_arn, "VersionStage": stage},
            )
        stubber.add_client_error("get_secret_value", "ThrottlingException", http_status_code=400)
        response = aws_lambda.ingest_handler(alb_event(body(event()), auth(key=SPOKE_KEY)), None)
    assert reply(response)[0] == 503 and response["headers"]["Retry-After"] == "5"


def test_a_never_changed_secret_gives_one_key(stack: Stack) -> None:
    assert aws_lambda.api_keys(stack.secret_arn) == (KEY,)


def test_a_json_secret_holds_the_key_in_its_api_key_field(stack: Stack) -> None:
    stack.secrets.update_secret(SecretId=stack.secret_arn, SecretString=json.dumps({"apiKey": "from-json"}))
    assert reply(aws_lambda.ingest_handler(alb_event(body(event()), auth(key="from-json")), None))[0] == 201


def test_401_asks_for_a_bearer_token(stack: Stack) -> None:
    response = aws_lambda.ingest_handler(alb_event(body(event()), {}), None)
    assert response["statusCode"] == 401 and response["headers"]["WWW-Authenticate"] == "Bearer"
    assert stack.messages() == []


def test_the_size_limit_comes_from_the_environment(stack: Stack, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(config.MAX_EVENT_BYTES, "100")
    status, payload = reply(aws_lambda.ingest_handler(alb_event(body(event()), auth()), None))
    assert status == 413 and payload["error"].endswith("the limit is 100")


def test_bad_base64_and_other_methods_are_refused(stack: Stack) -> None:
    broken = alb_event(b"{}", auth())
    broken["body"] = "not base64!"
    assert reply(aws_lambda.ingest_handler(broken, None)) == (
        400,
        {"status": "rejected", "error": "the body is not valid base64"},
    )
    response = aws_lambda.ingest_handler(alb_event(b"", auth(), method="GET"), None)
    assert response["statusCode"] == 405 and response["headers"]["Allow"] == "POST"


@pytest.mark.parametrize(
    "missing", [config.ARCHIVE_BUCKET, config.QUEUE_URL, config.API_KEY_SECRET_ARN, config.GATEWAY_ACCOUNT]
)
def test_a_misconfigured_lambda_accepts_nothing(stack: Stack, monkeypatch: pytest.MonkeyPatch, missing: str) -> None:
    monkeypatch.delenv(missing)
    assert reply(aws_lambda.ingest_handler(alb_event(body(event()), auth()), None)) == (
        500,
        {"status": "error", "error": "the gateway is misconfigured"},
    )
    assert stack.messages() == []


def test_an_empty_secret_is_a_misconfiguration(stack: Stack) -> None:
    stack.secrets.update_secret(SecretId=stack.secret_arn, SecretString="  ")
    assert reply(aws_lambda.ingest_handler(alb_event(body(event()), auth(key="")), None))[0] == 500
    with pytest.raises(GatewayConfigError, match="is empty"):
        aws_lambda.api_keys(stack.secret_arn)


def test_an_unreadable_secret_is_503(stack: Stack, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(config.API_KEY_SECRET_ARN, stack.secret_arn + "-gone")
    response = aws_lambda.ingest_handler(alb_event(body(event()), auth()), None)
    assert reply(response)[0] == 503 and response["headers"]["Retry-After"] == "5"


# --- forward_handler ------------------------------------------------------------------------------


class Context:
    def __init__(self, remaining_ms: int) -> None:
        self.remaining_ms = remaining_ms

    def get_remaining_time_in_millis(self) -> int:
        return self.remaining_ms


class Recording:
    """The forwarder's SQS client (moto), recording the visibility changes it asks for."""

    def __init__(self, sqs: Any) -> None:
        self.sqs = sqs
        self.visibility: list[dict[str, Any]] = []

    def change_message_visibility_batch(self, **kwargs: Any) -> dict[str, Any]:
        self.visibility.extend(kwargs["Entries"])
        return self.sqs.change_message_visibility_batch(**kwargs)

    def __getattr__(self, name: str) -> Any:
        return getattr(self.sqs, name)


class Queues:
    """The gateway's FIFO queue and dead-letter queue in moto, and the forwarder's environment."""

    def __init__(self, monkeypatch: pytest.MonkeyPatch, marquez: FakeMarquez) -> None:
        self.sqs = boto3.client("sqs", region_name=REGION)
        fifo = {"FifoQueue": "true", "ContentBasedDeduplication": "false"}
        self.dead_letter_url = self.sqs.create_queue(QueueName="dlq.fifo", Attributes=fifo)["QueueUrl"]
        self.queue_url = self.sqs.create_queue(QueueName="q.fifo", Attributes=fifo)["QueueUrl"]
        self.client = Recording(boto3.client("sqs", region_name=REGION))
        monkeypatch.setattr(aws_lambda, "forward_sqs", lambda: self.client)
        for name, value in {
            config.MARQUEZ_URL: marquez.url,
            config.FORWARD_RETRIES: "0",
            config.FORWARD_TIMEOUT_SECONDS: "5",
            config.QUEUE_URL: self.queue_url,
            config.DEAD_LETTER_QUEUE_URL: self.dead_letter_url,
        }.items():
            monkeypatch.setenv(name, value)

    def send(self, *records: tuple[str, str, dict[str, Any]]) -> dict[str, str]:
        """Queue events (label, group, event) in order; their message ids by label."""
        ids = {}
        for label, group, value in records:
            sent = self.sqs.send_message(
                QueueUrl=self.queue_url,
                MessageBody=json.dumps(value),
                MessageGroupId=group,
                MessageDeduplicationId=label,
            )
            ids[label] = sent["MessageId"]
        return ids

    def receive(self, url: str | None = None) -> list[dict[str, Any]]:
        reply = self.sqs.receive_message(
            QueueUrl=url or self.queue_url,
            MaxNumberOfMessages=10,
            MessageSystemAttributeNames=["All"],
            MessageAttributeNames=["All"],
        )
        return reply.get("Messages", [])

    def event(self) -> dict[str, Any]:
        """The Lambda SQS event of one receive (real receipt handles and receive counts)."""
        return {
            "Records": [
                {
                    "messageId": m["MessageId"],
                    "receiptHandle": m["ReceiptHandle"],
                    "body": m["Body"],
                    "attributes": m["Attributes"],
                    "eventSource": "aws:sqs",
                    "eventSourceARN": "arn:aws:sqs:eu-west-1:123456789012:q.fifo",
                }
                for m in self.receive()
            ]
        }


@pytest.fixture()
def queues(marquez: FakeMarquez, monkeypatch: pytest.MonkeyPatch) -> Iterator[Queues]:
    fake_aws_credentials(monkeypatch, REGION)
    aws_lambda.reset()
    with mock_aws():
        yield Queues(monkeypatch, marquez)
    aws_lambda.reset()


def failures(*message_ids: str) -> dict[str, list[dict[str, str]]]:
    return {"batchItemFailures": [{"itemIdentifier": m} for m in message_ids]}


def test_a_refused_event_goes_to_the_dead_letter_queue_and_its_run_goes_on(
    queues: Queues, marquez: FakeMarquez
) -> None:
    first, second, third = event(eventType="START"), event(eventType="RUNNING"), event(eventType="COMPLETE")
    ids = queues.send(("a1", "A", first), ("a2", "A", second), ("a3", "A", third))
    marquez.fail_next = [422]  # Marquez refuses the first event of the run for good
    response = aws_lambda.forward_handler(queues.event(), Context(60_000))
    assert response == failures()  # nothing comes back: the later events were not held behind it
    assert marquez.posted == [second, third]
    (dead,) = queues.receive(queues.dead_letter_url)
    assert json.loads(dead["Body"]) == first
    assert dead["Attributes"]["MessageGroupId"] == "A"  # a redrive puts it back into its run
    attributes = {name: value["StringValue"] for name, value in dead["MessageAttributes"].items()}
    assert attributes == {
        "marquez-status": "422",
        "marquez-detail": "HTTP 422: injected failure 422",
        "gateway-message-id": ids["a1"],
    }
    assert queues.client.visibility == []  # nothing to redeliver


def test_a_failed_dead_letter_send_leaves_the_event_to_sqs(
    queues: Queues, marquez: FakeMarquez, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    monkeypatch.setenv(config.DEAD_LETTER_QUEUE_URL, queues.dead_letter_url.replace("dlq.fifo", "gone.fifo"))
    ids = queues.send(("a1", "A", event(eventType="START")), ("a2", "A", event(eventType="COMPLETE")))
    marquez.fail_next = [400]
    response = aws_lambda.forward_handler(queues.event(), Context(60_000))
    assert response == failures(ids["a1"], ids["a2"])  # as before: redelivered, dead-lettered by SQS at last
    assert marquez.posted == []  # a2 waits behind a1
    assert f"dead-lettering message {ids['a1']} failed" in caplog.text
    assert [e["VisibilityTimeout"] for e in queues.client.visibility] == [30, 30]


def test_undelivered_events_come_back_after_a_backoff_from_their_receive_count(
    queues: Queues, marquez: FakeMarquez
) -> None:
    ids = queues.send(("a1", "A", event(eventType="START")), ("a2", "A", event(eventType="COMPLETE")))
    ids |= queues.send(("b1", "B", event(run_id=PARENT_RUN_ID)))
    for _ in range(2):  # received twice before (Marquez was down): both groups back in the queue at once
        handles = [
            {"Id": str(i), "ReceiptHandle": r["receiptHandle"], "VisibilityTimeout": 0}
            for i, r in enumerate(queues.event()["Records"])
        ]
        queues.sqs.change_message_visibility_batch(QueueUrl=queues.queue_url, Entries=handles)
    batch = queues.event()
    counts = {r["messageId"]: r["attributes"]["ApproximateReceiveCount"] for r in batch["Records"]}
    assert counts == {ids["a1"]: "3", ids["a2"]: "3", ids["b1"]: "3"}
    marquez.fail_next = [503, 503]  # Marquez is still down: a1 and b1 fail, a2 is blocked behind a1
    response = aws_lambda.forward_handler(batch, Context(60_000))
    assert response == failures(ids["a1"], ids["a2"], ids["b1"])
    handles = {r["receiptHandle"]: r["messageId"] for r in batch["Records"]}
    assert {handles[e["ReceiptHandle"]]: e["VisibilityTimeout"] for e in queues.client.visibility} == {
        ids["a1"]: 120,  # 30 s * 2**(3-1), not the queue's visibility timeout
        ids["a2"]: 120,
        ids["b1"]: 120,
    }
    assert queues.receive() == []  # invisible until then


def test_a_failed_visibility_change_is_logged_not_raised(
    queues: Queues, marquez: FakeMarquez, caplog: pytest.LogCaptureFixture
) -> None:
    record = {
        "messageId": "m1",
        "receiptHandle": "not-a-receipt-handle",
        "body": json.dumps(event()),
        "attributes": {"MessageGroupId": "A", "ApproximateReceiveCount": "1"},
    }
    marquez.fail_next = [503]
    assert aws_lambda.forward_handler({"Records": [record]}, Context(60_000)) == failures("m1")
    assert "delaying the redelivery" in caplog.text


def test_the_forwarder_delivers_a_whole_batch(queues: Queues, marquez: FakeMarquez) -> None:
    values = [event(eventType="START"), event(eventType="RUNNING"), event(eventType="COMPLETE")]
    queues.send(*[(f"m{i}", "A", value) for i, value in enumerate(values)])
    assert aws_lambda.forward_handler(queues.event(), Context(60_000)) == failures()
    assert marquez.posted == values
    assert queues.client.visibility == [] and queues.receive(queues.dead_letter_url) == []


def test_the_forwarder_stops_before_the_lambda_times_out(queues: Queues, marquez: FakeMarquez) -> None:
    ids = queues.send(("m1", "A", event()))
    reserve = 5 + aws_lambda.SAFETY_SECONDS + 2 * aws_lambda.SQS_CALL_SECONDS  # a POST's timeout, then SQS calls
    response = aws_lambda.forward_handler(queues.event(), Context(int(reserve * 1000) - 1))
    assert response == failures(ids["m1"])
    assert marquez.requests == []
    assert [e["VisibilityTimeout"] for e in queues.client.visibility] == [30]  # back soon, not in 43 minutes


def test_the_forwarders_sqs_calls_have_short_timeouts() -> None:
    """So a slow SQS cannot outlast the room the deadline leaves for them."""
    sqs = aws_lambda.FORWARD_SQS
    assert (sqs.connect_timeout, sqs.read_timeout) == (aws_lambda.SQS_CONNECT_SECONDS, aws_lambda.SQS_READ_SECONDS)
    assert sqs.retries["total_max_attempts"] == aws_lambda.SQS_ATTEMPTS
    assert aws_lambda.SQS_CALL_SECONDS <= 15


def test_a_misconfigured_forwarder_fails_the_whole_batch(queues: Queues, marquez: FakeMarquez, monkeypatch) -> None:
    record = {"messageId": "m1", "body": json.dumps(event()), "attributes": {"MessageGroupId": "A"}}
    monkeypatch.setenv(config.MARQUEZ_URL, "marquez:5000")
    with pytest.raises(GatewayConfigError, match=r"MARQUEZ_URL: 'marquez:5000' is not an http\(s\) URL"):
        aws_lambda.forward_handler({"Records": [record]}, Context(60_000))
    monkeypatch.setenv(config.MARQUEZ_URL, marquez.url)
    monkeypatch.setenv(config.FORWARD_RETRIES, "many")
    with pytest.raises(GatewayConfigError, match="FORWARD_RETRIES='many' is not a int"):
        aws_lambda.forward_handler({"Records": [record]}, Context(60_000))
    monkeypatch.setenv(config.FORWARD_RETRIES, "0")
    monkeypatch.delenv(config.DEAD_LETTER_QUEUE_URL)
    with pytest.raises(GatewayConfigError, match="DEAD_LETTER_QUEUE_URL is not set"):
        aws_lambda.forward_handler({"Records": [record]}, Context(60_000))
    assert marquez.requests == []
