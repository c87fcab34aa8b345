"""``emr-lineage stage-listener``: put the pinned OpenLineage listener jar into the artifacts bucket."""

from __future__ import annotations

import boto3
import click
from botocore.exceptions import BotoCoreError, ClientError

from emr_lineage.aws import parameters
from emr_lineage.listener.stage import ListenerError, stage_listener
from emr_lineage.settings.loader import ConfigError, load_settings


def _one_line(exc: Exception) -> str:
    text = str(exc).strip()
    return text.splitlines()[0] if text else type(exc).__name__


def _bucket_from_ssm(env: str) -> str:
    name = parameters.artifacts_bucket(env)
    try:
        return boto3.client("ssm").get_parameter(Name=name)["Parameter"]["Value"]
    except ClientError as exc:
        if exc.response.get("Error", {}).get("Code") == "ParameterNotFound":
            raise click.ClickException(
                f"SSM parameter {name} not found: deploy the {env} stacks first, or pass --bucket"
            ) from None
        raise click.ClickException(f"reading SSM parameter {name}: {_one_line(exc)}") from None
    except BotoCoreError as exc:
        raise click.ClickException(f"reading SSM parameter {name}: {_one_line(exc)}") from None


@click.command("stage-listener")
@click.option(
    "--env",
    "env",
    default=None,
    help="Environment from cdk.json (default: dev); the bucket comes from its SSM parameter.",
)
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
def stage_listener_command(
    env: str | None, bucket: str | None, trust_on_first_use: bool, maven_repository: str | None
) -> None:
    """Download the OpenLineage Spark listener, verify its SHA-256 and upload it to the artifacts bucket.

    Nothing is uploaded when the download fails or the checksum does not match cdk.json.
    A second run with the same jar changes nothing.
    """
    try:
        settings = load_settings(env)
    except ConfigError as exc:
        raise click.ClickException(str(exc)) from None
    artifact = settings.versions.openlineage_spark
    bucket = bucket or _bucket_from_ssm(settings.name)
    try:
        result = stage_listener(
            artifact,
            bucket,
            s3_client=boto3.client("s3"),
            maven_repository=maven_repository,
            trust_on_first_use=trust_on_first_use,
        )
    except ListenerError as exc:
        raise click.ClickException(str(exc)) from None
    except (ClientError, BotoCoreError) as exc:
        raise click.ClickException(f"uploading to s3://{bucket}: {_one_line(exc)}; nothing staged") from None
    state = "uploaded" if result.uploaded else "already staged, unchanged"
    click.echo(f"{result.uri}: {state} ({result.size} bytes, sha256 {result.sha256})")
    if not result.pinned:
        click.echo(
            "NOT PINNED: verify this checksum against the one Maven Central publishes, then set\n"
            f'  "sha256": "{result.sha256}"\n'
            "in cdk.json under emr-lineage.versions.openlineage_spark and redeploy."
        )
