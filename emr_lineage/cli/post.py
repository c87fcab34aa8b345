"""``emr-lineage post``: send local OpenLineage events to a Marquez or the lineage gateway (docs/cli.md).

Exit status: 0 every event was posted; 1 the server refused some (each listed with where it was
read); 2 it could not run (a bad path or event file, a server that is unreachable, not a lineage
endpoint or unavailable after the retries); 130 interrupted.
"""

from __future__ import annotations

import time
from collections.abc import Callable

import click
from rich.console import Console

from emr_lineage.cli.gateway import API_KEY_ENV_VAR
from emr_lineage.cli.output import Command, fail
from emr_lineage.cli.progress import elapsed, live_progress
from emr_lineage.errors import EXIT_CHECK_FAILED
from emr_lineage.http import DEFAULT_TIMEOUT
from emr_lineage.pipeline.send import KEY_REFUSED, PendingEvent, Refusal, in_run_order, post_events, read_events

# Off a terminal, a progress line each tenth of the events (a CI log stays short).
_PRINTED_STEPS = 10


def _progress_printer(
    console: Console, total: int, on_live: Callable[[int], None], clock: Callable[[], float] = time.monotonic
) -> Callable[[PendingEvent, Refusal | None], None]:
    """An ``on_result`` callback: the live line follows every event; off a terminal, a printed line
    every tenth of the events and one per refusal, each prefixed with the elapsed time."""
    began = clock()
    done = [0]
    every = max(1, -(-total // _PRINTED_STEPS))

    def show(pending: PendingEvent, refusal: Refusal | None) -> None:
        done[0] += 1
        on_live(done[0])
        if refusal is not None:
            console.print(f"{elapsed(clock() - began)} refused: {refusal.describe()}", highlight=False)
        elif not console.is_terminal and (done[0] % every == 0 or done[0] == total):
            console.print(f"{elapsed(clock() - began)} {done[0]}/{total} events sent", highlight=False)

    return show


@click.command("post", cls=Command)
@click.option(
    "--events",
    "events",
    multiple=True,
    required=True,
    metavar="PATH",
    help="OpenLineage events: .jsonl/.json files or directories (repeatable), read as `graph --events` reads them.",
)
@click.option(
    "--marquez",
    "url",
    required=True,
    metavar="URL",
    help="Marquez API base URL (http://host:5000) or the lineage gateway's; events go to POST /api/v1/lineage.",
)
@click.option(
    "--api-key",
    envvar=API_KEY_ENV_VAR,
    show_envvar=True,
    metavar="KEY",
    help="Bearer key (the gateway's API key); prefer the environment variable, a command line is visible to all.",
)
@click.option(
    "--timeout",
    type=click.FloatRange(min=0.1),
    default=DEFAULT_TIMEOUT,
    show_default=True,
    metavar="SECONDS",
    help="Deadline of each event's request, retries included.",
)
def post_command(events: tuple[str, ...], url: str, api_key: str | None, timeout: float) -> None:
    """Send local OpenLineage events to a Marquez (or the lineage gateway), with progress and a final count.

    Events go one at a time in the order they are read (paths in the order given), except that
    each run's events are put in eventTime order, so a run's START arrives before its COMPLETE.
    A refused event (HTTP 4xx: 400 bad event, 413 too large...) is listed with where it was read
    and the rest are still sent; a refused key (401, 403) stops the sending.
    """
    if any(not path for path in events):
        fail("--events '': empty path (give an events file or directory)")
    pending = in_run_order(read_events(events))
    if not pending:
        click.echo(f"no events in {', '.join(events)}; nothing posted")
        return
    # soft_wrap: a progress or refusal line is printed whole, never folded at 80 columns off a terminal
    console = Console(stderr=True, soft_wrap=True)
    progress = live_progress(console)
    with progress:
        task = progress.add_task(f"posting to {url}", total=len(pending))

        def live(done: int) -> None:
            progress.update(task, completed=done, description=f"posting to {url}: {done}/{len(pending)}")

        result = post_events(
            pending, url, api_key=api_key, timeout=timeout, on_result=_progress_printer(console, len(pending), live)
        )
    click.echo(f"posted {result.posted} of {len(pending)} events to {url}")
    if result.ok:
        return
    for refusal in result.refused:
        click.echo(f"refused: {refusal.describe()}")
    if result.not_sent:
        click.echo(f"not sent: {result.not_sent} events after the key was refused")
    hint = ""
    if any(r.status in KEY_REFUSED for r in result.refused):
        hint = f" (the key was refused: check --api-key / {API_KEY_ENV_VAR})"
    fail(f"{len(result.refused)} of {len(pending)} events refused by {url}{hint}", EXIT_CHECK_FAILED)
