"""The data lake's Lake Formation setup: its administrators and the registered bucket location."""

from __future__ import annotations

from collections.abc import Sequence

from aws_cdk import aws_iam as iam
from aws_cdk import aws_lakeformation as lakeformation
from aws_cdk import aws_s3 as s3
from constructs import Construct

from stacks.shared.logical_ids import keep_logical_ids
from stacks.shared.nag import acknowledge, wildcard_resource_finding


class LakeFormationAdmins(Construct):
    """Lake Formation data lake settings adding ``admin_arns`` to the account's admins; exposes ``settings``."""

    def __init__(self, scope: Construct, construct_id: str, *, admin_arns: Sequence[str]) -> None:
        super().__init__(scope, construct_id)
        keep_logical_ids(self)  # first deployed directly in the stack
        self.settings = lakeformation.CfnDataLakeSettings(
            self,
            "LakeFormationSettings",
            admins=[
                lakeformation.CfnDataLakeSettings.DataLakePrincipalProperty(data_lake_principal_identifier=arn)
                for arn in admin_arns
            ],
            # APPEND adds our admins and keeps every admin the account already has.
            mutation_type="APPEND",
        )


class LakeFormationLocation(Construct):
    """The lake bucket registered with Lake Formation through a role of its own; exposes ``role`` (grant
    it the bucket's key) and ``location``."""

    def __init__(self, scope: Construct, construct_id: str, *, bucket: s3.IBucket, resource_prefix: str) -> None:
        super().__init__(scope, construct_id)
        keep_logical_ids(self)  # first deployed directly in the stack
        self.role = iam.Role(
            self,
            "LocationRole",
            assumed_by=iam.ServicePrincipal("lakeformation.amazonaws.com"),
            description=f"{resource_prefix}: Lake Formation access to the data lake bucket",
        )
        self.role.add_to_policy(iam.PolicyStatement(actions=["s3:ListBucket"], resources=[bucket.bucket_arn]))
        self.role.add_to_policy(
            iam.PolicyStatement(
                actions=["s3:GetObject", "s3:PutObject", "s3:DeleteObject"],
                resources=[bucket.arn_for_objects("*")],
            )
        )
        acknowledge(
            self.role,
            wildcard_resource_finding(self, bucket.arn_for_objects("*")),
            "Lake Formation vends access to any object of the registered location: the whole bucket.",
        )
        self.location = lakeformation.CfnResource(
            self,
            "Location",
            resource_arn=bucket.bucket_arn,
            role_arn=self.role.role_arn,
            # A dedicated role, not the service-linked one, so it can use the bucket's KMS key.
            use_service_linked_role=False,
        )
