"""``emr-lineage stage-listener``: put the pinned OpenLineage listener jar into the artifacts bucket.

Exit codes (docs/cli.md): 0 staged (or already there); 2 it could not (no pin, download failed or
timed out, not a jar, checksum mismatch, missing SSM parameter or bucket, AWS error), one
``error:`` line; 130 interrupted.
"""

from __future__ import annotations

from pathlib import Path

import click

from emr_lineage.aws import parameters
from emr_lineage.aws.clients import AwsClients, AwsError, read_parameter
from emr_lineage.cli.output import Command, settings_options
from emr_lineage.listener.stage import DOWNLOAD_TIMEOUT, download_client, stage_listener
from emr_lineage.settings.loader import load_settings


def _bucket_from_ssm(clients: AwsClients, env: str) -> str:
    try:
        return read_parameter(clients.ssm, parameters.artifacts_bucket(env), env=env, published_by="EMR stack")
    except AwsError as exc:
        raise AwsError(f"{exc}, or pass --bucket") from None


@click.command("stage-listener", cls=Command)
@settings_options
@click.option("--bucket", default=None, help="Artifacts bucket name (skips the SSM lookup).")
@click.option(
    "--pin",
    "trust_on_first_use",
    is_flag=True,
    help="Trust on first use: when cdk.json pins no SHA-256 yet, download, print the checksum to pin, and stage.",
)
@click.option(
    "--maven-repository",
    envvar="EMR_LINEAGE_MAVEN_REPOSITORY",
    default=None,
    metavar="URL",
    help="Maven repository to download from instead of the configured one (a mirror). "
    "Env: EMR_LINEAGE_MAVEN_REPOSITORY.",
)
@click.option(
    "--timeout",
    type=click.FloatRange(min=0.1),
    default=DOWNLOAD_TIMEOUT,
    show_default=True,
    help="Deadline of the download in seconds, retries included.",
)
def stage_listener_command(
    env: str,
    cdk_json: Path,
    bucket: str | None,
    trust_on_first_use: bool,
    maven_repository: str | None,
    timeout: float,
) -> None:
    """Download the OpenLineage Spark listener, verify it and upload it to the artifacts bucket.

    Nothing is uploaded when the download fails, is not a jar, or its SHA-256 does not match
    cdk.json. A second run with the same jar changes nothing.
    """
    settings = load_settings(env, cdk_json)
    clients = AwsClients.for_settings(settings)
    bucket = bucket or _bucket_from_ssm(clients, settings.name)
    with download_client(timeout) as http:
        result = stage_listener(
            settings.versions.openlineage_spark,
            bucket,
            s3_client=clients.s3,
            http=http,
            maven_repository=maven_repository,
            trust_on_first_use=trust_on_first_use,
        )
    state = "uploaded" if result.uploaded else "already staged, unchanged"
    click.echo(f"{result.uri}: {state} ({result.size} bytes, sha256 {result.sha256})")
    if not result.pinned:
        click.echo(
            "NOT PINNED: verify this checksum against the one Maven Central publishes, then set\n"
            f'  "sha256": "{result.sha256}"\n'
            "in cdk.json under emr-lineage.versions.openlineage_spark and redeploy."
        )
