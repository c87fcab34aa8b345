"""MonitoringStack: every alarm of an environment, its EMR failure events and its dashboard.

One SNS topic per environment (KMS-encrypted, TLS-only, an optional e-mail subscription from
``alarms.email``) receives every alarm (when it fires and when it recovers), every EMR cluster or
step failure and, with ``emr_serverless`` on, every failed or cancelled job run of the EMR stack's
serverless application (that rule is the EMR stack's, beside the application: stacks/monitoring/emr_events.py).
The dashboard shows lineage events in, forwarded and failed, and Marquez's health. A stack of its own:
it reads the lineage stack and, when the gateway is deployed, the gateway stack (``app.py`` passes what
it watches); only the EMR stack depends on it (the topic), so alarms can change without touching the
stacks they watch.
"""

from __future__ import annotations

from typing import Any

from aws_cdk import CfnOutput, Stack
from aws_cdk import aws_ecs as ecs
from aws_cdk import aws_elasticloadbalancingv2 as elbv2
from aws_cdk import aws_logs as logs
from aws_cdk import aws_rds as rds
from constructs import Construct

from emr_lineage.settings.model import EnvironmentSettings
from stacks.monitoring.alarms import Alarms, add_gateway_alarms, add_retention_alarm, add_service_alarms
from stacks.monitoring.dashboard import LineageDashboard
from stacks.monitoring.emr_events import EmrFailureEvents
from stacks.monitoring.metrics import MonitoredGateway
from stacks.monitoring.topic import AlarmTopic
from stacks.shared.exports import export_for_optional_consumers


class MonitoringStack(Stack):
    """Exposes ``topic``, ``alarms`` (construct id -> alarm), ``emr_events`` and ``dashboard``."""

    def __init__(
        self,
        scope: Construct,
        construct_id: str,
        *,
        settings: EnvironmentSettings,
        load_balancer: elbv2.IApplicationLoadBalancer,
        api_target_group: elbv2.IApplicationTargetGroup,
        marquez_service: ecs.IBaseService,
        database: rds.IDatabaseInstance,
        web_target_group: elbv2.IApplicationTargetGroup,
        marquez_log_group: logs.ILogGroup,
        gateway: MonitoredGateway | None = None,
        **kwargs: Any,
    ) -> None:
        super().__init__(scope, construct_id, **kwargs)
        target_groups = {"api": api_target_group, "web": web_target_group}

        alarm_topic = AlarmTopic(self, "AlarmTopic", settings=settings)
        self.topic = alarm_topic.topic
        alarms = Alarms(self, "Alarms", settings=settings, topic=self.topic)
        add_service_alarms(
            alarms,
            settings,
            load_balancer=load_balancer,
            target_groups=target_groups,
            service=marquez_service,
            database=database,
        )
        if settings.marquez.retention_days is not None:
            add_retention_alarm(alarms, settings, marquez_log_group)
        if gateway is not None:
            add_gateway_alarms(alarms, settings, gateway)
        self.alarms = alarms.alarms

        self.emr_events = EmrFailureEvents(
            self,
            "EmrFailures",
            settings=settings,
            topic=self.topic,
        )
        self.dashboard = LineageDashboard(
            self,
            "Dashboard",
            settings=settings,
            load_balancer=load_balancer,
            target_groups=target_groups,
            service=marquez_service,
            database=database,
            gateway=gateway,
            alarms=list(self.alarms.values()),
        ).dashboard

        # The EMR Serverless application's failed job runs rule, in the EMR stack while emr_serverless is on.
        export_for_optional_consumers(self, self.topic.topic_arn)
        CfnOutput(self, "AlarmTopicArn", value=self.topic.topic_arn, description="SNS topic of every alarm")
        CfnOutput(self, "DashboardName", value=self.dashboard.dashboard_name, description="CloudWatch dashboard")
