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
    """The Marquez service: API and web UI on ECS Fargate behind an internal ALB."""

    task_cpu: int = Field(description="Fargate CPU units of a Marquez task (one of Fargate's sizes).")
    task_memory_mib: int = Field(description="Fargate memory of a Marquez task (MiB), one that `task_cpu` allows.")
    desired_count: Annotated[
        int, Field(ge=1, le=10, description="Marquez tasks (within `autoscaling`'s bounds when it is set).")
    ]
    web_allowed_cidrs: Annotated[
        list[str],
        Field(
            min_length=1,
            description="Networks allowed to reach the ALB (UI and API): private IPv4 (RFC 1918), none wider than /8.",
        ),
    ]
    health_check_grace_seconds: Annotated[
        int, Field(ge=30, le=1800, description="Time for Marquez's migrations before health checks count (seconds).")
    ]
    certificate_arn: Annotated[str, Field(pattern=ACM_CERTIFICATE_ARN)] | None = Field(
        default=None,
        description="An ACM certificate (same region), together with `domain_name`. The ALB then serves HTTPS on "
        "443 (TLS 1.2/1.3 policy; port 80 redirects reads and refuses writes, [why](operations.md#https)) and the "
        "URLs become `https://<domain_name>`. Null: plain HTTP on 80, only where `allow_plain_http` allows it.",
    )
    # Null (absent): model.PLAIN_HTTP_BY_DEFAULT decides.
    allow_plain_http: bool | None = Field(
        default=None,
        description="Without `certificate_arn`, synth (and every command) refuses the environment unless this is "
        "`true`. Absent: `true` for the environment named `dev` only. The shipped `prod` sets it so that "
        "`cdk synth -c env=prod` works on a fresh clone; **a real prod sets `certificate_arn` and `domain_name` and "
        "removes this key**.",
    )
    domain_name: Annotated[str, Field(pattern=DOMAIN_NAME)] | None = Field(
        default=None,
        description="The name the certificate is for (clients verify it), required with `certificate_arn`; point "
        "a DNS record for it at the `MarquezLoadBalancerDnsName` output.",
    )
    ui_auth: UiAuth | None = Field(
        default=None,
        description="Sign-in on the web UI by the ALB (needs `certificate_arn`), through Cognito or an OpenID Connect "
        "provider (the keys below). The IdP client must allow `https://<domain_name>/oauth2/idpresponse`. `/api/*` "
        "is not behind it (lineage clients use their own key). Null: no sign-in.",
    )
    retention_days: Annotated[int, Field(ge=1, le=3650)] | None = Field(
        default=None,
        description="A daily (03:00 UTC) ECS task runs Marquez's `db-retention --retention-days N`; null keeps all "
        "metadata.",
    )
    autoscaling: AutoscalingSettings | None = Field(
        default=None,
        description="Target tracking on the service's CPU (`desired_count` must lie within the bounds; the template "
        "then names no count, so a deploy keeps a scaled-out service as it is); null keeps `desired_count` tasks.",
    )
    image_registry: ImageRegistry = Field(
        default=DirectImages(type="direct"),
        description="Where the tasks pull the Marquez images (the keys below). Docker Hub's anonymous pulls are "
        "limited to 10 per hour per IP address (the NAT gateways'); the pull-through cache pulls with an account's "
        "credentials.",
    )

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
    """Marquez's PostgreSQL database on RDS."""

    postgres_version: str = Field(
        description='The PostgreSQL major version, e.g. `"17"` (Marquez needs 14 or newer; the pinned aws-cdk-lib '
        "must know it). Only the major: RDS applies minor versions in the maintenance window and a deploy never "
        "takes them back; changing it upgrades the database in place "
        "([upgrading PostgreSQL](operations.md#upgrading-postgresql))."
    )
    instance_type: Annotated[
        str,
        Field(
            pattern=r"^[a-z][a-z0-9-]*\.[a-z0-9]+$", description="RDS instance class without `db.`, e.g. `t4g.micro`."
        ),
    ]
    allocated_storage_gib: Annotated[int, Field(ge=20, le=65536, description="Initial storage (GiB).")]
    max_allocated_storage_gib: Annotated[
        int, Field(ge=20, le=65536, description="Storage autoscaling limit (GiB), at least `allocated_storage_gib`.")
    ]
    multi_az: bool = Field(description="A standby in a second AZ.")
    backup_retention_days: Annotated[int, Field(ge=1, le=35, description="Days RDS keeps automated backups.")]
    deletion_protection: bool = Field(description="RDS deletion protection.")

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
