"""Turning the capture on for sessions that job code creates, without touching job code.

:func:`install_hooks` wraps ``SparkSession.Builder.getOrCreate`` (adds the runner's conf
defaults, then installs a :class:`LineageCapture` on the new application) and
``SparkSession.stop`` (finishes the capture first, so its last events are written before the
SparkContext goes away). One capture per SparkContext, keyed by application id.
"""

from __future__ import annotations

import signal
import sys
import threading
from collections.abc import Mapping

from pyspark.sql import SparkSession

from emr_lineage.spark.capture.listener import LineageCapture

_captures: dict[str, LineageCapture] = {}
_finished: list[LineageCapture] = []
_lock = threading.Lock()
_originals: dict[str, object] = {}
_defaults: dict[str, str] = {}
_enabled = [True]
_interrupted = threading.Event()
_NOTING = "_emr_lineage_notes_interrupts"


def interrupted() -> bool:
    """True when Ctrl-C or SIGTERM arrived since :func:`install_hooks`."""
    return _interrupted.is_set()


def _note_interrupts() -> None:
    """Remember Ctrl-C and SIGTERM, then let the current handler act as before.

    PySpark's SIGINT handler cancels the running Spark jobs and raises KeyboardInterrupt inside
    the py4j call, which py4j turns into a ``Py4JError``: the job then seems to fail on its own.
    The runner asks :func:`interrupted` to tell the two apart.
    """
    if threading.current_thread() is not threading.main_thread():
        return
    for signum in (signal.SIGINT, signal.SIGTERM):
        current = signal.getsignal(signum)
        if getattr(current, _NOTING, False):
            continue

        def noting(number: int, frame: object, current: object = current) -> None:
            _interrupted.set()
            if callable(current):
                current(number, frame)
            elif number == signal.SIGINT or current == signal.SIG_DFL:
                raise KeyboardInterrupt

        setattr(noting, _NOTING, True)
        signal.signal(signum, noting)


def install(spark: SparkSession) -> LineageCapture:
    """Capture ``spark``'s application (idempotent: one capture per SparkContext)."""
    key = spark.sparkContext.applicationId
    with _lock:
        capture = _captures.get(key)
        if capture is None:
            capture = _captures[key] = LineageCapture(spark)
        else:
            return capture
    return capture.start()


def finish(spark: SparkSession, error: BaseException | None = None) -> LineageCapture | None:
    with _lock:
        capture = _captures.pop(spark.sparkContext.applicationId, None)
    if capture is not None:
        capture.finish(error)
        _finished.append(capture)
    return capture


def active_captures() -> list[LineageCapture]:
    with _lock:
        return list(_captures.values())


def finished_captures() -> list[LineageCapture]:
    """Captures finished since the hooks were installed (the runner reports their counts)."""
    return list(_finished)


def _get_or_create(builder: SparkSession.Builder) -> SparkSession:
    for key, value in _defaults.items():
        if key not in builder._options:
            builder.config(key, value)
    session = _originals["getOrCreate"](builder)
    _note_interrupts()  # after PySpark has installed its own SIGINT handler
    if _enabled[0]:
        install(session)
    return session


def _stop(session: SparkSession) -> None:
    # Inside a job's `finally: spark.stop()` while an exception propagates, report FAIL.
    finish(session, sys.exc_info()[1])
    _originals["stop"](session)


def install_hooks(defaults: Mapping[str, str] | None = None, *, capture: bool = True) -> None:
    """Capture every session created from now on; ``defaults`` are Spark conf entries applied
    unless the job sets them itself (master, transport, namespace, warehouse...).
    ``capture=False`` applies the defaults only (the benchmark's baseline)."""
    _enabled[0] = capture
    _interrupted.clear()
    _defaults.clear()
    _defaults.update(defaults or {})
    _finished.clear()
    if not _originals:
        _originals["getOrCreate"] = SparkSession.Builder.getOrCreate
        _originals["stop"] = SparkSession.stop
        SparkSession.Builder.getOrCreate = _get_or_create
        SparkSession.stop = _stop


def uninstall_hooks() -> None:
    if _originals:
        SparkSession.Builder.getOrCreate = _originals.pop("getOrCreate")
        SparkSession.stop = _originals.pop("stop")
    _defaults.clear()
