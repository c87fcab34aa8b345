"""The gateway's two Lambda handlers: the ALB's ingest target and the SQS FIFO queue's forwarder.

* :func:`ingest_handler` (ALB target, ``POST /api/v1/lineage`` and ``/api/v1/lineage/batch``): the
  bearer keys come from the Secrets Manager secret named by ``API_KEY_SECRET_ARN`` (the gateway's
  own key: events from ``GATEWAY_ACCOUNT``) and from each spoke account's secret in
  ``SPOKE_KEY_SECRETS`` (events from that account): each secret's current and previous versions
  (so a rotation refuses no client that still holds the old key), read again every
  :data:`KEY_CACHE_SECONDS` (so a rotation reaches warm containers) (:func:`accepted_keys`);
  then :class:`~emr_lineage.gateway.ingest.Ingestor` archives and enqueues (201 once durable,
  401/413/400 for a bad request, 503 when AWS fails and the client should retry, 500 when the
  Lambda itself is misconfigured: nothing is accepted without a key).
* :func:`forward_handler` (SQS FIFO event source with ``ReportBatchItemFailures``):
  :func:`~emr_lineage.gateway.forward.forward_batch` to ``MARQUEZ_URL``, stopping in time
  before the Lambda's own timeout; an event Marquez refuses for good (a 4xx) is sent to
  ``DEAD_LETTER_QUEUE_URL`` at once (so the rest of its run goes on), and what it could not
  deliver comes back after :func:`~emr_lineage.gateway.config.redelivery_delay` (visibility
  changed on ``QUEUE_URL``), not after the queue's whole visibility timeout. The answer is the
  partial batch response.

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
from pathlib import Path
from typing import TYPE_CHECKING, Any

from botocore.config import Config
from botocore.exceptions import BotoCoreError, ClientError

from emr_lineage.aws.session import new_client
from emr_lineage.errors import EmrLineageError
from emr_lineage.gateway.config import (
    CURRENT,
    KEY_CACHE_SECONDS,
    MAX_BATCH_BYTES,
    PREVIOUS,
    SCHEMA_ASSET_DIR,
    ForwardConfig,
    GatewayConfigError,
    IngestConfig,
    key_in,
    redelivery_delay,
)
from emr_lineage.gateway.forward import (
    DELIVERED,
    Outcome,
    Reject,
    dead_letter_message,
    forward_batch,
    http_post,
    receive_count,
)

if TYPE_CHECKING:
    from emr_lineage.lineage.schemas.checks import Schemas

LOG = logging.getLogger("emr_lineage.gateway")
LOG.setLevel(logging.INFO)  # the Lambda runtime's root handler prints what reaches it

RETRY_LATER = {"Retry-After": "5"}  # seconds; both ingest steps are idempotent, so a retry is safe

_clients: dict[str, Any] = {}
_schemas: dict[str, Schemas] = {}
_api_keys: dict[str, tuple[float, tuple[str, ...]]] = {}  # secret ARN -> (read at, keys)
monotonic: Callable[[], float] = time.monotonic  # the key cache's clock (tests replace it)


def client(service: str, *, name: str | None = None, config: Config | None = None) -> Any:
    """The container's boto3 client of ``service`` (cached under ``name``, else the service), made on first use."""
    key = name or service
    if key not in _clients:
        _clients[key] = new_client(service, config=config)
    return _clients[key]


def reset() -> None:
    """Forget the cached clients, API key and schemas, as a new container would."""
    _clients.clear()
    _api_keys.clear()
    _schemas.clear()


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


# A spoke's secret that fails with one of these will not be readable on a retry either: a deploy or a
# put fixes it, so that spoke's key is refused (401) meanwhile, and the other accounts' keys still work.
LASTING_SECRET_ERRORS = frozenset(
    {"ResourceNotFoundException", "AccessDeniedException", "DecryptionFailure", "InvalidRequestException"}
)


