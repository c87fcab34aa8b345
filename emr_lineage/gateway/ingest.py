"""Ingest: check what a producer POSTs (one event, or a batch), archive each event's raw bytes, enqueue it.

Guarantees (a boto3 S3 and SQS client, and the readers' event checks):

* nothing unchecked goes on: a wrong or missing ``Authorization: Bearer <key>`` is 401 (compared
  in constant time, every key); with keys given as key -> AWS account (the Lambda's: the gateway's own
  key and each spoke account's), the key's account is the event's source, recorded in its archive key;
  a body over the limit, before or after gzip decompression
  (:mod:`~emr_lineage.lineage.door.body`), 413; a body that is not UTF-8 JSON, or an event that is not a
  RunEvent, JobEvent or DatasetEvent as Marquez takes them (:mod:`~emr_lineage.lineage.door.event`),
  400 with the reason on one line;
* ``POST`` :data:`~emr_lineage.marquez.api.LINEAGE_ENDPOINT` takes one event (201);
  :data:`~emr_lineage.marquez.api.LINEAGE_BATCH_ENDPOINT` a JSON array of them, each checked on
  its own, the answer saying which were stored and which not and why (:func:`batch_answer`);
* the archive keeps every event as it arrived, decompressed, on one line
  (:func:`~emr_lineage.aws.archive.archive_key`; a batch's events each as its own JSON text; see
  :func:`~emr_lineage.lineage.door.one_event.one_line_json`); the
  queue gets the canonical event (sorted keys, compact, ASCII) with MessageGroupId = its FIFO
  group (a run's root or parent run, or the run; a static event's job or dataset), so the events
  of one run, and of an application with its actions, reach Marquez in order, and
  MessageDeduplicationId = the SHA-256 of the canonical event, so SQS FIFO drops a resent event
  within its 5-minute deduplication window;
* 201 (200 for a batch) only once both the archive and the queue hold the event; an AWS failure
  is 503 and the client retries: both steps are idempotent (same key, same deduplication id).

The archive's key layout: :mod:`emr_lineage.aws.archive`.
"""

from __future__ import annotations

import datetime as dt
import hmac
import json
from collections.abc import Callable, Collection, Mapping
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from typing import Any

from botocore.exceptions import BotoCoreError, ClientError

from emr_lineage.aws.archive import archive_key
from emr_lineage.errors import json_type
from emr_lineage.gateway.config import MAX_BATCH_EVENTS
from emr_lineage.lineage.door.body import decoded, header, parsed_batch
from emr_lineage.lineage.door.event import CheckedEvent, check_event
from emr_lineage.lineage.door.one_event import check_body, one_line_json
from emr_lineage.lineage.door.verdict import Rejected, one_line
from emr_lineage.lineage.schemas.checks import Schemas
from emr_lineage.marquez.api import LINEAGE_BATCH_ENDPOINT, LINEAGE_ENDPOINT

Clock = Callable[[], dt.datetime]
# SQS FIFO drops a message whose deduplication id it saw in the last 5 minutes
# (https://docs.aws.amazon.com/AWSSimpleQueueService/latest/SQSDeveloperGuide/using-messagededuplicationid-property.html).
DEDUP_WINDOW = dt.timedelta(minutes=5)
_RECENT_KEPT = 10_000  # deduplication ids one Ingestor remembers (a Lambda container, a local gateway)
ARCHIVE_THREADS = 8  # a batch's archive puts at once


def utc_now() -> dt.datetime:
    return dt.datetime.now(dt.UTC)


@dataclass(frozen=True)
class Accepted:
    """A checked event and where its raw bytes go in the archive."""

    checked: CheckedEvent
    raw: bytes  # what the archive keeps: the event as it arrived (decompressed, on one line)
    archive_key: str

    @property
    def event(self) -> dict[str, Any]:
        return self.checked.event

    @property
    def canonical(self) -> bytes:
        return self.checked.canonical

    @property
    def dedup_id(self) -> str:
        return self.checked.dedup_id

    @property
    def group_id(self) -> str:
        return self.checked.group_id

    @property
    def run_id(self) -> str | None:
        return self.checked.run_id

    def answer(self, **extra: Any) -> dict[str, Any]:
        """What the client is told about it."""
        ids = {"kind": self.checked.kind, "groupId": self.checked.group_id, "dedupId": self.checked.dedup_id}
        if self.checked.run_id:
            ids["runId"] = self.checked.run_id
        return {**ids, **extra}


