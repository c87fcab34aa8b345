"""Local mode: the gateway's own ingest and forwarder code on 127.0.0.1, against S3 and SQS.

``emr-lineage gateway serve`` runs :class:`LocalGateway`: an HTTP server that answers
``POST /api/v1/lineage`` with :class:`~emr_lineage.gateway.ingest.Ingestor` (archive, then FIFO
queue) and ``GET /healthz``, and one forwarder thread that receives the queue's messages and
posts them with :func:`~emr_lineage.gateway.forward.forward_batch`, as the Lambda does:

* delivered messages are deleted;
* those Marquez refuses for good go to the dead-letter queue at once;
* failed ones (and the later ones of their run) are made visible again at once, so SQS hands them
  out again in order, and after ``max_receive_count`` receives they move to the dead-letter queue.

S3 and SQS are whatever ``AWS_ENDPOINT_URL`` points boto3 at (moto_server in the tests).
:meth:`LocalGateway.stop` stops accepting events (a request after that, on a connection kept open,
is answered 503, so its client knows to send it again), lets the requests under way finish,
forwards what is queued (the drain) for at most ``drain_seconds`` and returns.
"""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import boto3
from botocore.exceptions import BotoCoreError, ClientError

from emr_lineage.errors import EmrLineageError
from emr_lineage.gateway.config import DEFAULT_FORWARD_TIMEOUT_SECONDS
from emr_lineage.gateway.forward import Outcome, dead_letter_message, forward_batch, http_post
from emr_lineage.gateway.ingest import Ingestor, authorized
from emr_lineage.marquez.api import LINEAGE_ENDPOINT

HEALTH_PATH = "/healthz"
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
    if isinstance(exc, ClientError):
        error = exc.response.get("Error", {})
        detail = f"{error.get('Code', 'error')}: {error.get('Message', exc)}"
    else:
        detail = str(exc)
    return LocalGatewayError(f"{step}: {' '.join(detail.split())}")


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
        hint = "" if create else " (pass --create to create the bucket and queues)"
        raise _aws(f"bucket {settings.bucket!r} / queue {settings.queue_name!r}{hint}", exc) from None


