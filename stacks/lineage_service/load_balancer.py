"""LineageLoadBalancer: the one internal entry point to Marquez (web UI and API)."""

from __future__ import annotations

from aws_cdk import Duration
from aws_cdk import aws_ec2 as ec2
from aws_cdk import aws_ecs as ecs
from aws_cdk import aws_elasticloadbalancingv2 as elbv2
from constructs import Construct

from emr_lineage.settings.model import EnvironmentSettings
from stacks.lineage_service.access_logs_bucket import AlbAccessLogsBucket
from stacks.lineage_service.marquez import ADMIN_PORT, API_CONTAINER, API_PORT, WEB_CONTAINER, WEB_PORT

LISTENER_PORT = 80
API_PATH_PATTERN = "/api/*"


class LineageLoadBalancer(Construct):
    """Internal ALB: ``/api/*`` to the Marquez API, everything else to the web UI.

    Reachable only from ``settings.marquez.web_allowed_cidrs`` and from members of
    ``clients_security_group`` (EMR nodes join it to report lineage). Exposes
    ``load_balancer``, ``clients_security_group``, ``api_url`` and ``web_url``, and for the
    lineage gateway (stacks/gateway) ``listener`` and ``api_target_group``.
    """

    def __init__(
        self,
        scope: Construct,
        construct_id: str,
        *,
        vpc: ec2.IVpc,
        settings: EnvironmentSettings,
        service: ecs.FargateService,
        access_logs: AlbAccessLogsBucket,
    ) -> None:
        super().__init__(scope, construct_id)

        self.security_group = ec2.SecurityGroup(
            self,
            "SecurityGroup",
            vpc=vpc,
            allow_all_outbound=False,
            description=f"{settings.resource_prefix} Marquez load balancer",
        )
        for cidr in settings.marquez.web_allowed_cidrs:
            self.security_group.add_ingress_rule(
                ec2.Peer.ipv4(cidr), ec2.Port.tcp(LISTENER_PORT), f"Marquez UI/API from {cidr}"
            )
        self.clients_security_group = ec2.SecurityGroup(
            self,
            "ClientsSecurityGroup",
            vpc=vpc,
            allow_all_outbound=False,
            description=f"{settings.resource_prefix} lineage clients: members may reach the Marquez API",
        )
        self.security_group.connections.allow_from(
            self.clients_security_group, ec2.Port.tcp(LISTENER_PORT), "OpenLineage clients (EMR nodes)"
        )

        self.load_balancer = elbv2.ApplicationLoadBalancer(
            self,
            "LoadBalancer",
            vpc=vpc,
            internet_facing=False,
            vpc_subnets=ec2.SubnetSelection(subnet_type=ec2.SubnetType.PRIVATE_WITH_EGRESS),
            security_group=self.security_group,
            drop_invalid_header_fields=True,
        )
        access_logs.enable_for(self.load_balancer, prefix="marquez-alb")

        self.listener = listener = self.load_balancer.add_listener(
            "Http", port=LISTENER_PORT, protocol=elbv2.ApplicationProtocol.HTTP, open=False
        )
        listener.add_targets(
            "Web",
            port=WEB_PORT,
            protocol=elbv2.ApplicationProtocol.HTTP,
            targets=[service.load_balancer_target(container_name=WEB_CONTAINER, container_port=WEB_PORT)],
            health_check=elbv2.HealthCheck(path="/healthcheck", port=str(WEB_PORT), interval=Duration.seconds(30)),
            deregistration_delay=Duration.seconds(30),
        )
        self.api_target_group = listener.add_targets(
            "Api",
            priority=10,
            conditions=[elbv2.ListenerCondition.path_patterns([API_PATH_PATTERN])],
            port=API_PORT,
            protocol=elbv2.ApplicationProtocol.HTTP,
            targets=[service.load_balancer_target(container_name=API_CONTAINER, container_port=API_PORT)],
            # Dropwizard's health checks (database included) live on the admin port.
            health_check=elbv2.HealthCheck(path="/healthcheck", port=str(ADMIN_PORT), interval=Duration.seconds(30)),
            deregistration_delay=Duration.seconds(30),
        )
        # ECS's L2 makes the service DependsOn its target groups, which its Ref already implies;
        # cfn-lint W3005 flags that redundancy. Silenced on this one resource (README, "Linting").
        service.node.default_child.add_metadata("cfn-lint", {"config": {"ignore_checks": ["W3005"]}})
        # add_targets opens the traffic ports; the API's health checks use the admin port.
        service.connections.allow_from(self.security_group, ec2.Port.tcp(ADMIN_PORT), "ALB health checks")

        base = f"http://{self.load_balancer.load_balancer_dns_name}"
        self.api_url = base
        self.web_url = f"{base}/"
