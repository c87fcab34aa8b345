"""Typed, validated settings for one emr-lineage environment.

The single source of truth is the ``emr-lineage`` block of ``cdk.json`` context:

    "emr-lineage": {
      "versions": {...},                 # shared by every environment
      "environments": {"dev": {...}, "prod": {...}}
    }

The CDK app (``app.py``) and the tools (``emr-lineage ...``) both load it through
:func:`load_settings`, so a value is read in exactly one way everywhere. Every key is
required and unknown keys are rejected: a typo fails loudly instead of silently
falling back to a default.
"""

from __future__ import annotations

import ipaddress
from enum import StrEnum
from typing import Annotated, Any, ClassVar, Literal

from pydantic import Field, ValidationInfo, field_validator, model_validator

from emr_lineage.settings.base import Strict, valid_cidr
from emr_lineage.settings.images import EcrPullThroughCache, cache_prefix, cache_problem
from emr_lineage.settings.limits import (
    ALB_LAMBDA_MAX_BODY_BYTES,
    DEFAULT_MAX_EVENT_BYTES,
    EMR_RELEASES,
    LARGEST_VPC_PREFIX,
    LOG_RETENTION_DAYS,
    MIN_AZS,
    RESERVED_TAG_PREFIX,
    SQS_MAX_MESSAGE_BYTES,
    SQS_MAX_RETENTION_DAYS,
    SUBNET_TIERS,
    EmrRelease,
    longest_vpc_prefix,
)
from emr_lineage.settings.operations import (
    AlarmSettings,
    MarquezImage,
)
from emr_lineage.settings.service import DatabaseSettings, MarquezSettings


class RemovalPolicyName(StrEnum):
    DESTROY = "destroy"
    RETAIN = "retain"
    SNAPSHOT = "snapshot"


InterfaceEndpoint = Literal["sts", "glue", "logs", "ssm", "ecr", "secretsmanager"]


class ListenerArtifact(Strict):
    """The OpenLineage Spark listener jar: Maven coordinates and the checksum it must match.

    Maven fetches it (``emr-lineage fetch-listener``; the repository, or a mirror, is Maven's own
    settings.xml, see docs/listener.md).
    """

    version: Annotated[str, Field(pattern=r"^\d+\.\d+\.\d+$")]
    scala_version: Literal["2.12", "2.13"]
    # None until a maintainer has pinned it (`emr-lineage fetch-listener --pin`); until then the jar
    # is not used anywhere (see docs/listener.md).
    sha256: Annotated[str, Field(pattern=r"^[0-9a-f]{64}$")] | None = None
    # The release signing key's fingerprint (40 hex digits); when set, fetch-listener --pin also
    # checks the jar's .asc signature against it. Null: Maven's checksums only.
    pgp_fingerprint: Annotated[str, Field(pattern=r"^[0-9A-F]{40}$")] | None = None

    group_id: ClassVar[str] = "io.openlineage"

    @property
    def artifact_id(self) -> str:
        return f"openlineage-spark_{self.scala_version}"

    @property
    def file_name(self) -> str:
        return f"{self.artifact_id}-{self.version}.jar"

    @property
    def coordinates(self) -> str:
        """Maven's ``groupId:artifactId:version``, e.g. ``io.openlineage:openlineage-spark_2.12:1.53.0``."""
        return f"{self.group_id}:{self.artifact_id}:{self.version}"


class Versions(Strict):
    marquez: Annotated[str, Field(pattern=r"^\d+\.\d+\.\d+$")]
    marquez_image: MarquezImage
    openlineage_spark: ListenerArtifact


class OpenLineageSettings(Strict):
    """How Spark applications of this environment report lineage."""

    namespace: Annotated[str, Field(pattern=r"^[A-Za-z0-9][A-Za-z0-9_.-]{0,63}$")]
    transport_timeout_ms: Annotated[int, Field(ge=500, le=60000)]
    transport_compression: Literal["gzip"] | None = None
    # Bootstrap: False = a node without a working listener fails the cluster (fail closed).
    fail_open: bool
    # EMR 7.11+ ships its own OpenLineage jar: which one runs ("bundle" = ours, pinned above).
    listener_source: Literal["bundle", "emr"]


