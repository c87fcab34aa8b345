"""Forward: post a batch of queued events to Marquez in queue order; report what must come back.

Guarantees (standard library only; the SQS FIFO queue and Lambda do the rest):

* ordered per run: SQS FIFO hands out one group (one run, or the parent run of its children)
  in order, and :func:`forward_batch` posts the records in that order; when an event still fails
  after its retries, every later event of its group in the batch is reported failed without
  being posted, so nothing of that run overtakes it; other groups go on;
* bounded retries: 5xx, 408, 429 and network errors are retried ``retries`` times with
  exponential backoff (an injected ``sleep``), never past the ``deadline`` (the Lambda's own);
  any other status (a 4xx: Marquez will never take the event) is not retried;
* an event Marquez refuses for good (``permanent``) goes to the caller's ``reject`` (the Lambda:
  straight to the dead-letter queue, :func:`dead_letter_message`); once it took the event, it is
  ``rejected``: handled, so the later events of its run go on instead of waiting behind it through
  every redelivery. Without ``reject``, or when it fails, it is a failure like the others;
* the failed records are the Lambda partial batch response (``ReportBatchItemFailures``):
  SQS delivers them again (their group is held until then) and, after the queue's
  ``maxReceiveCount``, moves them to the dead-letter queue; the delivered and rejected ones are
  deleted. Deduplication (SQS's 5-minute window, by content hash) happened at ingest; delivery to
  Marquez is at least once (a POST that timed out may have landed and is sent again).
"""

from __future__ import annotations

import hashlib
import http.client
import time
import urllib.error
import urllib.request
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field, replace
from typing import Any

from emr_lineage.errors import network_reason, reason_of
from emr_lineage.marquez.api import LINEAGE_ENDPOINT, base_url
from emr_lineage.settings.limits import SQS_MAX_MESSAGE_BYTES

# One event -> (Marquez's HTTP status, its reason on one line, "" when none); raises OSError or
# HTTPException on network errors.
Post = Callable[[bytes], tuple[int, str]]

DELIVERED, RETRIED_OUT, PERMANENT, BLOCKED, OUT_OF_TIME = "delivered", "failed", "permanent", "blocked", "out-of-time"
REJECTED = "rejected"  # permanent, and the caller's reject took it (the dead-letter queue): handled
HANDLED = frozenset({DELIVERED, REJECTED})
RETRYABLE_STATUSES = frozenset({408, 429})
NETWORK_ERRORS = (OSError, http.client.HTTPException)  # URLError, timeouts, resets, bad replies


def retryable(status: int) -> bool:
    """5xx, 408 and 429 may succeed later; 2xx is done; anything else never will."""
    return status >= 500 or status in RETRYABLE_STATUSES


@dataclass(frozen=True)
class Outcome:
    """What became of one record: ``outcome`` is delivered, failed (retries used up), permanent
    (a 4xx), rejected (a 4xx the caller's ``reject`` took), blocked (an earlier record of its group
    failed) or out-of-time. ``status`` is Marquez's last HTTP status (None: no answer)."""

    message_id: str
    group_id: str
    outcome: str
    attempts: int
    detail: str = ""
    status: int | None = None


# The caller's hand-off of an event Marquez refuses for good: True once it holds it (e.g. the
# dead-letter queue has it), False to leave it a failure. Arguments: the SQS record and its outcome.
Reject = Callable[[Mapping[str, Any], Outcome], bool]


@dataclass
class BatchResult:
    outcomes: list[Outcome] = field(default_factory=list)

    @property
    def failed_ids(self) -> list[str]:
        """What SQS must deliver again: everything neither delivered nor rejected."""
        return [o.message_id for o in self.outcomes if o.outcome not in HANDLED]

    @property
    def rejected(self) -> list[Outcome]:
        """The events Marquez refused for good that ``reject`` took (they are not redelivered)."""
        return [o for o in self.outcomes if o.outcome == REJECTED]

    @property
    def response(self) -> dict[str, list[dict[str, str]]]:
        """The Lambda partial batch response: ``{"batchItemFailures": [{"itemIdentifier": id}, ...]}``."""
        return {"batchItemFailures": [{"itemIdentifier": message_id} for message_id in self.failed_ids]}


def _group(record: Mapping[str, Any]) -> str:
    attributes = record.get("attributes") or {}
    return str(attributes.get("MessageGroupId") or "")


def _body(record: Mapping[str, Any]) -> bytes:
    body = record.get("body")
    return body.encode("utf-8") if isinstance(body, str) else bytes(body or b"")


def receive_count(record: Mapping[str, Any]) -> int:
    """How many times SQS has handed out the record (its ``ApproximateReceiveCount``; 1 if unknown)."""
    try:
        return max(1, int((record.get("attributes") or {}).get("ApproximateReceiveCount", 1)))
    except (TypeError, ValueError):
        return 1


# Message attributes a dead-lettered event carries (what Marquez answered). Their name, data type
# and value count toward the message's size
# (https://docs.aws.amazon.com/AWSSimpleQueueService/latest/APIReference/API_MessageAttributeValue.html).
STATUS_ATTRIBUTE, DETAIL_ATTRIBUTE, MESSAGE_ID_ATTRIBUTE = "marquez-status", "marquez-detail", "gateway-message-id"
MAX_DETAIL_CHARS = 256


