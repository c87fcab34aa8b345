"""NetworkStack: the VPC everything else runs in.

Three subnet tiers over two or more AZs: public (NAT gateways, nothing else), private with
egress (Marquez tasks, EMR nodes) and isolated (RDS), sized by ``SUBNET_TIERS`` of the
settings model, which also rejects a ``vpc_cidr`` too small for them. S3 is reached through a
gateway endpoint; optional interface endpoints let clusters work without NAT.
"""

from __future__ import annotations

from typing import Any

from aws_cdk import Stack, Tags
from aws_cdk import aws_ec2 as ec2
from constructs import Construct

from emr_lineage.settings.limits import SUBNET_TIERS
from emr_lineage.settings.model import EnvironmentSettings
from stacks.shared.storage import encrypted_log_group, rotating_key
from stacks.shared.tags import EMR_MANAGED_TAG

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
    """VPC, endpoints and flow logs.

    Exposes ``vpc`` (for the other stacks), ``interface_endpoints`` (service id -> endpoint) and ``key``
    (the flow logs' key).
    """

    def __init__(self, scope: Construct, construct_id: str, *, settings: EnvironmentSettings, **kwargs: Any) -> None:
        super().__init__(scope, construct_id, **kwargs)
        net = settings.network

        self.vpc = ec2.Vpc(
            self,
            "Vpc",
            ip_addresses=ec2.IpAddresses.cidr(net.vpc_cidr),
            max_azs=net.max_azs,
            nat_gateways=net.nat_gateways,
            subnet_configuration=[
                ec2.SubnetConfiguration(name=name, subnet_type=SUBNET_TYPES[name], cidr_mask=mask)
                for name, mask in SUBNET_TIERS
            ],
            gateway_endpoints={
                "S3": ec2.GatewayVpcEndpointOptions(service=ec2.GatewayVpcEndpointAwsService.S3),
            },
        )

        for subnet in self.vpc.private_subnets:
            Tags.of(subnet).add(*EMR_MANAGED_TAG)

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
        self.vpc.add_flow_log(
            "FlowLog",
            destination=ec2.FlowLogDestination.to_cloud_watch_logs(flow_log_group),
            traffic_type=ec2.FlowLogTrafficType.ALL,
        )

        self.interface_endpoints: dict[str, ec2.InterfaceVpcEndpoint] = {}
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
                ec2.Peer.ipv4(net.vpc_cidr), ec2.Port.tcp(443), "AWS API calls from the VPC"
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
