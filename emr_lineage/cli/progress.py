"""Progress on stderr, one way for every command: :class:`Steps`.

On a terminal a live rich progress bar (or, without a count, a spinner) shows the latest step and
disappears at the end. Off a terminal (CI logs, pipes, tests) a line is printed at each tenth of
the steps and at the last, each whole (never folded) and prefixed with the elapsed time
(``[mm:ss]``). Notes (a refused event, a job's time, an EMR cluster's new state) are printed as
lines in both cases. The clock is injected, so tests need no sleeps.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from types import TracebackType
from typing import Any

from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, SpinnerColumn, TextColumn, TimeElapsedColumn

from emr_lineage.aws.emr import Snapshot
from emr_lineage.aws.emr_serverless import RunSnapshot

# Off a terminal, a progress line each tenth of the steps: a CI log stays short.
PRINTED_STEPS = 10


def elapsed(seconds: float) -> str:
    """``[mm:ss]``, the prefix of every progress line."""
    minutes, rest = divmod(int(seconds), 60)
    return f"[{minutes:02d}:{rest:02d}]"


def stderr_console() -> Console:
    """The console of progress: stderr, lines printed whole (soft_wrap), no markup or highlighting."""
    return Console(stderr=True, highlight=False, markup=False, soft_wrap=True)


class Steps:
    """The progress of one part of a command: ``with Steps("events posted", total) as steps:``, then
    ``steps.advance(done)`` after each step, ``steps.note(text)`` for a line that must be read, and
    ``steps.state(text)`` to follow a state that is printed when it changes (an EMR cluster)."""

    def __init__(
        self,
        what: str,
        total: int | None = None,
        *,
        console: Console | None = None,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.console = console or stderr_console()
        self.what, self.total, self.done = what, total, 0
        self._clock, self._began = clock, clock()
        self._last_state: str | None = None
        self._printed = 0  # the last count printed off a terminal
        columns = [SpinnerColumn(), TextColumn("{task.description}")]
        if total is not None:
            columns += [BarColumn(), MofNCompleteColumn()]
        self._live = Progress(
            *columns,
            TimeElapsedColumn(),
            console=self.console,
            transient=True,
            disable=not self.console.is_terminal,
        )
        self._task = self._live.add_task(what, total=total)

    def __enter__(self) -> Steps:
        self._live.start()
        return self

    def __exit__(self, kind: type | None, error: BaseException | None, trace: TracebackType | None) -> None:
        self.stop()

    def stop(self) -> None:
        """End the live bar (before a line that must come after it, such as an error)."""
        self._live.stop()

    def _seconds(self) -> float:
        return self._clock() - self._began

    def advance(self, done: int | None = None, total: int | None = None, what: str | None = None) -> None:
        """``done`` steps of ``total`` (default: one more step, of the total given before)."""
        self.done = self.done + 1 if done is None else done
        self.total = total if total is not None else self.total
        self.what = what or self.what
        self._live.update(self._task, completed=self.done, total=self.total, description=self.what)
        if self.console.is_terminal or not self.total or self.done == self._printed:
            return
        every = max(1, -(-self.total // PRINTED_STEPS))
        if self.done % every == 0 or self.done == self.total:
            self._printed = self.done
            self.console.print(f"{elapsed(self._seconds())} {self.what}: {self.done}/{self.total}")

    def note(self, text: str, seconds: float | None = None) -> None:
        """A line printed on a terminal too, prefixed with the elapsed time (``seconds``, else the clock's)."""
        self.console.print(f"{elapsed(self._seconds() if seconds is None else seconds)} {text}")

    def state(self, text: str, seconds: float | None = None) -> None:
        """The live line shows ``text``; a line is printed when it differs from the last one."""
        self._live.update(self._task, description=text)
        if text != self._last_state:
            self.note(text, seconds)
            self._last_state = text


def describe_cluster(snapshot: Snapshot) -> str:
    """``cluster RUNNING: ingest_orders COMPLETED, revenue_daily RUNNING``."""
    steps = ", ".join(f"{s.name} {s.state}" for s in snapshot.steps)
    return f"cluster {snapshot.cluster_state}: {steps}"


def describe_job_run(snapshot: RunSnapshot) -> str:
    """``job run 00f1cbn5g4bb0c01: revenue_daily RUNNING`` (EMR Serverless), as a cluster's line."""
    return f"job run {snapshot.job_run_id}: {snapshot.name} {snapshot.state}"


def cluster_poll_printer(steps: Steps, describe: Callable[[Any], str] = describe_cluster) -> Callable[[Any], None]:
    """An ``on_poll`` callback: the live line follows every poll, a printed line every change (of a
    cluster's :class:`Snapshot`, or of a job run's :class:`RunSnapshot` with :func:`describe_job_run`)."""

    def show(snapshot: Snapshot | RunSnapshot) -> None:
        steps.state(describe(snapshot), snapshot.elapsed)

    return show


def job_run_poll_printer(steps: Steps) -> Callable[[RunSnapshot], None]:
    return cluster_poll_printer(steps, describe_job_run)
