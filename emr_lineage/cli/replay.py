"""``emr-lineage replay``: re-post the gateway's archived events to Marquez (docs/gateway.md).

Exit status: 0 every selected event was posted (or counted, with --dry-run); 1 some archived
bodies no longer pass the gateway's checks (skipped, each named); 2 it could not run (bucket,
Marquez unreachable or refusing, bad options, a window that ends before it starts, a --run the
archive does not hold in the window: as ``impact`` and ``audit`` treat an unknown --dataset);
130 interrupted. Progress (hours listed, events posted) goes to stderr.
"""

from __future__ import annotations

import datetime as dt
import sys
import time
from collections.abc import Callable

import click
from rich.console import Console
from rich.progress import Progress

from emr_lineage.aws.clients import aws_client
from emr_lineage.cli.output import Command, fail
from emr_lineage.cli.progress import elapsed, live_progress
from emr_lineage.errors import EXIT_CHECK_FAILED
from emr_lineage.gateway.replay import ReplayError, ReplayPlan, plan_replay, replay
from emr_lineage.http import DEFAULT_TIMEOUT
from emr_lineage.lineage.times import parse_time
from emr_lineage.marquez.client import MarquezClient


def _instant(value: str | None, option: str) -> dt.datetime | None:
    if value is None:
        return None
    try:
        return parse_time(value)
    except ValueError:
        fail(f"{option} {value!r}: expected an ISO 8601 time, e.g. 2026-11-23T10:00Z")


# Off a terminal, a progress line each tenth of the hours listed and of the events posted (as ``post``).
_PRINTED_STEPS = 10


def _step_printer(
    console: Console, progress: Progress, what: str, clock: Callable[[], float] = time.monotonic
) -> Callable[[int, int], None]:
    """A ``(done, total)`` callback: the live line follows every step; off a terminal, a printed line
    every tenth of the steps (and the last), prefixed with the elapsed time."""
    task = progress.add_task(what, total=None)
    began = clock()

    def show(done: int, total: int) -> None:
        progress.update(task, total=total, completed=done, description=f"{what}: {done}/{total}")
        every = max(1, -(-total // _PRINTED_STEPS))
        if not console.is_terminal and (done % every == 0 or done == total):
            console.print(f"{elapsed(clock() - began)} {what}: {done}/{total}", highlight=False)

    return show


def _window(since: str | None, until: str | None) -> str:
    if since is None:
        return "the whole archive"
    return f"the hours of arrival from {since} to {until or 'now'}"


@click.command("replay", cls=Command)
@click.option("--bucket", required=True, metavar="NAME", help="The gateway's archive bucket.")
@click.option("--marquez", "marquez_url", required=True, metavar="URL", help="Marquez API base URL.")
@click.option("--since", metavar="ISO", help="First hour of arrival to replay (default: the whole archive).")
@click.option("--until", metavar="ISO", help="Last hour of arrival to replay (default: now; needs --since).")
@click.option(
    "--run", "run_id", metavar="RUN_ID", help="Only this run (the root or parent run for a Spark application)."
)
@click.option("--dry-run", is_flag=True, help="Count what would be replayed; post nothing.")
@click.option("--timeout", type=click.FloatRange(min=0.1), default=DEFAULT_TIMEOUT, show_default=True)
def replay_command(
    bucket: str,
    marquez_url: str,
    since: str | None,
    until: str | None,
    run_id: str | None,
    dry_run: bool,
    timeout: float,
) -> None:
    """Re-post archived lineage events to Marquez, run by run, in each run's order (idempotent)."""
    s3 = aws_client("s3")
    console = Console(stderr=True, soft_wrap=True)  # progress lines whole, off a terminal too
    with live_progress(console) as progress:
        plan = plan_replay(
            s3,
            bucket,
            since=_instant(since, "--since"),
            until=_instant(until, "--until"),
            run_id=run_id,
            on_prefix=_step_printer(console, progress, "hours listed"),
        )
    if run_id is not None and not plan.runs:
        raise ReplayError(f"--run {run_id!r}: nothing archived for this run in s3://{bucket}, {_window(since, until)}")
    copies = f" (left out: {plan.duplicates} copy/copies of a body archived again later)" if plan.duplicates else ""
    if dry_run:
        click.echo(f"{plan.events} event(s) of {len(plan.runs)} run(s) would be replayed from s3://{bucket}{copies}")
        return
    _replay_plan(s3, bucket, plan, console, marquez_url, timeout, copies)


def _replay_plan(
    s3: object, bucket: str, plan: ReplayPlan, console: Console, marquez_url: str, timeout: float, copies: str
) -> None:
    with MarquezClient(marquez_url, timeout=timeout) as client, live_progress(console) as progress:
        client.probe()
        step = _step_printer(console, progress, "events posted")
        posted = [0]

        def advance(_key: str) -> None:
            posted[0] += 1
            step(posted[0], plan.events)

        result = replay(s3, bucket, plan, client.post_lineage_body, on_event=advance)
    for skipped in result.skipped:
        click.echo(f"skipped {skipped}", err=True)
    click.echo(f"replayed {result.posted} event(s) of {len(plan.runs)} run(s) to {marquez_url}{copies}")
    if result.skipped:
        sys.exit(EXIT_CHECK_FAILED)