# --- the pieces ---------------------------------------------------------------------------------


def _matches(headers: Mapping[str, str] | None, api_keys: Collection[str]) -> list[bool]:
    """For each of ``api_keys`` in order, whether ``Authorization: Bearer <key>`` carries it (names and
    scheme case-insensitive). An empty key matches nothing: a key never set must not open the gateway."""
    value = header(headers, "authorization")
    scheme, _, token = (value or "").strip().partition(" ")
    if not value or scheme.lower() != "bearer":
        return [False] * len(api_keys)
    sent = token.strip().encode("utf-8")
    # Every key is compared (constant time each), so the answer's timing does not tell which matched.
    return [hmac.compare_digest(sent, key.encode("utf-8")) and bool(key) for key in api_keys]


def authorized(headers: Mapping[str, str] | None, api_keys: Collection[str]) -> bool:
    """Whether ``Authorization: Bearer <key>`` carries one of ``api_keys``. Several keys: the current
    and the previous one, during a rotation; and each spoke account's."""
    return any(_matches(headers, api_keys))


def key_account(headers: Mapping[str, str] | None, api_keys: Mapping[str, str]) -> str | None:
    """The account whose key ``Authorization: Bearer <key>`` carries (``api_keys``: key -> account),
    or None when it carries none of them."""
    matches = _matches(headers, api_keys)
    return next((account for account, hit in zip(api_keys.values(), matches, strict=True) if hit), None)


# --- the check --------------------------------------------------------------------------------


def endpoint(path: str | None) -> str | None:
    """The lineage endpoint a request path names (a trailing slash and a query allowed), or None."""
    clean = (path or "").split("?", 1)[0].rstrip("/")
    return clean if clean in (LINEAGE_ENDPOINT, LINEAGE_BATCH_ENDPOINT) else None


def _accepted(
    checked: CheckedEvent | Rejected, raw: bytes, received: dt.datetime, account: str | None
) -> Accepted | Rejected:
    if isinstance(checked, Rejected):
        return checked
    key = archive_key(received, checked.group_id, checked.event_time, checked.dedup_id, account)
    return Accepted(checked=checked, raw=one_line_json(raw), archive_key=key)


_WRONG_KEY = Rejected(401, "missing or wrong Authorization: Bearer <key>")


def _sender(headers: Mapping[str, str] | None, api_keys: Collection[str] | None) -> Rejected | str | None:
    """401 unless no key is required (``api_keys`` None) or the request carries one of ``api_keys``;
    else the account its key belongs to (``api_keys`` a mapping key -> account), or None (no accounts)."""
    if api_keys is None:
        return None
    if isinstance(api_keys, Mapping):
        return key_account(headers, api_keys) or _WRONG_KEY
    return None if authorized(headers, api_keys) else _WRONG_KEY


def check_request(
    headers: Mapping[str, str] | None,
    body: bytes,
    *,
    api_keys: Collection[str] | None,
    max_bytes: int,
    clock: Clock = utc_now,
    schemas: Schemas | None = None,
) -> Accepted | Rejected:
    """Check one request of one event (key, then size, then shape); :class:`Accepted` holds what to store.

    ``api_keys`` None means no key is required (a local gateway); the Lambda always passes its keys,
    as a mapping key -> the AWS account whose events the key brings (recorded in the archive key).
    ``max_bytes`` and ``schemas``: :func:`~emr_lineage.lineage.door.one_event.check_body`'s.
    """
    sender = _sender(headers, api_keys)
    if isinstance(sender, Rejected):
        return sender
    checked = check_body(headers, body, max_bytes=max_bytes, schemas=schemas)
    return checked if isinstance(checked, Rejected) else _accepted(*checked, received=clock(), account=sender)


