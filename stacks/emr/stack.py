"""EmrStack: everything an emr-lineage EMR cluster needs, defined once.

Artifacts bucket (bootstrap scripts, jobs, listener jar, logs), IAM roles, the security
configuration and groups, Lake Formation grants, the launch spec for ephemeral clusters (SSM
parameter, JSON) and, when configured, a long-running cluster built from the same request and an
EMR Serverless application with its job role (``emr_serverless.enabled``, stacks/emr/serverless.py).

Everything it uses from other stacks arrives as a prop (``app.py`` passes it): the VPC, the
lineage clients security group and the lineage URL (Marquez's API, or a spoke's hub), the gateway's
API key, the data lake bucket, key (None: an existing bucket with SSE-S3), Glue databases and
existing ones, the server access logs bucket and the alarm topic (the serverless application's
failed job runs notify it). It reads nothing back from SSM.
"""

from __future__ import annotations

from typing import Any

from aws_cdk import Aws, CfnOutput, Stack
from aws_cdk import aws_ec2 as ec2
from aws_cdk import aws_emr as emr
from aws_cdk import aws_s3 as s3
from aws_cdk import aws_secretsmanager as secretsmanager
from aws_cdk import aws_sns as sns
from aws_cdk import aws_ssm as ssm
from constructs import Construct

from emr_lineage.aws import parameters
from emr_lineage.aws.artifacts import LOGS_PREFIX
from emr_lineage.aws.lake import warehouse_uri
from emr_lineage.listener.artifact import BOOTSTRAP_ACTION_NAME, bootstrap_arguments, bootstrap_script_uri
from emr_lineage.settings.model import EnvironmentSettings
from emr_lineage.spark import conf as spark_conf
from stacks.emr.artifacts_bucket import ArtifactsBucket
from stacks.emr.cluster_spec import ClusterResources, job_flow_request
from stacks.emr.lake_formation_grants import LakeFormationGrants
from stacks.emr.long_running import LongRunningCluster
from stacks.emr.roles import DataLakeAccess, EmrRoles, GatewayAccess
from stacks.emr.security import EmrSecurity
from stacks.emr.serverless import ServerlessApplication
from stacks.monitoring.emr_events import ServerlessJobRunFailures
from stacks.shared.lake_formation import grant_one_at_a_time
from stacks.shared.published import publish


