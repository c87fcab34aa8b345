"""The metrics alarms and the dashboard share, each defined once.

Marquez runs on Fargate in a cluster with Container Insights on (stacks/lineage_service/marquez.py),
which publishes the service's ``RunningTaskCount`` and ``DesiredTaskCount`` to ``ECS/ContainerInsights``
(https://docs.aws.amazon.com/AmazonCloudWatch/latest/monitoring/Container-Insights-metrics-ECS.html).
"""

from __future__ import annotations

from dataclasses import dataclass

from aws_cdk import Duration
from aws_cdk import aws_cloudwatch as cloudwatch
from aws_cdk import aws_ecs as ecs
from aws_cdk import aws_elasticloadbalancingv2 as elbv2
from aws_cdk import aws_lambda as lambda_
from aws_cdk import aws_logs as logs
from aws_cdk import aws_rds as rds
from aws_cdk import aws_sqs as sqs

ONE_MINUTE = Duration.minutes(1)
FIVE_MINUTES = Duration.minutes(5)
CONTAINER_INSIGHTS = "ECS/ContainerInsights"
GIB = 1024**3


@dataclass(frozen=True)
class MonitoredService:
    """What the monitoring stack watches of the lineage service (stacks/lineage_service): Marquez's load balancer,
    its target groups, tasks, log group and database."""

    load_balancer: elbv2.IApplicationLoadBalancer
    api_target_group: elbv2.IApplicationTargetGroup
    web_target_group: elbv2.IApplicationTargetGroup
    marquez_service: ecs.IBaseService
    database: rds.IDatabaseInstance
    marquez_log_group: logs.ILogGroup

    @property
    def target_groups(self) -> dict[str, elbv2.IApplicationTargetGroup]:
        return {"api": self.api_target_group, "web": self.web_target_group}


@dataclass(frozen=True)
class MonitoredGateway:
    """What the monitoring stack watches of the lineage gateway (stacks/gateway)."""

    queue: sqs.IQueue
    dead_letter_queue: sqs.IQueue
    ingest_function: lambda_.IFunction
    forward_function: lambda_.IFunction
    # The ALB target group of the ingest function: its 2xx/4xx/5xx are events accepted/refused/failed.
    ingest_target_group: elbv2.IApplicationTargetGroup


def alb_5xx(load_balancer: elbv2.IApplicationLoadBalancer, period: Duration = FIVE_MINUTES) -> cloudwatch.IMetric:
    """5xx answers, whether the load balancer made them (no healthy target, timeouts) or a target did."""
    return cloudwatch.MathExpression(
        expression="FILL(elb, 0) + FILL(target, 0)",
        using_metrics={
            "elb": load_balancer.metrics.http_code_elb(elbv2.HttpCodeElb.ELB_5XX_COUNT, period=period),
            "target": load_balancer.metrics.http_code_target(elbv2.HttpCodeTarget.TARGET_5XX_COUNT, period=period),
        },
        label="5xx (load balancer + targets)",
        period=period,
    )


def container_insights(service: ecs.IBaseService, metric_name: str, *, period: Duration = ONE_MINUTE):
    return cloudwatch.Metric(
        namespace=CONTAINER_INSIGHTS,
        metric_name=metric_name,
        dimensions_map={"ClusterName": service.cluster.cluster_name, "ServiceName": service.service_name},
        statistic="Average",
        period=period,
    )


def missing_tasks(service: ecs.IBaseService, period: Duration = ONE_MINUTE) -> cloudwatch.IMetric:
    """Desired minus running tasks; a missing running count (no task reported) counts as 0 running."""
    return cloudwatch.MathExpression(
        expression="desired - FILL(running, 0)",
        using_metrics={
            "desired": container_insights(service, "DesiredTaskCount", period=period),
            "running": container_insights(service, "RunningTaskCount", period=period),
        },
        label="Marquez tasks missing (desired - running)",
        period=period,
    )


def service_utilization(service: ecs.IBaseService, metric_name: str) -> cloudwatch.Metric:
    """``CPUUtilization`` or ``MemoryUtilization`` of the service (AWS/ECS, per service)."""
    return cloudwatch.Metric(
        namespace="AWS/ECS",
        metric_name=metric_name,
        dimensions_map={"ClusterName": service.cluster.cluster_name, "ServiceName": service.service_name},
        statistic="Average",
        period=FIVE_MINUTES,
    )
