"""MarquezDatabase: the PostgreSQL instance that stores Marquez's lineage metadata."""

from __future__ import annotations

from aws_cdk import Aws, Duration, Fn, RemovalPolicy
from aws_cdk import aws_ec2 as ec2
from aws_cdk import aws_kms as kms
from aws_cdk import aws_rds as rds
from constructs import Construct

from emr_lineage.settings.loader import ConfigError
from emr_lineage.settings.model import EnvironmentSettings
from emr_lineage.settings.service import MARQUEZ_MIN_POSTGRES
from stacks.shared.nag import acknowledge, acknowledge_cfn_lint, acknowledge_checkov
from stacks.shared.settings_mapping import removal_policy
from stacks.shared.storage import encrypted_log_group

DATABASE_NAME = "marquez"
DATABASE_USER = "marquez"
DATABASE_PORT = 5432
LOG_EXPORTS = ("postgresql", "upgrade")
# Enhanced Monitoring: the instance's OS metrics (memory, swap, processes) every minute, into RDS's
# own RDSOSMetrics log group (https://docs.aws.amazon.com/AmazonRDS/latest/UserGuide/USER_Monitoring.OS.html).
ENHANCED_MONITORING_SECONDS = 60


def stack_unique_suffix() -> str:
    """The first 8 hex digits of the stack's id (a UUID): another for every stack made anew."""
    return Fn.select(0, Fn.split("-", Fn.select(2, Fn.split("/", Aws.STACK_ID))))


def postgres_engine_version(major: str) -> rds.PostgresEngineVersion:
    """PostgreSQL ``major`` as the instance's engine version: the major alone (RDS picks its default
    minor, then applies newer ones), if the pinned aws-cdk-lib knows that major (raises ConfigError)."""
    known = sorted({int(name.split("_")[1]) for name in dir(rds.PostgresEngineVersion) if name.startswith("VER_")})
    if int(major) not in known:
        usable = ", ".join(str(k) for k in known if k >= MARQUEZ_MIN_POSTGRES)
        raise ConfigError(f"database.postgres_version {major}: use one the pinned aws-cdk-lib knows: {usable}")
    return rds.PostgresEngineVersion.of(major, major)


