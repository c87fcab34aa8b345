"""The capture on one SparkSession: py4j QueryExecutionListener + StreamingQueryListener.

Spark calls both listeners on its listener-bus thread, after the action (or micro-batch) is
done, so the capture never slows a query down; it only adds work to that thread.
:meth:`LineageCapture.finish` drains the bus before emitting the application's last event and
closing the client, so no event is lost when the script ends right after ``spark.stop()``
(the real listener sends asynchronously, and an unclosed client can drop the last events:
https://github.com/OpenLineage/OpenLineage/pull/3851).
"""

from __future__ import annotations

import logging
import os
import re
import threading
import time
from collections import Counter
from dataclasses import dataclass, field

from openlineage.client import OpenLineageClient
from openlineage.client.uuid import generate_new_uuid
from pyspark.java_gateway import ensure_callback_server_started
from pyspark.sql import SparkSession
from pyspark.sql.streaming.listener import StreamingQueryListener

from emr_lineage.spark.capture import facets
from emr_lineage.spark.capture.plan import QueryLineage, query_lineage, snake_case, streaming_lineage
from emr_lineage.spark.capture.transport import make_client
from emr_lineage.spark.conf import PARENT_KEYS, ParentContext

log = logging.getLogger(__name__)
NAMESPACE_KEY = "spark.openlineage.namespace"
APP_NAME_KEY = "spark.openlineage.appName"
DRAIN_TIMEOUT_MS = 120_000
_SOURCE = re.compile(r"^FileStreamSource\[(?P<path>.+)\]$")
_SINK = re.compile(r"^FileSink\[(?P<path>.+)\]$")


def parent_context(conf: dict[str, str]) -> ParentContext | None:
    """Orchestrator parent from ``spark.openlineage.parent*`` conf, else OPENLINEAGE_PARENT_* env."""
    merged = {env: conf.get(spark_key) or os.environ.get(env, "") for spark_key, env in PARENT_KEYS.values()}
    return ParentContext.from_env(merged)


@dataclass
class _Stream:
    run_id: str
    jquery: object
    started: float
    sources: set[str] = field(default_factory=set)
    sink: str | None = None
    rows: int = 0
    lineage: QueryLineage | None = None
    started_emitted: bool = False


class LineageCapture:
    """Emits the lineage of one Spark application (one SparkContext) through ``client``."""

    def __init__(self, spark: SparkSession, client: OpenLineageClient | None = None) -> None:
        self.spark = spark
        self._jspark = spark._jsparkSession
        conf = dict(spark.sparkContext.getConf().getAll())
        namespace = conf.get(NAMESPACE_KEY, "default")
        app_name = snake_case(conf.get(APP_NAME_KEY) or spark.sparkContext.appName)
        self.app = facets.RunRef(namespace, app_name, str(generate_new_uuid()))
        self.orchestrator = parent_context(conf)
        orchestrator_root = facets.orchestrator_parent(self.orchestrator)[1]
        self.root = orchestrator_root or self.app  # root of every action run
        self.client = client or make_client(conf)
        self.spark_version = spark.version
        self.counts: Counter[str] = Counter()  # emitted events per event type, plus "errors"
        self.errors: list[str] = []
        # Seconds spent in listener callbacks (Spark's bus thread) and blocked in finish().
        self.busy_seconds = 0.0
        self.finish_seconds = 0.0
        self._lock = threading.Lock()
        self._streams: dict[str, _Stream] = {}
        self._finished = False

    # --- lifecycle -------------------------------------------------------------------------

    def start(self) -> LineageCapture:
        _warm_up(self._jspark)
        self._emit(
            facets.application_event(
                "START", self.app, spark_version=self.spark_version, orchestrator=self.orchestrator
            )
        )
        ensure_callback_server_started(self.spark.sparkContext._gateway)
        self._query_listener = _QueryExecutionListener(self)
        self._jspark.listenerManager().register(self._query_listener)
        self._stream_listener = _StreamingListener(self)
        self.spark.streams.addListener(self._stream_listener)
        return self

    def finish(self, error: BaseException | None = None) -> None:
        """Drain Spark's listener bus, emit the application's COMPLETE (or FAIL), flush, close.

        Call before the SparkContext stops; a second call does nothing."""
        with self._lock:
            if self._finished:
                return
            self._finished = True
        began = time.perf_counter()
        try:
            self.spark.sparkContext._jsc.sc().listenerBus().waitUntilEmpty(DRAIN_TIMEOUT_MS)
        except Exception as exc:  # noqa: BLE001 - a stuck bus must not lose the final event
            self._record_error(f"listener bus not drained: {exc}")
        try:
            self._jspark.listenerManager().unregister(self._query_listener)
            self.spark.streams.removeListener(self._stream_listener)
        except Exception as exc:  # noqa: BLE001
            self._record_error(f"could not unregister listeners: {exc}")
        state = "FAIL" if error is not None else "COMPLETE"
        self._emit(
            facets.application_event(
                state,
                self.app,
                spark_version=self.spark_version,
                streaming=bool(self.counts.get("streams")),
                orchestrator=self.orchestrator,
            )
        )
        self.client.close(timeout=30)
        self.finish_seconds = time.perf_counter() - began

    # --- callbacks (Spark's listener-bus thread) --------------------------------------------

    def on_query(self, qe, duration_ns: int | None, failure) -> None:
        lineage = query_lineage(qe, self._jspark)
        if lineage is None:
            return
        end = time.time()
        begin = end - (duration_ns or 0) / 1e9
        run_id = str(generate_new_uuid())
        job = facets.action_job_name(self.app.job_name, lineage)
        self._emit(
            facets.action_event("START", run_id, job, self.app, lineage, event_time=facets.iso(begin), root=self.root)
        )
        error = str(failure.getMessage()) if failure is not None else None
        self._emit(
            facets.action_event(
                "FAIL" if failure is not None else "COMPLETE",
                run_id,
                job,
                self.app,
                lineage,
                event_time=facets.iso(end),
                root=self.root,
                error=error,
            )
        )

    def on_stream_started(self, event) -> None:
        jquery = self._jspark.streams().get(str(event.id))
        with self._lock:
            self._streams[str(event.runId)] = _Stream(str(generate_new_uuid()), jquery, time.time())
            self.counts["streams"] += 1

    def on_stream_progress(self, event) -> None:
        progress = event.progress
        stream = self._streams.get(str(progress.runId))
        if stream is None:
            return
        for source in progress.sources:
            match = _SOURCE.match(source.description)
            if match:
                stream.sources.add(match.group("path"))
        match = _SINK.match(progress.sink.description)
        if match:
            stream.sink = match.group("path")
        stream.rows += progress.numInputRows
        lineage = self._stream_lineage(stream)
        if lineage is not None and not stream.started_emitted:
            stream.started_emitted = True
            self._emit(self._stream_event("START", stream, lineage, stream.started))

    def on_stream_terminated(self, event) -> None:
        stream = self._streams.pop(str(event.runId), None)
        if stream is None:
            return
        lineage = self._stream_lineage(stream)
        if lineage is None:
            return
        if not stream.started_emitted:
            self._emit(self._stream_event("START", stream, lineage, stream.started))
        state = "FAIL" if event.exception else "COMPLETE"
        self._emit(self._stream_event(state, stream, lineage, time.time(), event.exception))

    # --- helpers ----------------------------------------------------------------------------

    def _stream_lineage(self, stream: _Stream) -> QueryLineage | None:
        if stream.sink is None and not stream.sources:
            return None
        execution = stream.jquery.streamingQuery().lastExecution() if stream.jquery is not None else None
        lineage = streaming_lineage(execution, sorted(stream.sources), stream.sink)
        if lineage is not None and (lineage.column_lineage or stream.lineage is None):
            stream.lineage = lineage  # keep the richest view (a later batch may not have run)
        return stream.lineage

    def _stream_event(self, state, stream, lineage, at, error=None):
        job = facets.action_job_name(self.app.job_name, lineage)
        return facets.action_event(
            state,
            stream.run_id,
            job,
            self.app,
            lineage,
            event_time=facets.iso(at),
            root=self.root,
            processing="STREAMING",
            error=error,
        )

    def _emit(self, event) -> None:
        try:
            self.client.emit(event)
        except Exception as exc:  # noqa: BLE001 - lineage must never fail the job
            self._record_error(f"emit failed: {exc}")
            return
        with self._lock:
            self.counts[event.eventType.value] += 1
            self.counts["events"] += 1

    def _record_error(self, message: str) -> None:
        log.warning("emr-lineage capture: %s", message)
        with self._lock:
            self.counts["errors"] += 1
            self.errors.append(message)


