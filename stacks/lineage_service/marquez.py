"""MarquezService: Marquez API + web UI as one Fargate service.

One task runs two containers: the API (5000, admin 5001) and marquez-web (3000), which
reaches the API over the task's localhost. Both scale together, which suits Marquez's
light web tier and keeps the API off any network path but the load balancer's.

The stock image's trap: it runs ``marquez.dev.yml``, which hard-codes the database user and
password ``marquez`` and enables search (OpenSearch) unless ``SEARCH_ENABLED=false`` (Marquez
repository: https://github.com/MarquezProject/marquez/blob/main/marquez.dev.yml and the image's
https://github.com/MarquezProject/marquez/blob/main/Dockerfile). The container therefore
writes :func:`marquez_config_yaml` to a file at start and points ``MARQUEZ_CONFIG`` at it; that
config takes every connection value from the environment (the password from Secrets Manager)
and disables search.
"""

from __future__ import annotations

import base64

import yaml
from aws_cdk import Duration
from aws_cdk import aws_ec2 as ec2
from aws_cdk import aws_ecs as ecs
from aws_cdk import aws_kms as kms
from aws_cdk import aws_logs as logs
from aws_cdk import aws_secretsmanager as secretsmanager
from constructs import Construct

from emr_lineage.settings.model import EnvironmentSettings
from emr_lineage.settings.operations import AutoscalingSettings
from stacks.lineage_service.images import MarquezImages
from stacks.shared.nag import acknowledge
from stacks.shared.storage import encrypted_log_group

API_PORT = 5000
ADMIN_PORT = 5001
WEB_PORT = 3000
API_CONTAINER = "marquez-api"
WEB_CONTAINER = "marquez-web"
# Where the stock image keeps its jar and entrypoint; the entrypoint runs
# `java $JAVA_OPTS -jar marquez-*.jar server $MARQUEZ_CONFIG`
# (https://github.com/MarquezProject/marquez/blob/main/docker/entrypoint.sh).
IMAGE_WORKDIR = "/usr/src/app"
CONFIG_PATH = "/tmp/marquez.yml"


def marquez_config() -> dict:
    """Marquez server config. ``${VAR}`` is substituted by Marquez from the environment at start."""
    return {
        "server": {
            "applicationConnectors": [
                {"type": "http", "port": "${MARQUEZ_PORT:-5000}", "httpCompliance": "RFC7230_LEGACY"}
            ],
            "adminConnectors": [{"type": "http", "port": "${MARQUEZ_ADMIN_PORT:-5001}"}],
        },
        "db": {
            "driverClass": "org.postgresql.Driver",
            # sslmode=require: the parameter group enforces TLS (rds.force_ssl=1).
            "url": "jdbc:postgresql://${POSTGRES_HOST}:${POSTGRES_PORT}/${POSTGRES_DB}?sslmode=require",
            "user": "${POSTGRES_USER}",
            "password": "${POSTGRES_PASSWORD}",
        },
        "migrateOnStartup": True,
        "graphql": {"enabled": True},
        "logging": {"level": "INFO", "appenders": [{"type": "console"}]},
        "search": {"enabled": False},
        "tags": [
            {"name": "PII", "description": "Personally identifiable information"},
            {"name": "SENSITIVE", "description": "Contains sensitive information"},
        ],
    }


def marquez_config_yaml() -> str:
    return yaml.safe_dump(marquez_config(), sort_keys=False)


def marquez_config_base64() -> str:
    # Base64 so CloudFormation never sees the ${VAR} placeholders (it would read them as Fn::Sub).
    return base64.b64encode(marquez_config_yaml().encode()).decode()


# Writes the config from the environment variable (every command of the API image needs it).
WRITE_CONFIG = f'printf "%s" "$MARQUEZ_CONFIG_BASE64" | base64 -d > {CONFIG_PATH}'
# ... then hands over to the image's entrypoint.
START_COMMAND = f"{WRITE_CONFIG} && exec {IMAGE_WORKDIR}/entrypoint.sh"


class MarquezContainers(Construct):
    """The Marquez API and web containers of ``task``, logging to ``log_group``.

    Exposes ``api_container``, ``web_container`` and, for other tasks that run the API image with the same
    config (retention), ``images``, ``api_environment`` and ``api_secrets``. The task definition itself
    stays in MarquezService: CDK names its family after its construct path.
    """

    def __init__(
        self,
        scope: Construct,
        construct_id: str,
        *,
        settings: EnvironmentSettings,
        task: ecs.FargateTaskDefinition,
        log_group: logs.ILogGroup,
        database_secret: secretsmanager.ISecret,
        database_host: str,
        database_port: str,
        database_name: str,
    ) -> None:
        super().__init__(scope, construct_id)
        self.images = MarquezImages(self, "Images", settings=settings)
        self.api_environment = {
            "MARQUEZ_CONFIG": CONFIG_PATH,
            "MARQUEZ_CONFIG_BASE64": marquez_config_base64(),
            "MARQUEZ_PORT": str(API_PORT),
            "MARQUEZ_ADMIN_PORT": str(ADMIN_PORT),
            "POSTGRES_HOST": database_host,
            "POSTGRES_PORT": database_port,
            "POSTGRES_DB": database_name,
            "MIGRATE_ON_STARTUP": "true",
            "SEARCH_ENABLED": "false",
        }
        self.api_secrets = {
            "POSTGRES_USER": ecs.Secret.from_secrets_manager(database_secret, "username"),
            "POSTGRES_PASSWORD": ecs.Secret.from_secrets_manager(database_secret, "password"),
        }
        self.api_container = task.add_container(
            API_CONTAINER,
            image=self.images.api,
            essential=True,
            entry_point=["/bin/bash", "-c"],
            command=[START_COMMAND],
            working_directory=IMAGE_WORKDIR,
            environment=self.api_environment,
            secrets=self.api_secrets,
            port_mappings=[
                ecs.PortMapping(container_port=API_PORT, name="api"),
                ecs.PortMapping(container_port=ADMIN_PORT, name="admin"),
            ],
            logging=ecs.LogDrivers.aws_logs(stream_prefix="api", log_group=log_group),
        )
        self.web_container = task.add_container(
            WEB_CONTAINER,
            image=self.images.web,
            essential=True,
            environment={"MARQUEZ_HOST": "localhost", "MARQUEZ_PORT": str(API_PORT), "WEB_PORT": str(WEB_PORT)},
            port_mappings=[ecs.PortMapping(container_port=WEB_PORT, name="web")],
            logging=ecs.LogDrivers.aws_logs(stream_prefix="web", log_group=log_group),
        )
        self.images.pulled_by(task, "api", "web")
        acknowledge(
            task,
            "AwsSolutions-ECS2",
            "Only non-secret settings (ports, host names, the Marquez config template) are plain "
            "environment variables; the database credentials come from Secrets Manager.",
        )


