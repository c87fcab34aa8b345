"""``emr-lineage gateway serve``: the lineage gateway on this machine (docs/gateway.md).

The same ingest and forwarder code as the Lambdas, on 127.0.0.1, against the S3 and SQS that
``AWS_ENDPOINT_URL`` names (or AWS). Exit status: 0 after SIGINT/SIGTERM and the drain; 2 it
could not start (bucket or queue missing without --create, port in use, bad options).
"""

from __future__ import annotations

import os
import threading

import click

from emr_lineage.analysis.sources import parse_archive_uri
from emr_lineage.cli.options import archive_option, marquez_option
from emr_lineage.cli.output import Command, fail
from emr_lineage.gateway.config import DEFAULT_FORWARD_RETRIES, DEFAULT_MAX_EVENT_BYTES
from emr_lineage.gateway.local import HEALTH_PATH, LocalGateway, LocalGatewaySettings
from emr_lineage.marquez.api import LINEAGE_BATCH_ENDPOINT, LINEAGE_ENDPOINT, base_url
from emr_lineage.settings.limits import LARGEST_EVENT_BYTES

API_KEY_ENV_VAR = "EMR_LINEAGE_API_KEY"


def api_key_from_env() -> str | None:
    """The Bearer key of the lineage gateway: ``$EMR_LINEAGE_API_KEY``, None when unset or empty."""
    return os.environ.get(API_KEY_ENV_VAR) or None


DEFAULT_DRAIN_SECONDS = 30.0


def _archive_bucket(archive: str) -> str:
    """The bucket of ``--archive s3://bucket``; the gateway writes its archive at the root."""
    location = parse_archive_uri(archive)
    if location.root:
        fail(f"--archive {archive}: the gateway writes its archive at a bucket's root; give s3://{location.bucket}")
    return location.bucket


@click.command("serve", cls=Command)
@click.option("--port", type=click.IntRange(0, 65535), default=5080, show_default=True, help="Port on 127.0.0.1.")
@marquez_option("Forward the events to this Marquez", required=True)
@archive_option(
    required=True,
    help="Archive every event taken in this bucket, s3://bucket: the gateway writes at its root (no prefix).",
)
@click.option("--queue", required=True, metavar="NAME", help="SQS FIFO queue (.fifo added when missing).")
@click.option("--create", is_flag=True, help="Create the bucket, the FIFO queue and its dead-letter queue.")
@click.option(
    "--max-event-bytes",
    type=click.IntRange(min=1, max=LARGEST_EVENT_BYTES),
    default=DEFAULT_MAX_EVENT_BYTES,
    show_default=True,
    help="Largest accepted event (413 above).",
)
@click.option(
    "--retries",
    type=click.IntRange(0, 10),
    default=DEFAULT_FORWARD_RETRIES,
    show_default=True,
    help="Retries of one event before it goes back to the queue.",
)
@click.option(
    "--drain-seconds",
    type=click.FloatRange(min=0),
    default=DEFAULT_DRAIN_SECONDS,
    show_default=True,
    help="After SIGINT/SIGTERM, how long to keep forwarding what is queued.",
)
def serve_command(
    port: int,
    marquez_url: str,
    archive: str,
    queue: str,
    create: bool,
    max_event_bytes: int,
    retries: int,
    drain_seconds: float,
) -> None:
    """Accept lineage events (the listener's HTTP transport URL), forward them to Marquez, until SIGINT/SIGTERM.

    Events are forwarded to --marquez and archived in --archive, which is s3://bucket: the gateway
    writes its archive at the bucket's root. With EMR_LINEAGE_API_KEY set, requests need
    "Authorization: Bearer <key>".
    """
    try:
        marquez_url = base_url(marquez_url)
    except ValueError as exc:
        fail(f"--marquez: {exc}")
    bucket = _archive_bucket(archive)
    if os.environ.get(API_KEY_ENV_VAR) == "":
        fail(f"{API_KEY_ENV_VAR} is set but empty: set the key, or unset it to run without authentication")
    settings = LocalGatewaySettings(
        marquez_url=marquez_url,
        bucket=bucket,
        queue=queue,
        api_key=api_key_from_env(),
        max_event_bytes=max_event_bytes,
        retries=retries,
    )
    try:
        gateway = LocalGateway(settings, port=port, create=create)
    except OSError as exc:
        fail(f"cannot listen on 127.0.0.1:{port}: {exc.strerror or exc}")
    auth = "Bearer key required" if settings.api_key else f"no key ({API_KEY_ENV_VAR} unset)"
    click.echo(
        f"gateway on {gateway.url}{LINEAGE_ENDPOINT} and {LINEAGE_BATCH_ENDPOINT} (health {gateway.url}{HEALTH_PATH}; "
        f"{auth}); archive s3://{bucket}, queue {settings.queue_name}, forwarding to {marquez_url}",
        err=True,
    )
    gateway.start()
    try:
        threading.Event().wait()  # until a signal raises KeyboardInterrupt here
    except KeyboardInterrupt:  # Ctrl-C or SIGTERM (the group maps SIGTERM to it): drain, then exit 0
        click.echo(f"stopping: forwarding what is queued (up to {drain_seconds:g}s)", err=True)
        left = gateway.stop(drain_seconds)
        counts = gateway.counts()
        click.echo(
            f"stopped; {counts['forwarded']} event(s) forwarded, {counts['refused']} refused by Marquez, "
            f"{counts['dead_lettered']} dead-lettered after {settings.max_receive_count} tries, {left} still queued",
            err=True,
        )