def spoke_keys(account: str, secret_arn: str) -> tuple[str, ...]:
    """:func:`api_keys` of a spoke account's secret; none (logged, and cached as long) when its
    current value is not a key or the secret lastingly cannot be read. Other AWS errors raise."""
    try:
        return api_keys(secret_arn)
    except GatewayConfigError as exc:
        problem = str(exc)
    except ClientError as exc:
        if exc.response.get("Error", {}).get("Code") not in LASTING_SECRET_ERRORS:
            raise
        problem = f"{secret_arn}: {exc}"
    LOG.error("the key of spoke account %s is refused until its secret is fixed: %s", account, problem)
    _api_keys[secret_arn] = (monotonic(), ())
    return ()


def accepted_keys(config: IngestConfig) -> dict[str, str]:
    """Each key the ingest accepts -> the account whose events it brings: the gateway's own key's values
    (current and previous) -> the gateway's account, each spoke's -> that spoke. A value in two
    secrets is the gateway's, or the first spoke's."""
    owners = dict.fromkeys(api_keys(config.secret_arn), config.account)
    for account, secret_arn in config.spoke_secrets.items():
        for key in spoke_keys(account, secret_arn):
            owners.setdefault(key, account)
    return owners


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


def ingest_schemas() -> Schemas:
    """The OpenLineage schemas the asset carries beside the code (``$LAMBDA_TASK_ROOT``; elsewhere, the
    readers' schema directory), loaded once per container."""
    if not _schemas:
        from emr_lineage.lineage.schemas.checks import require_schemas  # the ingest's: not the forwarder's start

        root = os.environ.get("LAMBDA_TASK_ROOT")
        _schemas["loaded"] = require_schemas(Path(root) / SCHEMA_ASSET_DIR if root else None)
    return _schemas["loaded"]


def ingest_handler(event: dict[str, Any], context: Any) -> dict[str, Any]:
    from emr_lineage.gateway.ingest import Ingestor, utc_now  # the event checks load with the ingest only

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
        keys = accepted_keys(config)
        schemas = ingest_schemas()
    except EmrLineageError as exc:  # the settings, the gateway key's secret, the asset's schemas
        LOG.error("gateway misconfigured: %s", exc)
        return alb_response(500, {"status": "error", "error": "the gateway is misconfigured"}, multi_value=multi)
    except (BotoCoreError, ClientError) as exc:
        LOG.error("reading the API keys failed: %s", exc)
        payload = {"status": "unavailable", "error": "the gateway cannot read its key, retry later"}
        return alb_response(503, payload, multi_value=multi, headers=RETRY_LATER)
    ingestor = Ingestor(
        client("s3"),
        client("sqs"),
        bucket=config.bucket,
        queue_url=config.queue_url,
        api_keys=keys,
        max_bytes=config.max_bytes,
        max_batch_bytes=MAX_BATCH_BYTES,
        clock=utc_now,
        schemas=schemas,
    )
    status, payload = ingestor.answer(event.get("path"), _headers(event), body)
    LOG.info("ingest %s %s", status, json.dumps(payload, sort_keys=True))
    extra = {"WWW-Authenticate": "Bearer"} if status == 401 else RETRY_LATER if status == 503 else {}
    return alb_response(status, payload, multi_value=multi, headers=extra)


# --- SQS ------------------------------------------------------------------------------------------

SAFETY_SECONDS = 1.0  # stop this long (plus one POST's timeout and the SQS calls) before the Lambda's own timeout
# The forwarder's SQS calls (dead-letter sends, visibility changes) must not outlast its deadline:
# short timeouts, one retry (botocore's defaults are 60 s and 3 attempts).
SQS_CONNECT_SECONDS, SQS_READ_SECONDS, SQS_ATTEMPTS = 2, 3, 2
SQS_CALL_SECONDS = SQS_ATTEMPTS * (SQS_CONNECT_SECONDS + SQS_READ_SECONDS)  # the longest one call takes, about
FORWARD_SQS = Config(
    connect_timeout=SQS_CONNECT_SECONDS,
    read_timeout=SQS_READ_SECONDS,
    retries={"total_max_attempts": SQS_ATTEMPTS, "mode": "standard"},
)
VISIBILITY_BATCH = 10  # ChangeMessageVisibilityBatch's most entries


