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
from stacks.shared.glue import glue_arn
from stacks.shared.logical_ids import keep_logical_ids
from stacks.shared.nag import acknowledge, acknowledge_cdk_provider

LAMBDA_LOGS_POLICY = "service-role/AWSLambdaBasicExecutionRole"


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
    Glue consoles make it), so a custom resource creates it unless it exists. Its role is a Lake Formation
    admin (``role``: the settings list it), since a CloudFormation grant of CREATE_DATABASE on the catalog
    fails after granting (https://github.com/aws-cloudformation/cloudformation-coverage-roadmap/issues/2159);
    Lake Formation's rights act through API calls its IAM policy must also allow, and that allows only
    glue:CreateDatabase of ``default`` (and its logs). The job roles'
    DESCRIBE on it is granted beside their other grants. Exposes ``role`` and ``resource``.
    """

    def __init__(self, scope: Construct, construct_id: str, *, settings: EnvironmentSettings) -> None:
        super().__init__(scope, construct_id)
        catalog, database = glue_arn("catalog"), glue_arn(f"database/{DEFAULT_DATABASE}")
        self.role = iam.Role(
            self,
            "Role",
            assumed_by=iam.ServicePrincipal("lambda.amazonaws.com"),
            description=f"{settings.resource_prefix}: creates the Glue catalog's default database if missing",
            managed_policies=[iam.ManagedPolicy.from_aws_managed_policy_name(LAMBDA_LOGS_POLICY)],
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
        f"AwsSolutions-IAM4[Policy::arn:<AWS::Partition>:iam::aws:policy/{LAMBDA_LOGS_POLICY}]",
        "CDK's AwsCustomResource function logs through the basic execution managed policy; it only calls "
        "glue:CreateDatabase for the default database.",
    )
    acknowledge_cdk_provider(provider, name="AwsCustomResource", does="calls the Glue API once per stack creation")
