"""MonitoringStack on the synthesized environments: every alarm (metric, threshold from cdk.json,
comparison, the topic as its actions), the encrypted TLS-only topic, the EMR failure rules and the
dashboard, all watching what the lineage and gateway stacks export."""

from __future__ import annotations

import json

import pytest

from emr_lineage.settings.loader import load_settings
from stacks.lineage_service.retention import FAILURE_LOG_TEXT
from stacks.monitoring.alarms import unhealthy_minutes
from tests.stacks.templates import by_type, export_name, logical_id, one

ALARM = "AWS::CloudWatch::Alarm"
GE, LT = "GreaterThanOrEqualToThreshold", "LessThanThreshold"
GIB = 1024**3
SERVICE_ALARMS = {
    "alb-5xx",
    "api-unhealthy-targets",
    "web-unhealthy-targets",
    "marquez-tasks-below-desired",
    "rds-cpu",
    "rds-free-storage",
    "rds-connections",
}
RETENTION_ALARMS = {"marquez-retention-failed"}  # both environments set marquez.retention_days
GATEWAY_ALARMS = {
    "gateway-dead-letter-messages",
    "gateway-dead-letter-age",
    "gateway-ingest-errors",
    "gateway-ingest-throttles",
    "gateway-forward-errors",
    "gateway-forward-throttles",
}


def _alarms(synth) -> dict[str, dict]:
    """The monitoring stack's alarms by name without the ``emr-lineage-<env>-`` prefix."""
    prefix = f"emr-lineage-{synth.env}-"
    alarms = {}
    for alarm in by_type(synth.template_json("monitoring"), ALARM).values():
        name = alarm["Properties"]["AlarmName"]
        assert name.startswith(prefix), name
        alarms[name.removeprefix(prefix)] = alarm["Properties"]
    return alarms


def _topic_id(synth) -> str:
    topic_id, _ = one(synth.template_json("monitoring"), "AWS::SNS::Topic")
    return topic_id


def _imported(synth, stack: str, value: dict) -> dict:
    """How the monitoring stack refers to ``value`` of another stack: the import of its export."""
    return {"Fn::ImportValue": export_name(synth.template_json(stack), value)}


def _single_metric(props: dict) -> tuple[str, str, str, int, dict]:
    """(namespace, metric, statistic, period, dimensions by name) of a one-metric alarm."""
    dimensions = {d["Name"]: d["Value"] for d in props["Dimensions"]}
    return props["Namespace"], props["MetricName"], props["Statistic"], props["Period"], dimensions


def _math(props: dict) -> tuple[str, dict[str, dict]]:
    """(expression, metrics by id) of a metric-math alarm."""
    (expression,) = [m for m in props["Metrics"] if "Expression" in m]
    assert expression["ReturnData"] is True
    metrics = {m["Id"]: m["MetricStat"] for m in props["Metrics"] if "MetricStat" in m}
    assert all(m["ReturnData"] is False for m in props["Metrics"] if "MetricStat" in m)
    return expression["Expression"], metrics


def _gateway(synth) -> dict:
    return synth.template_json("gateway")


def test_every_alarm_notifies_the_topic_when_it_fires_and_recovers(synth):
    alarms = _alarms(synth)
    assert set(alarms) == SERVICE_ALARMS | RETENTION_ALARMS | GATEWAY_ALARMS
    topic = {"Ref": _topic_id(synth)}
    for name, props in alarms.items():
        assert props["AlarmActions"] == [topic], name
        assert props["OKActions"] == [topic], name
        assert props["AlarmDescription"].endswith(f"(runbook: docs/operations.md, alarm {name})")


def test_a_failed_marquez_retention_run_alarms_through_a_metric_filter_on_its_log_line(synth):
    template = synth.template_json("monitoring")
    _, metric_filter = one(template, "AWS::Logs::MetricFilter")
    props = metric_filter["Properties"]
    assert props["FilterPattern"] == f'"{FAILURE_LOG_TEXT}"'
    lineage = synth.template_json("lineage")
    (log_group_id,) = [i for i, r in by_type(lineage, "AWS::Logs::LogGroup").items() if "Marquez" in i]
    assert props["LogGroupName"] == _imported(synth, "lineage", {"Ref": log_group_id})
    (transformation,) = props["MetricTransformations"]
    alarm = _alarms(synth)["marquez-retention-failed"]
    assert (alarm["Namespace"], alarm["MetricName"]) == (
        transformation["MetricNamespace"],
        transformation["MetricName"],
    )
    assert (alarm["Statistic"], alarm["Threshold"], alarm["ComparisonOperator"]) == ("Sum", 1, GE)