def forward_sqs() -> Any:
    return client("sqs", name="sqs-forward", config=FORWARD_SQS)


def dead_letter(queue_url: str) -> Reject:
    """A :data:`~emr_lineage.gateway.forward.Reject` that sends the record to the dead-letter queue.

    A send that fails leaves the event a failure (redelivered, and dead-lettered by SQS after the
    queue's maxReceiveCount): nothing is dropped.
    """

    def reject(record: dict[str, Any], outcome: Outcome) -> bool:
        try:
            forward_sqs().send_message(QueueUrl=queue_url, **dead_letter_message(record, outcome))
        except (BotoCoreError, ClientError) as exc:
            LOG.error("dead-lettering message %s failed, it stays a failure: %s", outcome.message_id, exc)
            return False
        return True

    return reject


def delay_redelivery(queue_url: str, records: list[dict[str, Any]], failed_ids: list[str]) -> None:
    """Make each failed record visible again after :func:`redelivery_delay` of its receive count.

    Without this it would wait the queue's whole visibility timeout (six times the function's).
    A failure here is logged, not raised: the record then waits that timeout, nothing is lost.
    """
    failed = set(failed_ids)
    entries = [
        {
            "Id": str(i),
            "ReceiptHandle": record["receiptHandle"],
            "VisibilityTimeout": redelivery_delay(receive_count(record)),
        }
        for i, record in enumerate(records)
        if str(record.get("messageId")) in failed and record.get("receiptHandle")
    ]
    for start in range(0, len(entries), VISIBILITY_BATCH):
        chunk = entries[start : start + VISIBILITY_BATCH]
        try:
            answer = forward_sqs().change_message_visibility_batch(QueueUrl=queue_url, Entries=chunk)
        except (BotoCoreError, ClientError) as exc:
            LOG.error("delaying the redelivery of %d message(s) failed: %s", len(chunk), exc)
            continue
        for failure in answer.get("Failed") or []:
            LOG.error("delaying the redelivery of entry %s failed: %s", failure.get("Id"), failure.get("Message"))


def forward_handler(event: dict[str, Any], context: Any) -> dict[str, list[dict[str, str]]]:
    """Forward the batch; a misconfiguration raises (the whole batch comes back, visibly failed)."""
    config = ForwardConfig.from_env(os.environ)
    records = event.get("Records") or []
    deadline = None
    remaining = getattr(context, "get_remaining_time_in_millis", None)
    if callable(remaining):
        # Room left for one POST, a dead-letter send and the visibility change after the last one.
        reserve = config.timeout + SAFETY_SECONDS + 2 * SQS_CALL_SECONDS
        deadline = time.monotonic() + remaining() / 1000 - reserve
    result = forward_batch(
        records,
        http_post(config.marquez_url, timeout=config.timeout),
        retries=config.retries,
        deadline=deadline,
        reject=dead_letter(config.dead_letter_queue_url),
    )
    for outcome in result.outcomes:
        if outcome.outcome != DELIVERED:
            LOG.warning(
                "forward %s message %s group %s after %d attempts: %s",
                outcome.outcome,
                outcome.message_id,
                outcome.group_id,
                outcome.attempts,
                outcome.detail,
            )
    delay_redelivery(config.queue_url, records, result.failed_ids)
    delivered = sum(o.outcome == DELIVERED for o in result.outcomes)
    LOG.info(
        "forward delivered %d, dead-lettered %d, to retry %d of %d",
        delivered,
        len(result.rejected),
        len(result.failed_ids),
        len(result.outcomes),
    )
    return result.response
