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

from enum import StrEnum
from typing import Annotated, Any, Literal

from pydantic import Field, field_validator, model_validator

from emr_lineage.settings.base import Strict, check_retention
from emr_lineage.settings.data_lake import DataLakeSettings
from emr_lineage.settings.emr import EmrServerlessSettings, EmrSettings
from emr_lineage.settings.hub import HubSettings, spoke_problem
from emr_lineage.settings.images import EcrPullThroughCache, cache_prefix, cache_problem
from emr_lineage.settings.limits import (
    ALB_LAMBDA_MAX_BODY_BYTES,
    DEFAULT_MAX_EVENT_BYTES,
    RESERVED_TAG_PREFIX,
    SQS_MAX_MESSAGE_BYTES,
    SQS_MAX_RETENTION_DAYS,
)
from emr_lineage.settings.network import NetworkSettings
from emr_lineage.settings.operations import AWS_REGION, AlarmSettings
from emr_lineage.settings.service import DatabaseSettings, MarquezSettings
from emr_lineage.settings.trusted_ca import TrustedCa
from emr_lineage.settings.versions import Versions


class RemovalPolicyName(StrEnum):
    DESTROY = "destroy"
    RETAIN = "retain"
    SNAPSHOT = "snapshot"


class OpenLineageSettings(Strict):
    """How Spark applications of this environment report lineage."""

    namespace: Annotated[
        str,
        Field(
            pattern=r"^[A-Za-z0-9][A-Za-z0-9_.-]{0,63}$",
            description="The OpenLineage namespace of this environment's Spark jobs.",
        ),
    ]
    transport_timeout_ms: Annotated[
        int, Field(ge=500, le=60000, description="Timeout of the listener's HTTP transport (milliseconds).")
    ]
    transport_compression: Literal["gzip"] | None = Field(
        default=None, description="Compression of the listener's HTTP transport; null: none."
    )
    fail_open: bool = Field(
        description="`false`: a node without a working listener fails the cluster (bootstrap fails closed); "
        "`true`: the cluster runs without lineage."
    )
    listener_source: Literal["bundle", "emr"] = Field(
        description="Which listener jar runs: `bundle` (the pinned `versions.openlineage_spark` wins) or `emr` "
        "(EMR 7.11+'s own jar)."
    )
    trusted_ca: TrustedCa | None = Field(
        default=None,
        description="The CA that issued the load balancer's certificate (`marquez.certificate_arn`) when Java does "
        "not trust it already (AWS Private CA, a company CA), by one of the shapes below. The bootstrap action "
        "imports it into every node's Java truststores, EMR Serverless job runs take a truststore holding it, and "
        "`doctor` checks the load balancer's certificate chains to it "
        "([your private CA](deploy-into-existing.md#your-private-ca)). Null: Java's own trust.",
    )


MAX_DEAD_LETTER_AFTER_HOURS = 72


