"""bootstrap/install-openlineage.sh --api-key-secret: the listener gets the lineage gateway's key.

Run for real against Secrets Manager and S3 on moto_server, in the sandbox node tree. EMR writes
spark-defaults.conf after the bootstrap; the tests play that part with :func:`emr_writes_spark_defaults`.
"""

from __future__ import annotations

import json
import stat
import uuid

import boto3
import pytest

from emr_lineage.spark.conf import AUTH_KEY_PROPERTY, AUTH_TYPE_API_KEY, AUTH_TYPE_PROPERTY, LISTENER_CLASS
from tests.versions import LISTENER_JAR

KEY = "k3yW1thOnlyTokenChars0123456789abcdefghijklmnop"
SPARK_DEFAULTS = (
    "spark.master                     yarn\n"
    f"spark.extraListeners             {LISTENER_CLASS}\n"
    "spark.openlineage.transport.url  http://internal-lineage.example:80\n"
)
AUTH_LINES = f"{AUTH_TYPE_PROPERTY} {AUTH_TYPE_API_KEY}\n{AUTH_KEY_PROPERTY} {KEY}\n"


@pytest.fixture
def secret_arn(secrets_client):
    """A fresh gateway API key secret holding KEY, as the gateway stack makes it (the bare key)."""
    return secrets_client.create_secret(Name=f"gateway-key-{uuid.uuid4().hex[:8]}", SecretString=KEY)["ARN"]


def emr_writes_spark_defaults(node, text: str = SPARK_DEFAULTS, mode: int = 0o644) -> None:
    node.spark_defaults.parent.mkdir(parents=True, exist_ok=True)
    node.spark_defaults.write_text(text)
    node.spark_defaults.chmod(mode)


def everything_the_script_printed(node, result) -> str:
    return result.stdout + result.stderr + node.log_file.read_text()


def test_the_watcher_adds_the_key_once_emr_writes_spark_defaults(
    node, bucket, args_for, listener_sha256, secret_arn, wait, alive
):
    node.set_release("emr-7.10.0")
    node.install_spark()

    result = node.run(args_for(listener_sha256, bucket, api_key_secret_arn=secret_arn))

    assert result.returncode == 0, result.stderr
    assert f"read the gateway API key from {secret_arn}" in result.stdout
    pid = node.watchers[-1]  # the jar is in place; the key waits for spark-defaults.conf
    assert alive(pid)

    emr_writes_spark_defaults(node, mode=0o640)
    wait(lambda: not alive(pid), "the watcher to add the key and exit")
    assert node.spark_defaults.read_text() == SPARK_DEFAULTS + AUTH_LINES
    assert stat.S_IMODE(node.spark_defaults.stat().st_mode) == 0o640  # EMR's mode kept
    assert node.listener_jars_on_classpath() == [node.spark_jars / LISTENER_JAR]
    log = node.log_file.read_text()
    assert "the listener sends the gateway API key" in log
    assert KEY not in everything_the_script_printed(node, result)
    assert not list(node.spark_defaults.parent.glob("*.tmp"))


def test_a_json_secret_gives_its_api_key_field_and_stale_auth_entries_are_replaced(
    node, bucket, args_for, listener_sha256, secrets_client
):
    node.set_release("emr-7.10.0")
    node.install_spark()
    arn = secrets_client.create_secret(Name=f"json-{uuid.uuid4().hex[:8]}", SecretString=json.dumps({"apiKey": KEY}))
    emr_writes_spark_defaults(node, SPARK_DEFAULTS + f"{AUTH_KEY_PROPERTY} an-old-key\n")

    result = node.run(args_for(listener_sha256, bucket, api_key_secret_arn=arn["ARN"]))

    assert result.returncode == 0, result.stderr
    assert node.spark_defaults.read_text() == SPARK_DEFAULTS + AUTH_LINES
    assert not node.pid_file.exists()  # nothing left to wait for


def test_a_second_run_changes_nothing_and_a_run_after_a_rotation_places_the_new_key(
    node, bucket, args_for, listener_sha256, secret_arn, secrets_client
):
    """docs/gateway.md "Rotating the API key": the bootstrap run again on a running node (an EMR step)."""
    node.set_release("emr-7.10.0")
    node.install_spark()
    emr_writes_spark_defaults(node)
    arguments = args_for(listener_sha256, bucket, api_key_secret_arn=secret_arn)
    assert node.run(arguments).returncode == 0
    before = node.snapshot()

    second = node.run(arguments)

    assert second.returncode == 0, second.stderr
    assert node.snapshot() == before
    assert node.spark_defaults.read_text().count(AUTH_KEY_PROPERTY) == 1

    new_key = "n3wK3yAfterTheRotation0123456789abcdefghijklmn"
    secrets_client.put_secret_value(SecretId=secret_arn, SecretString=new_key)
    again = node.run(arguments)

    assert again.returncode == 0, again.stderr
    assert node.spark_defaults.read_text() == SPARK_DEFAULTS + AUTH_LINES.replace(KEY, new_key)
    assert new_key not in everything_the_script_printed(node, again)


