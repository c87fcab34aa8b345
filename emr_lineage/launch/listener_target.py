"""Where a Spark application without a bootstrap action gets the listener and where it reports: the pinned
jar staged in the artifacts bucket, the lineage URL of the clusters' launch spec (the lineage load balancer,
where the gateway's ingest answers when the gateway is on and Marquez's API otherwise; in a spoke, the hub's
endpoint) and, with the gateway on or in a spoke, the ARN of the secret that holds the API key (what reads the
key is EMR, never this code). EMR Serverless job runs (:mod:`emr_lineage.launch.serverless`) and running
clusters (:mod:`emr_lineage.launch.attach`) read it the same way.

The jar's key in the bucket comes from a feature beside this one (same layer, so the caller passes it in a
:class:`Listener`): ``emr_lineage.listener.artifact.listener_s3_key``.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from emr_lineage.aws import parameters
from emr_lineage.aws.clients import AwsError, read_parameter, regional_client_maker
from emr_lineage.aws.emr import load_launch_spec
from emr_lineage.aws.trusted_ca import read_trusted_ca
from emr_lineage.aws.upload import stored_sha256
from emr_lineage.launch.plan import JobError
from emr_lineage.settings.model import EnvironmentSettings
from emr_lineage.spark.catalogs import GLUE_ACCOUNT_PROPERTY
from emr_lineage.spark.conf import TRANSPORT_URL_PROPERTY, spark_defaults_of
from emr_lineage.spark.truststore import TrustStore, stage_truststore


@dataclass(frozen=True)
class Listener:
    """The staged jar's key in the artifacts bucket, and the bootstrap script's arguments that import
    ``openlineage.trusted_ca`` alone on a running node (none without the setting)."""

    jar_key: str
    trust_arguments: tuple[str, ...] = ()


@dataclass(frozen=True)
class ListenerTarget:
    bucket: str
    jar_uri: str
    lineage_url: str
    glue_catalog_id: str | None  # the launch spec's, when it sets one
    api_key_secret: str | None = None  # with the gateway on, or in a spoke
    truststore: TrustStore | None = None  # with openlineage.trusted_ca: what a driver's JVM trusts
    trust_arguments: tuple[str, ...] = ()  # Listener's


def staged_jar_uri(s3: Any, settings: EnvironmentSettings, bucket: str, key: str) -> str:
    """The pinned listener jar in the artifacts bucket; not pinned or not staged is bad input."""
    artifact = settings.versions.openlineage_spark
    env = settings.name
    if artifact.sha256 is None:
        raise JobError(
            "the listener jar is not pinned (versions.openlineage_spark.sha256 in cdk.json): "
            "run emr-lineage listener fetch --pin, then emr-lineage listener stage --env " + env
        )
    if stored_sha256(s3, bucket, key) != artifact.sha256:
        raise JobError(
            f"the pinned listener jar is not staged at s3://{bucket}/{key}: run emr-lineage listener stage --env {env}"
        )
    return f"s3://{bucket}/{key}"


def resolve_listener_target(ssm: Any, s3: Any, settings: EnvironmentSettings, listener: Listener) -> ListenerTarget:
    """Read what the stacks publish (the bucket, the clusters' launch spec and, with the gateway on or in a spoke,
    the API key secret's ARN); check that the pinned jar is staged."""
    env = settings.name
    bucket = read_parameter(ssm, parameters.artifacts_bucket(env), env=env, published_by="EMR stack")
    cluster_defaults = spark_defaults_of(load_launch_spec(ssm, env).get("Configurations", []))
    lineage_url = cluster_defaults.get(TRANSPORT_URL_PROPERTY)
    key_publisher = "hub link stack" if settings.hub else "gateway stack"
    if not lineage_url:
        raise AwsError(
            f"launch spec at {parameters.emr_launch_spec(env)} has no {TRANSPORT_URL_PROPERTY} in spark-defaults: "
            f"deploy the EMR stack (make deploy ENV={env})"
        )
    return ListenerTarget(
        bucket=bucket,
        jar_uri=staged_jar_uri(s3, settings, bucket, listener.jar_key),
        lineage_url=lineage_url,
        glue_catalog_id=cluster_defaults.get(GLUE_ACCOUNT_PROPERTY),
        trust_arguments=listener.trust_arguments,
        api_key_secret=(
            read_parameter(ssm, parameters.gateway_api_key_secret(env), env=env, published_by=key_publisher)
            if settings.sends_api_key
            else None
        ),
    )


def trusted_ca_truststore(
    s3: Any,
    settings: EnvironmentSettings,
    bucket: str,
    *,
    upload: bool,
    acm_pca: Callable[[str], Any] | None = None,
) -> TrustStore | None:
    """With ``openlineage.trusted_ca``: the CA, read with the caller's credentials and verified as a node
    verifies it, in a truststore staged in ``bucket`` (``upload`` False: where it would be); None without
    the setting. ``acm_pca`` makes the AWS Private CA client of a region."""
    trusted_ca = settings.openlineage.trusted_ca
    if trusted_ca is None:
        return None
    bundle = read_trusted_ca(trusted_ca, s3=s3, acm_pca=acm_pca or regional_client_maker(settings, "acm-pca"))
    return stage_truststore(s3, bucket, bundle, upload_it=upload)
