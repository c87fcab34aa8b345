"""Child processes of the tools that start a JVM (Maven, spark-submit): how such a short-lived JVM is
started quickly, and how a child's whole process group is stopped."""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess

# JVM options for a JVM that lives seconds: the C1 JIT only and one GC thread start it 2-3x faster than
# the server defaults on a busy 2-core machine (measured: a Maven run 5 s -> 2 s; the tests' demo).
SHORT_LIVED_JVM = "-XX:TieredStopAtLevel=1 -XX:+UseSerialGC"


def stop_group(process: subprocess.Popen, seconds: float) -> None:
    """SIGTERM to ``process``'s process group (started with ``start_new_session=True``), SIGKILL after
    ``seconds``; returns once the process has ended."""
    with contextlib.suppress(ProcessLookupError):
        os.killpg(process.pid, signal.SIGTERM)
    try:
        process.wait(seconds)
    except subprocess.TimeoutExpired:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(process.pid, signal.SIGKILL)
        process.wait()
