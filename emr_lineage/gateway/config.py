"""The lineage gateway's settings: the environment variables of its two Lambdas, in one place.

The CDK stack imports the names (and the handler paths and asset files) from here, so the
stack and the Lambdas cannot disagree on a spelling.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass, field

from emr_lineage.aws.archive import is_account_id
from emr_lineage.errors import EmrLineageError
from emr_lineage.marquez.api import base_url
from emr_lineage.settings.limits import ALB_LAMBDA_MAX_BODY_BYTES, DEFAULT_MAX_EVENT_BYTES

# --- ingest Lambda (ALB target) ---------------------------------------------------------------
ARCHIVE_BUCKET = "ARCHIVE_BUCKET"  # S3 bucket of the raw archive (required)
QUEUE_URL = "QUEUE_URL"  # URL of the SQS FIFO queue (required)
API_KEY_SECRET_ARN = "API_KEY_SECRET_ARN"  # Secrets Manager secret holding the bearer key (required)
MAX_EVENT_BYTES = "MAX_EVENT_BYTES"  # largest accepted body, raw and canonical (default 1 MiB)
# The gateway's AWS account (the stack's AWS::AccountId, required): the source its own key's events are archived under.
GATEWAY_ACCOUNT = "GATEWAY_ACCOUNT"
# A JSON object, spoke account -> the ARN of the secret holding that account's key (default {}: no spokes).
SPOKE_KEY_SECRETS = "SPOKE_KEY_SECRETS"

# --- forward Lambda (SQS FIFO event source, ReportBatchItemFailures) ----------------------------
MARQUEZ_URL = "MARQUEZ_URL"  # Marquez API base URL, e.g. http://marquez.internal:5000 (required)
FORWARD_RETRIES = "FORWARD_RETRIES"  # retries of one event after its first attempt (default 3)
FORWARD_TIMEOUT_SECONDS = "FORWARD_TIMEOUT_SECONDS"  # timeout of one POST to Marquez (default 10)
# QUEUE_URL too (the same queue: the forwarder delays the redelivery of what it could not deliver).
DEAD_LETTER_QUEUE_URL = "DEAD_LETTER_QUEUE_URL"  # where events Marquez refuses for good go (required)

INGEST_ENV = (ARCHIVE_BUCKET, QUEUE_URL, API_KEY_SECRET_ARN, MAX_EVENT_BYTES, GATEWAY_ACCOUNT, SPOKE_KEY_SECRETS)
FORWARD_ENV = (MARQUEZ_URL, FORWARD_RETRIES, FORWARD_TIMEOUT_SECONDS, QUEUE_URL, DEAD_LETTER_QUEUE_URL)

# A batch's body once decompressed (its events are each bound by the event limit). The load balancer
# hands the Lambda at most ALB_LAMBDA_MAX_BODY_BYTES as sent; gzip makes JSON 5 to 20 times smaller.
MAX_BATCH_BYTES = 8 * ALB_LAMBDA_MAX_BODY_BYTES
# Events in one batch: each is queued in order, one SQS send after the other, within the ingest
# Lambda's timeout; and the answer lists each, within the 1 MB an ALB takes from a Lambda
# (https://docs.aws.amazon.com/elasticloadbalancing/latest/application/lambda-functions.html).
MAX_BATCH_EVENTS = 100
DEFAULT_FORWARD_RETRIES = 3
DEFAULT_FORWARD_TIMEOUT_SECONDS = 10.0

# Redelivery of an event the forwarder could not deliver (retries used up, blocked behind one, out of
# time): it sets the record's visibility to this backoff from its receive count, instead of leaving
# it invisible for the queue's whole visibility timeout. The stack derives the queue's
# maxReceiveCount from it (receives_to_outlast), so these two numbers are the one place to change.
REDELIVERY_BASE_SECONDS = 30
REDELIVERY_CAP_SECONDS = 900

# The secret is the key itself, or a JSON object holding it under this field.
SECRET_JSON_FIELD = "apiKey"
# The ingest accepts the secret's value under both labels (Secrets Manager's staging labels: the value
# clients get now, and the one before the last change) and reads them again after this long.
CURRENT, PREVIOUS = "AWSCURRENT", "AWSPREVIOUS"
KEY_CACHE_SECONDS = 300.0

# Lambda handler strings, and the files of emr_lineage the asset needs besides emr_lineage/gateway/.
INGEST_HANDLER = "emr_lineage.gateway.aws_lambda.ingest_handler"
FORWARD_HANDLER = "emr_lineage.gateway.aws_lambda.forward_handler"
ASSET_FILES = (
    "emr_lineage/__init__.py",
    "emr_lineage/errors.py",
    "emr_lineage/aws/__init__.py",
    "emr_lineage/aws/archive.py",
    "emr_lineage/aws/session.py",
    "emr_lineage/lineage/__init__.py",
    # A body of one event checked as every door checks it: the ingest's checks, the archive's readers' too.
    "emr_lineage/lineage/door/__init__.py",
    "emr_lineage/lineage/door/body.py",
    "emr_lineage/lineage/door/event.py",
    "emr_lineage/lineage/door/one_event.py",
    "emr_lineage/lineage/door/verdict.py",
    "emr_lineage/lineage/event_json.py",
    "emr_lineage/lineage/event_rule.py",
    "emr_lineage/lineage/naming.py",
    "emr_lineage/lineage/times.py",
    "emr_lineage/marquez/__init__.py",
    "emr_lineage/marquez/api.py",
    # AWS's limits (standard library only): the largest SQS message, written once.
    "emr_lineage/settings/__init__.py",
    "emr_lineage/settings/limits.py",
    # The readers' event checks, so that the ingest accepts exactly what they read.
    "emr_lineage/lineage/schemas/__init__.py",
    "emr_lineage/lineage/schemas/checks.py",
    "emr_lineage/lineage/schemas/compiled.py",
    "emr_lineage/lineage/schemas/rule_schema.py",
    "emr_lineage/lineage/schemas/store.py",
)
# What else the asset holds: the pinned OpenLineage schemas in this folder (the ingest's schema
# directory, beside the code in $LAMBDA_TASK_ROOT), and the distributions the event checks import
# beside boto3, installed for the Lambda's Python and architecture (stacks/gateway/packages.py).
SCHEMA_ASSET_DIR = "openlineage-spec"
LAMBDA_PYTHON = "3.13"
LAMBDA_ARCHITECTURE = "arm64"
ASSET_DISTRIBUTIONS = (
    "attrs",
    "jsonschema",
    "jsonschema-rs",
    "jsonschema-specifications",
    "referencing",
    "rfc3339-validator",
    "rpds-py",
    "six",  # rfc3339-validator's
    "typing-extensions",
)


def redelivery_delay(receive_count: int) -> int:
    """Seconds until SQS hands out again a record received ``receive_count`` times (1 = first):
    ``REDELIVERY_BASE_SECONDS * 2**(n-1)``, at most ``REDELIVERY_CAP_SECONDS``."""
    doublings = max(receive_count, 1) - 1
    if doublings >= REDELIVERY_CAP_SECONDS.bit_length():  # past the cap already (and no huge powers)
        return REDELIVERY_CAP_SECONDS
    return min(REDELIVERY_CAP_SECONDS, REDELIVERY_BASE_SECONDS * 2**doublings)


def receives_to_outlast(seconds: int) -> int:
    """The fewest receives whose redelivery delays add up to ``seconds``: the queue's maxReceiveCount
    that moves an event to the dead-letter queue only after an outage that long (Marquez down the
    whole time; each receive's own forwarding time comes on top)."""
    receives, waited = 0, 0
    while waited < seconds:
        receives += 1
        waited += redelivery_delay(receives)
    return max(receives, 1)


class GatewayConfigError(EmrLineageError):
    """A missing or unusable environment variable of a gateway Lambda (one line, names the variable)."""


def _required(env: Mapping[str, str], name: str) -> str:
    value = env.get(name, "").strip()
    if not value:
        raise GatewayConfigError(f"environment variable {name} is not set")
    return value


def _account(value: str, name: str) -> str:
    if not is_account_id(value):
        raise GatewayConfigError(f"environment variable {name}: {value!r} is not an AWS account id (12 digits)")
    return value


def _spoke_secrets(env: Mapping[str, str]) -> dict[str, str]:
    """``SPOKE_KEY_SECRETS``: account -> secret ARN ({} when unset)."""
    text = env.get(SPOKE_KEY_SECRETS, "").strip()
    try:
        parsed = json.loads(text) if text else {}
    except ValueError:
        parsed = None
    if not isinstance(parsed, dict) or not all(isinstance(v, str) and v.strip() for v in parsed.values()):
        raise GatewayConfigError(f"environment variable {SPOKE_KEY_SECRETS} is not a JSON object of account -> ARN")
    return {_account(account, SPOKE_KEY_SECRETS): arn.strip() for account, arn in parsed.items()}


def _number(env: Mapping[str, str], name: str, default: float, kind: type, minimum: float) -> float:
    text = env.get(name, "").strip()
    if not text:
        return default
    try:
        value = kind(text)
    except ValueError:
        raise GatewayConfigError(f"environment variable {name}={text!r} is not a {kind.__name__}") from None
    if value < minimum:
        raise GatewayConfigError(f"environment variable {name}={text!r} is below {minimum}")
    return value


@dataclass(frozen=True)
class IngestConfig:
    bucket: str
    queue_url: str
    secret_arn: str
    max_bytes: int
    account: str  # the gateway's: its own key's events come from it
    spoke_secrets: Mapping[str, str] = field(default_factory=dict)  # spoke account -> its key's secret ARN

    @classmethod
    def from_env(cls, env: Mapping[str, str]) -> IngestConfig:
        return cls(
            bucket=_required(env, ARCHIVE_BUCKET),
            queue_url=_required(env, QUEUE_URL),
            secret_arn=_required(env, API_KEY_SECRET_ARN),
            max_bytes=int(_number(env, MAX_EVENT_BYTES, DEFAULT_MAX_EVENT_BYTES, int, 1)),
            account=_account(_required(env, GATEWAY_ACCOUNT), GATEWAY_ACCOUNT),
            spoke_secrets=_spoke_secrets(env),
        )


@dataclass(frozen=True)
class ForwardConfig:
    marquez_url: str
    retries: int
    timeout: float
    queue_url: str
    dead_letter_queue_url: str

    @classmethod
    def from_env(cls, env: Mapping[str, str]) -> ForwardConfig:
        try:
            url = base_url(_required(env, MARQUEZ_URL))
        except ValueError as exc:
            raise GatewayConfigError(f"environment variable {MARQUEZ_URL}: {exc}") from None
        return cls(
            marquez_url=url,
            retries=int(_number(env, FORWARD_RETRIES, DEFAULT_FORWARD_RETRIES, int, 0)),
            timeout=float(_number(env, FORWARD_TIMEOUT_SECONDS, DEFAULT_FORWARD_TIMEOUT_SECONDS, float, 0.1)),
            queue_url=_required(env, QUEUE_URL),
            dead_letter_queue_url=_required(env, DEAD_LETTER_QUEUE_URL),
        )


def key_in(secret: str, secret_arn: str) -> str:
    """The bearer key a secret string holds: the string, or its ``apiKey`` field when it is a JSON object."""
    try:
        parsed = json.loads(secret)
    except ValueError:
        parsed = None
    if isinstance(parsed, dict):
        secret = parsed.get(SECRET_JSON_FIELD)
        if not isinstance(secret, str):
            raise GatewayConfigError(f"secret {secret_arn} is a JSON object without a string {SECRET_JSON_FIELD!r}")
    if not secret.strip():
        raise GatewayConfigError(f"secret {secret_arn} is empty")
    return secret.strip()