class MarquezDatabase(Construct):
    """RDS PostgreSQL in isolated subnets, encrypted, SSL enforced, credentials in Secrets Manager (under
    ``key``, which also encrypts the exported logs), OS metrics by Enhanced Monitoring.

    Exposes ``instance``, ``identifier`` (the instance's, a token), ``secret`` (JSON with
    username/password/host/port/dbname) and ``security_group`` (no ingress until a client is allowed with
    :meth:`allow_from`).
    """

    def __init__(
        self, scope: Construct, construct_id: str, *, vpc: ec2.IVpc, settings: EnvironmentSettings, key: kms.IKey
    ) -> None:
        super().__init__(scope, construct_id)
        db = settings.database
        engine = rds.DatabaseInstanceEngine.postgres(version=postgres_engine_version(db.postgres_version))

        self.security_group = ec2.SecurityGroup(
            self,
            "SecurityGroup",
            vpc=vpc,
            allow_all_outbound=False,
            description=f"{settings.resource_prefix} Marquez database: ingress only from the Marquez tasks",
        )
        parameters = rds.ParameterGroup(
            self,
            "Parameters",
            engine=engine,
            description=f"{settings.resource_prefix} Marquez database: TLS required",
            parameters={"rds.force_ssl": "1"},
        )
        # Unique to this stack: RDS names its log groups after the instance, and prod retains them on a
        # destroy, so a fixed identifier would meet them again on the next deploy ("already exists").
        self.identifier = Fn.join("-", [f"{settings.resource_prefix}-marquez", stack_unique_suffix()])
        # RDS creates these groups on first export with no retention; creating them first sets it
        # (cloudwatch_logs_retention would add a Lambda-backed custom resource instead).
        log_groups = [
            encrypted_log_group(
                self,
                f"Logs-{export}",
                key=key,
                settings=settings,
                retention_days=settings.log_retention_days,
                log_group_name=f"/aws/rds/instance/{self.identifier}/{export}",
            )
            for export in LOG_EXPORTS
        ]
        self.instance = rds.DatabaseInstance(
            self,
            "Instance",
            engine=engine,
            instance_type=ec2.InstanceType(db.instance_type),
            vpc=vpc,
            vpc_subnets=ec2.SubnetSelection(subnet_type=ec2.SubnetType.PRIVATE_ISOLATED),
            security_groups=[self.security_group],
            port=DATABASE_PORT,
            database_name=DATABASE_NAME,
            # A generated name: the secret outlives a destroy with the final snapshot (below).
            credentials=rds.Credentials.from_generated_secret(DATABASE_USER, encryption_key=key),
            parameter_group=parameters,
            storage_encrypted=True,
            storage_type=rds.StorageType.GP3,
            allocated_storage=db.allocated_storage_gib,
            max_allocated_storage=db.max_allocated_storage_gib,
            multi_az=db.multi_az,
            backup_retention=Duration.days(db.backup_retention_days),
            deletion_protection=db.deletion_protection,
            removal_policy=removal_policy(settings, snapshot_capable=True),
            # The template names the major version only (postgres_engine_version), so RDS's minor upgrades
            # are not undone by the next deploy; a changed major is upgraded in place (docs/deploy.md).
            auto_minor_version_upgrade=True,
            allow_major_version_upgrade=True,
            publicly_accessible=False,
            instance_identifier=self.identifier,
            cloudwatch_logs_exports=list(LOG_EXPORTS),
            copy_tags_to_snapshot=True,
            monitoring_interval=Duration.seconds(ENHANCED_MONITORING_SECONDS),
        )
        for log_group in log_groups:
            self.instance.node.add_dependency(log_group)
        acknowledge_cfn_lint(
            self.instance,
            "W3691",
            'its EngineVersion is the PostgreSQL major alone ("17") so that RDS applies minor versions and creates the '
            "instance at its default minor (CreateDBInstance); cfn-lint's list of full versions calls it deprecated",
        )
        assert self.instance.secret is not None  # generated above
        self.secret = self.instance.secret
        self._keep_secret_with_the_data(settings)
        self._acknowledge(settings)

    def _keep_secret_with_the_data(self, settings: EnvironmentSettings) -> None:
        """A final snapshot (or a retained instance) holds the password: the secret goes only with the data.
        (``secret`` is its attachment to the instance; the secret itself is the instance's child.)"""
        if removal_policy(settings, snapshot_capable=True) != RemovalPolicy.DESTROY:
            generated = self.instance.node.find_child("Secret")
            assert isinstance(generated, rds.DatabaseSecret)
            generated.apply_removal_policy(RemovalPolicy.RETAIN)

    def _acknowledge(self, settings: EnvironmentSettings) -> None:
        """The scanners' findings on the instance that its settings answer (cdk-nag, then checkov)."""
        db = settings.database
        acknowledge(
            self.instance,
            "AwsSolutions-RDS11",
            "Port 5432 is kept for Marquez's defaults; the instance is in isolated subnets and "
            "its security group admits only the Marquez tasks, so a non-default port adds no protection.",
        )
        if not db.multi_az:
            acknowledge(
                self.instance,
                "AwsSolutions-RDS3",
                f"{settings.name} runs single-AZ by configuration (database.multi_az=false) to save "
                "cost; prod sets multi_az=true.",
            )
        if not db.deletion_protection:
            acknowledge(
                self.instance,
                "AwsSolutions-RDS10",
                f"{settings.name} disables deletion protection by configuration so the environment "
                "can be torn down; prod sets deletion_protection=true.",
            )
        acknowledge(
            self.instance,
            "AwsSolutions-IAM4[Policy::arn:<AWS::Partition>:iam::aws:policy/service-role/AmazonRDSEnhancedMonitoringRole]",
            "AWS's managed policy for the role RDS Enhanced Monitoring assumes to write the instance's OS "
            "metrics to CloudWatch Logs; it grants nothing else.",
        )
        acknowledge_checkov(
            self.instance,
            "CKV_AWS_161",
            "Marquez connects with the password from Secrets Manager (its JDBC settings take no IAM token); "
            "IAM authentication would add a second way in that nothing uses, without closing the password one.",
        )
        if not db.multi_az:
            acknowledge_checkov(
                self.instance,
                "CKV_AWS_157",
                f"{settings.name} runs single-AZ by configuration (database.multi_az=false) to save cost; "
                "prod sets multi_az=true.",
            )
        acknowledge(
            self.instance,
            "AwsSolutions-SMG4",
            "Marquez (Dropwizard) reads the database password once at start; automatic rotation "
            "would break running tasks. Rotate by updating the secret and forcing a new ECS deployment "
            "(docs/deploy.md, 'Operations').",
        )

    def allow_from(self, peer: ec2.IConnectable, description: str) -> None:
        self.security_group.connections.allow_from(peer, ec2.Port.tcp(DATABASE_PORT), description)
