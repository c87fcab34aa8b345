"""``emr-lineage gateway post``: send local OpenLineage events to a Marquez or the lineage gateway (docs/cli.md).

Exit status: 0 every event was posted; 1 the server refused some or redirected (each listed with where it
was read); 2 it could not run (a bad path or event file, no events at all, a server that is unreachable,
not a lineage endpoint or unavailable after the retries); 130 interrupted.
"""

from __future__ import annotations

import time

import click

from emr_lineage.cli.gateway import API_KEY_ENV_VAR
from emr_lineage.cli.options import events_option, http_base_url, marquez_option, timeout_option
from emr_lineage.cli.output import Command, fail
from emr_lineage.cli.progress import Steps
from emr_lineage.errors import EXIT_CHECK_FAILED
from emr_lineage.http import is_redirect
from emr_lineage.pipeline.send import KEY_REFUSED, PendingEvent, Refusal, in_run_order, post_events, read_events

clock = time.monotonic  # the progress lines' clock (tests replace it)


@click.command("post", cls=Command)
@events_option(required=True)
@marquez_option("Send the events to this Marquez or lineage gateway", required=True, callback=http_base_url)
@click.option(
    "--api-key",
    envvar=API_KEY_ENV_VAR,
    show_envvar=True,
    metavar="KEY",
    help="Bearer key (the gateway's API key); prefer the environment variable, a command line is visible to all.",
)
@timeout_option()
def post_command(events: tuple[str, ...], marquez_url: str, api_key: str | None, timeout: float) -> None:
    """Send local OpenLineage events to a Marquez (or the lineage gateway), with progress and a final count.

    Events go one at a time in the order they are read (paths in the order given), except that
    each run's events are put in eventTime order, so a run's START arrives before its COMPLETE.
    A refused event (HTTP 4xx: 400 bad event, 413 too large...) is listed with where it was read
    and the rest are still sent; a refused key (401, 403) or a redirect (3xx) stops the sending.
    --marquez may be the lineage gateway's URL.
    """
    url = marquez_url
    if any(not path for path in events):
        fail("--events '': empty path (give an events file or directory)")
    pending = in_run_order(read_events(events))
    if not pending:
        fail(f"{', '.join(events)}: no events to post (give the file or directory that holds them)")
    with Steps("events sent", len(pending), clock=clock) as steps:

        def show(_pending: PendingEvent, refusal: Refusal | None) -> None:
            if refusal is not None:
                steps.note(f"refused: {refusal.describe()}")
            steps.advance()

        result = post_events(pending, url, api_key=api_key, timeout=timeout, on_result=show)
    click.echo(f"posted {result.posted} of {len(pending)} events to {url}")
    if result.ok:
        return
    for refusal in result.refused:
        click.echo(f"refused: {refusal.describe()}")
    if result.not_sent:
        click.echo(f"not sent: {result.not_sent} events after the first refusal (each would get the same answer)")
    hint = ""
    if any(r.status in KEY_REFUSED for r in result.refused):
        hint = f" (the key was refused: check --api-key / {API_KEY_ENV_VAR})"
    elif any(is_redirect(r.status) for r in result.refused):
        hint = " (it redirects: give --marquez the URL it redirects to)"
    fail(f"{len(result.refused)} of {len(pending)} events refused by {url}{hint}", EXIT_CHECK_FAILED)
