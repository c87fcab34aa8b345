"""NetworkStack: the VPC everything else runs in.

Created: three subnet tiers over two or more AZs: public (NAT gateways, nothing else), private with
egress (Marquez tasks, EMR nodes) and isolated (RDS), sized by ``SUBNET_TIERS`` of the
settings model, which also rejects a ``vpc_cidr`` too small for them, with flow logs.
Existing (``network.existing_vpc``): imported from the ids the settings give (no lookup, no AWS call
at synth); nothing of it is created or changed. Either way, with ``network.create_endpoints``, S3 is
reached through a gateway endpoint and optional interface endpoints let clusters work without NAT.
"""

from __future__ import annotations

from typing import Any

from aws_cdk import Stack, Tags, Token
from aws_cdk import aws_ec2 as ec2
from constructs import Construct

from emr_lineage.aws.tags import EMR_MANAGED_TAG
from emr_lineage.settings.limits import SUBNET_TIERS
from emr_lineage.settings.model import EnvironmentSettings
from emr_lineage.settings.network import ExistingVpc
from stacks.shared.nag import acknowledge_cfn_lint
from stacks.shared.storage import encrypted_log_group, rotating_key

# Subnet tier name (settings model) -> what it is in CDK.
SUBNET_TYPES = {
    "public": ec2.SubnetType.PUBLIC,
    "private": ec2.SubnetType.PRIVATE_WITH_EGRESS,
    "isolated": ec2.SubnetType.PRIVATE_ISOLATED,
}

# Config name -> the interface endpoint services it stands for (ECR needs both API and Docker).
INTERFACE_ENDPOINTS: dict[str, tuple[ec2.InterfaceVpcEndpointAwsService, ...]] = {
    "sts": (ec2.InterfaceVpcEndpointAwsService.STS,),
    "glue": (ec2.InterfaceVpcEndpointAwsService.GLUE,),
    "logs": (ec2.InterfaceVpcEndpointAwsService.CLOUDWATCH_LOGS,),
    "ssm": (ec2.InterfaceVpcEndpointAwsService.SSM,),
    "ecr": (ec2.InterfaceVpcEndpointAwsService.ECR, ec2.InterfaceVpcEndpointAwsService.ECR_DOCKER),
    "secretsmanager": (ec2.InterfaceVpcEndpointAwsService.SECRETS_MANAGER,),
}


class NetworkStack(Stack):
    """VPC (created or imported), endpoints and flow logs (of a created VPC).

    Exposes ``vpc`` (for the other stacks), ``interface_endpoints`` (service id -> endpoint) and ``key``
    (the flow logs' key; None for an existing VPC).
    """

    def __init__(self, scope: Construct, construct_id: str, *, settings: EnvironmentSettings, **kwargs: Any) -> None:
        super().__init__(scope, construct_id, **kwargs)
        net = settings.network
        self.key = None
        self.vpc = _existing_vpc(self, net.existing_vpc) if net.existing_vpc else self._created_vpc(settings)
        self.interface_endpoints: dict[str, ec2.InterfaceVpcEndpoint] = {}
        if net.create_endpoints:
            self._s3_gateway_endpoint(net.existing_vpc)
            self._interface_endpoints(settings)

    def _created_vpc(self, settings: EnvironmentSettings) -> ec2.Vpc:
        net = settings.network
        vpc = ec2.Vpc(
            self,
            "Vpc",
            ip_addresses=ec2.IpAddresses.cidr(net.vpc_cidr),
            max_azs=net.max_azs,
            nat_gateways=net.nat_gateways,
            subnet_configuration=[
                ec2.SubnetConfiguration(name=name, subnet_type=SUBNET_TYPES[name], cidr_mask=mask)
                for name, mask in SUBNET_TIERS
            ],
        )
        for subnet in vpc.private_subnets:
            Tags.of(subnet).add(*EMR_MANAGED_TAG)
        if not Token.is_unresolved(self.region):
            for subnet in [*vpc.public_subnets, *vpc.private_subnets, *vpc.isolated_subnets]:
                acknowledge_cfn_lint(
                    subnet,
                    "W3010",
                    "A stack bound to an account and region gets its zones from CDK's lookup, kept in "
                    "cdk.context.json: each subnet stays in its zone on every later synth",
                )

        # Flow logs are the network's only data at rest: a key of their own (its alias says so).
        self.key = rotating_key(
            self,
            "FlowLogsKey",
            settings=settings,
            alias="flow-logs",
            description=f"{settings.resource_prefix} VPC flow logs",
            log_groups=True,
        )
        flow_log_group = encrypted_log_group(
            self, "FlowLogs", key=self.key, settings=settings, retention_days=net.flow_logs_retention_days
        )
        vpc.add_flow_log(
            "FlowLog",
            destination=ec2.FlowLogDestination.to_cloud_watch_logs(flow_log_group),
            traffic_type=ec2.FlowLogTrafficType.ALL,
        )
        return vpc

    def _s3_gateway_endpoint(self, existing: ExistingVpc | None) -> None:
        if existing is None:  # its construct id as when the Vpc made it (gateway_endpoints): the same logical id
            self.vpc.add_gateway_endpoint("S3", service=ec2.GatewayVpcEndpointAwsService.S3)
            return
        # An imported VPC knows no route tables for its subnets: the ones the settings give.
        ec2.CfnVPCEndpoint(
            self,
            "S3Endpoint",
            vpc_id=existing.vpc_id,
            service_name=f"com.amazonaws.{self.region}.s3",
            vpc_endpoint_type="Gateway",
            route_table_ids=list(dict.fromkeys(existing.route_table_ids or [])),
        )

    def _interface_endpoints(self, settings: EnvironmentSettings) -> None:
        net = settings.network
        if net.interface_endpoints:
            # One group for all endpoints: HTTPS from the VPC's CIDR, written as a literal (not
            # Fn::GetAtt) so reviewers and cdk-nag can read it.
            self.endpoint_security_group = ec2.SecurityGroup(
                self,
                "EndpointSecurityGroup",
                vpc=self.vpc,
                allow_all_outbound=False,
                description=f"{settings.resource_prefix} interface endpoints: HTTPS from inside the VPC",
            )
            self.endpoint_security_group.add_ingress_rule(
                ec2.Peer.ipv4(net.cidr), ec2.Port.tcp(443), "AWS API calls from the VPC"
            )
        for name in net.interface_endpoints:
            for service in INTERFACE_ENDPOINTS[name]:
                endpoint_id = service.short_name.replace(".", "-")
                self.interface_endpoints[endpoint_id] = self.vpc.add_interface_endpoint(
                    f"Endpoint-{endpoint_id}",
                    service=service,
                    subnets=ec2.SubnetSelection(subnet_type=ec2.SubnetType.PRIVATE_WITH_EGRESS),
                    private_dns_enabled=True,
                    security_groups=[self.endpoint_security_group],
                    open=False,
                )


def _existing_vpc(scope: Construct, existing: ExistingVpc) -> ec2.IVpc:
    """The VPC of ``existing``, imported from its ids: its private subnets are the stacks'
    PRIVATE_WITH_EGRESS subnets, its isolated ones PRIVATE_ISOLATED."""
    return ec2.Vpc.from_vpc_attributes(
        scope,
        "Vpc",
        vpc_id=existing.vpc_id,
        vpc_cidr_block=existing.cidr,
        availability_zones=existing.availability_zones,
        private_subnet_ids=existing.private_subnet_ids,
        isolated_subnet_ids=existing.isolated_subnet_ids,
    )