_warmed: list[bool] = []  # PySpark keeps one JVM per Python process, across SparkContexts


def _warm_up(jspark) -> None:
    """Load the JVM's plan-to-JSON machinery (about 2 s of class loading, once per JVM) on a
    background thread while the job computes, instead of on the listener thread at the first
    action, where spark.stop() would later have to wait for it."""
    if _warmed:
        return
    _warmed.append(True)

    def load() -> None:
        try:
            jspark.range(1).queryExecution().analyzed().toJSON()
        except Exception:  # noqa: BLE001 - only a warm-up
            pass

    threading.Thread(target=load, name="emr-lineage-warm-up", daemon=True).start()


class _QueryExecutionListener:
    """py4j implementation of org.apache.spark.sql.util.QueryExecutionListener."""

    def __init__(self, capture: LineageCapture) -> None:
        self.capture = capture

    def onSuccess(self, funcName, qe, durationNs):  # noqa: N802, N803 - Java interface
        self._guarded(qe, durationNs, None)

    def onFailure(self, funcName, qe, exception):  # noqa: N802, N803 - Java interface
        self._guarded(qe, None, exception)

    def _guarded(self, qe, duration_ns, failure) -> None:
        began = time.perf_counter()
        try:
            self.capture.on_query(qe, duration_ns, failure)
        except Exception as exc:  # noqa: BLE001 - lineage must never fail the job
            self.capture._record_error(f"query lineage failed: {type(exc).__name__}: {exc}")
        self.capture.busy_seconds += time.perf_counter() - began

    class Java:
        implements = ["org.apache.spark.sql.util.QueryExecutionListener"]


class _StreamingListener(StreamingQueryListener):
    def __init__(self, capture: LineageCapture) -> None:
        self.capture = capture

    def _guarded(self, handler, event) -> None:
        began = time.perf_counter()
        try:
            handler(event)
        except Exception as exc:  # noqa: BLE001 - lineage must never fail the job
            self.capture._record_error(f"stream lineage failed: {type(exc).__name__}: {exc}")
        self.capture.busy_seconds += time.perf_counter() - began

    def onQueryStarted(self, event):  # noqa: N802
        self._guarded(self.capture.on_stream_started, event)

    def onQueryProgress(self, event):  # noqa: N802
        self._guarded(self.capture.on_stream_progress, event)

    def onQueryIdle(self, event):  # noqa: N802
        pass

    def onQueryTerminated(self, event):  # noqa: N802
        self._guarded(self.capture.on_stream_terminated, event)