class GatewaySettings(Strict):
    """The lineage gateway: ALB ``POST /api/v1/lineage`` -> ingest Lambda -> S3 archive + SQS FIFO -> forwarder."""

    enabled: bool = Field(
        description="Deploy the lineage gateway stack (`EmrLineage-<env>-Gateway`); `false` leaves "
        "`POST /api/v1/lineage` to Marquez. While on, the ALB refuses every other write (POST/PUT/PATCH/DELETE) "
        "with 403, the web UI's edits included ([the path](gateway.md#the-path))."
    )
    # It must fit the ALB's Lambda body and one SQS message (the validator below).
    max_event_bytes: Annotated[
        int,
        Field(
            ge=1024,
            description="Largest accepted event body in bytes, at most 1000000 (the ALB's Lambda request body limit, "
            '"1 MB"); larger ones get 413. The default stays within the ALB\'s limit when it base64-encodes a '
            "gzip body.",
        ),
    ] = DEFAULT_MAX_EVENT_BYTES
    forward_retries: Annotated[
        int,
        Field(
            ge=1,
            le=10,
            description="Attempts per event before the forwarder reports it failed (SQS then redelivers it); sizes "
            "the forwarder's timeout and the queue's visibility timeout (6x).",
        ),
    ]
    dead_letter_retention_days: Annotated[
        int,
        Field(
            ge=1,
            le=SQS_MAX_RETENTION_DAYS,
            description="How long the dead-letter queue keeps events (SQS's maximum is 14 days).",
        ),
    ]
    # At most 3 days: the queue keeps a message 4 days (SQS's default retention), so it reaches the
    # dead-letter queue before it expires.
    dead_letter_after_hours: Annotated[
        int,
        Field(
            ge=1,
            le=MAX_DEAD_LETTER_AFTER_HOURS,
            description="How long Marquez may be down before an undelivered event moves to the dead-letter queue: "
            "the queue's `maxReceiveCount` is derived from it and the forwarder's redelivery backoff (30 s doubling "
            "to 15 min; 4 h = 20 receives). Events Marquez refuses (a 4xx) go there at once "
            "([the path](gateway.md#the-path)).",
        ),
    ]
    # Athena's minimum is 10 MB, and CloudFormation takes the cutoff as a 32-bit integer (< 2147 MB).
    athena_scan_limit_mb: Annotated[
        int,
        Field(
            ge=10,
            le=2147,
            description="The archive's Athena workgroup cancels a query that scans more than this many MB "
            "(10^6 bytes). A cancelled query is still billed for what it scanned "
            "([querying the archive](analysis.md#querying-the-archive-with-athena)).",
        ),
    ] = 1000
    archive_readers: list[Annotated[str, Field(pattern=r"^arn:aws[a-z-]*:iam::\d{12}:role/[\w+=,.@/-]+$")]] = Field(
        default=[],
        description="IAM role ARNs (the platform team's) granted the archive's Athena tables by Lake Formation: "
        "DESCRIBE on the database, SELECT and DESCRIBE on the tables `events` and `events_raw` and the view "
        "`events_with_account`, DATA_LOCATION_ACCESS on the "
        "archive's `raw/`; their IAM permissions for Athena, Glue, the results prefix and the gateway key are "
        "theirs to attach.",
    )

    spoke_accounts: list[Annotated[str, Field(pattern=r"^\d{12}$")]] = Field(
        default=[],
        description="AWS accounts (12 digits) whose Spark sends lineage here ([many accounts](deploy-into-existing.md"
        "#many-accounts-one-lineage-service)): the gateway's ingest is published to them as a VPC endpoint service "
        "(PrivateLink) that only they may connect to, and that takes lineage posts only; each gets an API key of "
        "its own (a secret it may read, its ARN published), and the archive records which account sent each event.",
    )

    spoke_regions: list[Annotated[str, Field(pattern=AWS_REGION)]] = Field(
        default=[],
        description="Other AWS regions than this environment's where spoke accounts run Spark: the endpoint service "
        "accepts their cross-region interface endpoints (AWS PrivateLink's cross-region connectivity, in the "
        "regions AWS offers it). Empty: spokes in this region only.",
    )

    @field_validator("spoke_accounts")
    @classmethod
    def _unique_spokes(cls, value: list[str]) -> list[str]:
        twice = sorted({account for account in value if value.count(account) > 1})
        if twice:
            raise ValueError(f"spoke_accounts lists {', '.join(twice)} twice")
        return value

    @model_validator(mode="after")
    def _spokes_need_the_gateway(self) -> GatewaySettings:
        if self.spoke_accounts and not self.enabled:
            raise ValueError("spoke_accounts needs the gateway (enabled: true): spokes send through its ingest")
        if self.spoke_regions and not self.spoke_accounts:
            raise ValueError("spoke_regions without spoke_accounts: list the spokes' accounts, or remove spoke_regions")
        return self

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

    name: str = Field(description="The environment's key under `environments` (set by the loader).")
    # Optional keys (null or absent; the CDK CLI drops nulls from context) are the only defaults.
    account: Annotated[str, Field(pattern=r"^\d{12}$")] | None = Field(
        default=None,
        description="The AWS account of the environment, with `region`; without them the stacks are "
        "environment-agnostic (synth needs no credentials; the VPC then uses 2 AZs).",
    )
    region: Annotated[str, Field(pattern=AWS_REGION)] | None = Field(
        default=None, description="The AWS region of the environment, with `account`."
    )
    removal_policy: RemovalPolicyName = Field(
        description="What a stack's deletion does to its stateful resources (`snapshot`: RDS only). Buckets are "
        "never emptied automatically; log buckets and the artifacts bucket are always retained; an existing lake "
        "bucket or database (`data_lake.existing_*`) is never the stack's to delete."
    )
    log_retention_days: int = Field(
        description="CloudWatch Logs and access-log retention, one of CloudWatch Logs' retention periods (days)."
    )
    tags: dict[str, str] = Field(
        description="Tags on every resource (keys starting with `aws:` are AWS's and refused)."
    )
    network: NetworkSettings = Field(description="The VPC.")
    marquez: MarquezSettings = Field(description="The Marquez service: ECS Fargate tasks behind an internal ALB.")
    database: DatabaseSettings = Field(description="Marquez's PostgreSQL database on RDS.")
    openlineage: OpenLineageSettings = Field(description="How the environment's Spark applications report lineage.")
    data_lake: DataLakeSettings = Field(description="The data lake bucket and its Lake Formation governance.")
    emr: EmrSettings = Field(description="EMR clusters: the ephemeral launch spec and the optional long-running one.")
    emr_serverless: EmrServerlessSettings = Field(
        default=EmrServerlessSettings(), description="EMR Serverless: one Spark application for job runs."
    )
    gateway: GatewaySettings = Field(
        description="The lineage gateway: ALB -> ingest Lambda -> S3 archive + SQS FIFO -> forwarder -> Marquez."
    )
    hub: HubSettings | None = Field(
        default=None,
        description="Makes this environment a spoke of another account's lineage service (the hub, whose "
        "`gateway.spoke_accounts` lists this account): no Marquez, database, load balancer or gateway here; Spark "
        "sends lineage to the hub through an interface VPC endpoint ([many accounts]"
        "(deploy-into-existing.md#many-accounts-one-lineage-service)). `marquez` and `database` are then not used "
        "but for `marquez.allow_plain_http`; `gateway.enabled` is false. Null: this environment runs its own.",
    )
    alarms: AlarmSettings = Field(
        description="Where alarms go and when they fire ([alarms and the dashboard]"
        "(operations.md#alarms-and-the-dashboard)). Unhealthy targets, fewer tasks than desired, Lambda throttles "
        "and EMR cluster and step failures alarm without a threshold."
    )
    versions: Versions = Field(
        description="Shared by every environment (the loader gives each the top-level `versions` object): "
        "Marquez's images and the OpenLineage listener."
    )

    @field_validator("log_retention_days")
    @classmethod
    def _retention(cls, value: int) -> int:
        return check_retention(value)

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
        if self.hub is not None:  # a spoke serves nothing: what it sends to the hub, and how, is checked instead
            problem = spoke_problem(
                self.hub,
                gateway_enabled=self.gateway.enabled,
                spoke_accounts=self.gateway.spoke_accounts,
                certificate_arn=self.marquez.certificate_arn,
                plain_http_allowed=self.plain_http_allowed,
            )
        elif self.marquez.certificate_arn is None and not self.plain_http_allowed:
            problem = (
                "no marquez.certificate_arn, so the load balancer would serve lineage over plain HTTP: "
                "set marquez.certificate_arn and marquez.domain_name (HTTPS), or marquez.allow_plain_http: true"
            )
        else:
            problem = None
        if problem:
            raise ValueError(problem)
        return self

    @model_validator(mode="after")
    def _not_its_own_spoke(self) -> EnvironmentSettings:
        if self.account and self.account in self.gateway.spoke_accounts:
            raise ValueError(f"gateway.spoke_accounts lists the environment's own account {self.account}")
        if self.region and self.region in self.gateway.spoke_regions:
            raise ValueError(f"gateway.spoke_regions lists the environment's own region {self.region}: remove it")
        return self

    @model_validator(mode="after")
    def _existing_lake_fits(self) -> EnvironmentSettings:
        problem = self.data_lake.environment_problem(region=self.region, own_database_prefix=self.glue_database_prefix)
        if problem:
            raise ValueError(problem)
        return self

    @model_validator(mode="after")
    def _trusted_ca_needs_https(self) -> EnvironmentSettings:
        if self.openlineage.trusted_ca is None or self.lineage_over_https:
            return self
        if self.hub is not None:
            raise ValueError(
                "openlineage.trusted_ca names the CA of the hub's certificate, but it is not used (no hub.hostname: "
                "plain HTTP): set hub.hostname, or remove trusted_ca"
            )
        raise ValueError(
            "openlineage.trusted_ca names the CA of the load balancer's certificate, but there is none (no "
            "marquez.certificate_arn: plain HTTP): set marquez.certificate_arn and marquez.domain_name, or "
            "remove trusted_ca"
        )

    @model_validator(mode="after")
    def _images_cacheable(self) -> EnvironmentSettings:
        if isinstance(self.marquez.image_registry, EcrPullThroughCache):
            images = self.versions.marquez_image
            problem = cache_problem(self.image_cache_prefix, {"api": images.api, "web": images.web})
            if problem:
                raise ValueError(problem)
        return self

    @property
    def plain_http_allowed(self) -> bool:
        """``marquez.allow_plain_http``; absent, true for the development environment only."""
        allowed = self.marquez.allow_plain_http
        return self.name == PLAIN_HTTP_BY_DEFAULT if allowed is None else allowed

    @property
    def lineage_over_https(self) -> bool:
        """Spark sends lineage over HTTPS: to this environment's load balancer, or a spoke's to the hub's name."""
        return self.hub.https if self.hub else self.marquez.certificate_arn is not None

    @property
    def sends_api_key(self) -> bool:
        """Spark sends lineage with an API key: to this environment's gateway, or a spoke's to the hub's."""
        return self.gateway.enabled or self.hub is not None

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
