"""LineageLoadBalancer: the one internal entry point to Marquez (web UI and API)."""

from __future__ import annotations

import json

from aws_cdk import Duration
from aws_cdk import aws_ec2 as ec2
from aws_cdk import aws_ecs as ecs
from aws_cdk import aws_elasticloadbalancingv2 as elbv2
from constructs import Construct

from emr_lineage.marquez.api import LINEAGE_ENDPOINT
from emr_lineage.settings.model import EnvironmentSettings
from stacks.lineage_service.access_logs_bucket import AlbAccessLogsBucket
from stacks.lineage_service.marquez import ADMIN_PORT, API_CONTAINER, API_PORT, WEB_CONTAINER, WEB_PORT
from stacks.lineage_service.ui_auth import sign_in_then
from stacks.shared.nag import acknowledge_cfn_lint, acknowledge_checkov

HTTP_PORT = 80
HTTPS_PORT = 443
# TLS 1.3 and 1.2 with forward-secret ciphers only (ELB's recommended policy).
SSL_POLICY = elbv2.SslPolicy.RECOMMENDED_TLS
API_PATH_PATTERN = "/api/*"
WRITE_METHODS = ("POST", "PUT", "PATCH", "DELETE")
# With HTTPS, port 80 redirects reads (the web UI) but refuses writes: HTTP clients either stop at a
# 301 to a POST or follow it by resending a GET without the body (requests does, RFC 9110 15.4.2 allows
# it), so a lineage event would be lost in silence. 403 with the URL to use instead; not 426 Upgrade
# Required, which must carry an Upgrade header (RFC 9110, 15.5.22) the ALB cannot add.
# Rules of a listener are its own: this priority shares nothing with the serving listener's.
PLAIN_HTTP_WRITES_STATUS = 403
PLAIN_HTTP_WRITES_RULE_PRIORITY = 1
# The serving listener's id since the first deploy, whichever port it serves now (_listeners).
SERVING_LISTENER_ID = "Http"


def plain_http_writes_body(domain_name: str) -> str:
    """The port-80 answer to a write when HTTPS is on (JSON, one reason, within the ALB's 1024 characters)."""
    return json.dumps(
        {
            "status": "rejected",
            "error": f"use https://{domain_name}{LINEAGE_ENDPOINT}: plain HTTP takes no writes "
            "(a redirect would lose the request body)",
        }
    )


