"""ServerlessApplication: an EMR Serverless Spark application beside the clusters, for job runs without one.

- The application: the clusters' EMR release, in the VPC's private subnets, stopped after
  ``emr_serverless.idle_timeout_minutes`` without a job run and capped at ``max_vcpu``/``max_memory_gib``;
  job runs log to ``serverless-logs/`` of the artifacts bucket (expired like the clusters' logs). Its Spark
  defaults hold the catalogs the clusters get (``emr_lineage.spark.catalogs.catalog_configurations``: the Glue
  Data Catalog for Hive and as the Iceberg catalog ``lakehouse``, its warehouse in the lake bucket); the
  listener's conf and EMR's Iceberg runtime go with each job run (the CLI adds them: a job run's
  ``spark.jars`` replaces the application's), so the lineage endpoint can change without a deploy.
- Its network: a security group of its own that only sends HTTPS (AWS APIs: S3 through the gateway
  endpoint, Glue, STS, KMS and CloudWatch through NAT or the interface endpoints) and takes nothing in,
  plus the lineage clients group, as the clusters' nodes join it: that group alone may reach the
  lineage load balancer (Marquez, or the gateway behind the same listener), on its ports only.
- The job runtime role: assumed by EMR Serverless for this account's applications only, with the data
  lake access of the clusters' job role (``grant_data_lake``) and the same Lake Formation grants; of the
  artifacts bucket it reads what a job run needs (``jobs/``, ``staged-jobs/``, ``listener/``) and writes
  its logs. No bootstrap runs, so nothing reads ``bootstrap/`` or ``tls/``; with ``openlineage.trusted_ca``, it
  reads the Java truststore ``launch --serverless`` stages under ``truststores/`` (the CA itself is read by
  whoever launches, not by the job run). With the gateway on (or in a spoke: the hub's key), it may
  read the gateway's API key secret (and decrypt it through Secrets Manager): job runs name the secret
  (``EMR.secret@<ARN>``) and EMR Serverless reads it when a run starts
  (https://docs.aws.amazon.com/emr/latest/EMR-Serverless-UserGuide/secrets-manager.html).
"""

from __future__ import annotations

from aws_cdk import Aws, Duration
from aws_cdk import aws_ec2 as ec2
from aws_cdk import aws_emrserverless as emrs
from aws_cdk import aws_iam as iam
from aws_cdk import aws_s3 as s3
from constructs import Construct

from emr_lineage.aws.artifacts import (
    JOBS_PREFIX,
    LISTENER_PREFIX,
    SERVERLESS_LOGS_PREFIX,
    STAGED_JOBS_PREFIX,
    TRUSTSTORES_PREFIX,
)
from emr_lineage.aws.lake import warehouse_uri
from emr_lineage.settings.model import EnvironmentSettings
from emr_lineage.spark.catalogs import catalog_configurations
from stacks.emr.lake_formation_grants import LakeFormationGrants
from stacks.emr.roles import DataLakeAccess, GatewayAccess, grant_artifacts, grant_data_lake, read_gateway_api_key
from stacks.shared.emr_serverless import SERVICE_PRINCIPAL, applications_arn

APPLICATION_TYPE = "SPARK"
HTTPS_PORT = 443
# What a job run reads from the artifacts bucket: job scripts (deployed and staged) and the listener jar.
READ_PREFIXES = (JOBS_PREFIX, STAGED_JOBS_PREFIX, LISTENER_PREFIX)


