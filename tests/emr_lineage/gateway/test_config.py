"""The gateway's settings: the Lambdas' environment and redelivery (its asset: tests/stacks/gateway/test_asset.py)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

import emr_lineage
from emr_lineage.gateway import config
from emr_lineage.gateway.config import ForwardConfig, GatewayConfigError, IngestConfig

CHECKOUT = Path(emr_lineage.__file__).parent.parent


INGEST = {
    config.ARCHIVE_BUCKET: "b",
    config.QUEUE_URL: "https://sqs/q.fifo",
    config.API_KEY_SECRET_ARN: "arn:s",
    config.GATEWAY_ACCOUNT: "123456789012",
}
SPOKES = {"210987654321": "arn:spoke-a", "345678901234": "arn:spoke-b"}


def test_ingest_config_reads_the_environment_with_defaults() -> None:
    assert IngestConfig.from_env(INGEST) == IngestConfig("b", "https://sqs/q.fifo", "arn:s", 750_000, "123456789012")
    assert IngestConfig.from_env({**INGEST, config.MAX_EVENT_BYTES: " 2048 "}).max_bytes == 2048
    assert IngestConfig.from_env({**INGEST, config.SPOKE_KEY_SECRETS: "{}"}).spoke_secrets == {}


def test_the_spoke_secrets_are_a_json_object_of_account_to_arn() -> None:
    env = {**INGEST, config.SPOKE_KEY_SECRETS: json.dumps(SPOKES)}
    assert IngestConfig.from_env(env).spoke_secrets == SPOKES


@pytest.mark.parametrize(
    ("change", "message"),
    [
        ({config.ARCHIVE_BUCKET: ""}, "environment variable ARCHIVE_BUCKET is not set"),
        ({config.MAX_EVENT_BYTES: "1MiB"}, "environment variable MAX_EVENT_BYTES='1MiB' is not a int"),
        ({config.MAX_EVENT_BYTES: "0"}, "environment variable MAX_EVENT_BYTES='0' is below 1"),
        ({config.GATEWAY_ACCOUNT: " "}, "environment variable GATEWAY_ACCOUNT is not set"),
        ({config.GATEWAY_ACCOUNT: "1234"}, "environment variable GATEWAY_ACCOUNT: '1234' is not an AWS account id"),
        ({config.SPOKE_KEY_SECRETS: "[]"}, "environment variable SPOKE_KEY_SECRETS is not a JSON object of account"),
        ({config.SPOKE_KEY_SECRETS: '{"210987654321": ""}'}, "environment variable SPOKE_KEY_SECRETS is not a JSON"),
        ({config.SPOKE_KEY_SECRETS: '{"a": "arn:x"}'}, "environment variable SPOKE_KEY_SECRETS: 'a' is not an AWS"),
    ],
)
def test_ingest_config_names_the_bad_variable(change: dict[str, str], message: str) -> None:
    env = {**INGEST, **change}
    with pytest.raises(GatewayConfigError) as caught:
        IngestConfig.from_env(env)
    assert str(caught.value).startswith(message)


FORWARD = {
    config.MARQUEZ_URL: "http://m:5000",
    config.QUEUE_URL: "https://sqs/q.fifo",
    config.DEAD_LETTER_QUEUE_URL: "d",
}


def test_forward_config_defaults_and_checks() -> None:
    assert ForwardConfig.from_env(FORWARD) == ForwardConfig("http://m:5000", 3, 10.0, "https://sqs/q.fifo", "d")
    env = {
        **FORWARD,
        config.MARQUEZ_URL: "https://m",
        config.FORWARD_RETRIES: "0",
        config.FORWARD_TIMEOUT_SECONDS: "2.5",
    }
    assert ForwardConfig.from_env(env) == ForwardConfig("https://m", 0, 2.5, "https://sqs/q.fifo", "d")
    with pytest.raises(GatewayConfigError, match="FORWARD_RETRIES='-1' is below 0"):
        ForwardConfig.from_env({**env, config.FORWARD_RETRIES: "-1"})
    with pytest.raises(GatewayConfigError, match="MARQUEZ_URL is not set"):
        ForwardConfig.from_env({})


@pytest.mark.parametrize("missing", [config.QUEUE_URL, config.DEAD_LETTER_QUEUE_URL])
def test_the_forwarder_needs_both_queues(missing: str) -> None:
    """Without them it could neither dead-letter a refused event nor delay a redelivery: it refuses to start."""
    with pytest.raises(GatewayConfigError) as caught:
        ForwardConfig.from_env({**FORWARD, missing: " "})
    assert str(caught.value) == f"environment variable {missing} is not set"


def test_every_variable_is_listed_once_per_function() -> None:
    for names in (config.INGEST_ENV, config.FORWARD_ENV):
        assert len(set(names)) == len(names)
        assert all(getattr(config, name) == name for name in names)
    # Only the queue's URL is common to both (the ingest sends to it, the forwarder delays redeliveries on it).
    assert set(config.INGEST_ENV) & set(config.FORWARD_ENV) == {config.QUEUE_URL}


def test_redelivery_doubles_from_the_base_up_to_the_cap() -> None:
    delays = [config.redelivery_delay(n) for n in range(1, 9)]
    assert delays == [30, 60, 120, 240, 480, 900, 900, 900]
    assert config.redelivery_delay(0) == 30  # an unknown count is a first receive
    assert config.redelivery_delay(10_000) == config.REDELIVERY_CAP_SECONDS  # no huge powers of two


@pytest.mark.parametrize(("hours", "receives"), [(1, 8), (4, 20), (72, 292)])
def test_receives_to_outlast_an_outage(hours: int, receives: int) -> None:
    """The dead-letter queue is reached only after the redelivery delays add up to the outage."""
    seconds = hours * 3600
    assert config.receives_to_outlast(seconds) == receives
    waited = sum(config.redelivery_delay(n) for n in range(1, receives + 1))
    assert waited >= seconds > waited - config.redelivery_delay(receives)
    assert config.receives_to_outlast(0) == 1