def test_no_retention_task_no_retention_alarm(cognito_synth):
    template = cognito_synth.template_json("monitoring")
    assert by_type(template, "AWS::Logs::MetricFilter") == {}
    assert "marquez-retention-failed" not in _alarms(cognito_synth)


def test_no_other_stack_has_alarms(synth):
    """Every alarm lives in the monitoring stack, with its action."""
    for name in synth.stack_names:
        if name != "monitoring":
            assert by_type(synth.template_json(name), ALARM) == {}, name


def test_alb_5xx_counts_load_balancer_and_target_errors_against_the_configured_threshold(synth):
    props = _alarms(synth)["alb-5xx"]
    limits = load_settings(synth.env).alarms
    assert (props["Threshold"], props["ComparisonOperator"], props["EvaluationPeriods"]) == (
        limits.alb_5xx_per_5_minutes,
        GE,
        1,
    )
    assert props["TreatMissingData"] == "notBreaching"
    expression, metrics = _math(props)
    assert expression == "FILL(elb, 0) + FILL(target, 0)"
    alb_id, _ = one(synth.template_json("lineage"), "AWS::ElasticLoadBalancingV2::LoadBalancer")
    full_name = _imported(synth, "lineage", {"Fn::GetAtt": [alb_id, "LoadBalancerFullName"]})
    for metric_id, name in (("elb", "HTTPCode_ELB_5XX_Count"), ("target", "HTTPCode_Target_5XX_Count")):
        stat = metrics[metric_id]
        assert (stat["Metric"]["Namespace"], stat["Metric"]["MetricName"]) == ("AWS/ApplicationELB", name)
        assert stat["Metric"]["Dimensions"] == [{"Name": "LoadBalancer", "Value": full_name}]
        assert (stat["Stat"], stat["Period"]) == ("Sum", 300)


def test_unhealthy_api_targets_alarm_outlasts_the_health_check_grace_period(synth):
    props = _alarms(synth)["api-unhealthy-targets"]
    namespace, metric, statistic, period, dimensions = _single_metric(props)
    assert (namespace, metric, statistic, period) == ("AWS/ApplicationELB", "UnHealthyHostCount", "Maximum", 60)
    lineage = synth.template_json("lineage")
    api_group = [
        k
        for k, v in by_type(lineage, "AWS::ElasticLoadBalancingV2::TargetGroup").items()
        if v["Properties"]["Port"] == 5000
    ]
    assert dimensions["TargetGroup"] == _imported(synth, "lineage", {"Fn::GetAtt": [*api_group, "TargetGroupFullName"]})
    settings = load_settings(synth.env)
    minutes = unhealthy_minutes(settings)
    assert minutes * 60 > settings.marquez.health_check_grace_seconds
    assert (props["Threshold"], props["ComparisonOperator"], props["EvaluationPeriods"]) == (1, GE, minutes)


def test_missing_marquez_tasks_compare_container_insights_desired_and_running_counts(synth):
    lineage = synth.template_json("lineage")
    # The metrics exist only with Container Insights on (the lineage stack's cluster).
    _, cluster = one(lineage, "AWS::ECS::Cluster")
    assert {"Name": "containerInsights", "Value": "enabled"} in cluster["Properties"]["ClusterSettings"]
    props = _alarms(synth)["marquez-tasks-below-desired"]
    expression, metrics = _math(props)
    assert expression == "desired - FILL(running, 0)"
    cluster_id = logical_id(lineage, "MarquezCluster", "AWS::ECS::Cluster")
    service_id = logical_id(lineage, "MarquezService", "AWS::ECS::Service")
    dimensions = [
        {"Name": "ClusterName", "Value": _imported(synth, "lineage", {"Ref": cluster_id})},
        {"Name": "ServiceName", "Value": _imported(synth, "lineage", {"Fn::GetAtt": [service_id, "Name"]})},
    ]
    for metric_id, name in (("desired", "DesiredTaskCount"), ("running", "RunningTaskCount")):
        metric = metrics[metric_id]["Metric"]
        assert (metric["Namespace"], metric["MetricName"]) == ("ECS/ContainerInsights", name)
        assert metric["Dimensions"] == dimensions
    minutes = unhealthy_minutes(load_settings(synth.env))
    assert (props["Threshold"], props["ComparisonOperator"], props["EvaluationPeriods"]) == (1, GE, minutes)


