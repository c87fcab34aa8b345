"""``emr-lineage gateway replay``: re-post the gateway's archived events to Marquez (docs/gateway.md).

Exit status: 0 every selected event was posted (or counted, with --dry-run); 1 some archived
bodies no longer pass the gateway's checks (skipped, each named); 2 it could not run (archive,
Marquez unreachable or refusing, bad options, a window that ends before it starts, nothing archived
in the window, a --run the archive does not hold in the window: as ``runs``, ``impact`` and ``audit``
treat a window without events or an unknown --dataset);
130 interrupted. Progress (hours listed, events posted) goes to stderr.
"""

from __future__ import annotations

import sys

import click

from emr_lineage.analysis.sources import parse_archive_uri
from emr_lineage.aws.archive import ArchiveLocation
from emr_lineage.aws.clients import aws_client
from emr_lineage.cli.options import (
    ARCHIVE_FORM,
    archive_option,
    dry_run_option,
    http_base_url,
    marquez_option,
    since_option,
    timeout_option,
    until_option,
)
from emr_lineage.cli.output import Command, fail
from emr_lineage.cli.progress import Steps
from emr_lineage.errors import EXIT_CHECK_FAILED
from emr_lineage.gateway.replay import ReplayError, ReplayPlan, ReplayWindow, plan_replay, replay
from emr_lineage.lineage.times import parse_instant
from emr_lineage.marquez.client import MarquezClient, NotDelivered


def _instant(value: str | None, option: str):
    return None if value is None else parse_instant(value, option)


def _window_text(since: str | None, until: str | None, arrived_since: str | None, arrived_until: str | None) -> str:
    parts = []
    if since is not None or until is not None:
        parts.append(f"events from {since or 'the start'} to {until or 'now'}")
    if arrived_since is not None:
        parts.append(f"arrived from {arrived_since} to {arrived_until or 'now'}")
    return ", ".join(parts) or "the whole archive"


@click.command("replay", cls=Command)
@archive_option(required=True, help=f"The lineage gateway's archive to re-post from: {ARCHIVE_FORM}.")
@marquez_option(
    "Re-post to this Marquez itself (the lineage gateway's URL is refused)", required=True, callback=http_base_url
)
@since_option()
@until_option()
@click.option(
    "--arrived-since",
    metavar="ISO",
    help="Only the events that reached the gateway in this hour or later (the archive's hour of arrival).",
)
@click.option(
    "--arrived-until",
    metavar="ISO",
    help="Only the events that reached the gateway by this hour (needs --arrived-since).",
)
@click.option(
    "--run", "run_id", metavar="RUN_ID", help="Only this run (the root or parent run for a Spark application)."
)
@dry_run_option("Count what would be replayed; post nothing.")
@timeout_option()
def replay_command(
    archive: str,
    marquez_url: str,
    since: str | None,
    until: str | None,
    arrived_since: str | None,
    arrived_until: str | None,
    run_id: str | None,
    dry_run: bool,
    timeout: float,
) -> None:
    """Re-post archived lineage events to Marquez, run by run, in each run's order (idempotent).

    --since/--until select by event time (eventTime), as in impact, drift, audit and runs;
    --arrived-since/--arrived-until by the hour the gateway received the events. Both windows
    may be given; the events are then in both.
    """
    location = parse_archive_uri(archive)
    window = ReplayWindow(
        since=_instant(since, "--since"),
        until=_instant(until, "--until"),
        arrived_since=_instant(arrived_since, "--arrived-since"),
        arrived_until=_instant(arrived_until, "--arrived-until"),
        run_id=run_id,
    )
    s3 = aws_client("s3")
    with Steps("hours listed") as steps:
        plan = plan_replay(s3, location, window, on_prefix=lambda done, total: steps.advance(done, total))
    if not plan.runs:  # as runs, impact, drift and audit end when their window holds no events
        where = _window_text(since, until, arrived_since, arrived_until)
        if run_id is not None:
            raise ReplayError(f"--run {run_id!r}: nothing archived for this run in {location.uri}, {where}")
        raise ReplayError(
            f"nothing archived in {location.uri}, {where}; check --archive and the window "
            "(--since/--until: event time, --arrived-since/--arrived-until: arrival)"
        )
    copies = f" (left out: {plan.duplicates} copy/copies of a body archived again later)" if plan.duplicates else ""
    if dry_run:
        click.echo(f"{plan.events} event(s) of {len(plan.runs)} run(s) would be replayed from {location.uri}{copies}")
        return
    _replay_plan(s3, location, plan, marquez_url, timeout, copies)


def _replay_plan(
    s3: object, location: ArchiveLocation, plan: ReplayPlan, marquez_url: str, timeout: float, copies: str
) -> None:
    with MarquezClient(marquez_url, timeout=timeout) as client, Steps("events posted", plan.events) as steps:
        client.probe()
        try:
            result = replay(s3, location, plan, client.post_lineage_body, on_event=lambda _key: steps.advance())
        except NotDelivered as exc:
            fail(f"{exc}; nothing more was sent (replaying again is harmless)", EXIT_CHECK_FAILED)
    for skipped in result.skipped:
        click.echo(f"skipped {skipped}", err=True)
    click.echo(f"replayed {result.posted} event(s) of {len(plan.runs)} run(s) to {marquez_url}{copies}")
    if result.skipped:
        sys.exit(EXIT_CHECK_FAILED)