class EmrStack(Stack):
    """Exposes ``artifacts_bucket``, ``roles``, ``security``, ``launch_spec`` (the request
    dict, with tokens), ``long_running_cluster`` (or None) and ``serverless`` (or None)."""

    def __init__(
        self,
        scope: Construct,
        construct_id: str,
        *,
        settings: EnvironmentSettings,
        vpc: ec2.IVpc,
        lineage_clients_security_group: ec2.ISecurityGroup,
        marquez_api_url: str,
        data_lake: DataLakeAccess,
        access_logs_bucket: s3.IBucket,
        alarm_topic: sns.ITopic,
        gateway: GatewayAccess | None = None,
        **kwargs: Any,
    ) -> None:
        super().__init__(scope, construct_id, **kwargs)
        grant_one_at_a_time(self)

        self.artifacts_bucket = ArtifactsBucket(
            self,
            "Artifacts",
            access_logs_bucket=access_logs_bucket,
            log_retention_days=settings.log_retention_days,
        ).bucket
        self.roles = EmrRoles(
            self,
            "Roles",
            settings=settings,
            artifacts_bucket=self.artifacts_bucket,
            data_lake=data_lake,
            gateway=gateway,
        )
        self.security = EmrSecurity(
            self,
            "Security",
            settings=settings,
            vpc=vpc,
            data_lake_key=data_lake.key,
            artifacts_bucket=self.artifacts_bucket,
            service_role=self.roles.service_role,
            instance_role=self.roles.instance_role,
        )
        self.grants = LakeFormationGrants(
            self,
            "LakeFormationGrants",
            role=self.roles.job_role,
            databases=data_lake.databases,
            existing_databases=data_lake.existing_databases,
            data_lake_bucket_arn=data_lake.bucket.bucket_arn,
        )

        resources = self._cluster_resources(
            settings,
            vpc=vpc,
            lineage_clients_security_group=lineage_clients_security_group,
            marquez_api_url=marquez_api_url,
            gateway_api_key=gateway.api_key if gateway else None,
            lake_bucket=data_lake.bucket,
        )
        self.launch_spec = job_flow_request(settings, resources, long_running=False)
        self.long_running_cluster: emr.CfnCluster | None = None
        if settings.emr.long_running_cluster:
            self.long_running_cluster = LongRunningCluster(
                self, "LongRunning", settings=settings, resources=resources
            ).cluster
            CfnOutput(self, "LongRunningClusterId", value=self.long_running_cluster.ref)
        self.serverless = self._serverless(
            settings,
            vpc=vpc,
            lineage_clients_security_group=lineage_clients_security_group,
            data_lake=data_lake,
            gateway=gateway,
            alarm_topic=alarm_topic,
        )
        self._publish(settings)

    def _serverless(
        self,
        settings: EnvironmentSettings,
        *,
        vpc: ec2.IVpc,
        lineage_clients_security_group: ec2.ISecurityGroup,
        data_lake: DataLakeAccess,
        gateway: GatewayAccess | None,
        alarm_topic: sns.ITopic,
    ) -> ServerlessApplication | None:
        """The EMR Serverless application (``emr_serverless.enabled``), with the gateway's API key to read when
        on (a spoke's: the hub's); its failed job runs notify ``alarm_topic``."""
        if not settings.emr_serverless.enabled:
            return None
        serverless = ServerlessApplication(
            self,
            "Serverless",
            settings=settings,
            vpc=vpc,
            lineage_clients_security_group=lineage_clients_security_group,
            artifacts_bucket=self.artifacts_bucket,
            data_lake=data_lake,
            gateway=gateway,
        )
        ServerlessJobRunFailures(
            self,
            "ServerlessJobRunFailures",
            settings=settings,
            topic=alarm_topic,
            application_id=serverless.application.attr_application_id,
        )
        return serverless

    def _cluster_resources(
        self,
        settings: EnvironmentSettings,
        *,
        vpc: ec2.IVpc,
        lineage_clients_security_group: ec2.ISecurityGroup,
        marquez_api_url: str,
        gateway_api_key: secretsmanager.ISecret | None,
        lake_bucket: s3.IBucket,
    ) -> ClusterResources:
        """What every cluster refers to: subnet, roles, security, logs, the bootstrap, the listener's conf and the
        catalogs (the Iceberg catalog's warehouse in ``lake_bucket``)."""
        listener = spark_conf.ListenerConfig.for_settings(settings.openlineage, api_url=marquez_api_url)
        subnets = vpc.select_subnets(subnet_type=ec2.SubnetType.PRIVATE_WITH_EGRESS)
        return ClusterResources(
            subnet_id=subnets.subnet_ids[0],
            service_role=self.roles.service_role.role_name,
            instance_profile=self.roles.instance_profile.ref,
            security_configuration=self.security.security_configuration.ref,
            log_uri=self.artifacts_bucket.s3_url_for_object(LOGS_PREFIX),
            primary_security_group=self.security.primary_security_group.security_group_id,
            core_security_group=self.security.core_security_group.security_group_id,
            service_access_security_group=self.security.service_access_security_group.security_group_id,
            additional_security_groups=(lineage_clients_security_group.security_group_id,),
            bootstrap_name=BOOTSTRAP_ACTION_NAME,
            bootstrap_path=bootstrap_script_uri(self.artifacts_bucket.bucket_name),
            bootstrap_args=tuple(
                bootstrap_arguments(
                    settings,
                    self.artifacts_bucket.bucket_name,
                    emr_release=settings.emr.release_label,
                    region=Aws.REGION,
                    api_key_secret_arn=gateway_api_key.secret_arn if gateway_api_key is not None else None,
                )
            ),
            # Glue catalog id explicit: no STS call from private subnets (OpenLineage #4163).
            configurations=tuple(
                spark_conf.emr_configurations(
                    listener, glue_catalog_id=Aws.ACCOUNT_ID, warehouse=warehouse_uri(lake_bucket.bucket_name)
                )
            ),
        )

    def _publish(self, settings: EnvironmentSettings) -> None:
        publish(
            self,
            parameter_id="LaunchSpecParameter",
            parameter_name=parameters.emr_launch_spec(settings.name),
            value=self.to_json_string(self.launch_spec),
            tier=ssm.ParameterTier.INTELLIGENT_TIERING,
            description="RunJobFlow request (minus Steps) for emr-lineage ephemeral clusters",
            output_id="LaunchSpecParameterName",
            output_value=parameters.emr_launch_spec(settings.name),
        )
        publish(
            self,
            parameter_id="ArtifactsBucketParameter",
            parameter_name=parameters.artifacts_bucket(settings.name),
            value=self.artifacts_bucket.bucket_name,
            description="emr-lineage artifacts bucket (bootstrap, jobs, listener jar, EMR logs)",
            output_id="ArtifactsBucketName",
        )
        if self.serverless is not None:
            publish(
                self,
                parameter_id="ServerlessApplicationIdParameter",
                parameter_name=parameters.serverless_application_id(settings.name),
                value=self.serverless.application.attr_application_id,
                description="EMR Serverless Spark application of emr-lineage job runs",
                output_id="ServerlessApplicationId",
            )
            publish(
                self,
                parameter_id="ServerlessJobRoleArnParameter",
                parameter_name=parameters.serverless_job_role_arn(settings.name),
                value=self.serverless.job_role.role_arn,
                description="Runtime role of emr-lineage EMR Serverless job runs (the submitter needs iam:PassRole)",
                output_id="ServerlessJobRoleArn",
            )
