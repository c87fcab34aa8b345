"""GlueDatabases: one Glue database per catalog zone of the lake, located at the zone's prefix."""

from __future__ import annotations

from aws_cdk import Aws
from aws_cdk import aws_glue as glue
from aws_cdk import aws_s3 as s3
from constructs import Construct

from emr_lineage.aws.lake import CATALOG_ZONES, glue_database_name, zone_prefix
from emr_lineage.settings.model import EnvironmentSettings
from stacks.shared.logical_ids import keep_logical_ids


class GlueDatabases(Construct):
    """The lake's Glue databases; exposes ``names`` (catalog zone -> database name)."""

    def __init__(
        self, scope: Construct, construct_id: str, *, settings: EnvironmentSettings, bucket: s3.IBucket
    ) -> None:
        super().__init__(scope, construct_id)
        keep_logical_ids(self)  # first deployed directly in the stack
        self.names: dict[str, str] = {}
        for zone in CATALOG_ZONES:
            name = glue_database_name(settings, zone)
            glue.CfnDatabase(
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
            self.names[zone] = name
