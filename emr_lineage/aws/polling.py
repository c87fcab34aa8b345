"""The one wait of the tools on AWS: poll a resource (a cluster's steps, a job run, a query) until it ends.

Each caller passes how to read a snapshot and when it is done, and its own ``pause``/``clock`` (module
functions the tests replace to move moto's states along and to pass a deadline without waiting).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TypeVar

S = TypeVar("S")


def poll_until(
    fetch: Callable[[float], S],
    done: Callable[[S], bool],
    *,
    poll_interval: float,
    pause: Callable[[float], None],
    clock: Callable[[], float],
    deadline_seconds: float | None = None,
    started: float | None = None,
    on_poll: Callable[[S], None] | None = None,
) -> tuple[S, bool]:
    """(the last snapshot, whether it is done): ``fetch(seconds since started)`` until ``done``, a pause
    between polls; not done when the next poll would come after ``deadline_seconds``. ``on_poll`` sees
    every snapshot; a KeyboardInterrupt from it or from the pause propagates (the caller decides what
    becomes of the resource)."""
    started = clock() if started is None else started
    while True:
        elapsed = clock() - started  # one reading per poll: the snapshot's time is the deadline's
        snapshot = fetch(elapsed)
        if on_poll is not None:
            on_poll(snapshot)
        if done(snapshot):
            return snapshot, True
        if deadline_seconds is not None and elapsed + poll_interval > deadline_seconds:
            return snapshot, False
        pause(poll_interval)
