"""MonitoringStack: every alarm of an environment, its EMR failure events and its dashboard.

One SNS topic per environment (KMS-encrypted, TLS-only, an optional e-mail subscription from
``alarms.email``) receives every alarm (when it fires and when it recovers), every EMR cluster or
step failure and, with ``emr_serverless`` on, every failed or cancelled job run of the EMR stack's
serverless application (that rule is the EMR stack's, beside the application: stacks/monitoring/emr_events.py).
The dashboard shows lineage events in, forwarded and failed, and Marquez's health. A stack of its own:
it reads the lineage stack and, when the gateway is deployed, the gateway stack (``app.py`` passes what
it watches); only the EMR stack depends on it (the topic), so alarms can change without touching the
stacks they watch. A spoke (``hub``) runs neither: its monitoring is the topic and EMR's failure events.
"""

from __future__ import annotations

from typing import Any

from aws_cdk import CfnOutput, Stack
from aws_cdk import aws_cloudwatch as cloudwatch
from constructs import Construct

from emr_lineage.settings.model import EnvironmentSettings
from stacks.monitoring.alarms import Alarms, add_gateway_alarms, add_retention_alarm, add_service_alarms
from stacks.monitoring.dashboard import LineageDashboard
from stacks.monitoring.emr_events import EmrFailureEvents
from stacks.monitoring.metrics import MonitoredGateway, MonitoredService
from stacks.monitoring.topic import AlarmTopic
from stacks.shared.exports import export_for_optional_consumers


class MonitoringStack(Stack):
    """Exposes ``topic``, ``alarms`` (construct id -> alarm), ``emr_events`` and ``dashboard`` (None in a spoke)."""

    def __init__(
        self,
        scope: Construct,
        construct_id: str,
        *,
        settings: EnvironmentSettings,
        service: MonitoredService | None,
        gateway: MonitoredGateway | None = None,
        **kwargs: Any,
    ) -> None:
        super().__init__(scope, construct_id, **kwargs)
        alarm_topic = AlarmTopic(self, "AlarmTopic", settings=settings)
        self.topic = alarm_topic.topic
        self.alarms: dict[str, cloudwatch.Alarm] = {}
        self.dashboard: cloudwatch.Dashboard | None = None
        # A spoke (no service) runs no Marquez and no gateway: its topic takes EMR's failures only.
        if service is not None:
            self._watch_service(settings, service, gateway)

        self.emr_events = EmrFailureEvents(
            self,
            "EmrFailures",
            settings=settings,
            topic=self.topic,
        )
        # The EMR Serverless application's failed job runs rule, in the EMR stack while emr_serverless is on.
        export_for_optional_consumers(self, self.topic.topic_arn)
        CfnOutput(self, "AlarmTopicArn", value=self.topic.topic_arn, description="SNS topic of every alarm")
        if self.dashboard is not None:
            CfnOutput(self, "DashboardName", value=self.dashboard.dashboard_name, description="CloudWatch dashboard")

    def _watch_service(
        self, settings: EnvironmentSettings, service: MonitoredService, gateway: MonitoredGateway | None
    ) -> None:
        """Marquez's (and the gateway's) alarms and the lineage dashboard."""
        alarms = Alarms(self, "Alarms", settings=settings, topic=self.topic)
        add_service_alarms(
            alarms,
            settings,
            load_balancer=service.load_balancer,
            target_groups=service.target_groups,
            service=service.marquez_service,
            database=service.database,
        )
        if settings.marquez.retention_days is not None:
            add_retention_alarm(alarms, settings, service.marquez_log_group)
        if gateway is not None:
            add_gateway_alarms(alarms, settings, gateway)
        self.alarms = alarms.alarms
        self.dashboard = LineageDashboard(
            self,
            "Dashboard",
            settings=settings,
            load_balancer=service.load_balancer,
            target_groups=service.target_groups,
            service=service.marquez_service,
            database=service.database,
            gateway=gateway,
            alarms=list(self.alarms.values()),
        ).dashboard
