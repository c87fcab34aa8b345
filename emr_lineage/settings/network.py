"""Settings of the network (part of the typed cdk.json model, :mod:`emr_lineage.settings.model`): a VPC the
stacks create, sized here, or an existing one named by its ids (``existing_vpc``)."""

from __future__ import annotations

import ipaddress
import re
from typing import Annotated, Literal

from pydantic import AfterValidator, Field, ValidationInfo, field_validator, model_validator

from emr_lineage.settings.base import Strict, check_retention, valid_cidr
from emr_lineage.settings.limits import LARGEST_VPC_PREFIX, MIN_AZS, SUBNET_TIERS, longest_vpc_prefix

InterfaceEndpoint = Literal["sts", "glue", "logs", "ssm", "ecr", "secretsmanager"]


# EC2's ids: a prefix and 8 (older) or 17 hex digits.
_EC2_ID = r"^{prefix}-(?:[0-9a-f]{{8}}|[0-9a-f]{{17}})$"


def _ec2_id(prefix: str, what: str):
    pattern = re.compile(_EC2_ID.format(prefix=prefix))

    def check(value: str) -> str:
        if not pattern.match(value):
            raise ValueError(f"{value!r} is not {what} id ({prefix}- and 8 or 17 hex digits)")
        return value

    return AfterValidator(check)


SubnetId = Annotated[str, _ec2_id("subnet", "a subnet")]
RouteTableId = Annotated[str, _ec2_id("rtb", "a route table")]


class ExistingVpc(Strict):
    """A VPC the stacks use instead of creating one: every id is given, so synth needs no lookup."""

    vpc_id: Annotated[str, _ec2_id("vpc", "a VPC")] = Field(description="The VPC's id (`vpc-...`).")
    cidr: str = Field(
        description="The VPC's IPv4 block: the security groups that admit the VPC (the interface endpoints') name it."
    )
    availability_zones: list[str] = Field(
        min_length=MIN_AZS, description="The availability zones of the subnets below, in their order."
    )
    private_subnet_ids: list[SubnetId] = Field(
        description="One subnet per availability zone with egress to AWS APIs and to the registry of the Marquez "
        "images (NAT, a firewall, or endpoints): Marquez's tasks, its load balancer, the gateway's functions and "
        "EMR. EMR's managed policies need the tag `for-use-with-amazon-emr-managed-policies=true` on them "
        "(`emr-lineage doctor` checks it and prints the command)."
    )
    isolated_subnet_ids: list[SubnetId] = Field(
        description="One subnet per availability zone for the database; may be the private subnets."
    )
    route_table_ids: list[RouteTableId] | None = Field(
        default=None,
        description="The route tables of the private and isolated subnets: where `create_endpoints` adds the S3 "
        "gateway endpoint's routes.",
    )

    @field_validator("cidr")
    @classmethod
    def _cidr(cls, value: str) -> str:
        cidr = valid_cidr(value, "cidr")
        if ipaddress.ip_network(cidr).version != 4:
            raise ValueError(f"cidr {cidr} must be an IPv4 block")
        return cidr

    @model_validator(mode="after")
    def _one_subnet_per_zone(self) -> ExistingVpc:
        zones = len(self.availability_zones)
        for key in ("private_subnet_ids", "isolated_subnet_ids"):
            given = len(getattr(self, key))
            if given != zones:
                raise ValueError(
                    f"{key} lists {given} subnets for {zones} availability_zones: give one per zone, in their order"
                )
        return self


# What sizes a VPC the stacks create: given without existing_vpc, and only then.
CREATED_VPC_KEYS = ("max_azs", "vpc_cidr", "nat_gateways", "flow_logs_retention_days")


class NetworkSettings(Strict):
    """The VPC: one the stacks create (sized by `max_azs`, `vpc_cidr`, `nat_gateways`,
    `flow_logs_retention_days`), or an existing one (`existing_vpc`)."""

    existing_vpc: ExistingVpc | None = Field(
        default=None,
        description="An existing VPC to use ([deploying into an existing estate](deploy-into-existing.md#your-vpc)): "
        "no VPC, subnet, NAT gateway or flow log is created, and the keys that size one are not given.",
    )
    # max_azs first: the vpc_cidr check needs it.
    max_azs: Annotated[int, Field(ge=MIN_AZS, le=6)] | None = Field(
        default=None, description="Availability zones the VPC spans (a created VPC: required)."
    )
    vpc_cidr: str | None = Field(
        default=None,
        description="The VPC's IPv4 block (a created VPC: required): /16 up to the smallest block that holds "
        "`max_azs` AZs of public /24, private /20 and isolated /24 subnets (/18 for 2 AZs, /17 for 3–6).",
    )
    nat_gateways: Annotated[int, Field(ge=1, le=6)] | None = Field(
        default=None, description="NAT gateways, at most `max_azs` (a created VPC: required; dev 1, prod one per AZ)."
    )
    create_endpoints: bool = Field(
        default=True,
        description="Create the S3 gateway endpoint and the `interface_endpoints`; false when the VPC has them "
        "(an existing VPC usually does).",
    )
    interface_endpoints: list[InterfaceEndpoint] = Field(
        default=[], description="VPC interface endpoints (for clusters without NAT), with `create_endpoints`."
    )
    flow_logs_retention_days: int | None = Field(
        default=None,
        description="VPC flow log retention, one of CloudWatch Logs' retention periods (days; a created VPC: "
        "required).",
    )

    @property
    def cidr(self) -> str:
        """The VPC's IPv4 block, of the VPC the stacks create or of the existing one."""
        return self.existing_vpc.cidr if self.existing_vpc else str(self.vpc_cidr)

    @field_validator("vpc_cidr")
    @classmethod
    def _vpc_cidr(cls, value: str | None, info: ValidationInfo) -> str | None:
        if value is None:
            return None
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
    def _retention(cls, value: int | None) -> int | None:
        return None if value is None else check_retention(value)

    @model_validator(mode="after")
    def _created_or_existing(self) -> NetworkSettings:
        if self.existing_vpc is None:
            missing = [key for key in CREATED_VPC_KEYS if getattr(self, key) is None]
            if missing:
                raise ValueError(
                    f"missing {', '.join(missing)}: they size the VPC the stacks create (or name an existing one "
                    "with existing_vpc)"
                )
        else:
            given = [key for key in CREATED_VPC_KEYS if getattr(self, key) is not None]
            if given:
                raise ValueError(
                    f"existing_vpc names the VPC to use: remove {', '.join(given)} (they size a created one)"
                )
            if self.create_endpoints and not self.existing_vpc.route_table_ids:
                raise ValueError(
                    "create_endpoints needs existing_vpc.route_table_ids for the S3 gateway endpoint's routes; "
                    "set create_endpoints false if the VPC has its endpoints"
                )
        if self.interface_endpoints and not self.create_endpoints:
            raise ValueError("interface_endpoints lists endpoints, but create_endpoints is false: remove one of them")
        if self.nat_gateways and self.max_azs and self.nat_gateways > self.max_azs:
            raise ValueError(f"nat_gateways ({self.nat_gateways}) cannot exceed max_azs ({self.max_azs})")
        return self
