"""Ingest: check one POSTed OpenLineage event, archive its raw body, enqueue it for Marquez.

Guarantees (standard library + a boto3 S3 and SQS client):

* nothing unchecked goes on: a wrong or missing ``Authorization: Bearer <key>`` is 401 (compared
  in constant time), a body over the limit 413, a body that is not a UTF-8 JSON object with
  ``eventType``, ``eventTime``, ``run.runId`` (a UUID) and ``job.namespace``/``job.name`` 400 with
  the reason on one line;
* dataset namespaces are normalised by :func:`emr_lineage.lineage.naming.canonical_namespace`, the
  function the graph tools use (``s3a://b`` and ``s3n://b`` become ``s3://b``);
* the archive keeps every raw body as it arrived (:func:`archive_key`); the queue gets the
  canonical event (sorted keys, compact, ASCII) with MessageGroupId = the run's root run (the
  parent facet's ``root``, else its parent run, else the run itself), so the events of one run,
  and of an application with its actions, reach Marquez in order, and
  MessageDeduplicationId = the SHA-256 of the canonical event, so SQS FIFO drops a resent
  event within its 5-minute deduplication window;
* 201 only once both the archive and the queue hold the event; an AWS failure is 503 and the
  client retries: both steps are idempotent (same key, same deduplication id).

Archive layout (UTC time of arrival, from the gateway's clock; never the client's eventTime)::

    raw/date=YYYY-MM-DD/hour=HH/<group run id>/<eventTime compact>-<dedup id[:16]>.json

A time range is the list of its hour prefixes (:func:`archive_prefixes`); one run (the FIFO
group: the root or parent run, or the run itself) is ``<hour prefix><run id>/`` in each hour, and its
keys sort by eventTime, the order to replay them in. A body resent in another hour is archived
again; both copies end in the same ``-<dedup id[:16]>.json``, so a replay can skip the second.
"""

from __future__ import annotations

import datetime as dt
import hashlib
import hmac
import json
import uuid
from collections.abc import Callable, Collection, Mapping
from dataclasses import dataclass
from typing import Any

from botocore.exceptions import BotoCoreError, ClientError

from emr_lineage.lineage.naming import canonical_namespace

Clock = Callable[[], dt.datetime]
ARCHIVE_ROOT = "raw/"
# SQS FIFO drops a message whose deduplication id it saw in the last 5 minutes
# (https://docs.aws.amazon.com/AWSSimpleQueueService/latest/SQSDeveloperGuide/using-messagededuplicationid-property.html).
DEDUP_WINDOW = dt.timedelta(minutes=5)
_RECENT_KEPT = 10_000  # deduplication ids one Ingestor remembers (a Lambda container, a local gateway)


def utc_now() -> dt.datetime:
    return dt.datetime.now(dt.UTC)


@dataclass(frozen=True)
class Rejected:
    """A request the gateway refuses: the HTTP status and a one-line reason."""

    status: int
    reason: str


@dataclass(frozen=True)
class Accepted:
    """A checked event: what to archive (the raw body) and what to enqueue, and how."""

    event: dict[str, Any]  # with normalised dataset namespaces
    canonical: bytes  # the event as JSON: sorted keys, compact separators, ASCII
    dedup_id: str  # sha256 hex of ``canonical``
    group_id: str  # the parent run's runId, else the run's own
    run_id: str
    archive_key: str


# --- the pieces ---------------------------------------------------------------------------------


def _header(headers: Mapping[str, str] | None, name: str) -> str | None:
    for key, value in (headers or {}).items():
        if key.lower() == name:
            return value
    return None


def authorized(headers: Mapping[str, str] | None, api_keys: Collection[str]) -> bool:
    """Whether ``Authorization: Bearer <key>`` carries one of ``api_keys`` (names and scheme
    case-insensitive). Several keys: the current and the previous one, during a rotation.

    An empty key matches nothing: a key that was never set must not open the gateway.
    """
    value = _header(headers, "authorization")
    if not value:
        return False
    scheme, _, token = value.strip().partition(" ")
    if scheme.lower() != "bearer":
        return False
    sent = token.strip().encode("utf-8")
    # Every key is compared (constant time each), so the answer's timing does not tell which matched.
    matches = [hmac.compare_digest(sent, key.encode("utf-8")) for key in api_keys if key]
    return any(matches)


def canonical_json(event: Any) -> bytes:
    """The one byte form of an event: sorted keys, no whitespace, ASCII (every character SQS allows)."""
    return json.dumps(event, sort_keys=True, separators=(",", ":"), ensure_ascii=True).encode("ascii")


def dedup_id(canonical: bytes) -> str:
    return hashlib.sha256(canonical).hexdigest()  # 64 characters; SQS FIFO allows up to 128


def _one_line(text: str, limit: int = 300) -> str:
    line = " ".join(text.split())
    return line if len(line) <= limit else line[: limit - 3] + "..."


