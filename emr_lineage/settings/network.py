"""Settings of the VPC (part of the typed cdk.json model, :mod:`emr_lineage.settings.model`)."""

from __future__ import annotations

import ipaddress
from typing import Annotated, Literal

from pydantic import Field, ValidationInfo, field_validator, model_validator

from emr_lineage.settings.base import Strict, check_retention, valid_cidr
from emr_lineage.settings.limits import LARGEST_VPC_PREFIX, MIN_AZS, SUBNET_TIERS, longest_vpc_prefix

InterfaceEndpoint = Literal["sts", "glue", "logs", "ssm", "ecr", "secretsmanager"]


class NetworkSettings(Strict):
    """The VPC."""

    # max_azs first: the vpc_cidr check needs it.
    max_azs: Annotated[int, Field(ge=MIN_AZS, le=6, description="Availability zones the VPC spans.")]
    vpc_cidr: str = Field(
        description="The VPC's IPv4 block: /16 up to the smallest block that holds `max_azs` AZs of public /24, "
        "private /20 and isolated /24 subnets (/18 for 2 AZs, /17 for 3–6)."
    )
    nat_gateways: Annotated[
        int, Field(ge=1, le=6, description="NAT gateways, at most `max_azs` (dev 1, prod one per AZ).")
    ]
    interface_endpoints: list[InterfaceEndpoint] = Field(
        description="VPC interface endpoints (for clusters without NAT)."
    )
    flow_logs_retention_days: int = Field(
        description="VPC flow log retention, one of CloudWatch Logs' retention periods (days)."
    )

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
        return check_retention(value)

    @model_validator(mode="after")
    def _nat_within_azs(self) -> NetworkSettings:
        if self.nat_gateways > self.max_azs:
            raise ValueError(f"nat_gateways ({self.nat_gateways}) cannot exceed max_azs ({self.max_azs})")
        return self