def dead_letter_message(
    record: Mapping[str, Any], outcome: Outcome, *, max_bytes: int = SQS_MAX_MESSAGE_BYTES
) -> dict[str, Any]:
    """``SendMessage`` arguments (all but ``QueueUrl``) that put a refused record on the FIFO dead-letter queue.

    Same body and message group (a redrive puts it back into its run); a deduplication id of this
    receive (a hash of its receipt handle: a retried send within the receive is stored once, a later
    receive of the same event, e.g. after a redrive, is a new rejection and kept); attributes
    recording what Marquez answered, left off when they would push the message over ``max_bytes``.
    """
    body = _body(record).decode("utf-8")
    token = str(record.get("receiptHandle") or record["messageId"])
    attributes: dict[str, dict[str, str]] = {
        MESSAGE_ID_ATTRIBUTE: {"DataType": "String", "StringValue": str(record["messageId"])},
        DETAIL_ATTRIBUTE: {"DataType": "String", "StringValue": (outcome.detail or outcome.outcome)[:MAX_DETAIL_CHARS]},
    }
    if outcome.status is not None:
        attributes[STATUS_ATTRIBUTE] = {"DataType": "Number", "StringValue": str(outcome.status)}
    size = len(body.encode("utf-8")) + sum(
        len(name) + len(value["DataType"]) + len(value["StringValue"].encode("utf-8"))
        for name, value in attributes.items()
    )
    message: dict[str, Any] = {
        "MessageBody": body,
        "MessageGroupId": _group(record),
        "MessageDeduplicationId": hashlib.sha256(token.encode("utf-8")).hexdigest(),
    }
    if size <= max_bytes:
        message["MessageAttributes"] = attributes
    return message


def _deliver(
    body: bytes,
    post: Post,
    *,
    retries: int,
    backoff: float,
    max_backoff: float,
    sleep: Callable[[float], None],
    clock: Callable[[], float],
    deadline: float | None,
) -> tuple[str, int, str, int | None]:
    """Post one event until it is delivered, fails for good or runs out of tries:
    (outcome, attempts, detail, last status)."""
    attempt = 0
    while True:
        attempt += 1
        status: int | None = None
        try:
            status, reason = post(body)
        except NETWORK_ERRORS as exc:
            detail = f"no answer: {network_reason(exc)}"
        else:
            if 200 <= status < 300:
                return DELIVERED, attempt, str(status), status
            detail = f"HTTP {status}: {reason}" if reason else f"HTTP {status}"
            if not retryable(status):
                return PERMANENT, attempt, detail, status
        if attempt > retries:
            return RETRIED_OUT, attempt, detail, status
        delay = min(max_backoff, backoff * 2 ** (attempt - 1))
        if deadline is not None and clock() + delay >= deadline:
            return OUT_OF_TIME, attempt, detail, status
        sleep(delay)


def forward_batch(
    records: Iterable[Mapping[str, Any]],
    post: Post,
    *,
    retries: int,
    backoff: float = 0.5,
    max_backoff: float = 8.0,
    sleep: Callable[[float], None] = time.sleep,
    clock: Callable[[], float] = time.monotonic,
    deadline: float | None = None,
    reject: Reject | None = None,
) -> BatchResult:
    """Post SQS records (``messageId``, ``body``, ``attributes.MessageGroupId``) in order.

    A record that is neither delivered nor rejected blocks the later records of its group; at
    ``deadline`` (a ``clock()`` value) the records not yet posted are reported failed, unposted.
    ``reject`` is called, in order, for each record Marquez refuses for good.
    """
    result = BatchResult()
    blocked: set[str] = set()
    for record in records:
        message_id, group = str(record["messageId"]), _group(record)
        if group in blocked:
            result.outcomes.append(Outcome(message_id, group, BLOCKED, 0, "an earlier event of its run failed"))
            continue
        if deadline is not None and clock() >= deadline:
            result.outcomes.append(Outcome(message_id, group, OUT_OF_TIME, 0, "no time left"))
            blocked.add(group)
            continue
        outcome, attempts, detail, status = _deliver(
            _body(record),
            post,
            retries=retries,
            backoff=backoff,
            max_backoff=max_backoff,
            sleep=sleep,
            clock=clock,
            deadline=deadline,
        )
        done = Outcome(message_id, group, outcome, attempts, detail, status)
        if outcome == PERMANENT and reject is not None and reject(record, done):
            done = replace(done, outcome=REJECTED)
        result.outcomes.append(done)
        if done.outcome not in HANDLED:
            blocked.add(group)
    return result


class _NoRedirect(urllib.request.HTTPRedirectHandler):
    def redirect_request(self, *args: Any, **kwargs: Any) -> None:
        return None  # a 3xx is answered as its status: Marquez's lineage endpoint never redirects


def http_post(url: str, *, timeout: float) -> Post:
    """A :data:`Post` to Marquez's LINEAGE_ENDPOINT under ``url`` (its base URL, with or without
    ``/api/v1``; JSON, urllib, no redirects, no proxy)."""
    endpoint = base_url(url) + LINEAGE_ENDPOINT
    opener = urllib.request.build_opener(urllib.request.ProxyHandler({}), _NoRedirect())

    def post(body: bytes) -> tuple[int, str]:
        request = urllib.request.Request(
            endpoint, data=body, method="POST", headers={"Content-Type": "application/json"}
        )
        try:
            with opener.open(request, timeout=timeout) as response:
                response.read(65536)
                return int(response.status), ""
        except urllib.error.HTTPError as exc:  # a status outside 2xx: an answer, not a network error
            with exc:
                return int(exc.code), reason_of(exc.read(65536))

    return post
