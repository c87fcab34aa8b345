"""DataLakeStack: the KMS-encrypted lake bucket, its Glue databases and Lake Formation setup.

Exposes what the EMR stack needs (``app.py`` passes it on): ``bucket``, ``key``,
``databases`` and ``access_logs_bucket``. Lake Formation *grants* to the EMR job role live in
the EMR stack (``LakeFormationGrants``): the role is defined there, and the EMR stack already
depends on this one, so granting here would make the two stacks depend on each other.
"""

from __future__ import annotations

from typing import Any

from aws_cdk import Aws, CfnOutput, DefaultStackSynthesizer, Duration, Fn, Stack
from aws_cdk import aws_glue as glue
from aws_cdk import aws_iam as iam
from aws_cdk import aws_kms as kms
from aws_cdk import aws_lakeformation as lakeformation
from aws_cdk import aws_s3 as s3
from aws_cdk import aws_ssm as ssm
from constructs import Construct

from emr_lineage.aws import parameters
from emr_lineage.aws.lake import CATALOG_ZONES, data_lake_bucket_name, glue_database_name, zone_prefix
from emr_lineage.settings.model import EnvironmentSettings
from stacks.shared.nag import acknowledge, wildcard_resource_finding
from stacks.shared.server_access_logs_bucket import ServerAccessLogsBucket
from stacks.shared.settings_mapping import removal_policy
from stacks.shared.storage import private_bucket, rotating_key


class DataLakeStack(Stack):
    """Exposes ``key``, ``bucket``, ``access_logs_bucket`` (server access logs of every bucket),
    ``databases`` (catalog zone -> Glue database name), ``data_lake_settings`` and ``location``
    (the registered Lake Formation resource)."""

    def __init__(self, scope: Construct, construct_id: str, *, settings: EnvironmentSettings, **kwargs: Any) -> None:
        super().__init__(scope, construct_id, **kwargs)
        lake = settings.data_lake

        self.key: kms.IKey = rotating_key(
            self,
            "Key",
            settings=settings,
            alias="data-lake",
            description=f"{settings.resource_prefix} data lake encryption",
        )
        self.access_logs_bucket: s3.IBucket = ServerAccessLogsBucket(
            self, "ServerAccessLogs", retention_days=settings.log_retention_days
        ).bucket
        self.bucket: s3.IBucket = private_bucket(
            self,
            "Bucket",
            access_logs_bucket=self.access_logs_bucket,
            access_logs_prefix="data-lake/",
            bucket_name=data_lake_bucket_name(settings, Aws.ACCOUNT_ID, Aws.REGION),
            encryption=s3.BucketEncryption.KMS,
            encryption_key=self.key,
            bucket_key_enabled=True,
            lifecycle_rules=[
                s3.LifecycleRule(
                    noncurrent_version_expiration=Duration.days(lake.noncurrent_version_expiration_days),
                    abort_incomplete_multipart_upload_after=Duration.days(7),
                )
            ],
            # Never auto-emptied: CloudFormation refuses to delete a non-empty bucket, so data
            # survives even a `destroy` policy until someone empties it on purpose.
            removal_policy=removal_policy(settings),
        )

        self.databases: dict[str, str] = {}
        for zone in CATALOG_ZONES:
            name = glue_database_name(settings, zone)
            glue.CfnDatabase(
                self,
                f"Database-{zone}",
                catalog_id=Aws.ACCOUNT_ID,
                database_input=glue.CfnDatabase.DatabaseInputProperty(
                    name=name,
                    description=f"emr-lineage {settings.name}: {zone} zone",
                    location_uri=self.bucket.s3_url_for_object(zone_prefix(zone)),
                    # No IAM_ALLOWED_PRINCIPALS default on new tables: Lake Formation decides.
                    create_table_default_permissions=[],
                ),
            )
            self.databases[zone] = name

        self.data_lake_settings = lakeformation.CfnDataLakeSettings(
            self,
            "LakeFormationSettings",
            admins=[
                lakeformation.CfnDataLakeSettings.DataLakePrincipalProperty(data_lake_principal_identifier=arn)
                for arn in [*lake.admin_arns, self._deploy_role_arn()]
            ],
            # APPEND adds our admins and keeps every admin the account already has.
            mutation_type="APPEND",
        )

        self.location_role = iam.Role(
            self,
            "LocationRole",
            assumed_by=iam.ServicePrincipal("lakeformation.amazonaws.com"),
            description=f"{settings.resource_prefix}: Lake Formation access to the data lake bucket",
        )
        self.location_role.add_to_policy(
            iam.PolicyStatement(actions=["s3:ListBucket"], resources=[self.bucket.bucket_arn])
        )
        self.location_role.add_to_policy(
            iam.PolicyStatement(
                actions=["s3:GetObject", "s3:PutObject", "s3:DeleteObject"],
                resources=[self.bucket.arn_for_objects("*")],
            )
        )
        self.key.grant(self.location_role, "kms:Decrypt", "kms:Encrypt", "kms:GenerateDataKey")
        acknowledge(
            self.location_role,
            wildcard_resource_finding(self, self.bucket.arn_for_objects("*")),
            "Lake Formation vends access to any object of the registered location: the whole bucket.",
        )
        self.location = lakeformation.CfnResource(
            self,
            "Location",
            resource_arn=self.bucket.bucket_arn,
            role_arn=self.location_role.role_arn,
            # A dedicated role, not the service-linked one, so it can use the bucket's KMS key.
            use_service_linked_role=False,
        )

        ssm.StringParameter(
            self,
            "BucketParameter",
            parameter_name=parameters.data_lake_bucket(settings.name),
            string_value=self.bucket.bucket_name,
            description="emr-lineage data lake bucket (raw, clean, curated, models zones)",
        )
        CfnOutput(self, "DataLakeBucketName", value=self.bucket.bucket_name)
        for zone, name in self.databases.items():
            CfnOutput(self, f"GlueDatabase{zone.capitalize()}", value=name)

    def _deploy_role_arn(self) -> str:
        """The CDK bootstrap's CloudFormation execution role: it must be an admin to create grants."""
        synthesizer = self.synthesizer
        if not isinstance(synthesizer, DefaultStackSynthesizer):
            raise TypeError("DataLakeStack needs the DefaultStackSynthesizer to find the CDK deploy role")
        return Fn.sub(synthesizer.cloud_formation_execution_role_arn)