def _uuid(value: Any, where: str) -> str | Rejected:
    if not isinstance(value, str):
        return Rejected(400, f"{where} is missing or not a string")
    try:
        return str(uuid.UUID(value))
    except ValueError:
        return Rejected(400, f"{where}: {_one_line(value, 80)!r} is not a UUID")


def _event_time(value: Any) -> dt.datetime | Rejected:
    if not isinstance(value, str) or not value.strip():
        return Rejected(400, "eventTime is missing or not a string")
    try:
        parsed = dt.datetime.fromisoformat(value.strip())
    except ValueError:
        return Rejected(400, f"eventTime: {_one_line(value, 80)!r} is not an ISO 8601 date-time")
    if parsed.tzinfo is None:
        return Rejected(400, f"eventTime: {_one_line(value, 80)!r} has no UTC offset")
    return parsed.astimezone(dt.UTC)


def _normalise_datasets(event: dict[str, Any]) -> Rejected | None:
    """Normalise the namespaces of inputs, outputs and their column-lineage input fields, in place."""
    for side in ("inputs", "outputs"):
        datasets = event.get(side)
        if datasets is None:
            continue
        if not isinstance(datasets, list):
            return Rejected(400, f"{side} is not a list")
        for index, dataset in enumerate(datasets):
            where = f"{side}[{index}]"
            if not isinstance(dataset, dict):
                return Rejected(400, f"{where} is not an object")
            for key in ("namespace", "name"):
                if not isinstance(dataset.get(key), str) or not dataset[key]:
                    return Rejected(400, f"{where}.{key} is missing or not a string")
            dataset["namespace"] = canonical_namespace(dataset["namespace"])
            facets = dataset.get("facets")
            column = facets.get("columnLineage") if isinstance(facets, dict) else None
            fields = column.get("fields") if isinstance(column, dict) else None
            for spec in fields.values() if isinstance(fields, dict) else ():
                for source in spec.get("inputFields", ()) if isinstance(spec, dict) else ():
                    if isinstance(source, dict) and isinstance(source.get("namespace"), str):
                        source["namespace"] = canonical_namespace(source["namespace"])
    return None


def _group_run(run: dict[str, Any], run_id: str) -> str | Rejected:
    """The FIFO group: the root run of the parent facet (ParentRunFacet 1-1-0 ``root``), else the
    parent run, else the run. The Spark listener gives an application and each of its actions the
    same root (the orchestrator's or ``emr-lineage launch``'s run), so they all stay in one order;
    with only ``parent`` the actions group under the application, the application under its own parent.
    https://openlineage.io/spec/facets/1-1-0/ParentRunFacet.json"""
    facets = run.get("facets")
    parent = facets.get("parent") if isinstance(facets, dict) else None
    if parent is None:
        return run_id
    root = parent.get("root") if isinstance(parent, dict) else None
    if root is not None:
        root_run = root.get("run") if isinstance(root, dict) else None
        return _uuid(root_run.get("runId") if isinstance(root_run, dict) else None, "run.facets.parent.root.run.runId")
    parent_run = parent.get("run") if isinstance(parent, dict) else None
    return _uuid(parent_run.get("runId") if isinstance(parent_run, dict) else None, "run.facets.parent.run.runId")


def archive_key(received: dt.datetime, group_id: str, event_time: dt.datetime, dedup: str) -> str:
    """The S3 key of one raw body (layout in the module docstring); ``received`` is the gateway's UTC time."""
    hour = received.astimezone(dt.UTC)
    compact = event_time.astimezone(dt.UTC).strftime("%Y%m%dT%H%M%S%fZ")
    return f"{ARCHIVE_ROOT}date={hour:%Y-%m-%d}/hour={hour:%H}/{group_id}/{compact}-{dedup[:16]}.json"


def archive_prefixes(start: dt.datetime, end: dt.datetime, run_id: str | None = None) -> list[str]:
    """The archive prefixes holding what arrived between ``start`` and ``end`` (inclusive, by hour),
    optionally of one run (the FIFO group's run id), oldest first: what ``replay`` lists."""
    hour = start.astimezone(dt.UTC).replace(minute=0, second=0, microsecond=0)
    last = end.astimezone(dt.UTC)
    prefixes = []
    while hour <= last:
        prefix = f"{ARCHIVE_ROOT}date={hour:%Y-%m-%d}/hour={hour:%H}/"
        prefixes.append(prefix + (f"{run_id}/" if run_id else ""))
        hour += dt.timedelta(hours=1)
    return prefixes


# --- the check --------------------------------------------------------------------------------


