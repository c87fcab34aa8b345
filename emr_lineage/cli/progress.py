"""Progress of long waits (an EMR cluster's steps, lineage reads): one way for every command.

In a terminal a live spinner line shows the latest state; everywhere (CI logs included) one
line is printed per change of state, prefixed with the elapsed time.
"""

from __future__ import annotations

from collections.abc import Callable

from rich.console import Console
from rich.progress import Progress, SpinnerColumn, TextColumn, TimeElapsedColumn

from emr_lineage.aws.emr import Snapshot


def live_progress(console: Console) -> Progress:
    """A transient spinner line, only when ``console`` is a terminal."""
    return Progress(
        SpinnerColumn(),
        TextColumn("{task.description}"),
        TimeElapsedColumn(),
        console=console,
        transient=True,
        disable=not console.is_terminal,
    )


def elapsed(seconds: float) -> str:
    """``[mm:ss]``, the prefix of every progress line."""
    minutes, rest = divmod(int(seconds), 60)
    return f"[{minutes:02d}:{rest:02d}]"


def describe_cluster(snapshot: Snapshot) -> str:
    """``cluster RUNNING: ingest_orders COMPLETED, revenue_daily RUNNING``."""
    steps = ", ".join(f"{s.name} {s.state}" for s in snapshot.steps)
    return f"cluster {snapshot.cluster_state}: {steps}"


def cluster_poll_printer(
    console: Console, progress: Progress, label: str = "cluster", describe: Callable[[Snapshot], str] = describe_cluster
) -> Callable[[Snapshot], None]:
    """An ``on_poll`` callback: the live line follows every poll, a printed line every change."""
    task = progress.add_task(label, total=None)
    last: list[str] = []

    def show(snapshot: Snapshot) -> None:
        text = describe(snapshot)
        progress.update(task, description=text)
        if last != [text]:
            console.print(f"{elapsed(snapshot.elapsed)} {text}")
            last[:] = [text]

    return show