@pytest.mark.parametrize(
    ("alarm", "metric", "statistic", "comparison", "threshold"),
    [
        ("rds-cpu", "CPUUtilization", "Average", GE, lambda limits: limits.rds_cpu_percent),
        ("rds-free-storage", "FreeStorageSpace", "Minimum", LT, lambda limits: limits.rds_free_storage_gib * GIB),
        ("rds-connections", "DatabaseConnections", "Maximum", GE, lambda limits: limits.rds_connections),
    ],
)
def test_database_alarms_use_the_configured_thresholds(synth, alarm, metric, statistic, comparison, threshold):
    props = _alarms(synth)[alarm]
    namespace, name, stat, period, dimensions = _single_metric(props)
    assert (namespace, name, stat, period) == ("AWS/RDS", metric, statistic, 300)
    db_id, _ = one(synth.template_json("lineage"), "AWS::RDS::DBInstance")
    assert dimensions == {"DBInstanceIdentifier": _imported(synth, "lineage", {"Ref": db_id})}
    limits = load_settings(synth.env).alarms
    assert (props["Threshold"], props["ComparisonOperator"]) == (threshold(limits), comparison)
    # No data from a database is not "fine": the alarm shows it as insufficient data.
    assert props["TreatMissingData"] == "missing"


def test_dead_letter_alarms_watch_the_gateways_dead_letter_queue(synth):
    alarms = _alarms(synth)
    limits = load_settings(synth.env).alarms
    dlq_id = logical_id(_gateway(synth), "DeadLetterQueue", "AWS::SQS::Queue")
    queue_name = _imported(synth, "gateway", {"Fn::GetAtt": [dlq_id, "QueueName"]})
    expected = {
        "gateway-dead-letter-messages": ("ApproximateNumberOfMessagesVisible", limits.dead_letter_messages),
        "gateway-dead-letter-age": ("ApproximateAgeOfOldestMessage", limits.dead_letter_oldest_age_minutes * 60),
    }
    for alarm, (metric, threshold) in expected.items():
        props = alarms[alarm]
        assert _single_metric(props) == ("AWS/SQS", metric, "Maximum", 300, {"QueueName": queue_name})
        assert (props["Threshold"], props["ComparisonOperator"], props["EvaluationPeriods"]) == (threshold, GE, 1)
        assert props["TreatMissingData"] == "notBreaching"


@pytest.mark.parametrize("function", ["ingest", "forward"])
def test_gateway_function_errors_and_throttles_alarm(synth, function):
    alarms = _alarms(synth)
    function_id = logical_id(_gateway(synth), function.capitalize(), "AWS::Lambda::Function")
    dimensions = {"FunctionName": _imported(synth, "gateway", {"Ref": function_id})}
    errors = load_settings(synth.env).alarms.lambda_errors_per_5_minutes
    for alarm, metric, threshold in (("errors", "Errors", errors), ("throttles", "Throttles", 1)):
        props = alarms[f"gateway-{function}-{alarm}"]
        assert _single_metric(props) == ("AWS/Lambda", metric, "Sum", 300, dimensions)
        assert (props["Threshold"], props["ComparisonOperator"]) == (threshold, GE)