class NetworkSettings(Strict):
    # max_azs first: the vpc_cidr check needs it.
    max_azs: Annotated[int, Field(ge=MIN_AZS, le=6)]
    vpc_cidr: str
    nat_gateways: Annotated[int, Field(ge=1, le=6)]
    interface_endpoints: list[InterfaceEndpoint]
    flow_logs_retention_days: int

    @field_validator("vpc_cidr")
    @classmethod
    def _vpc_cidr(cls, value: str, info: ValidationInfo) -> str:
        cidr = valid_cidr(value, "vpc_cidr")
        network = ipaddress.ip_network(cidr)
        if network.version != 4:
            raise ValueError(f"vpc_cidr {cidr} must be an IPv4 block")
        # Without a valid max_azs (reported on its own), check for the fewest AZs allowed.
        azs = info.data.get("max_azs", MIN_AZS)
        longest = longest_vpc_prefix(azs)
        if not LARGEST_VPC_PREFIX <= network.prefixlen <= longest:
            tiers = ", ".join(f"{name} /{mask}" for name, mask in SUBNET_TIERS)
            raise ValueError(
                f"vpc_cidr {cidr} must be between /{LARGEST_VPC_PREFIX} and /{longest} to hold "
                f"{azs} AZs (max_azs) of {tiers} subnets"
            )
        return cidr

    @field_validator("interface_endpoints")
    @classmethod
    def _unique_endpoints(cls, value: list[str]) -> list[str]:
        if len(set(value)) != len(value):
            raise ValueError("interface_endpoints lists an endpoint twice")
        return value

    @field_validator("flow_logs_retention_days")
    @classmethod
    def _retention(cls, value: int) -> int:
        return _check_retention(value)

    @model_validator(mode="after")
    def _nat_within_azs(self) -> NetworkSettings:
        if self.nat_gateways > self.max_azs:
            raise ValueError(f"nat_gateways ({self.nat_gateways}) cannot exceed max_azs ({self.max_azs})")
        return self


class DataLakeSettings(Strict):
    """The data lake bucket and its Lake Formation governance."""

    # Extra Lake Formation admins (IAM role/user ARNs); the CDK deploy role is always added.
    admin_arns: list[Annotated[str, Field(pattern=r"^arn:aws[a-z-]*:iam::\d{12}:(role|user)/[\w+=,.@/-]+$")]]
    noncurrent_version_expiration_days: Annotated[int, Field(ge=1, le=3650)]
    # An account and region have one Lake Formation settings object: one environment there manages it
    # (adds the admins); the others set false and rely on it (loader.py refuses two owners it can see).
    manage_lake_formation_settings: bool = True

    @model_validator(mode="after")
    def _admins_need_the_settings(self) -> DataLakeSettings:
        if self.admin_arns and not self.manage_lake_formation_settings:
            raise ValueError(
                "admin_arns are added by the environment that manages the account's Lake Formation settings "
                "(manage_lake_formation_settings is false here): list them in that environment"
            )
        return self


class EmrSettings(Strict):
    """EMR clusters: the ephemeral launch spec and the optional long-running cluster."""

    # One of EMR_RELEASES (the releases whose Spark the listener and local pyspark match).
    release_label: Annotated[str, Field(pattern=r"^emr-\d+\.\d+\.\d+$")]
    applications: Annotated[
        list[Literal["Spark", "Hadoop", "Livy", "JupyterEnterpriseGateway", "Hive"]], Field(min_length=1)
    ]
    primary_instance_type: Annotated[str, Field(pattern=r"^[a-z][a-z0-9-]*\.[a-z0-9]+$")]
    core_instance_type: Annotated[str, Field(pattern=r"^[a-z][a-z0-9-]*\.[a-z0-9]+$")]
    core_instance_count: Annotated[int, Field(ge=1, le=100)]
    ebs_volume_gib: Annotated[int, Field(ge=32, le=16384)]
    # EMR's AutoTerminationPolicy accepts 60 s .. 7 days
    # (https://docs.aws.amazon.com/emr/latest/APIReference/API_AutoTerminationPolicy.html).
    idle_timeout_seconds: Annotated[int, Field(ge=60, le=604800)]
    long_running_cluster: bool
    lake_formation_runtime_role: bool
    in_transit_encryption: bool
    # An EC2 key pair for the nodes (optional; required for the long-running cluster).
    ec2_key_name: Annotated[str, Field(min_length=1, max_length=255)] | None = None

    @model_validator(mode="after")
    def _long_running_needs_authentication(self) -> EmrSettings:
        if self.long_running_cluster and not self.ec2_key_name:
            raise ValueError(
                "ec2_key_name is required when long_running_cluster is true "
                "(a shared cluster needs key-pair authentication; cdk-nag EMR6)"
            )
        return self

    @field_validator("release_label")
    @classmethod
    def _supported_release(cls, value: str) -> str:
        if value not in EMR_RELEASES:
            raise ValueError(
                f"release_label {value} is not supported; emr-lineage runs on {', '.join(EMR_RELEASES)} "
                "(EMR 7.x with Spark 3.5 on Scala 2.12, what the pinned listener and pyspark are built for)"
            )
        return value

    @field_validator("applications")
    @classmethod
    def _spark_included(cls, value: list[str]) -> list[str]:
        if "Spark" not in value:
            raise ValueError("applications must include Spark (the lineage listener is a Spark listener)")
        if len(set(value)) != len(value):
            raise ValueError("applications lists an application twice")
        return value

    @property
    def release(self) -> EmrRelease:
        """Spark and Scala of the configured release (see EMR_RELEASES)."""
        return EMR_RELEASES[self.release_label]


