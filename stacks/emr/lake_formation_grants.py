"""LakeFormationGrants: what the EMR job role may do in the lake, and nothing more.

Lives in the EMR stack (the role's stack); the data lake stack, deployed first, makes the CDK
deploy role a Lake Formation admin and registers the location these grants refer to.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from aws_cdk import Aws
from aws_cdk import aws_iam as iam
from aws_cdk import aws_lakeformation as lf
from constructs import Construct

from emr_lineage.aws.lake import CATALOG_ZONES, DEFAULT_DATABASE

# Each catalog zone's database and each existing one (data_lake.existing_databases): jobs create Iceberg tables in it
# and commit to any of its tables, their own or another job role's (ALTER: the commit's UpdateTable).
DATABASE_PERMISSIONS = ["DESCRIBE", "CREATE_TABLE"]
TABLE_PERMISSIONS = ["SELECT", "INSERT", "DELETE", "DESCRIBE", "ALTER", "DROP"]


class LakeFormationGrants(Construct):
    """Exposes ``grants``: the CfnPrincipalPermissions it creates, by name (``Database-<zone>``,
    ``Tables-<zone>``; ``ExistingDatabase-<name>``, ``ExistingTables-<name>`` for ``existing_databases``)."""

    def __init__(
        self,
        scope: Construct,
        construct_id: str,
        *,
        role: iam.IRole,
        databases: Mapping[str, str],
        data_lake_bucket_arn: str,
        existing_databases: Sequence[str] = (),
    ) -> None:
        super().__init__(scope, construct_id)
        principal = lf.CfnPrincipalPermissions.DataLakePrincipalProperty(data_lake_principal_identifier=role.role_arn)
        self.grants: dict[str, lf.CfnPrincipalPermissions] = {}

        def grant(name: str, resource: lf.CfnPrincipalPermissions.ResourceProperty, permissions: list[str]) -> None:
            self.grants[name] = lf.CfnPrincipalPermissions(
                self,
                name,
                catalog=Aws.ACCOUNT_ID,
                principal=principal,
                resource=resource,
                permissions=permissions,
                permissions_with_grant_option=[],
            )

        grant(
            "DataLocation",
            lf.CfnPrincipalPermissions.ResourceProperty(
                data_location=lf.CfnPrincipalPermissions.DataLocationResourceProperty(
                    catalog_id=Aws.ACCOUNT_ID, resource_arn=data_lake_bucket_arn
                ),
            ),
            ["DATA_LOCATION_ACCESS"],
        )

        def database(name: str) -> lf.CfnPrincipalPermissions.ResourceProperty:
            return lf.CfnPrincipalPermissions.ResourceProperty(
                database=lf.CfnPrincipalPermissions.DatabaseResourceProperty(catalog_id=Aws.ACCOUNT_ID, name=name),
            )

        # Spark's catalog client looks the default database up at every session start (the data lake stack
        # makes sure it exists: stacks/data_lake/catalog.py).
        grant("Database-default", database(DEFAULT_DATABASE), ["DESCRIBE"])

        def tables(name: str) -> lf.CfnPrincipalPermissions.ResourceProperty:
            return lf.CfnPrincipalPermissions.ResourceProperty(
                table=lf.CfnPrincipalPermissions.TableResourceProperty(
                    catalog_id=Aws.ACCOUNT_ID, database_name=name, table_wildcard={}
                ),
            )

        for zone in CATALOG_ZONES:
            grant(f"Database-{zone}", database(databases[zone]), DATABASE_PERMISSIONS)
            grant(f"Tables-{zone}", tables(databases[zone]), TABLE_PERMISSIONS)
        for name in existing_databases:
            grant(f"ExistingDatabase-{name}", database(name), DATABASE_PERMISSIONS)
            grant(f"ExistingTables-{name}", tables(name), TABLE_PERMISSIONS)
