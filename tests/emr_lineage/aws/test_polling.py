"""The one poll loop: until done, a pause between polls, a deadline, every snapshot seen."""

from __future__ import annotations

import itertools

from emr_lineage.aws.polling import poll_until


def test_polls_until_done_pausing_between_polls() -> None:
    states, pauses, seen = iter(["PENDING", "RUNNING", "SUCCESS"]), [], []
    ticks = itertools.count(start=100, step=5)
    last, done = poll_until(
        lambda elapsed: (next(states), elapsed),
        lambda snapshot: snapshot[0] == "SUCCESS",
        poll_interval=5,
        pause=pauses.append,
        clock=lambda: next(ticks),
        on_poll=seen.append,
    )
    assert done and last == ("SUCCESS", 15)  # the clock read at the start (100), then once per poll
    assert pauses == [5, 5] and [s[0] for s in seen] == ["PENDING", "RUNNING", "SUCCESS"]


def test_stops_without_the_poll_that_would_pass_the_deadline() -> None:
    ticks = itertools.count(step=30)
    pauses: list[float] = []
    last, done = poll_until(
        lambda elapsed: elapsed,
        lambda snapshot: False,
        poll_interval=30,
        pause=pauses.append,
        clock=lambda: next(ticks),
        deadline_seconds=100,
        started=0,
    )
    assert not done and last == 90 and len(pauses) == 3  # polls at 0, 30, 60, 90 s; one at 120 would pass 100
