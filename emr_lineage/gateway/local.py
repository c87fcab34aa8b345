"""Local mode: the gateway's own ingest and forwarder code on 127.0.0.1, against S3 and SQS.

``emr-lineage gateway serve`` runs :class:`LocalGateway`: an HTTP server (waitress,
:mod:`~emr_lineage.gateway.local_http`) that answers ``POST /api/v1/lineage`` and
``/api/v1/lineage/batch`` with :class:`~emr_lineage.gateway.ingest.Ingestor` (archive, then FIFO
queue) and ``GET /healthz``, and one forwarder thread that receives the queue's messages and
posts them with :func:`~emr_lineage.gateway.forward.forward_batch`, as the Lambda does:

* delivered messages are deleted and counted ``forwarded``;
* those Marquez refuses for good go to the dead-letter queue at once, counted ``refused``, and
  Marquez's reason goes to the log (stderr);
* failed ones (and the later ones of their run) are made visible again at once, so SQS hands them
  out again in order; after ``max_receive_count`` receives the gateway moves them to the
  dead-letter queue itself, counted ``dead_lettered`` (the queue's redrive policy, one receive
  later, is only the backstop for a gateway that died);
* while forwarding fails (Marquez unreachable or answering 5xx), ``/healthz`` answers 503 with the
  reason, and the log says so once, and again once it works.

S3 and SQS are whatever ``AWS_ENDPOINT_URL`` points boto3 at (moto_server in the tests).
:meth:`LocalGateway.stop` stops accepting events (a request after that, on a connection kept open,
is answered 503, so its client knows to send it again), lets the requests under way finish,
forwards what is queued (the drain) for at most ``drain_seconds`` and returns.
"""

from __future__ import annotations

import json
import os
import sys
import threading
import time
import urllib.error
import urllib.request
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from botocore.exceptions import BotoCoreError, ClientError, EndpointConnectionError, NoCredentialsError

from emr_lineage.aws.clients import ENDPOINT_ENV_VAR, aws_client, aws_message
from emr_lineage.errors import EmrLineageError, network_reason
from emr_lineage.gateway.config import DEFAULT_FORWARD_TIMEOUT_SECONDS, MAX_BATCH_BYTES
from emr_lineage.gateway.forward import (
    BLOCKED,
    DELIVERED,
    OUT_OF_TIME,
    REJECTED,
    BatchResult,
    Outcome,
    Post,
    dead_letter_message,
    forward_batch,
    http_post,
    receive_count,
)
from emr_lineage.gateway.ingest import Ingestor
from emr_lineage.gateway.local_http import HEALTH_PATH, IDLE_SECONDS, close, serve, wsgi_app
from emr_lineage.lineage.schemas.checks import load_schemas
from emr_lineage.lineage.schemas.store import missing_message, schema_dir
from emr_lineage.marquez.api import API_ROOT, base_url

__all__ = ["HEALTH_PATH", "LocalGateway", "LocalGatewayError", "LocalGatewaySettings"]

FIFO_SUFFIX = ".fifo"
DEAD_LETTER_SUFFIX = "-dlq"


class LocalGatewayError(EmrLineageError):
    """The local gateway cannot start: the bucket or queue is missing or cannot be created."""


@dataclass(frozen=True)
class LocalGatewaySettings:
    marquez_url: str
    bucket: str
    queue: str  # with or without ".fifo"
    api_key: str | None
    max_event_bytes: int
    retries: int
    post_timeout: float = DEFAULT_FORWARD_TIMEOUT_SECONDS
    max_receive_count: int = 50  # receives of a message before the dead-letter queue (~minutes of outage)
    receive_wait_seconds: int = 1

    @property
    def queue_name(self) -> str:
        return self.queue if self.queue.endswith(FIFO_SUFFIX) else self.queue + FIFO_SUFFIX

    @property
    def dead_letter_queue_name(self) -> str:
        return self.queue_name.removesuffix(FIFO_SUFFIX) + DEAD_LETTER_SUFFIX + FIFO_SUFFIX


def _aws(step: str, exc: BotoCoreError | ClientError) -> LocalGatewayError:
    return LocalGatewayError(f"{step}: {aws_message(exc)}")


