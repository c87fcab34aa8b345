"""EmrRoles: the EMR service role, the nodes' instance role, and an optional runtime role.

The *job role* is whichever role Spark code runs as: the optional Lake Formation runtime
role when enabled (steps then pass it as ExecutionRoleArn), else the instance role. Data lake
access (S3 paths, KMS, Glue, Lake Formation) goes to the job role only.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from aws_cdk import Aws
from aws_cdk import aws_iam as iam
from aws_cdk import aws_kms as kms
from aws_cdk import aws_s3 as s3
from aws_cdk import aws_secretsmanager as secretsmanager
from constructs import Construct

from emr_lineage.aws.archive import ARCHIVE_ROOT
from emr_lineage.aws.artifacts import (
    BOOTSTRAP_PREFIX,
    JOBS_PREFIX,
    LISTENER_PREFIX,
    LOGS_PREFIX,
    STAGED_JOBS_PREFIX,
    TLS_PREFIX,
)
from emr_lineage.aws.lake import DEFAULT_DATABASE, READ_ONLY_ZONES, ZONES, zone_prefix
from emr_lineage.settings.model import EnvironmentSettings
from emr_lineage.settings.trusted_ca import S3CaBundle, TrustedCa
from stacks.shared.glue import glue_arn
from stacks.shared.kms import SECRET_READ_ACTIONS, via_service
from stacks.shared.logical_ids import keep_logical_ids
from stacks.shared.nag import acknowledge, wildcard_resource_finding

# What EMRFS and Spark need of a KMS key to read and write SSE-KMS objects.
KMS_DATA_ACTIONS = ("kms:Decrypt", "kms:Encrypt", "kms:GenerateDataKey", "kms:DescribeKey")
EMR_SERVICE_POLICY = "service-role/AmazonEMRServicePolicy_v2"
# Glue catalog calls Spark's Hive client makes for reads and CTAS/overwrite writes.
GLUE_READ_ACTIONS = [
    "glue:GetDatabase",
    "glue:GetDatabases",
    "glue:GetTable",
    "glue:GetTables",
    "glue:GetPartition",
    "glue:GetPartitions",
    "glue:BatchGetPartition",
]
# What the nodes read from the artifacts bucket (they write under LOGS_PREFIX).
READ_PREFIXES = (BOOTSTRAP_PREFIX, JOBS_PREFIX, STAGED_JOBS_PREFIX, LISTENER_PREFIX, TLS_PREFIX)
# Iceberg's GlueCatalog commits a table with CreateTable, or GetTable then UpdateTable (its new metadata file's place).
GLUE_WRITE_ACTIONS = [
    "glue:CreateTable",
    "glue:UpdateTable",
    "glue:DeleteTable",
    "glue:BatchCreatePartition",
    "glue:CreatePartition",
    "glue:UpdatePartition",
    "glue:BatchDeletePartition",
    "glue:DeletePartition",
]


def grant_artifacts(role: iam.Role, bucket: s3.IBucket, *, read_prefixes: tuple[str, ...], logs_prefix: str) -> None:
    """``role`` reads the artifacts bucket's ``read_prefixes``, writes under ``logs_prefix`` and lists the bucket."""
    role.add_to_policy(
        iam.PolicyStatement(
            sid="ReadArtifacts",
            actions=["s3:GetObject"],
            resources=[bucket.arn_for_objects(f"{p}*") for p in read_prefixes],
        )
    )
    role.add_to_policy(
        iam.PolicyStatement(
            sid="WriteLogs", actions=["s3:PutObject"], resources=[bucket.arn_for_objects(f"{logs_prefix}*")]
        )
    )
    role.add_to_policy(
        iam.PolicyStatement(sid="ListArtifacts", actions=["s3:ListBucket"], resources=[bucket.bucket_arn])
    )
    for p in (*read_prefixes, logs_prefix):
        acknowledge(
            role,
            wildcard_resource_finding(role, bucket.arn_for_objects(f"{p}*")),
            f"Objects under {p} of the artifacts bucket are named at run time (scripts, jobs, "
            "jar versions, log files); access is scoped to that prefix.",
        )