class EmrServerlessSettings(Strict):
    """EMR Serverless: one Spark application (the release of ``emr``) for job runs without clusters.

    Limits: https://docs.aws.amazon.com/emr/latest/EMR-Serverless-UserGuide/application-capacity.html
    and StartJobRun's executionTimeoutMinutes (5 minutes at least, https://docs.aws.amazon.com/emr-serverless/latest/APIReference/API_StartJobRun.html).
    """

    enabled: bool = False
    # The application's maximum capacity, across all its running jobs.
    max_vcpu: Annotated[int, Field(ge=1, le=4000)] = 16
    max_memory_gib: Annotated[int, Field(ge=2, le=16000)] = 64
    # The application stops (costs nothing) after this long without a job run.
    idle_timeout_minutes: Annotated[int, Field(ge=1, le=10080)] = 15
    # A job run's total deadline: EMR Serverless cancels it after this long, and launch gives up waiting.
    job_timeout_minutes: Annotated[int, Field(ge=5, le=1440)] = 120


MAX_DEAD_LETTER_AFTER_HOURS = 72


class GatewaySettings(Strict):
    """The lineage gateway: ALB ``POST /api/v1/lineage`` -> ingest Lambda -> S3 archive + SQS FIFO -> forwarder."""

    enabled: bool
    # The ingest answers 413 above this; it must fit the ALB's Lambda body and one SQS message.
    max_event_bytes: Annotated[int, Field(ge=1024)] = DEFAULT_MAX_EVENT_BYTES
    # Attempts per event before the forwarder reports it failed (SQS then redelivers it).
    forward_retries: Annotated[int, Field(ge=1, le=10)]
    dead_letter_retention_days: Annotated[int, Field(ge=1, le=SQS_MAX_RETENTION_DAYS)]
    # How long Marquez may be down before an undelivered event moves to the dead-letter queue; the
    # stack derives the queue's maxReceiveCount from it. At most 3 days: the queue keeps a message
    # 4 days (SQS's default retention), so it reaches the dead-letter queue before it expires.
    dead_letter_after_hours: Annotated[int, Field(ge=1, le=MAX_DEAD_LETTER_AFTER_HOURS)]
    # The archive's Athena workgroup cancels a query past this many MB (10^6 bytes) scanned: Athena's
    # minimum is 10 MB, and CloudFormation takes the cutoff as a 32-bit integer (< 2147 MB).
    athena_scan_limit_mb: Annotated[int, Field(ge=10, le=2147)] = 1000
    # Roles that may query the archive's tables (Lake Formation SELECT/DESCRIBE): the platform team's.
    archive_readers: list[Annotated[str, Field(pattern=r"^arn:aws[a-z-]*:iam::\d{12}:role/[\w+=,.@/-]+$")]] = []

    @field_validator("max_event_bytes")
    @classmethod
    def _fits_alb_and_sqs(cls, value: int) -> int:
        for limit, what in (
            (ALB_LAMBDA_MAX_BODY_BYTES, "the ALB's largest Lambda request body"),
            (SQS_MAX_MESSAGE_BYTES, "SQS's largest message"),
        ):
            if value > limit:
                raise ValueError(f"max_event_bytes {value} is more than {what} ({limit} bytes)")
        return value


