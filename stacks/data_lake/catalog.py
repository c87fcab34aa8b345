"""The lake's Glue catalog: one database per catalog zone, at the zone's prefix (GlueDatabases), and the
catalog's ``default`` database that Spark's catalog client needs (DefaultDatabase)."""

from __future__ import annotations

from aws_cdk import Aws, Stack
from aws_cdk import aws_glue as glue
from aws_cdk import aws_iam as iam
from aws_cdk import aws_s3 as s3
from aws_cdk import custom_resources as cr
from constructs import Construct

from emr_lineage.aws.lake import CATALOG_ZONES, DEFAULT_DATABASE, glue_database_name, zone_prefix
from emr_lineage.settings.model import EnvironmentSettings
from stacks.shared.logical_ids import keep_logical_ids
from stacks.shared.nag import acknowledge, acknowledge_checkov


class GlueDatabases(Construct):
    """The lake's Glue databases; exposes ``names`` (catalog zone -> database name)."""

    def __init__(
        self, scope: Construct, construct_id: str, *, settings: EnvironmentSettings, bucket: s3.IBucket
    ) -> None:
        super().__init__(scope, construct_id)
        keep_logical_ids(self)  # first deployed directly in the stack
        self.names: dict[str, str] = {}
        self.databases: list[glue.CfnDatabase] = []
        for zone in CATALOG_ZONES:
            name = glue_database_name(settings, zone)
            database = glue.CfnDatabase(
                self,
                f"Database-{zone}",
                catalog_id=Aws.ACCOUNT_ID,
                database_input=glue.CfnDatabase.DatabaseInputProperty(
                    name=name,
                    description=f"emr-lineage {settings.name}: {zone} zone",
                    location_uri=bucket.s3_url_for_object(zone_prefix(zone)),
                    # No IAM_ALLOWED_PRINCIPALS default on new tables: Lake Formation decides.
                    create_table_default_permissions=[],
                ),
            )
            self.databases.append(database)
            self.names[zone] = name


class DefaultDatabase(Construct):
    """The catalog's ``default`` database, created when the account has none, never changed or deleted.

    Spark's Glue catalog client looks ``default`` up at every session start and creates it when missing;
    under Lake Formation a job role may not, and the job fails with "Unable to verify existence of default
    database" (AWSCatalogMetastoreClient in awslabs/aws-glue-data-catalog-client-for-apache-hive-metastore;
    no setting skips the check). A CloudFormation database would fail where one exists (the Athena and
    Glue consoles make it), so a custom resource creates it unless it exists. Its role may create only
    that database (IAM) and is a Lake Formation admin (``role``: the settings list it), since a
    CloudFormation grant of CREATE_DATABASE on the catalog fails after granting
    (https://github.com/aws-cloudformation/cloudformation-coverage-roadmap/issues/2159). The job roles'
    DESCRIBE on it is granted beside their other grants. Exposes ``role`` and ``resource``.
    """

    def __init__(self, scope: Construct, construct_id: str, *, settings: EnvironmentSettings) -> None:
        super().__init__(scope, construct_id)
        catalog = f"arn:{Aws.PARTITION}:glue:{Aws.REGION}:{Aws.ACCOUNT_ID}:catalog"
        database = f"arn:{Aws.PARTITION}:glue:{Aws.REGION}:{Aws.ACCOUNT_ID}:database/{DEFAULT_DATABASE}"
        self.role = iam.Role(
            self,
            "Role",
            assumed_by=iam.ServicePrincipal("lambda.amazonaws.com"),
            description=f"{settings.resource_prefix}: creates the Glue catalog's default database if missing",
        )
        create = cr.AwsSdkCall(
            service="Glue",
            action="CreateDatabase",
            parameters={
                "DatabaseInput": {
                    "Name": DEFAULT_DATABASE,
                    "Description": "Default Glue catalog database (Spark's catalog client requires it)",
                    # As the lake's own: Lake Formation decides who reads its tables.
                    "CreateTableDefaultPermissions": [],
                }
            },
            physical_resource_id=cr.PhysicalResourceId.of(DEFAULT_DATABASE),
            ignore_error_codes_matching="AlreadyExistsException",
        )
        self.resource = cr.AwsCustomResource(
            self,
            "Create",
            on_create=create,
            policy=cr.AwsCustomResourcePolicy.from_statements(
                [iam.PolicyStatement(actions=["glue:CreateDatabase"], resources=[catalog, database])]
            ),
            role=self.role,
            install_latest_aws_sdk=False,
        )
        _acknowledge_provider(Stack.of(self), self.role)


def _acknowledge_provider(stack: Stack, role: iam.Role) -> None:
    """The custom resource's Lambda is a stack-level singleton CDK owns; its findings are CDK's."""
    provider = next(c for c in stack.node.children if c.node.id.startswith("AWS679f53fac002430cb0da5b7982bd2287"))
    acknowledge(
        role,
        "AwsSolutions-IAM4[Policy::arn:<AWS::Partition>:iam::aws:policy/service-role/AWSLambdaBasicExecutionRole]",
        "CDK's AwsCustomResource function logs through the basic execution managed policy; it only calls "
        "glue:CreateDatabase for the default database.",
    )
    acknowledge(
        provider,
        "AwsSolutions-L1",
        "CDK pins the runtime of its AwsCustomResource provider; it moves with aws-cdk-lib upgrades.",
    )
    # CDK makes the function DependsOn its role, which its GetAtt already implies (cfn-lint W3005).
    provider.node.default_child.add_metadata("cfn-lint", {"config": {"ignore_checks": ["W3005"]}})
    checkov_reasons = {
        "CKV_AWS_116": "CloudFormation calls it during deploys only: a failed call fails the deployment, which "
        "reports it, and a dead-letter queue would hold a request nobody replays.",
        "CKV_AWS_117": "it calls the Glue API once per stack creation and reaches nothing inside the VPC.",
        "CKV_AWS_115": "it runs once when the stack is created; a reserved concurrency would only withhold "
        "capacity from the account's other functions.",
        "CKV_AWS_173": "it has no environment variables of ours; Lambda encrypts any at rest with its AWS managed key.",
    }
    for check, reason in checkov_reasons.items():
        acknowledge_checkov(provider, check, f"CDK's own AwsCustomResource provider: {reason}")