class LineageLoadBalancer(Construct):
    """Internal ALB: ``/api/*`` to the Marquez API, everything else to the web UI.

    With ``marquez.certificate_arn`` it serves HTTPS on 443 (port 80 redirects reads there and refuses
    writes, :data:`PLAIN_HTTP_WRITES_STATUS`) and the URLs are ``https://<marquez.domain_name>``;
    without, plain HTTP on 80 (where ``marquez.allow_plain_http`` allows it). With
    ``marquez.ui_auth`` the web route signs users in first (:mod:`stacks.lineage_service.ui_auth`).

    Reachable only from ``settings.marquez.web_allowed_cidrs`` and from members of
    ``clients_security_group`` (EMR nodes join it to report lineage). Exposes
    ``load_balancer``, ``clients_security_group``, ``api_url``, ``web_url``, ``https``,
    ``redirect_listener`` (None without HTTPS) and, for the lineage gateway (stacks/gateway),
    ``listener`` (the one that serves traffic: 443 with HTTPS) and ``api_target_group``, and for
    the monitoring stack ``web_target_group``.
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
        self.https = settings.marquez.certificate_arn is not None
        ports = [HTTPS_PORT, HTTP_PORT] if self.https else [HTTP_PORT]

        self.security_group, self.clients_security_group = self._security_groups(settings, vpc, ports)
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

        self.listener, self.redirect_listener = self._listeners(settings)
        self.web_target_group, self.api_target_group = self._routes(settings, vpc, service)

        # With HTTPS, clients verify the certificate: they use its name (a DNS record points it here).
        if self.https:
            base = f"https://{settings.marquez.domain_name}"
        else:
            base = f"http://{self.load_balancer.load_balancer_dns_name}"
        self.api_url = base
        self.web_url = f"{base}/"

    def _security_groups(
        self, settings: EnvironmentSettings, vpc: ec2.IVpc, ports: list[int]
    ) -> tuple[ec2.SecurityGroup, ec2.SecurityGroup]:
        """The load balancer's group (open to ``web_allowed_cidrs`` and to the clients group on ``ports``) and
        the lineage clients' group."""
        security_group = ec2.SecurityGroup(
            self,
            "SecurityGroup",
            vpc=vpc,
            allow_all_outbound=False,
            description=f"{settings.resource_prefix} Marquez load balancer",
        )
        for cidr in settings.marquez.web_allowed_cidrs:
            for port in ports:
                security_group.add_ingress_rule(ec2.Peer.ipv4(cidr), ec2.Port.tcp(port), f"Marquez UI/API from {cidr}")
        clients_security_group = ec2.SecurityGroup(
            self,
            "ClientsSecurityGroup",
            vpc=vpc,
            allow_all_outbound=False,
            description=f"{settings.resource_prefix} lineage clients: members may reach the Marquez API",
        )
        for port in ports:
            security_group.connections.allow_from(
                clients_security_group, ec2.Port.tcp(port), "OpenLineage clients (EMR nodes)"
            )
        return security_group, clients_security_group

    def _routes(
        self, settings: EnvironmentSettings, vpc: ec2.IVpc, service: ecs.FargateService
    ) -> tuple[elbv2.ApplicationTargetGroup, elbv2.ApplicationTargetGroup]:
        """The serving listener's routes: ``/api/*`` to the API, the rest to the web UI; returns both target groups."""
        listener = self.listener
        # The web UI is the default route, behind the sign-in when ui_auth is set.
        web_target_group = elbv2.ApplicationTargetGroup(
            listener,
            "WebGroup",
            vpc=vpc,
            port=WEB_PORT,
            protocol=elbv2.ApplicationProtocol.HTTP,
            targets=[service.load_balancer_target(container_name=WEB_CONTAINER, container_port=WEB_PORT)],
            health_check=elbv2.HealthCheck(path="/healthcheck", port=str(WEB_PORT), interval=Duration.seconds(30)),
            deregistration_delay=Duration.seconds(30),
        )
        listener.add_action(
            "Web",
            action=sign_in_then(self, settings.marquez.ui_auth, elbv2.ListenerAction.forward([web_target_group])),
        )
        api_target_group = listener.add_targets(
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
        acknowledge_cfn_lint(
            service, "W3005", "ECS's L2 makes the service DependsOn its target groups, which its Ref already implies"
        )
        # add_targets opens the traffic ports; the API's health checks use the admin port.
        service.connections.allow_from(self.security_group, ec2.Port.tcp(ADMIN_PORT), "ALB health checks")
        return web_target_group, api_target_group

    def _listeners(
        self, settings: EnvironmentSettings
    ) -> tuple[elbv2.ApplicationListener, elbv2.ApplicationListener | None]:
        """The listener that serves traffic, and the port-80 listener that redirects reads to it and
        refuses writes (HTTPS only).

        The serving listener is one resource in both modes: turning HTTPS on moves it from port 80 to 443
        in place, so its ARN, its routes' target groups and what other stacks import of them stay (new
        ones would have to replace exports in use). The redirect listener takes port 80 only after that.
        """
        marquez = settings.marquez
        if not self.https:
            http = self.load_balancer.add_listener(
                SERVING_LISTENER_ID, port=HTTP_PORT, protocol=elbv2.ApplicationProtocol.HTTP, open=False
            )
            # The settings refuse an environment without a certificate unless it allows plain HTTP.
            for check in ("CKV_AWS_2", "CKV_AWS_103"):
                acknowledge_checkov(
                    http,
                    check,
                    f"{settings.name} has no certificate and sets (or, as dev, defaults to) marquez.allow_plain_http: "
                    "plain HTTP on an internal load balancer that only web_allowed_cidrs and the lineage clients "
                    "group reach; a certificate moves this listener to HTTPS on 443",
                )
            return http, None
        https = self.load_balancer.add_listener(
            SERVING_LISTENER_ID,
            port=HTTPS_PORT,
            protocol=elbv2.ApplicationProtocol.HTTPS,
            certificates=[elbv2.ListenerCertificate.from_arn(marquez.certificate_arn)],
            ssl_policy=SSL_POLICY,
            open=False,
        )
        redirect = self.load_balancer.add_listener(
            "Redirect",
            port=HTTP_PORT,
            protocol=elbv2.ApplicationProtocol.HTTP,
            open=False,
            default_action=elbv2.ListenerAction.redirect(protocol="HTTPS", port=str(HTTPS_PORT), permanent=True),
        )
        # A load balancer has one listener per port, even for a moment.
        redirect.node.add_dependency(https)
        redirect.add_action(
            "RefuseWrites",
            priority=PLAIN_HTTP_WRITES_RULE_PRIORITY,
            conditions=[elbv2.ListenerCondition.http_request_methods(list(WRITE_METHODS))],
            action=elbv2.ListenerAction.fixed_response(
                PLAIN_HTTP_WRITES_STATUS,
                content_type="application/json",
                message_body=plain_http_writes_body(marquez.domain_name),
            ),
        )
        return https, redirect