def check_batch(
    headers: Mapping[str, str] | None,
    body: bytes,
    *,
    api_keys: Collection[str] | None,
    max_bytes: int,
    max_batch_bytes: int,
    clock: Clock = utc_now,
    schemas: Schemas | None = None,
) -> list[Accepted | Rejected] | Rejected:
    """Check a batch request (a JSON array of events): the request as a whole (key, size, an array),
    then each event on its own, in order. Each event's archived bytes are its JSON text as sent.
    ``api_keys``: :func:`check_request`'s."""
    sender = _sender(headers, api_keys)
    if isinstance(sender, Rejected):
        return sender
    data = decoded(headers, body, max_bytes=max_batch_bytes)
    events = data if isinstance(data, Rejected) else parsed_batch(data)
    if isinstance(events, Rejected):
        return events
    if not isinstance(events, list):
        return Rejected(400, f"a batch is a JSON array of events, not a JSON {json_type(events)}")
    if not events:
        return Rejected(400, "the batch is empty")
    if len(events) > MAX_BATCH_EVENTS:
        return Rejected(413, f"the batch has {len(events)} events; the limit is {MAX_BATCH_EVENTS}, send several")
    received = clock()
    checked: list[Accepted | Rejected] = []
    for value in events:
        if isinstance(value, Rejected):  # it broke the JSON rule: refused alone
            checked.append(value)
            continue
        raw = json.dumps(value, ensure_ascii=False, separators=(",", ":")).encode("utf-8")
        checked.append(_accepted(check_event(value, max_bytes=max_bytes, schemas=schemas), raw, received, sender))
    return checked


# --- the ingest step ----------------------------------------------------------------------------


def _aws_reason(step: str, exc: BotoCoreError | ClientError) -> str:
    code = exc.response.get("Error", {}).get("Code") if isinstance(exc, ClientError) else None
    detail = f"{code}: {exc}" if code else f"{type(exc).__name__}: {exc}"
    return one_line(f"{step} failed, retry later ({detail})")


def _refused(rejected: Rejected) -> tuple[int, dict[str, Any]]:
    return rejected.status, {"status": "rejected", "error": rejected.reason}


