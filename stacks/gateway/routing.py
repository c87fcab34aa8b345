"""The gateway's routes on the lineage load balancer: lineage posts to the ingest, other writes refused,
and the forwarder's own way to Marquez.

On the listener that serves clients (443 with a certificate, else 80; port 80 then redirects reads and
refuses writes itself, stacks/lineage_service/load_balancer.py):

1. priority :data:`INGEST_RULE_PRIORITY`: ``POST /api/v1/lineage`` and ``/api/v1/lineage/batch`` (the
   lineage URL and the OpenLineage batch URL, each with or without a trailing slash) to the ingest function;
2. priority :data:`DENY_WRITES_RULE_PRIORITY`: any other POST, PUT, PATCH or DELETE, on any path,
   answered 403 by the load balancer itself. Marquez's other write endpoints (and the web UI's
   proxy to them) would otherwise let anyone the load balancer admits write lineage without the
   key. Reads (GET, HEAD, OPTIONS) still reach Marquez through the lineage stack's rules.

The forwarder's listener (:data:`FORWARD_LISTENER_PORT`) has no rules at all: it is how the
forwarder posts to Marquez, so neither rule may apply there.

Functions on the stack's scope, not a construct of their own, so the resources keep the logical
ids they were first deployed with (a listener or rule renamed would be created before the old one
is deleted, and collide on its port or priority).
"""

from __future__ import annotations

import json
from dataclasses import dataclass

from aws_cdk import Aws
from aws_cdk import aws_ec2 as ec2
from aws_cdk import aws_elasticloadbalancingv2 as elbv2
from aws_cdk import aws_elasticloadbalancingv2_targets as elb_targets
from aws_cdk import aws_lambda as lambda_
from constructs import Construct

from emr_lineage.marquez.api import LINEAGE_BATCH_ENDPOINT, LINEAGE_ENDPOINT
from stacks.lineage_service.load_balancer import WRITE_METHODS
from stacks.lineage_service.marquez import API_PORT
from stacks.shared.nag import acknowledge_checkov

LINEAGE_PATH = LINEAGE_ENDPOINT  # the one spelling, emr_lineage/marquez/api.py
# ALB path patterns match exactly (no trailing-slash folding): both forms of each, or the second one
# would fall through to the API rule. Four values; a path-pattern condition takes at most five
# (https://docs.aws.amazon.com/elasticloadbalancing/latest/application/rule-condition-types.html).
LINEAGE_PATHS = tuple(path + end for path in (LINEAGE_PATH, LINEAGE_BATCH_ENDPOINT) for end in ("", "/"))
# Both ahead of the lineage stack's /api/* rule (priority 10); rules are evaluated lowest first
# (https://docs.aws.amazon.com/elasticloadbalancing/latest/application/listener-rules.html).
INGEST_RULE_PRIORITY = 5
DENY_WRITES_RULE_PRIORITY = 6
DENY_WRITES_STATUS = 403
DENY_WRITES_BODY = json.dumps(
    {
        "status": "rejected",
        "error": f"lineage is written only through POST {LINEAGE_PATH} or {LINEAGE_BATCH_ENDPOINT} (the lineage "
        "gateway); Marquez's other write endpoints are closed on this load balancer",
    }
)
# Who may invoke the ingest: Elastic Load Balancing for a target group of this account and region. The
# target group's own ARN would be a cycle (the group waits for the permission before it registers the
# function); Lambda matches SourceArn as ArnLike, so the pattern works
# (https://docs.aws.amazon.com/elasticloadbalancing/latest/application/lambda-functions.html).
ELB_PRINCIPAL = "elasticloadbalancing.amazonaws.com"
# The forwarder's own listener on the lineage load balancer (Marquez API port, for recognition).
FORWARD_LISTENER_PORT = API_PORT


