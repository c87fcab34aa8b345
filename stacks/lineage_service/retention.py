"""MarquezRetention: Marquez's own ``db-retention`` command as a daily scheduled Fargate task.

Marquez deletes metadata older than ``--retention-days`` days itself (its ``db-retention``
Dropwizard command, ``marquez.cli.DbRetentionCommand``:
https://github.com/MarquezProject/marquez/blob/main/api/src/main/java/marquez/cli/DbRetentionCommand.java,
usage ``java -jar marquez-api.jar db-retention --retention-days 30 marquez.yml``). The task runs it
with the API image, config and database secrets of the service, the way the image's entrypoint
runs ``server`` (https://github.com/MarquezProject/marquez/blob/main/docker/entrypoint.sh:
``java ${JAVA_OPTS} -jar marquez-*.jar server ${MARQUEZ_CONFIG}`` in ``/usr/src/app``).

The command logs a failed retention run and still exits 0, so failures show in the task's logs
(stream prefix ``retention``), not as a failed task.
"""

from __future__ import annotations

from aws_cdk import Aws, Duration, Stack
from aws_cdk import aws_ec2 as ec2
from aws_cdk import aws_ecs as ecs
from aws_cdk import aws_events as events
from aws_cdk import aws_events_targets as targets
from aws_cdk import aws_logs as logs
from constructs import Construct

from emr_lineage.settings.model import EnvironmentSettings
from stacks.lineage_service.images import MarquezImages
from stacks.lineage_service.marquez import CONFIG_PATH, IMAGE_WORKDIR, WRITE_CONFIG
from stacks.shared.nag import acknowledge, wildcard_resource_finding

CONTAINER = "marquez-retention"
# Daily at 03:00 UTC, when few Spark jobs report lineage.
SCHEDULE = events.Schedule.cron(minute="0", hour="3")
# The entrypoint's Java options (UTC timestamps, no log4j lookups). "$VAR", not "${VAR}": cfn-lint
# reads the braces as an Fn::Sub variable.
JAVA_OPTIONS = "-Duser.timezone=UTC -Dlog4j2.formatMsgNoLookups=true"
# The start of the line DbRetentionCommand logs when a run fails ("Failed to apply retention policy
# of 'N' days to database!"): the monitoring stack's metric filter matches it.
FAILURE_LOG_TEXT = "Failed to apply retention policy"


def retention_command(days: int) -> str:
    """Write the service's config, then run Marquez's db-retention command with it."""
    return (
        f"{WRITE_CONFIG} && exec java $JAVA_OPTS {JAVA_OPTIONS} -jar {IMAGE_WORKDIR}/marquez-*.jar "
        f"db-retention --retention-days {days} {CONFIG_PATH}"
    )


class MarquezRetention(Construct):
    """Task definition, security group and EventBridge rule of the daily retention run.

    Exposes ``task_definition``, ``rule``, ``security_group`` and ``connections`` (allow it to the
    database).
    """

    def __init__(
        self,
        scope: Construct,
        construct_id: str,
        *,
        vpc: ec2.IVpc,
        settings: EnvironmentSettings,
        retention_days: int,
        cluster: ecs.ICluster,
        images: MarquezImages,
        environment: dict[str, str],
        secrets: dict[str, ecs.Secret],
        log_group: logs.ILogGroup,
    ) -> None:
        super().__init__(scope, construct_id)
        marquez = settings.marquez
        self.task_definition = ecs.FargateTaskDefinition(
            self,
            "Task",
            # The service's size: the command loads the same application and deletes in batches.
            cpu=marquez.task_cpu,
            memory_limit_mib=marquez.task_memory_mib,
            runtime_platform=ecs.RuntimePlatform(
                cpu_architecture=ecs.CpuArchitecture.X86_64,
                operating_system_family=ecs.OperatingSystemFamily.LINUX,
            ),
        )
        self.task_definition.add_container(
            CONTAINER,
            image=images.api,
            essential=True,
            entry_point=["/bin/bash", "-c"],
            command=[retention_command(retention_days)],
            working_directory=IMAGE_WORKDIR,
            # The server's migration flag has no effect on this command; the rest is the same config.
            environment=environment,
            secrets=secrets,
            logging=ecs.LogDrivers.aws_logs(stream_prefix="retention", log_group=log_group),
        )
        self.security_group = ec2.SecurityGroup(
            self,
            "SecurityGroup",
            vpc=vpc,
            # The image's registry (through NAT), Secrets Manager, CloudWatch Logs and the database.
            allow_all_outbound=True,
            description=f"{settings.resource_prefix} Marquez retention task: no ingress",
        )
        self.connections = self.security_group.connections
        self.rule = events.Rule(
            self,
            "Schedule",
            description=f"{settings.resource_prefix}: Marquez db-retention, {retention_days} days",
            schedule=SCHEDULE,
            targets=[
                targets.EcsTask(
                    cluster=cluster,
                    task_definition=self.task_definition,
                    launch_type=ecs.LaunchType.FARGATE,
                    subnet_selection=ec2.SubnetSelection(subnet_type=ec2.SubnetType.PRIVATE_WITH_EGRESS),
                    security_groups=[self.security_group],
                    assign_public_ip=False,
                    # A missed day is caught up by the next run; no need to retry for hours.
                    retry_attempts=2,
                    max_event_age=Duration.hours(1),
                )
            ],
        )
        images.pulled_by(self.task_definition, "api")
        self._acknowledge(cluster)

    def _acknowledge(self, cluster: ecs.ICluster) -> None:
        """cdk-nag's findings on the task definition that its design answers."""
        # EventBridge's role tags the tasks it starts; their ids are not known in advance.
        acknowledge(
            self.task_definition,
            wildcard_resource_finding(
                self, f"arn:{Aws.PARTITION}:ecs:{Stack.of(self).region}:*:task/{cluster.cluster_name}/*"
            ),
            "EventBridge tags the retention tasks it starts (ecs:TagResource); task ids are known only "
            "at run time, so the statement names the Marquez cluster's tasks, nothing wider.",
        )
        acknowledge(
            self.task_definition,
            "AwsSolutions-ECS2",
            "Only non-secret settings (ports, host names, the Marquez config template) are plain "
            "environment variables, as in the service; the database credentials come from Secrets Manager.",
        )