def test_listener_source_emr_gets_the_key_too(node, args_for, listener_sha256, secret_arn, wait, alive):
    node.set_release("emr-7.13.0")
    node.ship_emr_listener()

    result = node.run(
        args_for(listener_sha256, "artifacts-unused", listener_source="emr", api_key_secret_arn=secret_arn)
    )

    assert result.returncode == 0, result.stderr
    pid = node.watchers[-1]
    emr_writes_spark_defaults(node)
    wait(lambda: not alive(pid), "the watcher to add the key and exit")
    assert node.spark_defaults.read_text() == SPARK_DEFAULTS + AUTH_LINES
    assert not (node.spark_jars / LISTENER_JAR).exists()


def test_a_secret_in_another_region_is_read_in_its_own(node, bucket, args_for, listener_sha256, moto_s3_url):
    """A spoke's key is its hub's secret, in the hub's region: the ARN's region, not the node's, is asked."""
    hubs = boto3.client(
        "secretsmanager",
        endpoint_url=moto_s3_url,
        region_name="eu-west-1",
        aws_access_key_id="testing",
        aws_secret_access_key="testing",
    )
    arn = hubs.create_secret(Name=f"spoke-key-{uuid.uuid4().hex[:8]}", SecretString=KEY)["ARN"]
    assert ":eu-west-1:" in arn
    node.set_release("emr-7.10.0")
    node.install_spark()
    emr_writes_spark_defaults(node)

    result = node.run(args_for(listener_sha256, bucket, api_key_secret_arn=arn))

    assert result.returncode == 0, result.stderr
    assert node.spark_defaults.read_text() == SPARK_DEFAULTS + AUTH_LINES


def test_an_unreadable_secret_fails_the_node_with_one_line_and_installs_nothing(
    node, bucket, args_for, listener_sha256
):
    node.set_release("emr-7.10.0")
    node.install_spark()
    missing = "arn:aws:secretsmanager:us-east-1:123456789012:secret:no-such-key-AbCdEf"

    result = node.run(
        args_for(listener_sha256, bucket, api_key_secret_arn=missing, extra=("--attempts", "2", "--retry-delay", "0"))
    )

    assert result.returncode == 1
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1, result.stderr
    assert lines[0].startswith(f"install-openlineage: ERROR: could not read the gateway API key from {missing}")
    assert "after 2 attempts" in lines[0] and "secretsmanager:GetSecretValue" in lines[0]
    assert "ResourceNotFoundException" in lines[0]
    assert "secret read attempt 1/2 failed" in result.stdout
    assert node.listener_jars_on_classpath() == []


def test_fail_open_without_the_key_runs_spark_without_the_listener(
    node, bucket, args_for, listener_sha256, wait, alive
):
    node.set_release("emr-7.10.0")
    missing = "arn:aws:secretsmanager:us-east-1:123456789012:secret:no-such-key-AbCdEf"

    result = node.run(
        args_for(listener_sha256, bucket, fail_open=True, api_key_secret_arn=missing, extra=("--attempts", "1"))
    )

    assert result.returncode == 0
    assert result.stderr.startswith("install-openlineage: WARNING: could not read the gateway API key")
    node.install_spark()
    emr_writes_spark_defaults(node)
    wait(lambda: not alive(node.watchers[-1]), "the watcher to take the listener out")
    assert LISTENER_CLASS not in node.spark_defaults.read_text()
    assert AUTH_KEY_PROPERTY not in node.spark_defaults.read_text()


@pytest.mark.parametrize(
    ("secret", "message"),
    [
        ("two words", "has characters a Bearer token cannot carry"),
        (json.dumps({"key": KEY}), "is a JSON object without a string 'apiKey' field"),
        (json.dumps({"apiKey": 42}), "is a JSON object without a string 'apiKey' field"),
    ],
)
def test_a_key_that_cannot_be_a_bearer_token_fails_with_one_line(
    node, bucket, args_for, listener_sha256, secrets_client, secret, message
):
    node.set_release("emr-7.10.0")
    arn = secrets_client.create_secret(Name=f"bad-{uuid.uuid4().hex[:8]}", SecretString=secret)["ARN"]

    result = node.run(args_for(listener_sha256, bucket, api_key_secret_arn=arn))

    assert result.returncode == 1
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and message in lines[0], result.stderr
    assert secret not in lines[0]


def test_a_malformed_secret_arn_is_a_usage_error(node, bucket, args_for, listener_sha256):
    result = node.run(args_for(listener_sha256, bucket, api_key_secret_arn="gateway-key"))
    assert result.returncode == 2
    assert "--api-key-secret 'gateway-key' is not a Secrets Manager secret ARN" in result.stderr
