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
# The clean zone was read-only before its orders became an Iceberg table: its read grants stay as they were, and
# the writes come as grants of their own. Changing a grant's permissions replaces it, and the old grant's delete
# would revoke what both hold (DESCRIBE, SELECT) from a deployed environment.
CLEAN_READS = (["DESCRIBE"], ["SELECT", "DESCRIBE"])
CLEAN_WRITES = (["CREATE_TABLE"], ["INSERT", "DELETE", "ALTER", "DROP"])


class LakeFormationGrants(Construct):
    """Exposes ``grants``: the CfnPrincipalPermissions it creates, by name (``Database-<zone>``,
    ``Tables-<zone>``, the clean zone's ``DatabaseWrites-clean`` and ``TableWrites-clean`` too;
    ``ExistingDatabase-<name>``, ``ExistingTables-<name>`` for ``existing_databases``)."""

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
            if zone == "clean":
                (database_reads, table_reads), (database_writes, table_writes) = CLEAN_READS, CLEAN_WRITES
                grant(f"Database-{zone}", database(databases[zone]), database_reads)
                grant(f"Tables-{zone}", tables(databases[zone]), table_reads)
                grant(f"DatabaseWrites-{zone}", database(databases[zone]), database_writes)
                grant(f"TableWrites-{zone}", tables(databases[zone]), table_writes)
                continue
            grant(f"Database-{zone}", database(databases[zone]), DATABASE_PERMISSIONS)
            grant(f"Tables-{zone}", tables(databases[zone]), TABLE_PERMISSIONS)
        for name in existing_databases:
            grant(f"ExistingDatabase-{name}", database(name), DATABASE_PERMISSIONS)
            grant(f"ExistingTables-{name}", tables(name), TABLE_PERMISSIONS)