class MarquezService(Construct):
    """ECS cluster (Container Insights on) and the Fargate service running Marquez.

    Exposes ``cluster``, ``service`` (use ``service.load_balancer_target``), ``connections`` and, for
    other tasks that run the API image with the same config (retention), ``images``,
    ``api_environment``, ``api_secrets`` and ``log_group``. With ``marquez.autoscaling``, ``scaling``
    is the service's scalable target (else None).
    """

    def __init__(
        self,
        scope: Construct,
        construct_id: str,
        *,
        vpc: ec2.IVpc,
        settings: EnvironmentSettings,
        key: kms.IKey,
        database_secret: secretsmanager.ISecret,
        database_host: str,
        database_port: str,
        database_name: str,
    ) -> None:
        super().__init__(scope, construct_id)
        marquez = settings.marquez
        self.cluster = ecs.Cluster(self, "Cluster", vpc=vpc, container_insights_v2=ecs.ContainerInsights.ENABLED)
        self.log_group = encrypted_log_group(
            self, "Logs", key=key, settings=settings, retention_days=settings.log_retention_days
        )
        task = ecs.FargateTaskDefinition(
            self,
            "Task",
            cpu=marquez.task_cpu,
            memory_limit_mib=marquez.task_memory_mib,
            runtime_platform=ecs.RuntimePlatform(
                cpu_architecture=ecs.CpuArchitecture.X86_64,
                operating_system_family=ecs.OperatingSystemFamily.LINUX,
            ),
        )
        containers = MarquezContainers(
            self,
            "Containers",
            settings=settings,
            task=task,
            log_group=self.log_group,
            database_secret=database_secret,
            database_host=database_host,
            database_port=database_port,
            database_name=database_name,
        )
        self.images, self.api_environment = containers.images, containers.api_environment
        self.api_secrets = containers.api_secrets
        self.api_container, self.web_container = containers.api_container, containers.web_container

        self.security_group = ec2.SecurityGroup(
            self,
            "SecurityGroup",
            vpc=vpc,
            allow_all_outbound=True,
            description=f"{settings.resource_prefix} Marquez tasks: ingress only from the load balancer",
        )
        self.service = ecs.FargateService(
            self,
            "Service",
            cluster=self.cluster,
            task_definition=task,
            # Under autoscaling the template names no count, so a deploy keeps the scaled one
            # (CloudFormation starts a new service at 1; the scalable target's minimum raises it):
            # https://docs.aws.amazon.com/AWSCloudFormation/latest/UserGuide/aws-resource-ecs-service.html#cfn-ecs-service-desiredcount
            desired_count=None if marquez.autoscaling else marquez.desired_count,
            min_healthy_percent=100,
            max_healthy_percent=200,
            vpc_subnets=ec2.SubnetSelection(subnet_type=ec2.SubnetType.PRIVATE_WITH_EGRESS),
            security_groups=[self.security_group],
            assign_public_ip=False,
            # Migrations run at start; give the first task time before health checks count.
            health_check_grace_period=Duration.seconds(marquez.health_check_grace_seconds),
            # A deployment whose tasks never get healthy stops and rolls back to the last good one.
            circuit_breaker=ecs.DeploymentCircuitBreaker(enable=True, rollback=True),
        )
        self.connections = self.service.connections
        self.scaling = self._autoscale(marquez.autoscaling)

    def _autoscale(self, scaling: AutoscalingSettings | None) -> ecs.ScalableTaskCount | None:
        """Target tracking on the service's average CPU between the configured bounds (None: fixed size).

        The service then has no desired count in the template, so a deploy leaves the scaled count alone.
        """
        if scaling is None:
            return None
        target = self.service.auto_scale_task_count(min_capacity=scaling.min_tasks, max_capacity=scaling.max_tasks)
        target.scale_on_cpu_utilization(
            "Cpu",
            target_utilization_percent=scaling.target_cpu_percent,
            # Out quickly under load; in slowly (Marquez's API tasks take minutes to start).
            scale_out_cooldown=Duration.seconds(60),
            scale_in_cooldown=Duration.seconds(300),
        )
        return target
