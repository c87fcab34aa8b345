"""Settings of the lineage service: Marquez on ECS Fargate and its PostgreSQL database."""

from __future__ import annotations

import ipaddress
import re
from typing import Annotated

from pydantic import Field, field_validator, model_validator

from emr_lineage.settings.base import Strict, valid_cidr
from emr_lineage.settings.images import DirectImages, ImageRegistry
from emr_lineage.settings.limits import FARGATE_MEMORY_MIB, PRIVATE_IPV4_RANGES, WIDEST_WEB_ALLOWED_PREFIX
from emr_lineage.settings.operations import ACM_CERTIFICATE_ARN, DOMAIN_NAME, AutoscalingSettings, UiAuth


class MarquezSettings(Strict):
    task_cpu: int
    task_memory_mib: int
    desired_count: Annotated[int, Field(ge=1, le=10)]
    web_allowed_cidrs: Annotated[list[str], Field(min_length=1)]
    health_check_grace_seconds: Annotated[int, Field(ge=30, le=1800)]
    # An ACM certificate: HTTPS on 443 (80 redirects reads, refuses writes) and an https listener URL.
    # Null: plain HTTP on 80, which the environment must allow (allow_plain_http).
    certificate_arn: Annotated[str, Field(pattern=ACM_CERTIFICATE_ARN)] | None = None
    # Without certificate_arn, plain HTTP is refused unless this is true. Null (absent): true for the
    # development environment only (model.PLAIN_HTTP_BY_DEFAULT), false everywhere else.
    allow_plain_http: bool | None = None
    # The name the certificate is for (clients verify it); its DNS record points at the load
    # balancer (the stack outputs the balancer's DNS name). Required with certificate_arn.
    domain_name: Annotated[str, Field(pattern=DOMAIN_NAME)] | None = None
    # Sign-in on the web UI (needs certificate_arn); the lineage API keeps its own auth.
    ui_auth: UiAuth | None = None
    # Marquez's own db-retention command on a daily schedule; null keeps every row forever.
    retention_days: Annotated[int, Field(ge=1, le=3650)] | None = None
    # Target-tracking autoscaling on CPU; null keeps desired_count tasks.
    autoscaling: AutoscalingSettings | None = None
    # Where the tasks pull the Marquez images: as named (absent), or through an ECR pull-through cache.
    image_registry: ImageRegistry = DirectImages(type="direct")

    @field_validator("web_allowed_cidrs")
    @classmethod
    def _allowed(cls, value: list[str]) -> list[str]:
        cidrs = [valid_cidr(v, "web_allowed_cidrs") for v in value]
        for cidr in cidrs:
            network = ipaddress.ip_network(cidr)
            if network.prefixlen == 0:
                raise ValueError(f"{cidr} opens the lineage UI to every address; list the networks that need it")
            if network.version != 4:
                raise ValueError(f"{cidr} is IPv6; the load balancer admits IPv4 networks only")
            if network.prefixlen < WIDEST_WEB_ALLOWED_PREFIX:
                raise ValueError(
                    f"{cidr} is wider than /{WIDEST_WEB_ALLOWED_PREFIX}; list the networks that need the lineage UI"
                )
            if not any(network.subnet_of(private) for private in PRIVATE_IPV4_RANGES):
                ranges = ", ".join(str(r) for r in PRIVATE_IPV4_RANGES)
                raise ValueError(
                    f"{cidr} is not a private network; the lineage UI is internal, so list networks "
                    f"within the RFC 1918 ranges ({ranges})"
                )
        return cidrs

    @model_validator(mode="after")
    def _sign_in_needs_https(self) -> MarquezSettings:
        if (self.certificate_arn is None) != (self.domain_name is None):
            raise ValueError("certificate_arn and domain_name go together: HTTPS needs the name the certificate is for")
        if self.ui_auth is not None and self.certificate_arn is None:
            raise ValueError("ui_auth needs certificate_arn: the load balancer signs users in over HTTPS only")
        return self

    @model_validator(mode="after")
    def _desired_within_scaling(self) -> MarquezSettings:
        scaling = self.autoscaling
        if scaling is not None and not scaling.min_tasks <= self.desired_count <= scaling.max_tasks:
            raise ValueError(
                f"desired_count ({self.desired_count}) must be within autoscaling "
                f"min_tasks..max_tasks ({scaling.min_tasks}..{scaling.max_tasks})"
            )
        return self

    @model_validator(mode="after")
    def _fargate_size(self) -> MarquezSettings:
        allowed = FARGATE_MEMORY_MIB.get(self.task_cpu)
        if allowed is None:
            raise ValueError(f"task_cpu {self.task_cpu} is not one of {sorted(FARGATE_MEMORY_MIB)}")
        if self.task_memory_mib not in allowed:
            raise ValueError(
                f"task_memory_mib {self.task_memory_mib} is not valid with task_cpu {self.task_cpu} "
                f"(Fargate allows {allowed.start}..{allowed.stop - 1} in steps of {allowed.step})"
            )
        return self


MARQUEZ_MIN_POSTGRES = 14


class DatabaseSettings(Strict):
    postgres_version: str
    instance_type: Annotated[str, Field(pattern=r"^[a-z][a-z0-9-]*\.[a-z0-9]+$")]
    allocated_storage_gib: Annotated[int, Field(ge=20, le=65536)]
    max_allocated_storage_gib: Annotated[int, Field(ge=20, le=65536)]
    multi_az: bool
    backup_retention_days: Annotated[int, Field(ge=1, le=35)]
    deletion_protection: bool

    @field_validator("postgres_version")
    @classmethod
    def _supported_major(cls, value: str) -> str:
        if re.fullmatch(r"\d+\.\d+", value):
            # A pinned minor goes back on the next deploy after RDS applied a newer one (aws/aws-cdk#15475).
            raise ValueError(
                f'postgres_version {value}: give the major version only (e.g. "{value.split(".")[0]}"); '
                "RDS applies its minor versions itself"
            )
        if not re.fullmatch(r"\d+", value):
            raise ValueError(f'postgres_version {value!r}: a PostgreSQL major version, e.g. "17"')
        # Marquez needs PostgreSQL 14 (https://github.com/MarquezProject/marquez#requirements); older
        # majors fail its migrations (https://github.com/MarquezProject/marquez/issues/1871, /2075).
        if int(value) < MARQUEZ_MIN_POSTGRES:
            raise ValueError(f"postgres_version {value}: Marquez needs PostgreSQL {MARQUEZ_MIN_POSTGRES} or newer")
        return value

    @model_validator(mode="after")
    def _storage(self) -> DatabaseSettings:
        if self.max_allocated_storage_gib < self.allocated_storage_gib:
            raise ValueError("max_allocated_storage_gib must be >= allocated_storage_gib")
        return self