class Ingestor:
    """Check, archive (S3 put of the raw body), enqueue (SQS FIFO send): :meth:`answer` -> (status, body)."""

    def __init__(
        self,
        s3: Any,
        sqs: Any,
        *,
        bucket: str,
        queue_url: str,
        api_keys: Collection[str] | None,
        max_bytes: int,
        max_batch_bytes: int | None = None,
        clock: Clock = utc_now,
        schemas: Schemas | None = None,
    ) -> None:
        self.s3, self.sqs = s3, sqs
        self.schemas = schemas
        self.bucket, self.queue_url = bucket, queue_url
        self.api_keys, self.max_bytes, self.clock = api_keys, max_bytes, clock
        self.max_batch_bytes = max_batch_bytes or max_bytes
        # Deduplication ids this Ingestor stored, with when: a resend within SQS's window is answered
        # at once. SQS drops it anyway; this also holds where a stand-in forgets a deleted message's
        # id (moto_server keeps ids only while the message is queued).
        self._stored: dict[str, dt.datetime] = {}

    def _seen(self, dedup: str, now: dt.datetime) -> bool:
        stored = self._stored.get(dedup)
        return stored is not None and now - stored < DEDUP_WINDOW

    def _remember(self, dedup: str, now: dt.datetime) -> None:
        if len(self._stored) >= _RECENT_KEPT:
            self._stored = {d: t for d, t in self._stored.items() if now - t < DEDUP_WINDOW}
            if len(self._stored) >= _RECENT_KEPT:
                self._stored.clear()
        self._stored[dedup] = now

    def answer(self, path: str | None, headers: Mapping[str, str] | None, body: bytes) -> tuple[int, dict[str, Any]]:
        """The answer to a POST to ``path``: one event, a batch, or 404 for any other path."""
        which = endpoint(path)
        if which == LINEAGE_ENDPOINT:
            return self.handle(headers, body)
        if which == LINEAGE_BATCH_ENDPOINT:
            return self.handle_batch(headers, body)
        return 404, {"status": "rejected", "error": f"POST only to {LINEAGE_ENDPOINT} or {LINEAGE_BATCH_ENDPOINT}"}

    def _archive(self, accepted: Accepted) -> Rejected | None:
        try:
            # The bucket's default encryption (SSE-KMS) applies; the raw bytes, as received.
            self.s3.put_object(
                Bucket=self.bucket, Key=accepted.archive_key, Body=accepted.raw, ContentType="application/json"
            )
        except (BotoCoreError, ClientError) as exc:
            return Rejected(503, _aws_reason("archiving the event", exc))
        return None

    def _enqueue(self, accepted: Accepted) -> Rejected | None:
        try:
            self.sqs.send_message(
                QueueUrl=self.queue_url,
                MessageBody=accepted.canonical.decode("ascii"),
                MessageGroupId=accepted.group_id,
                MessageDeduplicationId=accepted.dedup_id,
            )
        except (BotoCoreError, ClientError) as exc:
            return Rejected(503, _aws_reason("queueing the event", exc))
        return None

    def _store(self, items: list[Accepted | Rejected]) -> list[dict[str, Any] | Rejected]:
        """Archive the new events (in parallel: their order does not matter there), then queue them
        in order; what each client is told, or a 503 when AWS failed (nothing lost: both steps are
        idempotent, the client sends it again). After a failure nothing more is queued: a later event
        of the same run must not get ahead of it."""
        now = self.clock()
        new = [i for i, item in enumerate(items) if isinstance(item, Accepted) and not self._seen(item.dedup_id, now)]
        with ThreadPoolExecutor(max_workers=max(1, min(ARCHIVE_THREADS, len(new)))) as pool:
            archived = dict(zip(new, pool.map(lambda i: self._archive(items[i]), new), strict=True))
        results: list[dict[str, Any] | Rejected] = []
        failed = False
        for index, item in enumerate(items):
            if isinstance(item, Rejected) or failed:
                results.append(item if isinstance(item, Rejected) else _NOT_STORED)
            elif index not in archived:
                results.append(item.answer(duplicate=True))
            elif problem := archived[index] or self._enqueue(item):
                failed = True
                results.append(problem)
            else:
                self._remember(item.dedup_id, now)
                results.append(item.answer())
        return results

    def handle(self, headers: Mapping[str, str] | None, body: bytes) -> tuple[int, dict[str, Any]]:
        """One event: 201 once archived and queued."""
        checked = check_request(
            headers, body, api_keys=self.api_keys, max_bytes=self.max_bytes, clock=self.clock, schemas=self.schemas
        )
        if isinstance(checked, Rejected):
            return _refused(checked)
        (stored,) = self._store([checked])
        if isinstance(stored, Rejected):
            return stored.status, {"status": "unavailable", "error": stored.reason}
        return 201, {"status": "accepted", **stored}

    def handle_batch(self, headers: Mapping[str, str] | None, body: bytes) -> tuple[int, dict[str, Any]]:
        """A batch: each event checked on its own, the accepted ones stored in order (see :func:`batch_answer`)."""
        checked = check_batch(
            headers,
            body,
            api_keys=self.api_keys,
            max_bytes=self.max_bytes,
            max_batch_bytes=self.max_batch_bytes,
            clock=self.clock,
            schemas=self.schemas,
        )
        if isinstance(checked, Rejected):
            return _refused(checked)
        return batch_answer(self._store(checked))


_NOT_STORED = Rejected(503, "not stored: an earlier event of the batch could not be; send the batch again")


def batch_answer(results: list[dict[str, Any] | Rejected]) -> tuple[int, dict[str, Any]]:
    """The answer to a batch, in the shape of the OpenLineage batch endpoint's proposal
    (https://github.com/OpenLineage/OpenLineage/pull/4109): ``status`` success, partial_success or
    failure; a ``summary`` of counts; ``failed_events`` (index, status, reason, retriable); and,
    ours, ``accepted`` (index and ids). HTTP 200 when every event was stored, 503 when one could not
    be for now (send the batch again: what was stored is deduplicated), 207 when the others were
    stored and some refused for good, else the first refusal's status."""
    accepted = [{"index": i, **r} for i, r in enumerate(results) if not isinstance(r, Rejected)]
    failed = [
        {"index": i, "status": r.status, "reason": r.reason, "retriable": r.retriable}
        for i, r in enumerate(results)
        if isinstance(r, Rejected)
    ]
    retriable = sum(f["retriable"] for f in failed)
    summary = {
        "received": len(results),
        "successful": len(accepted),
        "failed": len(failed),
        "retriable": retriable,
        "non_retriable": len(failed) - retriable,
    }
    status = "success" if not failed else "partial_success" if accepted else "failure"
    payload = {"status": status, "summary": summary, "accepted": accepted, "failed_events": failed}
    if not failed:
        return 200, payload
    if retriable:
        return 503, payload
    return (207 if accepted else failed[0]["status"]), payload