class ServerlessApplication(Construct):
    """Exposes ``application``, ``security_group``, ``job_role`` and ``grants`` (LakeFormationGrants)."""

    def __init__(
        self,
        scope: Construct,
        construct_id: str,
        *,
        settings: EnvironmentSettings,
        vpc: ec2.IVpc,
        lineage_clients_security_group: ec2.ISecurityGroup,
        artifacts_bucket: s3.Bucket,
        data_lake: DataLakeAccess,
        gateway: GatewayAccess | None = None,
    ) -> None:
        super().__init__(scope, construct_id)
        prefix = settings.resource_prefix
        self.job_role = iam.Role(
            self,
            "JobRole",
            assumed_by=iam.ServicePrincipal(
                SERVICE_PRINCIPAL,
                conditions={
                    "StringEquals": {"aws:SourceAccount": Aws.ACCOUNT_ID},
                    "ArnLike": {"aws:SourceArn": applications_arn()},
                },
            ),
            description=f"{prefix}: EMR Serverless job runtime role (artifacts, serverless logs, data lake)",
        )
        # With a trusted CA, the driver loads the truststore staged for the run (emr_lineage.spark.truststore).
        trusts = (TRUSTSTORES_PREFIX,) if settings.openlineage.trusted_ca is not None else ()
        grant_artifacts(
            self.job_role, artifacts_bucket, read_prefixes=(*READ_PREFIXES, *trusts), logs_prefix=SERVERLESS_LOGS_PREFIX
        )
        grant_data_lake(self.job_role, data_lake)
        if gateway is not None:
            read_gateway_api_key(self.job_role, gateway)
        self.grants = LakeFormationGrants(
            self,
            "LakeFormationGrants",
            role=self.job_role,
            databases=data_lake.databases,
            existing_databases=data_lake.existing_databases,
            data_lake_bucket_arn=data_lake.bucket.bucket_arn,
        )
        # Job run logs expire as the clusters' do.
        artifacts_bucket.add_lifecycle_rule(
            prefix=SERVERLESS_LOGS_PREFIX, expiration=Duration.days(settings.log_retention_days)
        )

        self.security_group = ec2.SecurityGroup(
            self,
            "SecurityGroup",
            vpc=vpc,
            allow_all_outbound=False,
            description=f"{prefix} EMR Serverless job runs: HTTPS out to AWS APIs, nothing in",
        )
        # AWS APIs have no fixed addresses (S3's gateway endpoint prefix list is within this too).
        self.security_group.add_egress_rule(
            ec2.Peer.any_ipv4(),
            ec2.Port.tcp(HTTPS_PORT),
            "AWS APIs (S3, Glue, STS, KMS, CloudWatch) via NAT or VPC endpoints",
        )
        self.application = self._application(
            settings,
            subnet_ids=vpc.select_subnets(subnet_type=ec2.SubnetType.PRIVATE_WITH_EGRESS).subnet_ids,
            security_group_ids=[
                self.security_group.security_group_id,
                lineage_clients_security_group.security_group_id,
            ],
            log_uri=artifacts_bucket.s3_url_for_object(SERVERLESS_LOGS_PREFIX),
            log_key_arn=artifacts_bucket.encryption_key.key_arn if artifacts_bucket.encryption_key else None,
            warehouse=warehouse_uri(data_lake.bucket.bucket_name),
        )

    def _application(
        self,
        settings: EnvironmentSettings,
        *,
        subnet_ids: list[str],
        security_group_ids: list[str],
        log_uri: str,
        log_key_arn: str | None,
        warehouse: str,
    ) -> emrs.CfnApplication:
        serverless = settings.emr_serverless
        catalogs = catalog_configurations(glue_catalog_id=Aws.ACCOUNT_ID, warehouse=warehouse)
        return emrs.CfnApplication(
            self,
            "Application",
            name=f"{settings.resource_prefix}-spark",
            type=APPLICATION_TYPE,
            release_label=settings.emr.release_label,
            auto_start_configuration=emrs.CfnApplication.AutoStartConfigurationProperty(enabled=True),
            auto_stop_configuration=emrs.CfnApplication.AutoStopConfigurationProperty(
                enabled=True, idle_timeout_minutes=serverless.idle_timeout_minutes
            ),
            maximum_capacity=emrs.CfnApplication.MaximumAllowedResourcesProperty(
                cpu=f"{serverless.max_vcpu} vCPU", memory=f"{serverless.max_memory_gib} GB"
            ),
            network_configuration=emrs.CfnApplication.NetworkConfigurationProperty(
                subnet_ids=subnet_ids, security_group_ids=security_group_ids
            ),
            monitoring_configuration=emrs.CfnApplication.MonitoringConfigurationProperty(
                s3_monitoring_configuration=emrs.CfnApplication.S3MonitoringConfigurationProperty(
                    log_uri=log_uri, encryption_key_arn=log_key_arn
                )
            ),
            # Glue catalog id explicit: no STS call from private subnets (OpenLineage #4163), as on the clusters.
            runtime_configuration=[
                emrs.CfnApplication.ConfigurationObjectProperty(classification=classification, properties=properties)
                for classification, properties in catalogs.items()
            ],
        )