# The one environment that may serve plain HTTP without saying so (marquez.allow_plain_http absent):
# the development environment. Any other without a certificate must set allow_plain_http: true.
PLAIN_HTTP_BY_DEFAULT = "dev"


class EnvironmentSettings(Strict):
    """Everything that differs between environments."""

    name: str
    # Optional keys (null or absent; the CDK CLI drops nulls from context) are the only defaults.
    account: Annotated[str, Field(pattern=r"^\d{12}$")] | None = None
    region: Annotated[str, Field(pattern=r"^[a-z]{2}(-[a-z]+)+-\d$")] | None = None
    removal_policy: RemovalPolicyName
    log_retention_days: int
    tags: dict[str, str]
    network: NetworkSettings
    marquez: MarquezSettings
    database: DatabaseSettings
    openlineage: OpenLineageSettings
    data_lake: DataLakeSettings
    emr: EmrSettings
    emr_serverless: EmrServerlessSettings = EmrServerlessSettings()
    gateway: GatewaySettings
    alarms: AlarmSettings
    versions: Versions

    @field_validator("log_retention_days")
    @classmethod
    def _retention(cls, value: int) -> int:
        return _check_retention(value)

    @field_validator("tags")
    @classmethod
    def _tag_keys(cls, value: dict[str, str]) -> dict[str, str]:
        for key in value:
            if key.lower().startswith(RESERVED_TAG_PREFIX):
                raise ValueError(f"tag key {key!r}: the {RESERVED_TAG_PREFIX!r} prefix is reserved for AWS's own tags")
        return value

    @field_validator("removal_policy", mode="before")
    @classmethod
    def _removal_policy(cls, value: Any) -> Any:
        # Strict mode would otherwise demand an Enum instance; accept its string value.
        if isinstance(value, str):
            try:
                return RemovalPolicyName(value)
            except ValueError:
                raise ValueError(f"{value!r} is not one of {[p.value for p in RemovalPolicyName]}") from None
        return value

    @model_validator(mode="after")
    def _listener_matches_release(self) -> EnvironmentSettings:
        # The listener jar must be built for the Scala of the cluster's Spark (openlineage-spark_2.12
        # for Spark 3, _2.13 for Spark 4: https://openlineage.io/docs/integrations/spark/installation).
        scala = self.versions.openlineage_spark.scala_version
        release = self.emr.release
        if scala != release.scala:
            raise ValueError(
                f"emr.release_label {self.emr.release_label} runs Spark {release.spark} on Scala {release.scala}, "
                f"but versions.openlineage_spark.scala_version is {scala}"
            )
        return self

    @model_validator(mode="after")
    def _https_unless_plain_http_allowed(self) -> EnvironmentSettings:
        marquez = self.marquez
        allowed = marquez.allow_plain_http
        if allowed is None:
            allowed = self.name == PLAIN_HTTP_BY_DEFAULT
        if marquez.certificate_arn is None and not allowed:
            raise ValueError(
                "no marquez.certificate_arn, so the load balancer would serve lineage over plain HTTP: "
                "set marquez.certificate_arn and marquez.domain_name (HTTPS), or marquez.allow_plain_http: true"
            )
        return self

    @model_validator(mode="after")
    def _images_cacheable(self) -> EnvironmentSettings:
        if isinstance(self.marquez.image_registry, EcrPullThroughCache):
            images = self.versions.marquez_image
            problem = cache_problem(self.image_cache_prefix, {"api": images.api, "web": images.web})
            if problem:
                raise ValueError(problem)
        return self

    @property
    def resource_prefix(self) -> str:
        return f"emr-lineage-{self.name}"

    @property
    def image_cache_prefix(self) -> str:
        """The repository prefix of the Marquez images' ECR pull-through cache (with that registry)."""
        return cache_prefix(self.resource_prefix)

    @property
    def glue_database_prefix(self) -> str:
        """Glue names allow no '-': emr_lineage_<env>."""
        return self.resource_prefix.replace("-", "_")


def _check_retention(value: int) -> int:
    if value not in LOG_RETENTION_DAYS:
        raise ValueError(f"{value} is not a CloudWatch Logs retention period; use one of {list(LOG_RETENTION_DAYS)}")
    return value
