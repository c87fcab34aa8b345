"""The environment's alarms, each with the alarm topic as its alarm and OK action.

Thresholds come from ``alarms`` in cdk.json (:class:`emr_lineage.settings.operations.AlarmSettings`);
the structural alarms (unhealthy targets, missing tasks, throttles) need none.
"""

from __future__ import annotations

import math

from aws_cdk import Duration
from aws_cdk import aws_cloudwatch as cloudwatch
from aws_cdk import aws_cloudwatch_actions as actions
from aws_cdk import aws_ecs as ecs
from aws_cdk import aws_elasticloadbalancingv2 as elbv2
from aws_cdk import aws_lambda as lambda_
from aws_cdk import aws_logs as logs
from aws_cdk import aws_rds as rds
from aws_cdk import aws_sns as sns
from constructs import Construct

from emr_lineage.settings.model import EnvironmentSettings
from stacks.lineage_service.retention import FAILURE_LOG_TEXT
from stacks.monitoring.metrics import FIVE_MINUTES, GIB, ONE_MINUTE, MonitoredGateway, alb_5xx, missing_tasks

GE = cloudwatch.ComparisonOperator.GREATER_THAN_OR_EQUAL_TO_THRESHOLD
LT = cloudwatch.ComparisonOperator.LESS_THAN_THRESHOLD
NOT_BREACHING = cloudwatch.TreatMissingData.NOT_BREACHING
# Any throttle means lost or delayed lineage: the ALB answers 5xx, SQS redelivers later.
THROTTLES_PER_5_MINUTES = 1
# A busy database for a moment is normal (Marquez's migrations, a large graph query); 15 minutes is not.
RDS_CPU_PERIODS = 3
# Tasks may be unhealthy while they start and migrate: health checks do not count for the grace
# period (marquez.health_check_grace_seconds), so the alarms wait that long plus these minutes.
UNHEALTHY_MINUTES_AFTER_GRACE = 5


def unhealthy_minutes(settings: EnvironmentSettings) -> int:
    return math.ceil(settings.marquez.health_check_grace_seconds / 60) + UNHEALTHY_MINUTES_AFTER_GRACE


class Alarms(Construct):
    """Creates alarms that notify ``topic`` when they fire and when they recover.

    ``alarms`` holds them by construct id (names are ``<resource prefix>-<slug>``).
    """

    def __init__(self, scope: Construct, construct_id: str, *, settings: EnvironmentSettings, topic: sns.ITopic):
        super().__init__(scope, construct_id)
        self._prefix = settings.resource_prefix
        self._action = actions.SnsAction(topic)
        self.alarms: dict[str, cloudwatch.Alarm] = {}

    def add(
        self,
        construct_id: str,
        *,
        slug: str,
        description: str,
        metric: cloudwatch.IMetric,
        threshold: float,
        comparison: cloudwatch.ComparisonOperator = GE,
        evaluation_periods: int = 1,
        missing: cloudwatch.TreatMissingData = NOT_BREACHING,
    ) -> cloudwatch.Alarm:
        alarm = cloudwatch.Alarm(
            self,
            construct_id,
            alarm_name=f"{self._prefix}-{slug}",
            alarm_description=f"{self._prefix}: {description} (runbook: docs/operations.md, alarm {slug})",
            metric=metric,
            threshold=threshold,
            comparison_operator=comparison,
            evaluation_periods=evaluation_periods,
            treat_missing_data=missing,
        )
        alarm.add_alarm_action(self._action)
        alarm.add_ok_action(self._action)
        self.alarms[construct_id] = alarm
        return alarm


