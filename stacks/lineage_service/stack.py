"""LineageServiceStack: Marquez (API + web) on ECS Fargate with PostgreSQL on RDS.

Exposes ``api_url`` (what Spark's OpenLineage HTTP transport uses), ``web_url`` and
``clients_security_group`` (EMR nodes join it to reach the API); ``app.py`` hands them to the
EMR stack. The URLs are also stack outputs and SSM parameters (names from
``emr_lineage.aws.parameters``), for the CLI tools only: no stack reads them back.
"""

from __future__ import annotations

from typing import Any

from aws_cdk import CfnOutput, Stack
from aws_cdk import aws_ec2 as ec2
from constructs import Construct

from emr_lineage.aws import parameters
from emr_lineage.settings.model import EnvironmentSettings
from stacks.lineage_service.access_logs_bucket import AlbAccessLogsBucket
from stacks.lineage_service.database import DATABASE_NAME, MarquezDatabase
from stacks.lineage_service.load_balancer import LineageLoadBalancer
from stacks.lineage_service.marquez import MarquezService
from stacks.lineage_service.retention import MarquezRetention
from stacks.shared.exports import export_for_optional_consumers
from stacks.shared.published import publish
from stacks.shared.storage import rotating_key


class LineageServiceStack(Stack):
    """Exposes ``api_url``, ``web_url``, ``clients_security_group``, ``key`` (the database secret's and the
    log groups'), ``database``, ``marquez``, ``load_balancer``, ``access_logs`` and ``retention`` (None
    without ``marquez.retention_days``)."""

    def __init__(
        self, scope: Construct, construct_id: str, *, settings: EnvironmentSettings, vpc: ec2.IVpc, **kwargs: Any
    ) -> None:
        super().__init__(scope, construct_id, **kwargs)

        self.key = rotating_key(
            self,
            "Key",
            settings=settings,
            alias="lineage-service",
            description=f"{settings.resource_prefix} lineage service: database secret and logs",
            log_groups=True,
        )
        self.database = MarquezDatabase(self, "Database", vpc=vpc, settings=settings, key=self.key)
        self.marquez = MarquezService(
            self,
            "Marquez",
            vpc=vpc,
            settings=settings,
            key=self.key,
            database_secret=self.database.secret,
            database_host=self.database.instance.db_instance_endpoint_address,
            database_port=self.database.instance.db_instance_endpoint_port,
            database_name=DATABASE_NAME,
        )
        self.database.allow_from(self.marquez.connections, "Marquez tasks")
        self.retention = self._retention(settings, vpc)

        self.access_logs = AlbAccessLogsBucket(self, "AccessLogs", retention_days=settings.log_retention_days)
        self.load_balancer = LineageLoadBalancer(
            self,
            "LoadBalancer",
            vpc=vpc,
            settings=settings,
            service=self.marquez.service,
            access_logs=self.access_logs,
        )
        self.clients_security_group: ec2.ISecurityGroup = self.load_balancer.clients_security_group
        self.api_url: str = self.load_balancer.api_url
        self.web_url: str = self.load_balancer.web_url

        self._publish(settings)

    def _publish(self, settings: EnvironmentSettings) -> None:
        """What the tools read (SSM parameters and outputs), and the exports optional consumers import."""
        publish(
            self,
            parameter_id="ApiUrlParameter",
            parameter_name=parameters.marquez_api_url(settings.name),
            value=self.api_url,
            description="Marquez API base URL for OpenLineage HTTP transports",
            output_id="MarquezApiUrl",
            output_description="OpenLineage transport URL",
        )
        publish(
            self,
            parameter_id="WebUrlParameter",
            parameter_name=parameters.marquez_web_url(settings.name),
            value=self.web_url,
            description="Marquez web UI URL",
            output_id="MarquezWebUrl",
            output_description="Marquez web UI",
        )
        publish(
            self,
            parameter_id="DatabaseIdParameter",
            parameter_name=parameters.marquez_database_id(settings.name),
            value=self.database.identifier,
            description="Identifier of Marquez's RDS PostgreSQL instance",
            output_id="MarquezDatabaseId",
            output_description="Marquez's RDS instance (aws rds describe-db-instances --db-instance-identifier)",
        )
        CfnOutput(
            self,
            "MarquezLoadBalancerDnsName",
            value=self.load_balancer.load_balancer.load_balancer_dns_name,
            description="Point marquez.domain_name's DNS record (CNAME or alias) at this name",
        )
        CfnOutput(
            self,
            "LineageClientsSecurityGroupId",
            value=self.clients_security_group.security_group_id,
            description="Security group that lineage clients join to reach the Marquez API",
        )
        # The gateway's listener rule and security group rule, and the retention alarm's log group.
        balancer = self.load_balancer
        export_for_optional_consumers(
            self,
            balancer.load_balancer.load_balancer_arn,
            balancer.security_group.security_group_id,
            balancer.listener.listener_arn,
            balancer.api_target_group.target_group_arn,
            self.marquez.log_group.log_group_name,
        )

    def _retention(self, settings: EnvironmentSettings, vpc: ec2.IVpc) -> MarquezRetention | None:
        days = settings.marquez.retention_days
        if days is None:
            return None
        retention = MarquezRetention(
            self,
            "Retention",
            vpc=vpc,
            settings=settings,
            retention_days=days,
            cluster=self.marquez.cluster,
            images=self.marquez.images,
            environment=self.marquez.api_environment,
            secrets=self.marquez.api_secrets,
            log_group=self.marquez.log_group,
        )
        self.database.allow_from(retention.connections, "Marquez retention task")
        return retention
