"""LineageDashboard: lineage events in, forwarded and failed, and Marquez's health, on one page."""

from __future__ import annotations

from collections.abc import Sequence

from aws_cdk import aws_cloudwatch as cloudwatch
from aws_cdk import aws_ecs as ecs
from aws_cdk import aws_elasticloadbalancingv2 as elbv2
from aws_cdk import aws_rds as rds
from constructs import Construct

from emr_lineage.settings.model import EnvironmentSettings
from stacks.monitoring.metrics import (
    FIVE_MINUTES,
    GIB,
    MonitoredGateway,
    alb_5xx,
    container_insights,
    service_utilization,
)

WIDTH = 8  # three graphs a row (the grid is 24 wide)
HEIGHT = 6


def _graph(title: str, left: Sequence[cloudwatch.IMetric], right: Sequence[cloudwatch.IMetric] = ()):
    return cloudwatch.GraphWidget(title=title, left=list(left), right=list(right), width=WIDTH, height=HEIGHT)


def _sum(metric: cloudwatch.Metric, label: str) -> cloudwatch.Metric:
    return metric.with_(statistic="Sum", period=FIVE_MINUTES, label=label)


def _gateway_rows(gateway: MonitoredGateway) -> list[list[cloudwatch.IWidget]]:
    target = gateway.ingest_target_group.metrics
    ingest, forward = gateway.ingest_function, gateway.forward_function
    dead_letters = gateway.dead_letter_queue
    return [
        [
            _graph(
                "Lineage events in (gateway ingest)",
                [
                    _sum(target.http_code_target(elbv2.HttpCodeTarget.TARGET_2XX_COUNT), "accepted (2xx)"),
                    _sum(target.http_code_target(elbv2.HttpCodeTarget.TARGET_4XX_COUNT), "refused (4xx)"),
                    _sum(target.http_code_target(elbv2.HttpCodeTarget.TARGET_5XX_COUNT), "failed (5xx)"),
                    _sum(ingest.metric_invocations(), "ingest invocations"),
                ],
            ),
            _graph(
                "Lineage events forwarded to Marquez",
                [
                    _sum(gateway.queue.metric_number_of_messages_sent(), "enqueued"),
                    # The forwarder deletes exactly the events Marquez accepted (partial batch failures).
                    _sum(gateway.queue.metric_number_of_messages_deleted(), "forwarded"),
                ],
                [gateway.queue.metric_approximate_age_of_oldest_message(label="oldest queued (s)")],
            ),
            _graph(
                "Lineage events failed",
                [
                    dead_letters.metric_approximate_number_of_messages_visible(
                        statistic="Maximum", label="dead-letter queue depth"
                    ),
                    _sum(forward.metric_errors(), "forwarder errors"),
                    _sum(ingest.metric_errors(), "ingest errors"),
                    _sum(forward.metric_throttles(), "forwarder throttles"),
                    _sum(ingest.metric_throttles(), "ingest throttles"),
                ],
                [dead_letters.metric_approximate_age_of_oldest_message(label="oldest dead letter (s)")],
            ),
        ]
    ]


def _marquez_row(
    load_balancer: elbv2.IApplicationLoadBalancer,
    target_groups: dict[str, elbv2.IApplicationTargetGroup],
    service: ecs.IBaseService,
) -> list[cloudwatch.IWidget]:
    """Marquez's targets, load balancer and tasks."""
    lb = load_balancer.metrics
    return [
        _graph(
            "Marquez targets",
            [
                m
                for name, tg in target_groups.items()
                for m in (
                    tg.metrics.healthy_host_count(statistic="Minimum", label=f"{name} healthy"),
                    tg.metrics.unhealthy_host_count(statistic="Maximum", label=f"{name} unhealthy"),
                )
            ],
        ),
        _graph(
            "Marquez load balancer",
            [alb_5xx(load_balancer)],
            [
                _sum(lb.request_count(), "requests"),
                lb.target_response_time(statistic="p90", label="response time p90 (s)"),
            ],
        ),
        _graph(
            "Marquez tasks",
            [
                container_insights(service, "DesiredTaskCount").with_(label="desired"),
                container_insights(service, "RunningTaskCount").with_(label="running"),
            ],
            [
                service_utilization(service, "CPUUtilization").with_(label="CPU %"),
                service_utilization(service, "MemoryUtilization").with_(label="memory %"),
            ],
        ),
    ]


def _database_row(database: rds.IDatabaseInstance) -> list[cloudwatch.IWidget]:
    """The Marquez database's CPU, connections and free storage."""
    return [
        _graph(
            "Marquez database",
            [database.metric_cpu_utilization(label="CPU %")],
            [database.metric_database_connections(statistic="Maximum", label="connections")],
        ),
        _graph(
            "Marquez database storage",
            [
                cloudwatch.MathExpression(
                    expression=f"free / {GIB}",
                    using_metrics={"free": database.metric_free_storage_space(statistic="Minimum")},
                    label="free storage (GiB)",
                    period=FIVE_MINUTES,
                )
            ],
        ),
    ]


class LineageDashboard(Construct):
    """The CloudWatch dashboard ``<resource prefix>``. Exposes ``dashboard``."""

    def __init__(
        self,
        scope: Construct,
        construct_id: str,
        *,
        settings: EnvironmentSettings,
        load_balancer: elbv2.IApplicationLoadBalancer,
        target_groups: dict[str, elbv2.IApplicationTargetGroup],
        service: ecs.IBaseService,
        database: rds.IDatabaseInstance,
        gateway: MonitoredGateway | None,
        alarms: Sequence[cloudwatch.IAlarm],
    ) -> None:
        super().__init__(scope, construct_id)
        prefix = settings.resource_prefix
        rows: list[list[cloudwatch.IWidget]] = [
            [
                cloudwatch.TextWidget(
                    markdown=f"# {prefix}: lineage and Marquez health\nRunbook: docs/operations.md (alarms).",
                    width=24,
                    height=2,
                )
            ],
            [cloudwatch.AlarmStatusWidget(title="Alarms", alarms=list(alarms), width=24, height=HEIGHT)],
        ]
        if gateway:
            rows += _gateway_rows(gateway)
        else:
            # Without the gateway, clients post events straight to the Marquez API.
            api = target_groups["api"].metrics
            rows.append(
                [_graph("Marquez API requests (lineage events included)", [_sum(api.request_count(), "requests")])]
            )
        rows += [_marquez_row(load_balancer, target_groups, service), _database_row(database)]
        self.dashboard = cloudwatch.Dashboard(self, "Dashboard", dashboard_name=prefix, widgets=rows)
