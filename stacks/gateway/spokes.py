"""The gateway's ingest for spoke accounts (``gateway.spoke_accounts``): a VPC endpoint service (PrivateLink).

A spoke connects an interface endpoint of its own to the service. Its traffic reaches a Network Load
Balancer here, which passes TCP on to a listener of the lineage load balancer kept for spokes (a target
group of type ``alb``: https://docs.aws.amazon.com/elasticloadbalancing/latest/network/application-load-balancer-target.html).
That listener has the serving listener's protocol and certificate, and one rule: lineage posts go to the
gateway's ingest, which checks the key as for every producer. Anything else, Marquez's reads included,
gets 404, except the health check's path. So a spoke can only write lineage.

Only the listed accounts may connect (the service's allowed principals), and their connections are
accepted without a manual step. The listener's rules are plain CfnListenerRules, as on the forwarder's
listener: the L2 would register with the ingest's target group and tie the lineage stack to this one.
"""

from __future__ import annotations

import json

from aws_cdk import Aws
from aws_cdk import aws_ec2 as ec2
from aws_cdk import aws_elasticloadbalancingv2 as elbv2
from aws_cdk import aws_elasticloadbalancingv2_targets as elb_targets
from aws_cdk import aws_iam as iam
from constructs import Construct

from emr_lineage.settings.hub import SPOKE_HTTP_PORT, SPOKE_HTTPS_PORT
from emr_lineage.settings.model import EnvironmentSettings
from stacks.gateway.routing import LINEAGE_PATHS
from stacks.lineage_service.load_balancer import SSL_POLICY
from stacks.shared.nag import acknowledge, acknowledge_checkov

SPOKE_HEALTH_PATH = "/emr-lineage/health"
NOT_FOR_SPOKES_BODY = json.dumps(
    {"status": "rejected", "error": "a spoke account may only send lineage: POST /api/v1/lineage (or its batch)"}
)


def spoke_port(settings: EnvironmentSettings) -> int:
    return SPOKE_HTTPS_PORT if settings.marquez.certificate_arn else SPOKE_HTTP_PORT


