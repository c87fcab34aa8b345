"""DataLakeStack: the KMS-encrypted lake bucket (or an existing one), its Glue databases and Lake Formation setup.

Exposes what the EMR stack needs (``app.py`` passes it on): ``bucket``, ``key``,
``databases``, ``existing_databases`` and ``access_logs_bucket``. Lake Formation *grants* to the EMR job role live in
the EMR stack (``LakeFormationGrants``): the role is defined there, and the EMR stack already
depends on this one, so granting here would make the two stacks depend on each other.
"""

from __future__ import annotations

from typing import Any

from aws_cdk import CfnOutput, DefaultStackSynthesizer, Fn, Stack
from aws_cdk import aws_iam as iam
from aws_cdk import aws_kms as kms
from aws_cdk import aws_lakeformation as lakeformation
from aws_cdk import aws_s3 as s3
from constructs import Construct

from emr_lineage.aws import parameters
from emr_lineage.settings.model import EnvironmentSettings
from stacks.data_lake.bucket import lake_bucket, lake_key
from stacks.data_lake.catalog import DefaultDatabase, GlueDatabases
from stacks.data_lake.lake_formation import LakeFormationAdmins, LakeFormationLocation
from stacks.shared.published import publish
from stacks.shared.server_access_logs_bucket import ServerAccessLogsBucket


class DataLakeStack(Stack):
    """Exposes ``key`` (None: an existing bucket with SSE-S3), ``bucket`` (made, or the existing one imported),
    ``access_logs_bucket`` (server access logs of every bucket the stacks make), ``databases`` (catalog zone ->
    Glue database name), ``existing_databases`` (names the stack neither makes nor deletes),
    ``data_lake_settings`` and ``default_database`` (None where another environment manages them:
    ``data_lake.manage_lake_formation_settings``), ``location`` and its ``location_role`` (the registered Lake
    Formation resource; None where an existing bucket's owner registered it)."""

    def __init__(self, scope: Construct, construct_id: str, *, settings: EnvironmentSettings, **kwargs: Any) -> None:
        super().__init__(scope, construct_id, **kwargs)
        lake = settings.data_lake

        self.key: kms.IKey | None = lake_key(self, settings=settings)
        self.access_logs_bucket: s3.IBucket = ServerAccessLogsBucket(
            self, "ServerAccessLogs", retention_days=settings.log_retention_days
        ).bucket
        self.bucket: s3.IBucket = lake_bucket(
            self, settings=settings, key=self.key, access_logs_bucket=self.access_logs_bucket
        )

        catalog = GlueDatabases(self, "Databases", settings=settings, bucket=self.bucket)
        self.databases: dict[str, str] = catalog.names
        self.existing_databases: tuple[str, ...] = tuple(lake.existing_databases)
        self.location_role, self.location = self._location(settings)
        # The account's one settings object and its default database, where this environment manages
        # them; what Lake Formation governs here waits for the deploy role to be an admin.
        self.data_lake_settings: lakeformation.CfnDataLakeSettings | None = None
        self.default_database: DefaultDatabase | None = None
        if lake.manage_lake_formation_settings:
            self.default_database = DefaultDatabase(self, "DefaultDatabase", settings=settings)
            admins = [*lake.admin_arns, self._deploy_role_arn(), self.default_database.role.role_arn]
            self.data_lake_settings = LakeFormationAdmins(self, "LakeFormationAdmins", admin_arns=admins).settings
            governed = [*catalog.databases, self.default_database.resource]
            if self.location is not None:
                governed.append(self.location)
            for resource in governed:
                resource.node.add_dependency(self.data_lake_settings)

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

    def _location(
        self, settings: EnvironmentSettings
    ) -> tuple[iam.IRole, lakeformation.CfnResource] | tuple[None, None]:
        """The bucket registered with Lake Formation through a role that may use its key: (role, resource), or
        (None, None) where an existing bucket's owner registered it already."""
        existing = settings.data_lake.existing_bucket
        if existing is not None and existing.registered_with_lake_formation:
            return None, None
        location = LakeFormationLocation(
            self, "LakeFormationLocation", bucket=self.bucket, resource_prefix=settings.resource_prefix
        )
        if self.key is not None:
            self.key.grant(location.role, "kms:Decrypt", "kms:Encrypt", "kms:GenerateDataKey")
        return location.role, location.location

    def _deploy_role_arn(self) -> str:
        """The CDK bootstrap's CloudFormation execution role: it must be an admin to create grants."""
        synthesizer = self.synthesizer
        if not isinstance(synthesizer, DefaultStackSynthesizer):
            raise TypeError("DataLakeStack needs the DefaultStackSynthesizer to find the CDK deploy role")
        return Fn.sub(synthesizer.cloud_formation_execution_role_arn)
