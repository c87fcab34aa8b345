"""The gateway's two Lambda handlers: the ALB's ingest target and the SQS FIFO queue's forwarder.

* :func:`ingest_handler` (ALB target, ``POST /api/v1/lineage``): the bearer keys come from the
  Secrets Manager secret named by ``API_KEY_SECRET_ARN``: its current and previous versions (so a
  rotation refuses no client that still holds the old key), read again every
  :data:`KEY_CACHE_SECONDS` (so a rotation reaches warm containers);
  then :class:`~emr_lineage.gateway.ingest.Ingestor` archives and enqueues (201 once durable,
  401/413/400 for a bad request, 503 when AWS fails and the client should retry, 500 when the
  Lambda itself is misconfigured: nothing is accepted without a key).
* :func:`forward_handler` (SQS FIFO event source with ``ReportBatchItemFailures``):
  :func:`~emr_lineage.gateway.forward.forward_batch` to ``MARQUEZ_URL``, stopping in time
  before the Lambda's own timeout; the answer is the partial batch response.

Environment variable names live in :mod:`emr_lineage.gateway.config`. boto3 clients are created
lazily, once per container (:func:`reset` forgets them and the keys: a new container, for tests).
"""

from __future__ import annotations

import base64
import binascii
import json
import logging
import os
import time
from collections.abc import Callable
from http import HTTPStatus
from typing import Any

import boto3
from botocore.exceptions import BotoCoreError, ClientError

from emr_lineage.gateway.config import SECRET_JSON_FIELD, ForwardConfig, GatewayConfigError, IngestConfig
from emr_lineage.gateway.forward import forward_batch, http_post
from emr_lineage.gateway.ingest import Ingestor, utc_now

LOG = logging.getLogger("emr_lineage.gateway")
LOG.setLevel(logging.INFO)  # the Lambda runtime's root handler prints what reaches it

RETRY_LATER = {"Retry-After": "5"}  # seconds; both ingest steps are idempotent, so a retry is safe
KEY_CACHE_SECONDS = 300.0
# Secrets Manager's staging labels: the value clients get now, and the one before the last change.
CURRENT, PREVIOUS = "AWSCURRENT", "AWSPREVIOUS"

_clients: dict[str, Any] = {}
_api_keys: dict[str, tuple[float, tuple[str, ...]]] = {}  # secret ARN -> (read at, keys)
monotonic: Callable[[], float] = time.monotonic  # the key cache's clock (tests replace it)


def client(service: str) -> Any:
    """The container's boto3 client of ``service``, created on first use."""
    if service not in _clients:
        _clients[service] = boto3.client(service)
    return _clients[service]


def reset() -> None:
    """Forget the cached clients and API key, as a new container would."""
    _clients.clear()
    _api_keys.clear()


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


def api_keys(secret_arn: str) -> tuple[str, ...]:
    """The keys the ingest accepts: the secret's current value, and its previous one when it has one.

    A previous value that no longer parses is skipped; a current one that does not is a
    :class:`GatewayConfigError`.
    """
    cached = _api_keys.get(secret_arn)
    if cached is not None and monotonic() - cached[0] < KEY_CACHE_SECONDS:
        return cached[1]
    secrets = client("secretsmanager")
    read_at = monotonic()
    keys = [
        key_in(
            secrets.get_secret_value(SecretId=secret_arn, VersionStage=CURRENT).get("SecretString") or "", secret_arn
        )
    ]
    try:
        previous = secrets.get_secret_value(SecretId=secret_arn, VersionStage=PREVIOUS).get("SecretString") or ""
        keys.append(key_in(previous, secret_arn))
    except GatewayConfigError:
        pass  # an unusable previous value: the current key alone
    except ClientError as exc:
        if exc.response.get("Error", {}).get("Code") != "ResourceNotFoundException":
            raise
        # No previous version: the secret was never changed.
    _api_keys[secret_arn] = (read_at, tuple(dict.fromkeys(keys)))
    return _api_keys[secret_arn][1]


# --- ALB ------------------------------------------------------------------------------------------