def test_topic_is_kms_encrypted_tls_only_and_publishable_by_alarms_and_rules(synth):
    tpl = synth.template_json("monitoring")
    topic_id = _topic_id(synth)
    key_id, key = one(tpl, "AWS::KMS::Key")
    assert key["Properties"]["EnableKeyRotation"] is True
    topic = tpl["Resources"][topic_id]["Properties"]
    assert topic["KmsMasterKeyId"] == {"Fn::GetAtt": [key_id, "Arn"]}
    assert topic["TopicName"] == f"emr-lineage-{synth.env}-alarms"
    # Both publishers may use the key (an encrypted topic needs it), and nothing else but the account.
    key_grants = {
        s["Principal"]["Service"]: s["Action"]
        for s in key["Properties"]["KeyPolicy"]["Statement"]
        if "Service" in s.get("Principal", {})
    }
    assert key_grants == {
        "cloudwatch.amazonaws.com": ["kms:Decrypt", "kms:GenerateDataKey*"],
        "events.amazonaws.com": ["kms:Decrypt", "kms:GenerateDataKey*"],
    }
    (_, policy) = one(tpl, "AWS::SNS::TopicPolicy")
    statements = policy["Properties"]["PolicyDocument"]["Statement"]
    assert {
        "Action": "sns:Publish",
        "Condition": {"Bool": {"aws:SecureTransport": "false"}},
        "Effect": "Deny",
        "Principal": "*",
        "Resource": {"Ref": topic_id},
        "Sid": "AllowPublishThroughSSLOnly",
    } in statements
    publishers = {
        s["Principal"]["Service"]: s for s in statements if s["Effect"] == "Allow" and s["Action"] == "sns:Publish"
    }
    assert set(publishers) == {"cloudwatch.amazonaws.com", "events.amazonaws.com"}
    source = publishers["cloudwatch.amazonaws.com"]["Condition"]["ArnLike"]["aws:SourceArn"]
    assert source["Fn::Join"][1][-1] == ":alarm:*"


def test_no_email_subscription_unless_configured(synth):
    assert load_settings(synth.env).alarms.email is None
    assert by_type(synth.template_json("monitoring"), "AWS::SNS::Subscription") == {}


def _rules(synth) -> dict[str, dict]:
    rules = by_type(synth.template_json("monitoring"), "AWS::Events::Rule")
    return {rule["Properties"]["EventPattern"]["detail-type"][0]: rule["Properties"] for rule in rules.values()}


def test_emr_failures_reach_the_topic_as_readable_messages(synth):
    rules = _rules(synth)
    # With emr_serverless on, a third rule (test_serverless_job_runs_that_end_badly_reach_the_topic).
    assert set(rules) - {"EMR Serverless Job Run State Change"} == {
        "EMR Cluster State Change",
        "EMR Step Status Change",
    }
    cluster, step = rules["EMR Cluster State Change"], rules["EMR Step Status Change"]
    # Clusters of this environment only (named after its resource prefix); steps of any cluster.
    assert cluster["EventPattern"] == {
        "source": ["aws.emr"],
        "detail-type": ["EMR Cluster State Change"],
        "detail": {"state": ["TERMINATED_WITH_ERRORS"], "name": [{"prefix": f"emr-lineage-{synth.env}-"}]},
    }
    assert step["EventPattern"] == {
        "source": ["aws.emr"],
        "detail-type": ["EMR Step Status Change"],
        "detail": {"state": ["FAILED"]},
    }
    for rule, fields in ((cluster, {"name", "clusterId", "message"}), (step, {"name", "stepId", "clusterId"})):
        assert rule["State"] == "ENABLED"
        (target,) = rule["Targets"]
        assert target["Arn"] == {"Ref": _topic_id(synth)}
        transformer = target["InputTransformer"]
        paths = transformer["InputPathsMap"]
        assert {f"$.detail.{f}" for f in fields} <= set(paths.values())
        template = json.loads(transformer["InputTemplate"])  # one JSON string: the e-mail's text
        assert template.startswith(f"[emr-lineage-{synth.env}] EMR ")
        assert all(f"<{key}>" in template for key in paths)