def prepare(s3: Any, sqs: Any, settings: LocalGatewaySettings, *, create: bool) -> str:
    """The queue's URL; with ``create``, the bucket, the FIFO queue and its dead-letter queue first."""
    try:
        if create:
            try:
                s3.create_bucket(Bucket=settings.bucket)
            except ClientError as exc:
                if exc.response.get("Error", {}).get("Code") not in ("BucketAlreadyOwnedByYou", "BucketAlreadyExists"):
                    raise
            fifo = {"FifoQueue": "true", "ContentBasedDeduplication": "false"}
            dlq_url = sqs.create_queue(QueueName=settings.dead_letter_queue_name, Attributes=fifo)["QueueUrl"]
            dlq_arn = sqs.get_queue_attributes(QueueUrl=dlq_url, AttributeNames=["QueueArn"])["Attributes"]["QueueArn"]
            redrive = {"deadLetterTargetArn": dlq_arn, "maxReceiveCount": str(settings.max_receive_count)}
            attributes = {**fifo, "RedrivePolicy": json.dumps(redrive)}
            return sqs.create_queue(QueueName=settings.queue_name, Attributes=attributes)["QueueUrl"]
        s3.head_bucket(Bucket=settings.bucket)
        return sqs.get_queue_url(QueueName=settings.queue_name)["QueueUrl"]
    except (BotoCoreError, ClientError) as exc:
        raise _not_prepared(settings, create, exc) from None


# What S3 and SQS answer for a bucket or queue that is not there (HeadBucket has no body: its status).
_MISSING = {"404", "NoSuchBucket", "NotFound", "AWS.SimpleQueueService.NonExistentQueue", "QueueDoesNotExist"}


def _not_prepared(settings: LocalGatewaySettings, create: bool, exc: BotoCoreError | ClientError) -> LocalGatewayError:
    """Why the bucket and queue cannot be used, with the fix: credentials, the endpoint, or --create."""
    what = f"bucket {settings.bucket!r} / queue {settings.queue_name!r}"
    endpoint = os.environ.get(ENDPOINT_ENV_VAR)
    if isinstance(exc, NoCredentialsError):  # every command's fix, then local mode's
        return LocalGatewayError(
            f"{what}: {aws_message(exc)}; or, for a local S3 and SQS (moto_server), "
            f"set {ENDPOINT_ENV_VAR} and test credentials (docs/gateway.md)"
        )
    if isinstance(exc, EndpointConnectionError):
        where = f"{ENDPOINT_ENV_VAR}={endpoint}" if endpoint else "AWS"
        fix = (
            f"start it, or correct or unset {ENDPOINT_ENV_VAR}"
            if endpoint
            else f"check the network or set {ENDPOINT_ENV_VAR}"
        )
        return LocalGatewayError(f"{what}: cannot reach {where} ({' '.join(str(exc).split())}); {fix}")
    code = exc.response.get("Error", {}).get("Code") if isinstance(exc, ClientError) else None
    hint = " (pass --create to create the bucket and queues)" if code in _MISSING and not create else ""
    return _aws(f"{what}{hint}", exc)


def _stderr(line: str) -> None:
    print(line, file=sys.stderr, flush=True)


def probe(url: str, timeout: float) -> str | None:
    """Why Marquez at ``url`` cannot be reached (None: something answered HTTP there)."""
    try:
        with urllib.request.urlopen(base_url(url) + API_ROOT + "/namespaces", timeout=timeout):
            return None
    except urllib.error.HTTPError:
        return None  # an answer: reachable (a refusal shows when an event is forwarded)
    except (OSError, ValueError) as exc:
        return f"Marquez at {url} is unreachable ({network_reason(exc)})"


