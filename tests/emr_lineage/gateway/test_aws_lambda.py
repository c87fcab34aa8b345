"""The Lambda handlers with fake ALB and SQS events: moto for S3, SQS and Secrets Manager."""

from __future__ import annotations

import base64
import json
from collections.abc import Iterator
from typing import Any

import boto3
import pytest
from moto import mock_aws

from emr_lineage.gateway import aws_lambda, config
from emr_lineage.gateway.config import GatewayConfigError
from tests.emr_lineage.fake_marquez import FakeMarquez
from tests.emr_lineage.gateway.events import KEY, PARENT_RUN_ID, RUN_ID, auth, body, event
from tests.helpers import fake_aws_credentials

REGION = "eu-west-1"
BUCKET = "archive"


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
        for name, value in {
            config.ARCHIVE_BUCKET: BUCKET,
            config.QUEUE_URL: self.queue_url,
            config.API_KEY_SECRET_ARN: self.secret_arn,
        }.items():
            monkeypatch.setenv(name, value)
        monkeypatch.delenv(config.MAX_EVENT_BYTES, raising=False)

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
    keys = [o["Key"] for o in stack.s3.list_objects_v2(Bucket=BUCKET)["Contents"]]
    assert len(keys) == 1 and keys[0].startswith("raw/date=")


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


@pytest.mark.parametrize("missing", [config.ARCHIVE_BUCKET, config.QUEUE_URL, config.API_KEY_SECRET_ARN])
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


def sqs_event(*records: tuple[str, str, dict[str, Any]]) -> dict[str, Any]:
    return {
        "Records": [
            {
                "messageId": message_id,
                "receiptHandle": f"handle-{message_id}",
                "body": json.dumps(value, sort_keys=True, separators=(",", ":")),
                "attributes": {"MessageGroupId": group, "MessageDeduplicationId": "d", "SequenceNumber": "1"},
                "eventSource": "aws:sqs",
                "eventSourceARN": "arn:aws:sqs:eu-west-1:123456789012:x.fifo",
            }
            for message_id, group, value in records
        ]
    }


@pytest.fixture()
def forward_env(marquez: FakeMarquez, monkeypatch: pytest.MonkeyPatch) -> FakeMarquez:
    monkeypatch.setenv(config.MARQUEZ_URL, marquez.url)
    monkeypatch.setenv(config.FORWARD_RETRIES, "0")
    monkeypatch.setenv(config.FORWARD_TIMEOUT_SECONDS, "5")
    return marquez


def test_the_forwarder_posts_in_order_and_reports_a_blocked_run(forward_env: FakeMarquez) -> None:
    first, second = event(eventType="START"), event(eventType="COMPLETE")
    other = event(run_id=PARENT_RUN_ID)
    forward_env.fail_next = [404]  # the first event of group A is refused for good
    records = [("a1", "A", first), ("b1", "B", other), ("a2", "A", second)]
    response = aws_lambda.forward_handler(sqs_event(*records), Context(60_000))
    assert response == {"batchItemFailures": [{"itemIdentifier": "a1"}, {"itemIdentifier": "a2"}]}
    assert forward_env.posted == [other]


def test_the_forwarder_delivers_a_whole_batch(forward_env: FakeMarquez) -> None:
    values = [event(eventType="START"), event(eventType="RUNNING"), event(eventType="COMPLETE")]
    records = [(f"m{i}", "A", value) for i, value in enumerate(values)]
    assert aws_lambda.forward_handler(sqs_event(*records), Context(60_000)) == {"batchItemFailures": []}
    assert forward_env.posted == values


def test_the_forwarder_stops_before_the_lambda_times_out(forward_env: FakeMarquez) -> None:
    response = aws_lambda.forward_handler(sqs_event(("m1", "A", event())), Context(5_500))  # < timeout + 1 s
    assert response == {"batchItemFailures": [{"itemIdentifier": "m1"}]}
    assert forward_env.requests == []


def test_a_misconfigured_forwarder_fails_the_whole_batch(forward_env: FakeMarquez, monkeypatch) -> None:
    monkeypatch.setenv(config.MARQUEZ_URL, "marquez:5000")
    with pytest.raises(GatewayConfigError, match="MARQUEZ_URL='marquez:5000' is not an http"):
        aws_lambda.forward_handler(sqs_event(("m1", "A", event())), Context(60_000))
    monkeypatch.setenv(config.MARQUEZ_URL, forward_env.url)
    monkeypatch.setenv(config.FORWARD_RETRIES, "many")
    with pytest.raises(GatewayConfigError, match="FORWARD_RETRIES='many' is not a int"):
        aws_lambda.forward_handler(sqs_event(("m1", "A", event())), Context(60_000))
    assert forward_env.requests == []