def grant_data_lake(role: iam.Role, lake: DataLakeAccess) -> None:
    """What a Spark job's role needs of the lake: its zones (read, and write where not read-only), its key (none:
    SSE-S3), the Glue catalog of its databases and Lake Formation's credential vending. Identity policy only: an
    existing bucket's policy is its owner's."""
    bucket, key, databases = lake.bucket, lake.key, lake.database_names
    writable = [z for z in ZONES if z not in READ_ONLY_ZONES]
    role.add_to_policy(
        iam.PolicyStatement(
            sid="ListDataLake",
            actions=["s3:ListBucket"],
            resources=[bucket.bucket_arn],
        )
    )
    role.add_to_policy(
        iam.PolicyStatement(
            sid="ReadZones",
            actions=["s3:GetObject"],
            resources=[bucket.arn_for_objects(f"{zone_prefix(z)}*") for z in ZONES],
        )
    )
    role.add_to_policy(
        iam.PolicyStatement(
            sid="WriteZones",
            # Iceberg's S3FileIO aborts the multipart upload of a file it fails to write.
            actions=["s3:PutObject", "s3:DeleteObject", "s3:AbortMultipartUpload"],
            resources=[bucket.arn_for_objects(f"{zone_prefix(z)}*") for z in writable],
        )
    )
    for zone in ZONES:
        acknowledge(
            role,
            wildcard_resource_finding(role, bucket.arn_for_objects(f"{zone_prefix(zone)}*")),
            f"Spark reads and writes files of any name under the {zone} zone prefix; access is scoped to the zone.",
        )
    if key is not None:
        key.grant(role, *KMS_DATA_ACTIONS)

    catalog = glue_arn("catalog")
    # Spark's Hive client always looks up the `default` database at start.
    database_arns = [glue_arn(f"database/{name}") for name in [*databases, DEFAULT_DATABASE]]
    table_arns = [glue_arn(f"table/{name}/*") for name in databases]
    role.add_to_policy(
        iam.PolicyStatement(
            sid="GlueCatalogRead",
            actions=GLUE_READ_ACTIONS,
            resources=[catalog, *database_arns, *table_arns],
        )
    )
    role.add_to_policy(
        iam.PolicyStatement(
            sid="GlueCatalogWrite",
            actions=GLUE_WRITE_ACTIONS,
            resources=[catalog, *database_arns, *table_arns],
        )
    )
    for name in databases:
        acknowledge(
            role,
            f"AwsSolutions-IAM5[Resource::arn:<AWS::Partition>:glue:<AWS::Region>:<AWS::AccountId>:table/{name}/*]",
            f"Jobs create and read tables of any name in the {name} database; access is scoped to it.",
        )
    # Lake Formation's credential vending has no resource-level permissions.
    role.add_to_policy(
        iam.PolicyStatement(sid="LakeFormationDataAccess", actions=["lakeformation:GetDataAccess"], resources=["*"])
    )
    acknowledge(
        role,
        "AwsSolutions-IAM5[Resource::*]",
        "lakeformation:GetDataAccess supports no resource-level permissions; Lake Formation grants "
        "decide which data the role gets.",
    )


class EmrInstanceRole(Construct):
    """The EMR nodes' role and instance profile: read the artifacts, write EMR's logs; exposes ``role`` and
    ``instance_profile``."""

    def __init__(self, scope: Construct, construct_id: str, *, description: str, artifacts_bucket: s3.IBucket) -> None:
        super().__init__(scope, construct_id)
        keep_logical_ids(self)  # first deployed directly in EmrRoles
        self.role = iam.Role(
            self, "InstanceRole", assumed_by=iam.ServicePrincipal("ec2.amazonaws.com"), description=description
        )
        self.instance_profile = iam.CfnInstanceProfile(self, "InstanceProfile", roles=[self.role.role_name])
        # Nodes read what the bootstrap and steps need, and write EMR's logs; nothing else.
        grant_artifacts(self.role, artifacts_bucket, read_prefixes=READ_PREFIXES, logs_prefix=LOGS_PREFIX)