def test_serverless_job_runs_that_end_badly_reach_the_topic(synths):
    """prod has emr_serverless on: its application's FAILED (errors) and CANCELLED (deadline, or cancelled) runs.
    The rule is the EMR stack's, beside the application (switched off, no export in use goes with it)."""
    synth = synths["prod"]
    emr = synth.template_json("emr")
    application_id, _ = one(emr, "AWS::EMRServerless::Application")
    (rule,) = [r["Properties"] for r in by_type(emr, "AWS::Events::Rule").values()]
    assert not [
        r
        for r in by_type(synth.template_json("monitoring"), "AWS::Events::Rule").values()
        if r["Properties"]["EventPattern"]["source"] == ["aws.emr-serverless"]
    ]
    assert rule["EventPattern"] == {
        "source": ["aws.emr-serverless"],
        "detail-type": ["EMR Serverless Job Run State Change"],
        # Its events' resources list is empty: the application is matched in detail.
        "detail": {
            "applicationId": [{"Fn::GetAtt": [application_id, "ApplicationId"]}],
            "state": ["FAILED", "CANCELLED"],
        },
    }
    assert rule["State"] == "ENABLED"
    (target,) = rule["Targets"]
    assert target["Arn"] == _imported(synth, "monitoring", {"Ref": _topic_id(synth)})
    transformer = target["InputTransformer"]
    paths = transformer["InputPathsMap"]
    fields = {"jobRunName", "jobRunId", "applicationId", "state", "previousState"}
    assert set(paths.values()) == {f"$.detail.{f}" for f in fields}
    text = json.loads(transformer["InputTemplate"])
    assert text.startswith("[emr-lineage-prod] EMR Serverless job run ")
    assert all(f"<{key}>" in text for key in paths)


def _dashboard(synth) -> dict:
    """The dashboard body with every intrinsic (imports, ARNs, region) as ``<token>``."""
    (_, dashboard) = one(synth.template_json("monitoring"), "AWS::CloudWatch::Dashboard")
    assert dashboard["Properties"]["DashboardName"] == f"emr-lineage-{synth.env}"
    body = dashboard["Properties"]["DashboardBody"]
    text = "".join(p if isinstance(p, str) else "<token>" for p in body["Fn::Join"][1])
    return json.loads(text)


def test_dashboard_shows_events_in_forwarded_failed_and_marquez_health(synth):
    widgets = _dashboard(synth)["widgets"]
    graphs = {w["properties"]["title"]: w["properties"] for w in widgets if w["type"] == "metric"}
    assert list(graphs) == [
        "Lineage events in (gateway ingest)",
        "Lineage events forwarded to Marquez",
        "Lineage events failed",
        "Marquez targets",
        "Marquez load balancer",
        "Marquez tasks",
        "Marquez database",
        "Marquez database storage",
    ]

    def metric_names(title: str) -> set[str]:
        return {m[1] for m in graphs[title]["metrics"] if len(m) > 1 and isinstance(m[1], str)}

    assert {"HTTPCode_Target_2XX_Count", "HTTPCode_Target_4XX_Count", "HTTPCode_Target_5XX_Count", "Invocations"} == (
        metric_names("Lineage events in (gateway ingest)")
    )
    assert {"NumberOfMessagesSent", "NumberOfMessagesDeleted", "ApproximateAgeOfOldestMessage"} == metric_names(
        "Lineage events forwarded to Marquez"
    )
    assert {"ApproximateNumberOfMessagesVisible", "Errors", "Throttles", "ApproximateAgeOfOldestMessage"} == (
        metric_names("Lineage events failed")
    )
    assert {"HealthyHostCount", "UnHealthyHostCount"} == metric_names("Marquez targets")
    assert {"HTTPCode_ELB_5XX_Count", "HTTPCode_Target_5XX_Count", "RequestCount", "TargetResponseTime"} == (
        metric_names("Marquez load balancer")
    )
    assert {"DesiredTaskCount", "RunningTaskCount", "CPUUtilization", "MemoryUtilization"} == metric_names(
        "Marquez tasks"
    )
    assert {"CPUUtilization", "DatabaseConnections"} == metric_names("Marquez database")
    assert {"FreeStorageSpace"} == metric_names("Marquez database storage")
    (alarm_widget,) = [w for w in widgets if w["type"] == "alarm"]
    assert len(alarm_widget["properties"]["alarms"]) == len(SERVICE_ALARMS | RETENTION_ALARMS | GATEWAY_ALARMS)


def test_monitoring_outputs_the_topic_and_dashboard(synth):
    outputs = synth.template_json("monitoring")["Outputs"]
    assert outputs["AlarmTopicArn"]["Value"] == {"Ref": _topic_id(synth)}
    assert "DashboardName" in outputs