@dataclass(frozen=True)
class GatewayRoutes:
    ingest_target_group: elbv2.ApplicationTargetGroup
    ingest_rule: elbv2.ApplicationListenerRule
    deny_writes_rule: elbv2.ApplicationListenerRule


def route_lineage_posts(
    scope: Construct, *, listener: elbv2.IApplicationListener, ingest_function: lambda_.IFunction
) -> GatewayRoutes:
    """Lineage posts to the ingest function; every other write refused; reads keep going to Marquez."""
    target_group = elbv2.ApplicationTargetGroup(
        scope,
        "IngestTarget",
        target_type=elbv2.TargetType.LAMBDA,
        targets=[elb_targets.LambdaTarget(ingest_function)],
    )
    _limit_invocations_to_target_groups(ingest_function)
    ingest_rule = elbv2.ApplicationListenerRule(
        scope,
        "IngestRule",
        listener=listener,
        priority=INGEST_RULE_PRIORITY,
        conditions=[
            elbv2.ListenerCondition.path_patterns(list(LINEAGE_PATHS)),
            elbv2.ListenerCondition.http_request_methods(["POST"]),
        ],
        action=elbv2.ListenerAction.forward([target_group]),
    )
    deny_rule = elbv2.ApplicationListenerRule(
        scope,
        "DenyWritesRule",
        listener=listener,
        priority=DENY_WRITES_RULE_PRIORITY,
        conditions=[elbv2.ListenerCondition.http_request_methods(list(WRITE_METHODS))],
        action=elbv2.ListenerAction.fixed_response(
            DENY_WRITES_STATUS, content_type="application/json", message_body=DENY_WRITES_BODY
        ),
    )
    return GatewayRoutes(ingest_target_group=target_group, ingest_rule=ingest_rule, deny_writes_rule=deny_rule)


def _limit_invocations_to_target_groups(function: lambda_.IFunction) -> None:
    """The invoke permission LambdaTarget gave the load balancers, limited to this account's target groups."""
    (permission,) = [
        child
        for child in function.node.children
        if isinstance(child, lambda_.CfnPermission) and child.principal == ELB_PRINCIPAL
    ]
    permission.source_arn = f"arn:{Aws.PARTITION}:elasticloadbalancing:{Aws.REGION}:{Aws.ACCOUNT_ID}:targetgroup/*"


def forward_listener(
    scope: Construct,
    *,
    load_balancer: elbv2.IApplicationLoadBalancer,
    api_target_group: elbv2.IApplicationTargetGroup,
    security_group: ec2.SecurityGroup,
) -> elbv2.CfnListener:
    """The forwarder's way to Marquez: a listener with no rules, open to the forwarder only.

    A plain CfnListener: the L2 would register itself with the target group, which makes the
    Marquez service (lineage stack) wait for this stack, a dependency cycle. The load balancer
    already reaches the API tasks on their port (the lineage listener's API target group).
    """
    listener = elbv2.CfnListener(
        scope,
        "ForwardListener",
        load_balancer_arn=load_balancer.load_balancer_arn,
        port=FORWARD_LISTENER_PORT,
        protocol="HTTP",
        default_actions=[
            elbv2.CfnListener.ActionProperty(type="forward", target_group_arn=api_target_group.target_group_arn)
        ],
    )
    for check in ("CKV_AWS_2", "CKV_AWS_103"):
        acknowledge_checkov(
            listener,
            check,
            "The forwarder's own hop to Marquez inside the VPC: only its security group reaches this port, and "
            "the load balancer speaks plain HTTP to the Marquez tasks behind it either way; HTTPS here would need "
            "a certificate for the load balancer's own DNS name, which ACM does not issue",
        )
    # From the forwarder's side: both rules (its egress, the load balancer's ingress) live here.
    security_group.connections.allow_to(
        load_balancer, ec2.Port.tcp(FORWARD_LISTENER_PORT), "Gateway forwarder to the Marquez API listener"
    )
    return listener
