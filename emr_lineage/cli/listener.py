"""``emr-lineage stage-listener``: put the pinned OpenLineage listener jar into the artifacts bucket.

With ``--pin``: verify the jar against the repository's published checksum (and PGP signature when
cdk.json names the release key), stage it, and write its SHA-256 into cdk.json.

Exit codes (docs/cli.md): 0 staged (or already there); 2 it could not (no pin, download failed or
timed out, not the listener jar, checksum or signature refused, cdk.json pins another SHA-256,
missing SSM parameter or bucket, AWS error), one ``error:`` line; 130 interrupted.
"""

from __future__ import annotations

from pathlib import Path

import click

from emr_lineage.aws import parameters
from emr_lineage.aws.clients import AwsClients, AwsError, read_parameter
from emr_lineage.cli.options import settings_options
from emr_lineage.cli.output import Command
from emr_lineage.listener.pin import PinResult, pin_listener
from emr_lineage.listener.stage import DOWNLOAD_TIMEOUT, StageResult, download_client, stage_listener
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
    is_flag=True,
    help="Verify the jar against the repository's .sha512/.sha256/.sha1 (and .asc when cdk.json sets "
    "pgp_fingerprint) instead of a pin, stage it, and write its SHA-256 into cdk.json.",
)
@click.option(
    "--pgp-key",
    type=click.Path(exists=True, dir_okay=False, path_type=Path),
    default=None,
    metavar="FILE",
    help="With --pin: armored public key file holding the key whose fingerprint cdk.json sets "
    "(versions.openlineage_spark.pgp_fingerprint). No keyserver is asked.",
)
@click.option(
    "--replace-pin",
    is_flag=True,
    help="With --pin: replace a different SHA-256 already pinned in cdk.json (else that is refused).",
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
    pin: bool,
    pgp_key: Path | None,
    replace_pin: bool,
    maven_repository: str | None,
    timeout: float,
) -> None:
    """Download the OpenLineage Spark listener, verify it and upload it to the artifacts bucket.

    Nothing is uploaded when the download fails, is not the listener jar, or its SHA-256 does not
    match cdk.json. A second run with the same jar changes nothing. With --pin, the jar is verified
    against the repository instead and its SHA-256 is written into cdk.json (docs/listener.md).
    """
    if not pin and (pgp_key or replace_pin):
        raise click.UsageError(f"{'--pgp-key' if pgp_key else '--replace-pin'} only goes with --pin")
    settings = load_settings(env, cdk_json)
    clients = AwsClients.for_settings(settings)
    bucket = bucket or _bucket_from_ssm(clients, settings.name)
    artifact = settings.versions.openlineage_spark
    with download_client(timeout) as http:
        if pin:
            pinned = pin_listener(
                artifact,
                bucket,
                cdk_json,
                s3_client=clients.s3,
                http=http,
                maven_repository=maven_repository,
                pgp_key=pgp_key,
                replace=replace_pin,
            )
            _report_staged(pinned.staged)
            _report_pin(pinned, settings.name)
        else:
            staged = stage_listener(
                artifact, bucket, s3_client=clients.s3, http=http, maven_repository=maven_repository
            )
            _report_staged(staged)


def _report_staged(result: StageResult) -> None:
    state = "uploaded" if result.uploaded else "already staged, unchanged"
    click.echo(f"{result.uri}: {state} ({result.size} bytes, sha256 {result.sha256})")


def _report_pin(result: PinResult, env: str) -> None:
    click.echo(f"verified: {result.checksum.label} published at {result.checksum.url}")
    if result.signature is not None:
        click.echo(f"verified: PGP signature by {result.signature.fingerprint} ({result.signature.signer})")
    if not result.changed:
        click.echo(f"{result.cdk_json}: already pins sha256 {result.staged.sha256}; unchanged")
        return
    what = "replaced the pin" if result.previous else "pinned"
    click.echo(
        f"{result.cdk_json}: {what} versions.openlineage_spark.sha256 = {result.staged.sha256}; "
        f"commit it and redeploy the EMR stack (make deploy ENV={env}) so clusters get it"
    )