class EmrServiceRole(Construct):
    """The EMR service role (AWS's v2 managed policy) that may pass ``instance_role`` to EC2; exposes ``role``."""

    def __init__(self, scope: Construct, construct_id: str, *, prefix: str, instance_role: iam.IRole) -> None:
        super().__init__(scope, construct_id)
        keep_logical_ids(self)  # first deployed directly in EmrRoles
        self.role = iam.Role(
            self,
            "ServiceRole",
            assumed_by=iam.ServicePrincipal("elasticmapreduce.amazonaws.com"),
            managed_policies=[iam.ManagedPolicy.from_aws_managed_policy_name(EMR_SERVICE_POLICY)],
            description=f"{prefix}: EMR service role (v2 managed policy, tag-scoped)",
        )
        # The v2 policy only passes the default role names (its document:
        # https://docs.aws.amazon.com/emr/latest/ManagementGuide/emr-iam-role.html); ours needs its own PassRole.
        self.role.add_to_policy(
            iam.PolicyStatement(
                sid="PassInstanceRole",
                actions=["iam:PassRole"],
                resources=[instance_role.role_arn],
                conditions={"StringEquals": {"iam:PassedToService": "ec2.amazonaws.com"}},
            )
        )
        acknowledge(
            self.role,
            f"AwsSolutions-IAM4[Policy::arn:<AWS::Partition>:iam::aws:policy/{EMR_SERVICE_POLICY}]",
            "AmazonEMRServicePolicy_v2 is the policy EMR documents for its service role; it only acts "
            "on resources tagged for-use-with-amazon-emr-managed-policies=true.",
        )


class EmrRuntimeRole(Construct):
    """The Lake Formation runtime role Spark steps run as, assumed (with session tags) by ``instance_role``;
    exposes ``role``."""

    def __init__(self, scope: Construct, construct_id: str, *, prefix: str, instance_role: iam.IRole) -> None:
        super().__init__(scope, construct_id)
        keep_logical_ids(self)  # first deployed directly in EmrRoles
        self.role = iam.Role(
            self,
            "RuntimeRole",
            assumed_by=iam.ArnPrincipal(instance_role.role_arn),
            description=f"{prefix}: EMR runtime role for Spark steps (Lake Formation)",
        )
        # EMR assumes runtime roles with session tags (LakeFormationConfiguration).
        self.role.assume_role_policy.add_statements(
            iam.PolicyStatement(actions=["sts:TagSession"], principals=[iam.ArnPrincipal(instance_role.role_arn)])
        )


class EmrRoles(Construct):
    """Exposes ``service_role``, ``instance_role``, ``instance_profile``, ``runtime_role``
    (or None) and ``job_role``."""

    def __init__(
        self,
        scope: Construct,
        construct_id: str,
        *,
        settings: EnvironmentSettings,
        artifacts_bucket: s3.IBucket,
        data_lake: DataLakeAccess,
        gateway: GatewayAccess | None = None,
    ) -> None:
        super().__init__(scope, construct_id)
        prefix = settings.resource_prefix
        instance = EmrInstanceRole(
            self,
            "Instance",
            description=f"{prefix}: EMR node instance profile (artifacts, logs"
            + (")" if settings.emr.lake_formation_runtime_role else ", data lake)"),
            artifacts_bucket=artifacts_bucket,
        )
        self.instance_role, self.instance_profile = instance.role, instance.instance_profile
        if gateway is not None:
            # The bootstrap reads the lineage gateway's API key with the instance role (docs/gateway.md).
            read_gateway_api_key(self.instance_role, gateway)
        if settings.openlineage.trusted_ca is not None:
            # The bootstrap imports the CA of the load balancer's certificate into the nodes' Java truststores.
            read_trusted_ca(self.instance_role, settings.openlineage.trusted_ca)
        self.service_role = EmrServiceRole(self, "Service", prefix=prefix, instance_role=self.instance_role).role

        self.runtime_role: iam.Role | None = None
        if settings.emr.lake_formation_runtime_role:
            self.runtime_role = EmrRuntimeRole(self, "Runtime", prefix=prefix, instance_role=self.instance_role).role
            self.instance_role.add_to_policy(
                iam.PolicyStatement(
                    sid="AssumeRuntimeRole",
                    actions=["sts:AssumeRole", "sts:TagSession"],
                    resources=[self.runtime_role.role_arn],
                )
            )
        self.job_role: iam.Role = self.runtime_role or self.instance_role
        grant_data_lake(self.job_role, data_lake)
        if gateway is not None and gateway.archive is not None:
            read_archive(self.job_role, gateway.archive)