def _parse(body: bytes) -> dict[str, Any] | Rejected:
    try:
        text = body.decode("utf-8")
    except UnicodeDecodeError:
        return Rejected(400, "the body is not UTF-8")
    try:
        event = json.loads(text)
    except ValueError as exc:
        return Rejected(400, f"the body is not JSON: {_one_line(str(exc))}")
    if not isinstance(event, dict):
        return Rejected(400, f"the body is a JSON {type(event).__name__}, not an object (one OpenLineage event)")
    return event


def check_request(
    headers: Mapping[str, str] | None,
    body: bytes,
    *,
    api_keys: Collection[str] | None,
    max_bytes: int,
    clock: Clock = utc_now,
) -> Accepted | Rejected:
    """Check one request (key, then size, then shape); :class:`Accepted` holds what to store.

    ``api_keys`` None means no key is required (a local gateway); the Lambda always passes its keys.
    ``max_bytes`` bounds the raw body and the canonical event (what SQS gets).
    """
    if api_keys is not None and not authorized(headers, api_keys):
        return Rejected(401, "missing or wrong Authorization: Bearer <key>")
    if len(body) > max_bytes:
        return Rejected(413, f"the body is {len(body)} bytes; the limit is {max_bytes}")
    event = _parse(body)
    if isinstance(event, Rejected):
        return event
    if not isinstance(event.get("eventType"), str) or not event["eventType"]:
        return Rejected(400, "eventType is missing or not a string")
    event_time = _event_time(event.get("eventTime"))
    if isinstance(event_time, Rejected):
        return event_time
    run = event.get("run")
    if not isinstance(run, dict):
        return Rejected(400, "run is missing or not an object")
    run_id = _uuid(run.get("runId"), "run.runId")
    if isinstance(run_id, Rejected):
        return run_id
    job = event.get("job")
    if not isinstance(job, dict):
        return Rejected(400, "job is missing or not an object")
    for key in ("namespace", "name"):
        if not isinstance(job.get(key), str) or not job[key]:
            return Rejected(400, f"job.{key} is missing or not a string")
    group_id = _group_run(run, run_id)
    if isinstance(group_id, Rejected):
        return group_id
    problem = _normalise_datasets(event)
    if problem:
        return problem
    canonical = canonical_json(event)
    if len(canonical) > max_bytes:
        return Rejected(413, f"the event is {len(canonical)} bytes once normalised; the limit is {max_bytes}")
    dedup = dedup_id(canonical)
    return Accepted(
        event=event,
        canonical=canonical,
        dedup_id=dedup,
        group_id=group_id,
        run_id=run_id,
        archive_key=archive_key(clock(), group_id, event_time, dedup),
    )


# --- the ingest step ----------------------------------------------------------------------------


def _aws_reason(step: str, exc: BotoCoreError | ClientError) -> str:
    code = exc.response.get("Error", {}).get("Code") if isinstance(exc, ClientError) else None
    detail = f"{code}: {exc}" if code else f"{type(exc).__name__}: {exc}"
    return _one_line(f"{step} failed, retry later ({detail})")


class Ingestor:
    """Check, archive (S3 put of the raw body), enqueue (SQS FIFO send): ``handle`` -> (status, body)."""

    def __init__(
        self,
        s3: Any,
        sqs: Any,
        *,
        bucket: str,
        queue_url: str,
        api_keys: Collection[str] | None,
        max_bytes: int,
        clock: Clock = utc_now,
    ) -> None:
        self.s3, self.sqs = s3, sqs
        self.bucket, self.queue_url = bucket, queue_url
        self.api_keys, self.max_bytes, self.clock = api_keys, max_bytes, clock
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

    def handle(self, headers: Mapping[str, str] | None, body: bytes) -> tuple[int, dict[str, Any]]:
        checked = check_request(headers, body, api_keys=self.api_keys, max_bytes=self.max_bytes, clock=self.clock)
        if isinstance(checked, Rejected):
            return checked.status, {"status": "rejected", "error": checked.reason}
        accepted = {"runId": checked.run_id, "groupId": checked.group_id, "dedupId": checked.dedup_id}
        now = self.clock()
        if self._seen(checked.dedup_id, now):
            return 201, {"status": "accepted", "duplicate": True, **accepted}
        try:
            # The bucket's default encryption (SSE-KMS) applies; the raw bytes, as received.
            self.s3.put_object(Bucket=self.bucket, Key=checked.archive_key, Body=body, ContentType="application/json")
        except (BotoCoreError, ClientError) as exc:
            return 503, {"status": "unavailable", "error": _aws_reason("archiving the event", exc)}
        try:
            self.sqs.send_message(
                QueueUrl=self.queue_url,
                MessageBody=checked.canonical.decode("ascii"),
                MessageGroupId=checked.group_id,
                MessageDeduplicationId=checked.dedup_id,
            )
        except (BotoCoreError, ClientError) as exc:
            return 503, {"status": "unavailable", "error": _aws_reason("queueing the event", exc)}
        self._remember(checked.dedup_id, now)
        return 201, {"status": "accepted", **accepted}
