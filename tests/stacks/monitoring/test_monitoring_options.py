"""MonitoringStack's options on one small stack of its own (no app synth): no gateway, a web target
group, an e-mail subscription. The environments' synths cover the default wiring
(test_monitoring.py)."""

from __future__ import annotations

import json

import aws_cdk as cdk
import pytest
from aws_cdk import aws_ec2 as ec2
from aws_cdk import aws_ecs as ecs
from aws_cdk import aws_elasticloadbalancingv2 as elbv2
from aws_cdk import aws_logs as logs
from aws_cdk import aws_rds as rds
from aws_cdk.assertions import Template
from cdk_nag import AwsSolutionsChecks

from emr_lineage.settings.loader import load_settings
from stacks.monitoring import MonitoredService, MonitoringStack
from tests.stacks.cfn_lint import lint_template
from tests.stacks.templates import by_type, one
from tests.stacks.test_compliance import CFN_LINT_RULES_IGNORED_EVERYWHERE

EMAIL = "lineage-oncall@example.com"
ARN = "arn:aws:elasticloadbalancing:eu-west-1:123456789012"
LOAD_BALANCER_ARN = f"{ARN}:loadbalancer/app/marquez/0123456789abcdef"


def _target_group(scope: cdk.Stack, name: str) -> elbv2.IApplicationTargetGroup:
    return elbv2.ApplicationTargetGroup.from_target_group_attributes(
        scope,
        name,
        target_group_arn=f"{ARN}:targetgroup/{name}/0123456789abcdef",
        load_balancer_arns=LOAD_BALANCER_ARN,
    )


@pytest.fixture(scope="module")
def standalone() -> tuple[dict, list[str]]:
    """dev's settings with an e-mail address and no gateway; the watched resources imported by name.
    Returns the template and the cdk-nag findings."""
    settings = load_settings("dev")
    settings = settings.model_copy(update={"alarms": settings.alarms.model_copy(update={"email": EMAIL})})
    app = cdk.App()
    watched = cdk.Stack(app, "Watched")
    cdk.CfnWaitConditionHandle(watched, "Nothing")  # a stack needs a resource
    vpc = ec2.Vpc.from_vpc_attributes(watched, "Vpc", vpc_id="vpc-12345678", availability_zones=["eu-west-1a"])
    cluster = ecs.Cluster.from_cluster_attributes(watched, "Cluster", cluster_name="marquez", vpc=vpc)
    stack = MonitoringStack(
        app,
        "Monitoring",
        settings=settings,
        service=MonitoredService(
            load_balancer=elbv2.ApplicationLoadBalancer.from_application_load_balancer_attributes(
                watched, "LoadBalancer", load_balancer_arn=LOAD_BALANCER_ARN, security_group_id="sg-12345678"
            ),
            api_target_group=_target_group(watched, "api"),
            web_target_group=_target_group(watched, "web"),
            marquez_service=ecs.FargateService.from_fargate_service_attributes(
                watched, "Service", cluster=cluster, service_name="marquez"
            ),
            database=rds.DatabaseInstance.from_database_instance_attributes(
                watched,
                "Database",
                instance_identifier="emr-lineage-dev-marquez",
                instance_endpoint_address="marquez.example.internal",
                port=5432,
                security_groups=[],
            ),
            marquez_log_group=logs.LogGroup.from_log_group_name(watched, "Logs", "marquez"),
        ),
    )
    template = Template.from_stack(stack).to_json()
    report = AwsSolutionsChecks().validate_scope(stack)
    return template, [v.rule_name for v in report.violations]


def test_email_address_is_subscribed_to_the_topic(standalone):
    template, _ = standalone
    topic_id, _ = one(template, "AWS::SNS::Topic")
    (_, subscription) = one(template, "AWS::SNS::Subscription")
    assert subscription["Properties"] == {"Endpoint": EMAIL, "Protocol": "email", "TopicArn": {"Ref": topic_id}}


def test_without_gateway_no_gateway_alarms_and_the_api_requests_stand_for_events_in(standalone):
    template, _ = standalone
    names = {a["Properties"]["AlarmName"] for a in by_type(template, "AWS::CloudWatch::Alarm").values()}
    assert names == {
        f"emr-lineage-dev-{slug}"
        for slug in (
            "alb-5xx",
            "api-unhealthy-targets",
            "web-unhealthy-targets",
            "marquez-tasks-below-desired",
            "rds-cpu",
            "rds-free-storage",
            "rds-connections",
            "marquez-retention-failed",
        )
    }
    (_, dashboard) = one(template, "AWS::CloudWatch::Dashboard")
    body = dashboard["Properties"]["DashboardBody"]
    text = "".join(p if isinstance(p, str) else "<token>" for p in body["Fn::Join"][1])
    titles = [w["properties"].get("title") for w in json.loads(text)["widgets"] if w["type"] == "metric"]
    assert titles[0] == "Marquez API requests (lineage events included)"
    assert not any(t.startswith("Lineage events") for t in titles)


def test_web_target_group_gets_its_unhealthy_targets_alarm(standalone):
    template, _ = standalone
    (web,) = [
        a["Properties"]
        for a in by_type(template, "AWS::CloudWatch::Alarm").values()
        if a["Properties"]["AlarmName"] == "emr-lineage-dev-web-unhealthy-targets"
    ]
    dimensions = {d["Name"]: d["Value"] for d in web["Dimensions"]}
    assert (web["MetricName"], dimensions["TargetGroup"]) == ("UnHealthyHostCount", "targetgroup/web/0123456789abcdef")
    assert dimensions["LoadBalancer"] == "app/marquez/0123456789abcdef"


def test_cdk_nag_finds_nothing(standalone):
    _, findings = standalone
    assert findings == []


def test_cfn_lint_finds_nothing(standalone, tmp_path):
    """The e-mail subscription and the stack without a gateway are variants the app tests do not lint."""
    template, _ = standalone
    path = tmp_path / "Monitoring.template.json"
    path.write_text(json.dumps(template), encoding="utf-8")
    matches = [m for m in lint_template(path) if m.rule.id not in CFN_LINT_RULES_IGNORED_EVERYWHERE]
    assert matches == [], "\n".join(str(m) for m in matches)