class LocalGateway:
    """Ingest on ``http://127.0.0.1:<port>`` and a forwarder thread; :meth:`start`, then :meth:`stop`."""

    def __init__(
        self,
        settings: LocalGatewaySettings,
        *,
        port: int = 0,
        create: bool = False,
        session: Any = None,
        post: Post | None = None,
        sleep: Callable[[float], None] | None = None,
        clock: Callable[[], float] = time.monotonic,
        log: Callable[[str], None] = _stderr,
        idle_seconds: int = IDLE_SECONDS,
    ) -> None:
        self.settings = settings
        self.s3, self.sqs = aws_client("s3", session=session), aws_client("sqs", session=session)
        self.queue_url = prepare(self.s3, self.sqs, settings, create=create)
        self.ingestor = Ingestor(
            self.s3,
            self.sqs,
            bucket=settings.bucket,
            queue_url=self.queue_url,
            api_keys=(settings.api_key,) if settings.api_key is not None else None,
            max_bytes=settings.max_event_bytes,
            max_batch_bytes=max(settings.max_event_bytes, MAX_BATCH_BYTES),
            schemas=load_schemas(),
        )
        if self.ingestor.schemas is None:  # as the readers say it: the event rule alone decides
            log(f"warning: only structural event checks run: {missing_message(schema_dir())}")
        self.post = post or http_post(settings.marquez_url, timeout=settings.post_timeout)
        self._stopping = threading.Event()
        self._sleep, self._clock, self._log = sleep, clock, log
        self._drain_deadline: float | None = None
        self._dead_letter_url: str | None = None
        self._accepting = True
        self._stopped = False
        self._stalled = False  # the last batch forwarded posted nothing (out of time)
        self._ingesting = 0  # requests between their check and their answer
        self._ingest_done = threading.Condition()
        self.forwarded = self.refused = self.dead_lettered = 0
        self.failing: str | None = None  # why forwarding fails now (None: it works, or nothing to forward yet)
        self.server = serve(wsgi_app(self.ingest, self.health, log), port, idle_seconds=idle_seconds)
        self._threads = [
            threading.Thread(target=self.server.run, name="gateway-ingest", daemon=True),
            threading.Thread(target=self._forward_loop, name="gateway-forward", daemon=True),
        ]

    @property
    def address(self) -> tuple[str, int]:
        return "127.0.0.1", int(self.server.effective_port)

    @property
    def url(self) -> str:
        return "http://{}:{}".format(*self.address)

    def start(self, *, probe_marquez: bool = True) -> LocalGateway:
        if probe_marquez:
            self._failing(probe(self.settings.marquez_url, self.settings.post_timeout))
        for thread in self._threads:
            thread.start()
        return self

    # -- health --------------------------------------------------------------------------

    def counts(self) -> dict[str, int]:
        return {"forwarded": self.forwarded, "refused": self.refused, "dead_lettered": self.dead_lettered}

    def health(self) -> tuple[int, dict[str, Any]]:
        """200 and the counts while forwarding works; 503 and why while it fails."""
        if self.failing:
            return 503, {"status": "failing", "error": self.failing, **self.counts()}
        return 200, {"status": "ok", **self.counts()}

    def _failing(self, reason: str | None) -> None:
        """Record whether forwarding fails; say so on the log when that changes."""
        if reason and not self.failing:
            self._log(f"gateway: forwarding fails: {reason}; events stay queued and are sent again")
        elif not reason and self.failing:
            self._log("gateway: forwarding to Marquez works again")
        self.failing = reason

    # -- forwarding ----------------------------------------------------------------------

    def _backlog(self) -> int:
        names = ["ApproximateNumberOfMessages", "ApproximateNumberOfMessagesNotVisible"]
        attributes = self.sqs.get_queue_attributes(QueueUrl=self.queue_url, AttributeNames=names)["Attributes"]
        return sum(int(attributes.get(name, 0)) for name in names)

    def forward_once(self, deadline: float | None = None) -> int:
        """Receive one batch and forward it (posting nothing past ``deadline``, a clock value);
        returns how many messages were received."""
        messages = self.sqs.receive_message(
            QueueUrl=self.queue_url,
            MaxNumberOfMessages=10,
            WaitTimeSeconds=self.settings.receive_wait_seconds,
            MessageSystemAttributeNames=["MessageGroupId", "ApproximateReceiveCount"],
        ).get("Messages", [])
        if not messages:
            return 0
        records = [
            {"messageId": m["MessageId"], "receiptHandle": m["ReceiptHandle"], "body": m["Body"]}
            | {"attributes": m.get("Attributes", {})}
            for m in messages
        ]
        # Without a deadline (forwarding while serving), a retry pause ends early once stop() is
        # called; with one (the drain), forward_batch never pauses past it.
        pause = self._sleep or (time.sleep if deadline is not None else self._stopping.wait)
        result = forward_batch(
            records,
            self.post,
            retries=self.settings.retries,
            sleep=pause,
            clock=self._clock,
            deadline=deadline,
            reject=self._dead_letter,
        )
        self._settle(records, result)
        # Nothing posted: no time was left for one try. Another receive now would only count
        # against the events' receives (and dead-letter them early), never deliver one.
        self._stalled = all(o.outcome in (OUT_OF_TIME, BLOCKED) for o in result.outcomes)
        return len(messages)

    def _settle(self, records: list[dict[str, Any]], result: BatchResult) -> None:
        """Delete what was handled, dead-letter what used up its receives, put the rest back now."""
        by_id = {r["messageId"]: r for r in records}
        failed = set(result.failed_ids)
        gave_up = [o for o in result.outcomes if o.message_id in failed and self._used_up(by_id[o.message_id])]
        gave_up = [o for o in gave_up if self._dead_letter(by_id[o.message_id], o)]
        done = [o.message_id for o in result.outcomes if o.message_id not in failed] + [o.message_id for o in gave_up]
        if done:
            entries = [{"Id": str(i), "ReceiptHandle": by_id[m]["receiptHandle"]} for i, m in enumerate(done)]
            self.sqs.delete_message_batch(QueueUrl=self.queue_url, Entries=entries)
        again = sorted(failed - {o.message_id for o in gave_up})
        if again:  # back in the queue now: SQS keeps their run's order and counts the receive
            entries = [
                {"Id": str(i), "ReceiptHandle": by_id[m]["receiptHandle"], "VisibilityTimeout": 0}
                for i, m in enumerate(again)
            ]
            self.sqs.change_message_visibility_batch(QueueUrl=self.queue_url, Entries=entries)
        self._count(result, gave_up)

    def _used_up(self, record: Mapping[str, Any]) -> bool:
        return receive_count(record) >= self.settings.max_receive_count

    def _count(self, result: BatchResult, gave_up: list[Outcome]) -> None:
        outcomes = result.outcomes
        self.forwarded += sum(o.outcome == DELIVERED for o in outcomes)
        for outcome in (o for o in outcomes if o.outcome == REJECTED):
            self.refused += 1
            self._log(
                f"gateway: Marquez refused an event of group {outcome.group_id} ({outcome.detail}); "
                f"it is in the dead-letter queue {self.settings.dead_letter_queue_name}"
            )
        for outcome in gave_up:
            self.dead_lettered += 1
            self._log(
                f"gateway: an event of group {outcome.group_id} failed {self.settings.max_receive_count} "
                f"times ({outcome.detail}); moved to the dead-letter queue {self.settings.dead_letter_queue_name}"
            )
        problems = [o.detail for o in outcomes if o.outcome not in (DELIVERED, REJECTED) and o.attempts]
        if any(o.outcome in (DELIVERED, REJECTED) for o in outcomes):
            self._failing(None)  # Marquez answered
        if problems:
            self._failing(problems[-1])

    def _dead_letter(self, record: Any, outcome: Outcome) -> bool:
        """Put an event on the dead-letter queue (Marquez refused it for good, or it used up its
        receives); if that fails it stays a failure and comes back."""
        try:
            if self._dead_letter_url is None:
                name = self.settings.dead_letter_queue_name
                self._dead_letter_url = self.sqs.get_queue_url(QueueName=name)["QueueUrl"]
            self.sqs.send_message(QueueUrl=self._dead_letter_url, **dead_letter_message(record, outcome))
        except (BotoCoreError, ClientError):
            return False
        return True

    def _forward_loop(self) -> None:
        while not self._stopping.is_set():
            try:
                self.forward_once(self._drain_deadline)
            except (BotoCoreError, ClientError) as exc:
                self._failing(f"S3/SQS: {' '.join(str(exc).split())}")
                self._stopping.wait(1.0)  # S3/SQS unreachable for a moment: try again

    # -- ingest --------------------------------------------------------------------------

    def ingest(self, path: str, headers: Mapping[str, str], body: bytes) -> tuple[int, dict[str, Any]]:
        """One POST: the Ingestor's answer, or 503 once the gateway is stopping."""
        with self._ingest_done:
            if not self._accepting:
                return 503, {"status": "unavailable", "error": "the gateway is stopping; send the event again"}
            self._ingesting += 1
        try:
            return self.ingestor.answer(path, headers, body)
        finally:
            with self._ingest_done:
                self._ingesting -= 1
                self._ingest_done.notify_all()

    def stop(self, drain_seconds: float = 30.0) -> int:
        """Stop accepting events, forward what is queued for up to ``drain_seconds``; the backlog left.

        Events answered 201 are in the queue before the drain looks at it: the drain waits for the
        requests under way. A batch still being posted at the deadline is left to SQS (its messages
        become visible again after the queue's visibility timeout).
        """
        if self._stopped:
            return self._backlog()
        self._stopped = True
        deadline = self._clock() + drain_seconds
        with self._ingest_done:
            self._accepting = False  # from now on a request is answered 503 until the server closes
            self._ingest_done.wait_for(lambda: self._ingesting == 0, timeout=max(0.0, deadline - self._clock()))
        try:
            return self._drain(deadline)
        finally:
            close(self.server, self._threads[0])

    def _drain(self, deadline: float) -> int:
        self._drain_deadline = deadline
        self._stopping.set()
        self._threads[1].join(max(0.0, deadline - self._clock()))
        if self._threads[1].is_alive():
            return self._backlog()
        try:
            while (left := self._backlog()) and self._clock() < deadline:
                if self.forward_once(deadline) and self._stalled:
                    break
        except (BotoCoreError, ClientError) as exc:
            raise _aws("draining the queue", exc) from None
        return left
