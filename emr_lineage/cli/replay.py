"""``emr-lineage replay``: re-post the gateway's archived events to Marquez (docs/gateway.md).

Exit status: 0 every selected event was posted (or counted, with --dry-run); 1 some archived
bodies no longer pass the gateway's checks (skipped, each named); 2 it could not run (bucket,
Marquez unreachable or refusing, bad options); 130 interrupted.
"""

from __future__ import annotations

import datetime as dt
import sys

import boto3
import click
from rich.console import Console
from rich.progress import BarColumn, Progress, TextColumn, TimeElapsedColumn

from emr_lineage.cli.output import Command, fail
from emr_lineage.errors import EXIT_CHECK_FAILED
from emr_lineage.gateway.replay import plan_replay, replay
from emr_lineage.http import DEFAULT_TIMEOUT
from emr_lineage.marquez.client import MarquezClient


def _instant(value: str | None, option: str) -> dt.datetime | None:
    if value is None:
        return None
    try:
        moment = dt.datetime.fromisoformat(value)
    except ValueError:
        fail(f"{option} {value!r}: expected an ISO 8601 time, e.g. 2026-11-23T10:00Z")
    return moment if moment.tzinfo else moment.replace(tzinfo=dt.UTC)


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
    s3 = boto3.client("s3")
    plan = plan_replay(s3, bucket, since=_instant(since, "--since"), until=_instant(until, "--until"), run_id=run_id)
    copies = f" (left out: {plan.duplicates} copy/copies of a body archived again later)" if plan.duplicates else ""
    if dry_run:
        click.echo(f"{plan.events} event(s) of {len(plan.runs)} run(s) would be replayed from s3://{bucket}{copies}")
        return
    console = Console(stderr=True)
    progress = Progress(
        TextColumn("replaying"),
        BarColumn(),
        TextColumn("{task.completed}/{task.total}"),
        TimeElapsedColumn(),
        console=console,
        disable=not console.is_terminal,
    )
    with MarquezClient(marquez_url, timeout=timeout) as client, progress:
        task = progress.add_task("replay", total=plan.events)
        client.probe()
        result = replay(
            s3,
            bucket,
            plan,
            client.post_lineage_body,
            on_event=lambda _key: progress.advance(task),
        )
    for skipped in result.skipped:
        click.echo(f"skipped {skipped}", err=True)
    click.echo(f"replayed {result.posted} event(s) of {len(plan.runs)} run(s) to {marquez_url}{copies}")
    if result.skipped:
        sys.exit(EXIT_CHECK_FAILED)
