"""cli/progress.Steps, the one progress helper: a bar on a terminal; off it, a whole line each tenth."""

from __future__ import annotations

import io

from rich.console import Console

from emr_lineage.aws.emr import Snapshot
from emr_lineage.cli.progress import Steps, cluster_poll_printer


class Clock:
    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


def _console(terminal: bool) -> tuple[Console, io.StringIO]:
    out = io.StringIO()
    console = Console(file=out, force_terminal=terminal, width=40, soft_wrap=True, highlight=False, markup=False)
    return console, out


def test_off_a_terminal_a_line_each_tenth_and_the_last_with_the_elapsed_time() -> None:
    console, out = _console(terminal=False)
    clock = Clock()
    with Steps("events posted", 25, console=console, clock=clock) as steps:
        for _ in range(25):
            clock.now += 7
            steps.advance()
    lines = out.getvalue().splitlines()
    assert lines == [
        "[00:21] events posted: 3/25",
        "[00:42] events posted: 6/25",
        "[01:03] events posted: 9/25",
        "[01:24] events posted: 12/25",
        "[01:45] events posted: 15/25",
        "[02:06] events posted: 18/25",
        "[02:27] events posted: 21/25",
        "[02:48] events posted: 24/25",
        "[02:55] events posted: 25/25",
    ]


def test_lines_are_whole_and_a_count_is_printed_once() -> None:
    console, out = _console(terminal=False)
    what = "hours listed in s3://a-bucket-with-a-long-name/and/a/long/prefix"
    with Steps(what, 2, console=console, clock=Clock()) as steps:
        steps.advance(1)
        steps.advance(1, what=what + " again")  # the same count: no second line
        steps.note("refused: event 1 (400 bad event)")
        steps.advance(2)
    assert out.getvalue().splitlines() == [
        f"[00:00] {what}: 1/2",
        "[00:00] refused: event 1 (400 bad event)",
        f"[00:00] {what} again: 2/2",
    ]


def test_on_a_terminal_the_bar_replaces_the_lines_but_notes_are_printed() -> None:
    console, out = _console(terminal=True)
    with Steps("events posted", 3, console=console, clock=Clock()) as steps:
        steps.advance()
        steps.note("refused: event 1")
        steps.advance(3)
    text = out.getvalue()
    assert "refused: event 1" in text and "events posted: 1/3" not in text


def test_a_cluster_state_is_printed_when_it_changes() -> None:
    console, out = _console(terminal=False)
    steps = Steps("cluster", console=console, clock=Clock())
    show = cluster_poll_printer(steps)
    for seconds, state in ((5, "STARTING"), (35, "STARTING"), (65, "RUNNING")):
        show(Snapshot(cluster_id="j-1", cluster_state=state, cluster_reason=None, steps=(), elapsed=seconds))
    assert out.getvalue().splitlines() == ["[00:05] cluster STARTING: ", "[01:05] cluster RUNNING: "]
