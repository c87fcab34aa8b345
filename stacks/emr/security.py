"""EmrSecurity: the EMR security configuration and the cluster's security groups.

Security configuration (JSON, as EMR documents it; encryption nests under
``EncryptionConfiguration``):
- at rest: EMRFS writes to S3 with SSE-KMS (the data lake key; SSE-S3 for an existing lake bucket without
  one); local disks and EBS volumes with a KMS key of this stack;
- in transit (optional per env): TLS between nodes with PEM certificates that the platform
  team uploads as ``s3://<artifacts>/tls/emr-tls-certificates.zip`` (docs/deploy.md, "TLS
  certificates for EMR"); EMR reads the zip when the cluster starts;
- Lake Formation (when the runtime role is enabled): application-scoped IAM roles with EMR's
  session tag.
"""

from __future__ import annotations

from aws_cdk import Stack, Tags
from aws_cdk import aws_ec2 as ec2
from aws_cdk import aws_emr as emr
from aws_cdk import aws_iam as iam
from aws_cdk import aws_kms as kms
from aws_cdk import aws_s3 as s3
from constructs import Construct

from emr_lineage.aws.artifacts import TLS_CERTIFICATES_KEY
from emr_lineage.aws.tags import EMR_MANAGED_TAG
from emr_lineage.settings.model import EnvironmentSettings
from stacks.emr.roles import KMS_DATA_ACTIONS
from stacks.shared.storage import rotating_key

# A KMS key user's use of the key (https://docs.aws.amazon.com/kms/latest/developerguide/key-policy-default.html)
# with what EBS lists for launching instances with encrypted volumes
# (https://docs.aws.amazon.com/ebs/latest/userguide/ebs-encryption-requirements.html).
EBS_LAUNCH_ACTIONS = (
    "kms:Encrypt",
    "kms:Decrypt",
    "kms:ReEncryptFrom",
    "kms:ReEncryptTo",
    "kms:GenerateDataKey",
    "kms:GenerateDataKeyWithoutPlaintext",
    "kms:DescribeKey",
)
KEY_GRANT_ACTIONS = ("kms:CreateGrant", "kms:ListGrants", "kms:RevokeGrant")


def security_configuration_json(
    *, s3_key_arn: str | None, local_disk_key_arn: str, tls_certificates_uri: str | None, lake_formation: bool
) -> dict:
    """The security configuration document (tokens allowed in the ARNs); without ``s3_key_arn``, SSE-S3."""
    s3_encryption = (
        {"EncryptionMode": "SSE-S3"} if s3_key_arn is None else {"EncryptionMode": "SSE-KMS", "AwsKmsKey": s3_key_arn}
    )
    encryption: dict = {
        "EnableAtRestEncryption": True,
        "EnableInTransitEncryption": tls_certificates_uri is not None,
        "AtRestEncryptionConfiguration": {
            "S3EncryptionConfiguration": s3_encryption,
            "LocalDiskEncryptionConfiguration": {
                "EncryptionKeyProviderType": "AwsKms",
                "AwsKmsKey": local_disk_key_arn,
                "EnableEbsEncryption": True,
            },
        },
    }
    if tls_certificates_uri is not None:
        encryption["InTransitEncryptionConfiguration"] = {
            "TLSCertificateConfiguration": {"CertificateProviderType": "PEM", "S3Object": tls_certificates_uri},
        }
    document: dict = {"EncryptionConfiguration": encryption}
    if lake_formation:
        document["AuthorizationConfiguration"] = {
            "IAMConfiguration": {"EnableApplicationScopedIAMRole": True},
            "LakeFormationConfiguration": {"AuthorizedSessionTagValue": "Amazon EMR"},
        }
    return document


class EmrSecurity(Construct):
    """Exposes ``security_configuration`` (name via ``.ref``), ``local_disk_key``,
    ``primary_security_group``, ``core_security_group`` and ``service_access_security_group``."""

    def __init__(
        self,
        scope: Construct,
        construct_id: str,
        *,
        settings: EnvironmentSettings,
        vpc: ec2.IVpc,
        data_lake_key: kms.IKey | None,
        artifacts_bucket: s3.IBucket,
        service_role: iam.IRole,
        instance_role: iam.IRole,
    ) -> None:
        super().__init__(scope, construct_id)
        prefix = settings.resource_prefix

        self.local_disk_key = rotating_key(
            self,
            "LocalDiskKey",
            settings=settings,
            alias="emr-local-disk",
            description=f"{prefix}: EMR local disk and EBS encryption",
        )
        self.local_disk_key.grant(instance_role, *KMS_DATA_ACTIONS)
        # EBS encryption: EMR's service role launches the instances with volumes under this key, so it is
        # a key user as EMR's guide asks (emr-encryption-enable.html, EBS encryption) and has what EBS
        # requires of a launch (ebs-encryption-requirements.html); grants only for AWS resources.
        self.local_disk_key.grant(service_role, *EBS_LAUNCH_ACTIONS)
        self.local_disk_key.grant(service_role, *KEY_GRANT_ACTIONS).principal_statement.add_condition(
            "Bool", {"kms:GrantIsForAWSResource": True}
        )
        # EMRFS on the nodes writes SSE-KMS objects with the data lake key (SSE-S3 objects without one).
        if data_lake_key is not None:
            data_lake_key.grant(instance_role, *KMS_DATA_ACTIONS)

        tls_uri = (
            artifacts_bucket.s3_url_for_object(TLS_CERTIFICATES_KEY) if settings.emr.in_transit_encryption else None
        )
        document = security_configuration_json(
            s3_key_arn=data_lake_key.key_arn if data_lake_key is not None else None,
            local_disk_key_arn=self.local_disk_key.key_arn,
            tls_certificates_uri=tls_uri,
            lake_formation=settings.emr.lake_formation_runtime_role,
        )
        # No name: the document is create-only, so a changed one (in-transit encryption or the runtime role
        # switched) replaces the configuration, which CloudFormation cannot do under a fixed name. The
        # old one cannot be deleted while a cluster runs with it: left behind then (docs/deploy.md).
        self.security_configuration = emr.CfnSecurityConfiguration(
            self,
            "SecurityConfiguration",
            security_configuration=Stack.of(self).to_json_string(document),
        )

        # EMR adds the rules it needs to these managed groups itself; we add none, so nothing
        # else reaches the nodes. They carry the tag the v2 service policy requires.
        def group(name: str, description: str, allow_all_outbound: bool = True) -> ec2.SecurityGroup:
            sg = ec2.SecurityGroup(
                self, name, vpc=vpc, description=f"{prefix} {description}", allow_all_outbound=allow_all_outbound
            )
            Tags.of(sg).add(*EMR_MANAGED_TAG)
            return sg

        self.primary_security_group = group("PrimarySecurityGroup", "EMR primary node (EMR-managed rules)")
        self.core_security_group = group("CoreSecurityGroup", "EMR core/task nodes (EMR-managed rules)")
        self.service_access_security_group = group(
            "ServiceAccessSecurityGroup", "EMR service access in private subnets (EMR-managed rules)", False
        )