class SpokeIngest(Construct):
    """Exposes ``service`` (the VPC endpoint service), ``network_load_balancer`` and ``listener`` (the ALB's)."""

    def __init__(
        self,
        scope: Construct,
        construct_id: str,
        *,
        settings: EnvironmentSettings,
        vpc: ec2.IVpc,
        load_balancer: elbv2.IApplicationLoadBalancer,
        load_balancer_security_group_id: str,
        ingest_target_group: elbv2.IApplicationTargetGroup,
    ) -> None:
        super().__init__(scope, construct_id)
        port = spoke_port(settings)
        self.listener = self._listener(settings, load_balancer, ingest_target_group, port)
        # The NLB has no security group: the ALB sees its addresses, which lie in the VPC.
        ec2.CfnSecurityGroupIngress(
            self,
            "FromSpokes",
            group_id=load_balancer_security_group_id,
            ip_protocol="tcp",
            from_port=port,
            to_port=port,
            cidr_ip=settings.network.cidr,
            description="Spoke accounts' lineage through the endpoint service's load balancer",
        )
        self.network_load_balancer = self._network_load_balancer(
            vpc, load_balancer, port, settings.marquez.certificate_arn
        )
        self.service = ec2.VpcEndpointService(
            self,
            "Service",
            vpc_endpoint_service_load_balancers=[self.network_load_balancer],
            acceptance_required=False,
            allowed_regions=settings.gateway.spoke_regions or None,
            allowed_principals=[
                iam.ArnPrincipal(f"arn:{Aws.PARTITION}:iam::{account}:root")
                for account in settings.gateway.spoke_accounts
            ],
        )
        acknowledge_checkov(
            self.service.node.find_child("Service"),  # the L2 names its resource after itself, not "Resource"
            "CKV_AWS_123",
            "Only the accounts of gateway.spoke_accounts may connect (its allowed principals): accepting each "
            "connection by hand would decide nothing that list does not",
        )

    def _listener(
        self,
        settings: EnvironmentSettings,
        load_balancer: elbv2.IApplicationLoadBalancer,
        ingest_target_group: elbv2.IApplicationTargetGroup,
        port: int,
    ) -> elbv2.ApplicationListener:
        certificate = settings.marquez.certificate_arn
        # The L2 for the policy's name and no ingress of its own (open=False); its rules are L1s (the docstring).
        listener = elbv2.ApplicationListener(
            self,
            "Listener",
            load_balancer=load_balancer,
            port=port,
            protocol=elbv2.ApplicationProtocol.HTTPS if certificate else elbv2.ApplicationProtocol.HTTP,
            certificates=[elbv2.ListenerCertificate.from_arn(certificate)] if certificate else None,
            ssl_policy=SSL_POLICY if certificate else None,
            open=False,
            default_action=elbv2.ListenerAction.fixed_response(
                404, content_type="application/json", message_body=NOT_FOR_SPOKES_BODY
            ),
        )
        elbv2.CfnListenerRule(
            self,
            "LineagePosts",
            listener_arn=listener.listener_arn,
            priority=1,
            conditions=[
                _paths(list(LINEAGE_PATHS)),
                elbv2.CfnListenerRule.RuleConditionProperty(
                    field="http-request-method",
                    http_request_method_config=elbv2.CfnListenerRule.HttpRequestMethodConfigProperty(values=["POST"]),
                ),
            ],
            actions=[
                elbv2.CfnListenerRule.ActionProperty(
                    type="forward", target_group_arn=ingest_target_group.target_group_arn
                )
            ],
        )
        elbv2.CfnListenerRule(
            self,
            "Health",
            listener_arn=listener.listener_arn,
            priority=2,
            conditions=[_paths([SPOKE_HEALTH_PATH])],
            actions=[
                elbv2.CfnListenerRule.ActionProperty(
                    type="fixed-response",
                    fixed_response_config=elbv2.CfnListenerRule.FixedResponseConfigProperty(
                        status_code="200", content_type="application/json", message_body=json.dumps({"status": "ok"})
                    ),
                )
            ],
        )
        if not certificate:
            for check in ("CKV_AWS_2", "CKV_AWS_103"):
                acknowledge_checkov(
                    listener,
                    check,
                    "An environment without a certificate (marquez.allow_plain_http) serves plain HTTP on every "
                    "listener; spokes reach this one only through PrivateLink, inside AWS's network",
                )
        return listener

    def _network_load_balancer(
        self, vpc: ec2.IVpc, load_balancer: elbv2.IApplicationLoadBalancer, port: int, certificate: str | None
    ) -> elbv2.NetworkLoadBalancer:
        nlb = elbv2.NetworkLoadBalancer(
            self,
            "LoadBalancer",
            vpc=vpc,
            internet_facing=False,
            vpc_subnets=ec2.SubnetSelection(subnet_type=ec2.SubnetType.PRIVATE_WITH_EGRESS),
            cross_zone_enabled=True,
        )
        target_group = elbv2.NetworkTargetGroup(
            self,
            "Target",
            vpc=vpc,
            port=port,
            protocol=elbv2.Protocol.TCP,
            target_type=elbv2.TargetType.ALB,
            targets=[elb_targets.AlbArnTarget(load_balancer.load_balancer_arn, port)],
            health_check=elbv2.HealthCheck(
                protocol=elbv2.Protocol.HTTPS if certificate else elbv2.Protocol.HTTP, path=SPOKE_HEALTH_PATH
            ),
        )
        # The ALB takes a target group's traffic only once its listener on that port exists.
        target_group.node.add_dependency(self.listener)
        nlb.add_listener("Listener", port=port, protocol=elbv2.Protocol.TCP, default_target_groups=[target_group])
        reason = (
            "A TCP listener passing connections to the lineage load balancer, which logs every request: an NLB's "
            "access logs hold TLS listeners' connections only"
        )
        acknowledge(nlb, "AwsSolutions-ELB2", reason)
        acknowledge_checkov(nlb, "CKV_AWS_91", reason)
        return nlb


def _paths(values: list[str]) -> elbv2.CfnListenerRule.RuleConditionProperty:
    return elbv2.CfnListenerRule.RuleConditionProperty(
        field="path-pattern", path_pattern_config=elbv2.CfnListenerRule.PathPatternConfigProperty(values=values)
    )