class LocalGateway:
    """Ingest on ``http://127.0.0.1:<port>`` and a forwarder thread; :meth:`start`, then :meth:`stop`."""

    def __init__(
        self,
        settings: LocalGatewaySettings,
        *,
        port: int = 0,
        create: bool = False,
        session: Any = None,
        post: Callable[[bytes], int] | None = None,
        sleep: Callable[[float], None] | None = None,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.settings = settings
        session = session or boto3.session.Session()
        self.s3, self.sqs = session.client("s3"), session.client("sqs")
        self.queue_url = prepare(self.s3, self.sqs, settings, create=create)
        self.ingestor = Ingestor(
            self.s3,
            self.sqs,
            bucket=settings.bucket,
            queue_url=self.queue_url,
            api_keys=(settings.api_key,) if settings.api_key else None,
            max_bytes=settings.max_event_bytes,
        )
        self.post = post or http_post(settings.marquez_url, timeout=settings.post_timeout)
        self._stopping = threading.Event()
        self._sleep = sleep
        self._clock = clock
        self._drain_deadline: float | None = None
        self._dead_letter_url: str | None = None
        self._accepting = True
        self._ingesting = 0  # requests between their check and their answer
        self._ingest_done = threading.Condition()
        self.forwarded = 0
        self.server = ThreadingHTTPServer(("127.0.0.1", port), _handler(self))
        self.server.daemon_threads = True
        self._threads = [
            threading.Thread(target=self.server.serve_forever, name="gateway-ingest", daemon=True),
            threading.Thread(target=self._forward_loop, name="gateway-forward", daemon=True),
        ]

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.server.server_address[1]}"

    def start(self) -> LocalGateway:
        for thread in self._threads:
            thread.start()
        return self

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
            AttributeNames=["MessageGroupId"],
        ).get("Messages", [])
        if not messages:
            return 0
        records = [
            {
                "messageId": m["MessageId"],
                "receiptHandle": m["ReceiptHandle"],
                "body": m["Body"],
                "attributes": m.get("Attributes", {}),
            }
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
        failed = set(result.failed_ids)
        handles = {m["MessageId"]: m["ReceiptHandle"] for m in messages}
        done = [
            {"Id": str(i), "ReceiptHandle": handles[o.message_id]}
            for i, o in enumerate(result.outcomes)
            if o.message_id not in failed
        ]
        if done:
            self.sqs.delete_message_batch(QueueUrl=self.queue_url, Entries=done)
            self.forwarded += len(done)
        again = [
            {"Id": str(i), "ReceiptHandle": handles[m], "VisibilityTimeout": 0} for i, m in enumerate(sorted(failed))
        ]
        if again:  # back in the queue now: SQS keeps their run's order and counts the receive
            self.sqs.change_message_visibility_batch(QueueUrl=self.queue_url, Entries=again)
        return len(messages)

    def _dead_letter(self, record: Any, outcome: Outcome) -> bool:
        """An event Marquez refuses for good goes to the dead-letter queue at once, as the Lambda
        does (its run goes on); if that fails it stays a failure and comes back."""
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
            except (BotoCoreError, ClientError):
                self._stopping.wait(1.0)  # S3/SQS unreachable for a moment: try again

    # -- ingest --------------------------------------------------------------------------

    def ingest(self, headers: dict[str, str], body: bytes) -> tuple[int, dict[str, Any]]:
        """One POSTed event: the Ingestor's answer, or 503 once the gateway is stopping."""
        with self._ingest_done:
            if not self._accepting:
                return 503, {"status": "unavailable", "error": "the gateway is stopping; send the event again"}
            self._ingesting += 1
        try:
            return self.ingestor.handle(headers, body)
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
        deadline = self._clock() + drain_seconds
        with self._ingest_done:
            self._accepting = False
        self.server.shutdown()
        self.server.server_close()
        self._drain_deadline = deadline
        self._stopping.set()
        with self._ingest_done:
            self._ingest_done.wait_for(lambda: self._ingesting == 0, timeout=max(0.0, deadline - self._clock()))
        self._threads[1].join(max(0.0, deadline - self._clock()))
        if self._threads[1].is_alive():
            return self._backlog()
        try:
            while (left := self._backlog()) and self._clock() < deadline:
                self.forward_once(deadline)
        except (BotoCoreError, ClientError) as exc:
            raise _aws("draining the queue", exc) from None
        return left


def _handler(gateway: LocalGateway) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def log_message(self, *args: Any) -> None:  # the CLI reports; no access log on stderr
            pass

        def _answer(self, status: int, body: dict[str, Any]) -> None:
            data = json.dumps(body).encode()
            self.send_response(status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            if status == 401:
                self.send_header("WWW-Authenticate", "Bearer")
            self.end_headers()
            self.wfile.write(data)

        def do_GET(self) -> None:  # noqa: N802 - http.server's naming
            if self.path == HEALTH_PATH:
                self._answer(200, {"status": "ok", "forwarded": gateway.forwarded})
            else:
                self._answer(404, {"error": f"only POST {LINEAGE_ENDPOINT} and GET {HEALTH_PATH} are served"})

        def do_POST(self) -> None:  # noqa: N802
            # Key, then size (from Content-Length, before reading the body), then shape, as ingest does.
            headers = dict(self.headers.items())
            api_key = gateway.settings.api_key
            if api_key and not authorized(headers, (api_key,)):
                self._refuse(401, "missing or wrong Authorization: Bearer <key>")
                return
            length = self.headers.get("Content-Length") or "0"
            if not length.isdigit():
                self._refuse(400, f"Content-Length {length!r} is not a byte count")
                return
            if int(length) > gateway.settings.max_event_bytes:
                self._refuse(413, f"the body is {length} bytes; the limit is {gateway.settings.max_event_bytes}")
                return
            body = self.rfile.read(int(length))
            if self.path != LINEAGE_ENDPOINT:
                self._answer(404, {"error": f"POST only to {LINEAGE_ENDPOINT}"})
                return
            status, answer = gateway.ingest(headers, body)
            self._answer(status, answer)
            if status == 503:
                self.close_connection = True

        def _refuse(self, status: int, reason: str) -> None:
            """Answer without reading the body, and close the connection (the body is still on it)."""
            self._answer(status, {"status": "rejected", "error": reason})
            self.close_connection = True

    return Handler
