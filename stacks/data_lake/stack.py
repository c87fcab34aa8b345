"""DataLakeStack: the KMS-encrypted lake bucket, its Glue databases and Lake Formation setup.

Exposes what the EMR stack needs (``app.py`` passes it on): ``bucket``, ``key``,
``databases`` and ``access_logs_bucket``. Lake Formation *grants* to the EMR job role live in
the EMR stack (``LakeFormationGrants``): the role is defined there, and the EMR stack already
depends on this one, so granting here would make the two stacks depend on each other.
"""

from __future__ import annotations

from typing import Any

from aws_cdk import CfnOutput, DefaultStackSynthesizer, Duration, Fn, Stack
from aws_cdk import aws_kms as kms
from aws_cdk import aws_lakeformation as lakeformation
from aws_cdk import aws_s3 as s3
from constructs import Construct

from emr_lineage.aws import parameters
from emr_lineage.settings.model import EnvironmentSettings
from stacks.data_lake.catalog import DefaultDatabase, GlueDatabases
from stacks.data_lake.lake_formation import LakeFormationAdmins, LakeFormationLocation
from stacks.shared.published import publish
from stacks.shared.server_access_logs_bucket import ServerAccessLogsBucket
from stacks.shared.settings_mapping import removal_policy
from stacks.shared.storage import private_bucket, rotating_key


class DataLakeStack(Stack):
    """Exposes ``key``, ``bucket``, ``access_logs_bucket`` (server access logs of every bucket),
    ``databases`` (catalog zone -> Glue database name), ``data_lake_settings`` and ``default_database`` (None
    where another environment manages them: ``data_lake.manage_lake_formation_settings``) and ``location``
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
            # CloudFormation's name: a bucket a destroy retains would block the next deploy under a fixed one.
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

        catalog = GlueDatabases(self, "Databases", settings=settings, bucket=self.bucket)
        self.databases: dict[str, str] = catalog.names
        location = LakeFormationLocation(
            self, "LakeFormationLocation", bucket=self.bucket, resource_prefix=settings.resource_prefix
        )
        self.location_role, self.location = location.role, location.location
        # The account's one settings object and its default database, where this environment manages
        # them; what Lake Formation governs here waits for the deploy role to be an admin.
        self.data_lake_settings: lakeformation.CfnDataLakeSettings | None = None
        self.default_database: DefaultDatabase | None = None
        if lake.manage_lake_formation_settings:
            self.default_database = DefaultDatabase(self, "DefaultDatabase", settings=settings)
            admins = [*lake.admin_arns, self._deploy_role_arn(), self.default_database.role.role_arn]
            self.data_lake_settings = LakeFormationAdmins(self, "LakeFormationAdmins", admin_arns=admins).settings
            for governed in (*catalog.databases, self.default_database.resource, self.location):
                governed.node.add_dependency(self.data_lake_settings)
        self.key.grant(self.location_role, "kms:Decrypt", "kms:Encrypt", "kms:GenerateDataKey")

        publish(
            self,
            parameter_id="BucketParameter",
            parameter_name=parameters.data_lake_bucket(settings.name),
            value=self.bucket.bucket_name,
            description="emr-lineage data lake bucket (raw, clean, curated, models zones)",
            output_id="DataLakeBucketName",
        )
        for zone, name in self.databases.items():
            CfnOutput(self, f"GlueDatabase{zone.capitalize()}", value=name)

    def _deploy_role_arn(self) -> str:
        """The CDK bootstrap's CloudFormation execution role: it must be an admin to create grants."""
        synthesizer = self.synthesizer
        if not isinstance(synthesizer, DefaultStackSynthesizer):
            raise TypeError("DataLakeStack needs the DefaultStackSynthesizer to find the CDK deploy role")
        return Fn.sub(synthesizer.cloud_formation_execution_role_arn)