def read_gateway_api_key(role: iam.Role, gateway: GatewayAccess) -> None:
    """``role`` reads the lineage gateway's API key: the secret's value, decrypted with its key through
    Secrets Manager only (in the secret's region: a spoke's may be the hub's, in another account).

    Written as identity policy, not ``secret.grant_read``: that would also add the role to the
    gateway key's policy, a gateway -> EMR reference on top of EMR -> gateway (a cycle). The
    gateway key's policy lets the account's IAM policies grant its use (CDK's default); another
    account's key policy lets this account decrypt through Secrets Manager (the hub's, per spoke).
    """
    role.add_to_policy(
        iam.PolicyStatement(
            sid="ReadGatewayApiKey",
            actions=list(SECRET_READ_ACTIONS),
            resources=[gateway.api_key.secret_arn],
        )
    )
    role.add_to_policy(
        iam.PolicyStatement(
            sid="DecryptGatewayApiKey",
            actions=["kms:Decrypt"],
            resources=[gateway.api_key_kms_key_arn],
            conditions={"StringEquals": via_service("secretsmanager", gateway.api_key_region)},
        )
    )
    if gateway.api_key_kms_key_arn.endswith("/*"):
        acknowledge(
            role,
            wildcard_resource_finding(role, gateway.api_key_kms_key_arn),
            "The hub's secret is under a key of the hub's account, whose id a spoke does not know; kms:ViaService "
            "limits its use to Secrets Manager reads in that region, and the hub's key policy says who may.",
        )


def read_trusted_ca(role: iam.Role, trusted_ca: TrustedCa) -> None:
    """``role`` reads ``openlineage.trusted_ca``, that one resource alone: the bundle's object, or the
    Private CA's certificate (GetCertificateAuthorityCertificate)."""
    if isinstance(trusted_ca, S3CaBundle):
        action, resource = "s3:GetObject", f"arn:{Aws.PARTITION}:s3:::{trusted_ca.bucket}/{trusted_ca.key}"
    else:
        action, resource = "acm-pca:GetCertificateAuthorityCertificate", trusted_ca.arn
    role.add_to_policy(iam.PolicyStatement(sid="ReadTrustedCa", actions=[action], resources=[resource]))


@dataclass(frozen=True)
class DataLakeAccess:
    """What EMR jobs use of the data lake: its bucket, its key (None: an existing bucket with SSE-S3), the zone
    databases (catalog zone -> name) and the existing databases they are granted too."""

    bucket: s3.IBucket
    key: kms.IKey | None
    databases: Mapping[str, str]
    existing_databases: Sequence[str] = ()

    @property
    def database_names(self) -> list[str]:
        return [*self.databases.values(), *self.existing_databases]


@dataclass(frozen=True)
class GatewayArchive:
    """The lineage gateway's archive, which the graph job reads: its bucket and key."""

    bucket: s3.IBucket
    key: kms.IKey


@dataclass(frozen=True)
class GatewayAccess:
    """What EMR jobs use of the lineage gateway: its API key (the bootstrap, EMR Serverless job runs) and its archive
    (the graph job). A spoke's key is its hub's (or one of its own), and a spoke has no archive."""

    api_key: secretsmanager.ISecret
    # The key that decrypts it: its ARN, or key/* of the secret's account and region when that is another account.
    api_key_kms_key_arn: str
    # Where the secret is: the decryption goes through that region's Secrets Manager.
    api_key_region: str = Aws.REGION
    archive: GatewayArchive | None = None


def read_archive(role: iam.IRole, archive: GatewayArchive) -> None:
    """``graph --on-emr --archive`` reads the raw events: list the bucket, get ``raw/``, decrypt with its key.

    Identity policy only, as for the API key: a grant would put the role in the gateway key's and
    bucket's policies, a gateway -> EMR reference on top of EMR -> gateway (a cycle).
    """
    bucket = archive.bucket
    role.add_to_principal_policy(
        iam.PolicyStatement(sid="ListGatewayArchive", actions=["s3:ListBucket"], resources=[bucket.bucket_arn])
    )
    objects = bucket.arn_for_objects(f"{ARCHIVE_ROOT}*")
    role.add_to_principal_policy(
        iam.PolicyStatement(sid="ReadGatewayArchive", actions=["s3:GetObject"], resources=[objects])
    )
    acknowledge(
        role,
        wildcard_resource_finding(role, objects),
        f"The archive's objects under {ARCHIVE_ROOT} are named by arrival hour, run and event (read only).",
    )
    role.add_to_principal_policy(
        iam.PolicyStatement(
            sid="DecryptGatewayArchive",
            actions=["kms:Decrypt"],
            resources=[archive.key.key_arn],
            conditions={"StringEquals": via_service("s3")},
        )
    )
