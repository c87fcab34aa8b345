"""The OpenLineage Spark listener jar: where it comes from, where it is staged, how nodes get it.

One source of truth for the artifact's S3 location and for the bootstrap action's arguments:
``emr-lineage listener stage`` uploads the jar to :func:`listener_s3_key`, and the EMR stack
registers ``bootstrap/install-openlineage.sh`` with :func:`bootstrap_arguments` in the launch spec
that ``emr-lineage launch`` and ``e2e`` start clusters from. The jar is verified against the SHA-256 pinned in cdk.json
(``emr-lineage.versions.openlineage_spark.sha256``) before anything is uploaded (and staged with
that SHA-256 in its metadata, see :mod:`emr_lineage.aws.upload`), so clusters in
private subnets fetch a known artifact over the S3 gateway endpoint, never from the internet.
See docs/listener.md.
"""

from __future__ import annotations

from emr_lineage.aws.artifacts import BOOTSTRAP_SCRIPT_KEY, LISTENER_PREFIX
from emr_lineage.settings.model import EnvironmentSettings
from emr_lineage.settings.trusted_ca import S3CaBundle, TrustedCa
from emr_lineage.settings.versions import ListenerArtifact

# Keys in the artifacts bucket.
BOOTSTRAP_ACTION_NAME = "install-openlineage-listener"
# Bootstrap argument when no SHA-256 is pinned yet (the script then refuses to install).
UNPINNED = "unpinned"


def listener_s3_key(artifact: ListenerArtifact) -> str:
    """Key of the staged jar in the artifacts bucket, e.g. ``listener/openlineage-spark_2.12-1.53.0.jar``."""
    return f"{LISTENER_PREFIX}{artifact.file_name}"


def listener_s3_uri(artifact: ListenerArtifact, bucket: str) -> str:
    return f"s3://{bucket}/{listener_s3_key(artifact)}"


def bootstrap_script_uri(bucket: str) -> str:
    """Where the EMR stack deploys ``bootstrap/install-openlineage.sh`` (the bootstrap action's path)."""
    return f"s3://{bucket}/{BOOTSTRAP_SCRIPT_KEY}"


def bootstrap_arguments(
    settings: EnvironmentSettings,
    bucket: str,
    *,
    emr_release: str | None = None,
    region: str | None = None,
    api_key_secret_arn: str | None = None,
) -> list[str]:
    """The bootstrap action's argument list for one environment.

    ``bucket`` is the artifacts bucket name (a CDK token is fine). ``emr_release`` (e.g.
    ``emr-7.13.0``) lets the script decide about EMR's own OpenLineage jar without reading the
    node's info files; ``region`` (e.g. ``Aws.REGION``) makes the AWS CLI use the regional S3
    endpoint, the one a private subnet's S3 gateway endpoint serves. Give both when known.
    ``api_key_secret_arn`` is the lineage gateway's API key secret: the script reads it with the
    instance role and gives the listener api_key auth (the gateway answers 401 without it).
    ``openlineage.trusted_ca`` becomes :func:`trusted_ca_arguments`.
    """
    artifact = settings.versions.openlineage_spark
    openlineage = settings.openlineage
    args = [
        "--jar-uri",
        listener_s3_uri(artifact, bucket),
        "--sha256",
        artifact.sha256 or UNPINNED,
        "--listener-source",
        openlineage.listener_source,
        "--fail-open" if openlineage.fail_open else "--fail-closed",
    ]
    if emr_release:
        args += ["--emr-release", emr_release]
    if region:
        args += ["--region", region]
    if api_key_secret_arn:
        args += ["--api-key-secret", api_key_secret_arn]
    if openlineage.trusted_ca is not None:
        args += trusted_ca_arguments(openlineage.trusted_ca)
    return args


def trusted_ca_only_arguments(trusted_ca: TrustedCa, *, region: str | None = None) -> list[str]:
    """The script's arguments that import the CA alone, at once, on a running node (``attach``'s step)."""
    return ["--trusted-ca-only", *(["--region", region] if region else []), *trusted_ca_arguments(trusted_ca)]


def trusted_ca_arguments(trusted_ca: TrustedCa) -> list[str]:
    """The script's arguments that make it import the CA into the node's Java truststores: the S3 bundle and
    the SHA-256 it must have, or the AWS Private CA's ARN."""
    if isinstance(trusted_ca, S3CaBundle):
        return ["--trusted-ca-uri", trusted_ca.uri, "--trusted-ca-sha256", trusted_ca.sha256]
    return ["--trusted-ca-arn", trusted_ca.arn]