def add_service_alarms(
    alarms: Alarms,
    settings: EnvironmentSettings,
    *,
    load_balancer: elbv2.IApplicationLoadBalancer,
    target_groups: dict[str, elbv2.IApplicationTargetGroup],
    service: ecs.IBaseService,
    database: rds.IDatabaseInstance,
) -> None:
    """Marquez: its load balancer, targets (by name: ``{"api": ..., "web": ...}``), tasks and database."""
    limits = settings.alarms
    alarms.add(
        "Alb5xx",
        slug="alb-5xx",
        description=f"the Marquez load balancer answered {limits.alb_5xx_per_5_minutes} or more 5xx in 5 minutes",
        metric=alb_5xx(load_balancer),
        threshold=limits.alb_5xx_per_5_minutes,
    )
    minutes = unhealthy_minutes(settings)
    for name, target_group in target_groups.items():
        alarms.add(
            f"{name.capitalize()}UnhealthyTargets",
            slug=f"{name}-unhealthy-targets",
            description=f"a Marquez {name} target failed its health checks for {minutes} minutes",
            metric=target_group.metrics.unhealthy_host_count(period=ONE_MINUTE, statistic="Maximum"),
            threshold=1,
            evaluation_periods=minutes,
        )
    alarms.add(
        "TasksBelowDesired",
        slug="marquez-tasks-below-desired",
        description=f"fewer Marquez tasks running than desired for {minutes} minutes",
        metric=missing_tasks(service),
        threshold=1,
        evaluation_periods=minutes,
    )
    alarms.add(
        "RdsCpu",
        slug="rds-cpu",
        description=f"database CPU at or above {limits.rds_cpu_percent}% for {RDS_CPU_PERIODS * 5} minutes",
        metric=database.metric_cpu_utilization(period=FIVE_MINUTES, statistic="Average"),
        threshold=limits.rds_cpu_percent,
        evaluation_periods=RDS_CPU_PERIODS,
        missing=cloudwatch.TreatMissingData.MISSING,
    )
    alarms.add(
        "RdsFreeStorage",
        slug="rds-free-storage",
        description=f"database free storage below {limits.rds_free_storage_gib} GiB",
        metric=database.metric_free_storage_space(period=FIVE_MINUTES, statistic="Minimum"),
        threshold=limits.rds_free_storage_gib * GIB,
        comparison=LT,
        missing=cloudwatch.TreatMissingData.MISSING,
    )
    alarms.add(
        "RdsConnections",
        slug="rds-connections",
        description=f"database connections at or above {limits.rds_connections}",
        metric=database.metric_database_connections(period=FIVE_MINUTES, statistic="Maximum"),
        threshold=limits.rds_connections,
        missing=cloudwatch.TreatMissingData.MISSING,
    )


def _function_alarms(alarms: Alarms, settings: EnvironmentSettings, name: str, function: lambda_.IFunction) -> None:
    errors = settings.alarms.lambda_errors_per_5_minutes
    alarms.add(
        f"{name.capitalize()}Errors",
        slug=f"gateway-{name}-errors",
        description=f"the gateway {name} function failed {errors} or more times in 5 minutes",
        metric=function.metric_errors(period=FIVE_MINUTES, statistic="Sum"),
        threshold=errors,
    )
    alarms.add(
        f"{name.capitalize()}Throttles",
        slug=f"gateway-{name}-throttles",
        description=f"the gateway {name} function was throttled",
        metric=function.metric_throttles(period=FIVE_MINUTES, statistic="Sum"),
        threshold=THROTTLES_PER_5_MINUTES,
    )


def add_gateway_alarms(alarms: Alarms, settings: EnvironmentSettings, gateway: MonitoredGateway) -> None:
    """The gateway: events it could not deliver (dead-letter queue) and its functions' failures."""
    limits = settings.alarms
    alarms.add(
        "DeadLetterMessages",
        slug="gateway-dead-letter-messages",
        description=f"{limits.dead_letter_messages} or more lineage events the gateway could not deliver to Marquez",
        metric=gateway.dead_letter_queue.metric_approximate_number_of_messages_visible(
            period=FIVE_MINUTES, statistic="Maximum"
        ),
        threshold=limits.dead_letter_messages,
    )
    alarms.add(
        "DeadLetterAge",
        slug="gateway-dead-letter-age",
        description=f"an undelivered lineage event waits for {limits.dead_letter_oldest_age_minutes} minutes or more",
        metric=gateway.dead_letter_queue.metric_approximate_age_of_oldest_message(
            period=FIVE_MINUTES, statistic="Maximum"
        ),
        threshold=Duration.minutes(limits.dead_letter_oldest_age_minutes).to_seconds(),
    )
    _function_alarms(alarms, settings, "ingest", gateway.ingest_function)
    _function_alarms(alarms, settings, "forward", gateway.forward_function)


def add_retention_alarm(alarms: Alarms, settings: EnvironmentSettings, marquez_log_group: logs.ILogGroup) -> None:
    """Marquez's db-retention logs a failed run and still exits 0: a metric filter on that line."""
    failures = logs.MetricFilter(
        alarms,
        "RetentionFailureFilter",
        log_group=marquez_log_group,
        filter_pattern=logs.FilterPattern.literal(f'"{FAILURE_LOG_TEXT}"'),
        metric_namespace=f"EmrLineage/{settings.name}",
        metric_name="MarquezRetentionFailures",
        metric_value="1",
    )
    alarms.add(
        "RetentionFailed",
        slug="marquez-retention-failed",
        description="Marquez's daily db-retention run failed (it logged the failure and exited 0)",
        metric=failures.metric(period=Duration.hours(1), statistic="Sum"),
        threshold=1,
    )