def _headers(event: dict[str, Any]) -> dict[str, str]:
    multi = event.get("multiValueHeaders")
    if isinstance(multi, dict):
        return {name.lower(): ", ".join(values or []) for name, values in multi.items()}
    return {name.lower(): value for name, value in (event.get("headers") or {}).items()}


def _body(event: dict[str, Any]) -> bytes:
    body = event.get("body") or ""
    if event.get("isBase64Encoded"):
        return base64.b64decode(body, validate=True)
    return body.encode("utf-8")


def alb_response(
    status: int, payload: dict[str, Any], *, multi_value: bool = False, headers: dict[str, str] | None = None
) -> dict[str, Any]:
    """The ALB Lambda target response (``multiValueHeaders`` when the target group has them on)."""
    all_headers = {"Content-Type": "application/json", **(headers or {})}
    response: dict[str, Any] = {
        "statusCode": status,
        "statusDescription": f"{status} {HTTPStatus(status).phrase}",
        "body": json.dumps(payload),
        "isBase64Encoded": False,
    }
    if multi_value:
        response["multiValueHeaders"] = {name: [value] for name, value in all_headers.items()}
    else:
        response["headers"] = all_headers
    return response


def ingest_handler(event: dict[str, Any], context: Any) -> dict[str, Any]:
    multi = isinstance(event.get("multiValueHeaders"), dict)
    if event.get("httpMethod", "POST") != "POST":
        payload = {"status": "rejected", "error": "only POST is accepted"}
        return alb_response(405, payload, multi_value=multi, headers={"Allow": "POST"})
    try:
        body = _body(event)
    except (binascii.Error, ValueError):
        return alb_response(400, {"status": "rejected", "error": "the body is not valid base64"}, multi_value=multi)
    try:
        config = IngestConfig.from_env(os.environ)
        keys = api_keys(config.secret_arn)
    except GatewayConfigError as exc:
        LOG.error("gateway misconfigured: %s", exc)
        return alb_response(500, {"status": "error", "error": "the gateway is misconfigured"}, multi_value=multi)
    except (BotoCoreError, ClientError) as exc:
        LOG.error("reading the API key failed: %s", exc)
        payload = {"status": "unavailable", "error": "the gateway cannot read its key, retry later"}
        return alb_response(503, payload, multi_value=multi, headers=RETRY_LATER)
    ingestor = Ingestor(
        client("s3"),
        client("sqs"),
        bucket=config.bucket,
        queue_url=config.queue_url,
        api_keys=keys,
        max_bytes=config.max_bytes,
        clock=utc_now,
    )
    status, payload = ingestor.handle(_headers(event), body)
    LOG.info("ingest %s %s", status, json.dumps(payload, sort_keys=True))
    extra = {"WWW-Authenticate": "Bearer"} if status == 401 else RETRY_LATER if status == 503 else {}
    return alb_response(status, payload, multi_value=multi, headers=extra)


# --- SQS ------------------------------------------------------------------------------------------

SAFETY_SECONDS = 1.0  # stop this long (plus one POST's timeout) before the Lambda's own timeout


def forward_handler(event: dict[str, Any], context: Any) -> dict[str, list[dict[str, str]]]:
    """Forward the batch; a misconfiguration raises (the whole batch comes back, visibly failed)."""
    config = ForwardConfig.from_env(os.environ)
    deadline = None
    remaining = getattr(context, "get_remaining_time_in_millis", None)
    if callable(remaining):
        deadline = time.monotonic() + remaining() / 1000 - config.timeout - SAFETY_SECONDS
    result = forward_batch(
        event.get("Records") or [],
        http_post(config.marquez_url, timeout=config.timeout),
        retries=config.retries,
        deadline=deadline,
    )
    for outcome in result.outcomes:
        if outcome.outcome != "delivered":
            LOG.warning(
                "forward %s message %s group %s after %d attempts: %s",
                outcome.outcome,
                outcome.message_id,
                outcome.group_id,
                outcome.attempts,
                outcome.detail,
            )
    LOG.info("forward delivered %d of %d", len(result.outcomes) - len(result.failed_ids), len(result.outcomes))
    return result.response
