"""``emr-lineage listener fetch`` and ``listener stage``: the pinned OpenLineage listener jar (and, for fetch,
the pinned Iceberg Spark runtime of local runs), fetched with Maven into the user cache and verified; the
listener staged from there into the artifacts bucket.

With ``--pin``: verify the jars through Maven (the repository's SHA-1, and the listener's PGP signature when
cdk.json names the release key) instead of against a pin, and write their SHA-256 into cdk.json.

Exit codes (docs/cli.md): 0 fetched (or already there) and, for stage, staged; 2 it could
not (no pin, Maven missing or failing or timing out, not the listener jar, checksum or signature
refused, cdk.json pins another SHA-256, missing SSM parameter or bucket, AWS error), one ``error:``
line; 130 interrupted (nothing half-written is left in the cache).
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import click

from emr_lineage.cli.emr_options import artifacts_bucket_option, pin_options
from emr_lineage.cli.options import settings_options
from emr_lineage.cli.output import Command
from emr_lineage.listener.jar import FetchedJar
from emr_lineage.listener.maven import LocalJars, fetch_jar, fetch_jars
from emr_lineage.listener.pin import PinResult, pin_jars, pin_listener
from emr_lineage.settings.loader import load_settings
from emr_lineage.settings.model import OpenLineageSettings
from emr_lineage.settings.versions import ListenerArtifact, MavenJar


@click.command("fetch", cls=Command)
@settings_options
@pin_options
@click.option(
    "--class-archive",
    is_flag=True,
    help="Also make local Spark's class archive for a classpath with the jars, once: local runs "
    "(demo, run-local) then start seconds faster. make setup passes it.",
)
def fetch_command(
    env: str, cdk_json: Path, pin: bool, pgp_key: Path | None, replace_pin: bool, class_archive: bool
) -> None:
    """Fetch the pinned OpenLineage Spark listener jar and the pinned Iceberg Spark runtime of local runs
    with Maven into the user cache and verify them.

    Each jar must have the SHA-256 pinned in cdk.json; a jar already in the cache with it is used
    without running Maven, the others come from one Maven run. Nothing is kept when one does not match.
    With --pin, the jars are verified through Maven instead and their SHA-256 written into cdk.json
    (docs/listener.md). The cache is the user cache directory, or the one EMR_LINEAGE_LISTENER_DIR names.
    """
    _check_pin_options(pin, pgp_key, replace_pin)
    settings = load_settings(env, cdk_json)
    versions = settings.versions
    if pin:
        listener, runtime = versions.openlineage_spark, versions.iceberg_spark_runtime
        results = pin_jars(listener, [runtime], cdk_json, pgp_key=pgp_key, replace=replace_pin)
        deploy = f"commit it, then stage it and redeploy (make stage-listener deploy ENV={settings.name})"
        _report_pin(results[0], listener, deploy)
        _report_pin(results[1], runtime, "commit it")
    else:
        jars = fetch_jars(versions)
        for jar in jars:
            _report_fetched(jar)
        if class_archive:
            _prepare_local_spark(settings.openlineage, LocalJars(jars[0].path, jars[1].path))


@click.command("stage", cls=Command)
@settings_options
@artifacts_bucket_option
@pin_options
def stage_command(
    env: str, cdk_json: Path, bucket: str | None, pin: bool, pgp_key: Path | None, replace_pin: bool
) -> None:
    """Fetch the pinned OpenLineage Spark listener (as listener fetch does) and upload it to the artifacts bucket.

    Nothing is uploaded unless the jar is the listener's with the SHA-256 pinned in cdk.json. A
    second run with the same jar changes nothing. With --pin, the jar is verified through Maven
    instead and its SHA-256 written into cdk.json before the upload (docs/listener.md).
    """
    from emr_lineage.aws.clients import AwsClients
    from emr_lineage.listener.stage import upload_jar

    _check_pin_options(pin, pgp_key, replace_pin)
    settings = load_settings(env, cdk_json)
    clients = AwsClients.for_settings(settings)
    bucket = bucket or _bucket_from_ssm(clients, settings.name)
    artifact = settings.versions.openlineage_spark
    if pin:
        pinned = pin_listener(artifact, cdk_json, pgp_key=pgp_key, replace=replace_pin)
        _report_pin(pinned, artifact, f"commit it and redeploy the EMR stack (make deploy ENV={settings.name})")
        jar = pinned.jar
    else:
        jar = fetch_jar(artifact)
        _report_fetched(jar)
    staged = upload_jar(jar, artifact, bucket, s3_client=clients.s3)
    state = "uploaded" if staged.uploaded else "already staged, unchanged"
    click.echo(f"{staged.uri}: {state} ({staged.size} bytes, sha256 {staged.sha256})")


def _check_pin_options(pin: bool, pgp_key: Path | None, replace_pin: bool) -> None:
    if not pin and (pgp_key or replace_pin):
        raise click.UsageError(f"{'--pgp-key' if pgp_key else '--replace-pin'} only goes with --pin")


def _bucket_from_ssm(clients: Any, env: str) -> str:
    from emr_lineage.aws import parameters
    from emr_lineage.aws.clients import AwsError, read_parameter

    try:
        return read_parameter(clients.ssm, parameters.artifacts_bucket(env), env=env, published_by="EMR stack")
    except AwsError as exc:
        raise AwsError(f"{exc}, or pass --bucket") from None


def _prepare_local_spark(openlineage: OpenLineageSettings, jars: LocalJars) -> None:
    """The class archive of local Spark with the listener and the Iceberg runtime on its classpath (demo,
    run-local start faster)."""
    from emr_lineage.spark.conf import ListenerConfig, local_listener_properties
    from emr_lineage.spark.local import prepare_class_archive

    listener = ListenerConfig.for_settings(openlineage, events_file=os.devnull)
    properties = local_listener_properties(listener, jar=str(jars.listener), beside=[str(jars.iceberg_runtime)])
    archive, made = prepare_class_archive(properties)
    click.echo(
        f"{archive}: local Spark's class archive for the listener's classpath{' made' if made else ', already made'}"
    )


def _report_fetched(jar: FetchedJar) -> None:
    how = f"fetched {jar.coordinates} with Maven" if jar.fetched else "already fetched"
    click.echo(f"{jar.path}: {how}, verified against the pin ({jar.size} bytes, sha256 {jar.sha256})")


def _report_pin(result: PinResult, artifact: MavenJar, next_step: str) -> None:
    jar = result.jar
    click.echo(f"{jar.path}: fetched {jar.coordinates} with Maven ({jar.size} bytes, sha256 {jar.sha256})")
    click.echo(f"verified: SHA-1 {result.published_sha1}, the one the Maven repository published")
    if result.signature is not None:
        click.echo(f"verified: PGP signature by {result.signature.fingerprint} ({result.signature.signer})")
    key = ".".join(artifact.pin_path[2:])
    if not result.changed:
        click.echo(f"{result.cdk_json}: {key} already pins {jar.sha256}; unchanged")
        return
    what = "replaced the pin" if result.previous else "pinned"
    users = "clusters" if isinstance(artifact, ListenerArtifact) else "local runs"
    click.echo(f"{result.cdk_json}: {what} {key} = {jar.sha256}; {next_step} so {users} get it")
