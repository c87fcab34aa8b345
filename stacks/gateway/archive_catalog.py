"""The archive as Athena tables: a Glue database, two tables with partition projection, a view of
the source account, the Athena workgroup that queries them, its named queries, and Lake Formation
access for the archive's readers.

* Tables (names and queries: :mod:`emr_lineage.aws.archive_queries`) over ``s3://<archive>/raw/``,
  partitioned by projection on ``dt`` (``date=YYYY-MM-DD``, from ``PROJECTION_START`` to NOW) and ``hour``
  (``hour=00``..``23``): no crawler and no partition to add. ``events`` reads each line as JSON (the
  OpenX JsonSerDe, keys case-insensitive, a line that is not JSON an all-NULL row instead of a failed
  query); ``events_raw`` keeps each line whole (LazySimpleSerDe split on \\x01, which JSON text cannot
  hold unescaped: one column).
* ``events_with_account`` (:data:`~emr_lineage.aws.archive_queries.ACCOUNTS_VIEW`): ``events`` and its
  ``source_account``, read from each object's key (``"$path"``). A view as Athena stores one in the Glue
  catalog (a ``VIRTUAL_VIEW`` whose ``ViewOriginalText`` is ``/* Presto View: <base64 JSON> */``: its
  SQL, catalog, schema and columns as Trino types), running as the invoker (Lake Formation checks the
  reader's own grants on ``events``).
* The workgroup enforces its configuration: results under ``athena-results/`` of the archive bucket,
  SSE-KMS with the gateway key; queries cancelled past ``gateway.athena_scan_limit_mb``; engine v3.
* Lake Formation: ``raw/`` registered through a role of its own (read only, and the key), and each
  role of ``gateway.archive_readers`` granted DESCRIBE on the database, SELECT and DESCRIBE on both
  tables, DATA_LOCATION_ACCESS on the location. The database gives IAM principals nothing by default.
"""

from __future__ import annotations

import base64
import hashlib
import json
import re

from aws_cdk import Aws, CfnResource
from aws_cdk import aws_athena as athena
from aws_cdk import aws_glue as glue
from aws_cdk import aws_iam as iam
from aws_cdk import aws_kms as kms
from aws_cdk import aws_lakeformation as lakeformation
from aws_cdk import aws_s3 as s3
from constructs import Construct

from emr_lineage.aws.archive import ARCHIVE_ROOT
from emr_lineage.aws.archive_queries import (
    ACCOUNTS_VIEW,
    ACCOUNTS_VIEW_SQL,
    ATHENA_CATALOG,
    EVENTS_TABLE,
    PROJECTION_START,
    QUERIES,
    RAW_TABLE,
)
from emr_lineage.settings.model import EnvironmentSettings
from stacks.gateway.storage import ATHENA_RESULTS_PREFIX
from stacks.shared.nag import acknowledge, wildcard_resource_finding

ENGINE_VERSION = "Athena engine version 3"
BYTES_PER_MB = 1_000_000  # Athena's cutoff minimum is 10,000,000 bytes: 10 MB
# A dataset's fields. runs_for_dataset (emr_lineage/aws/archive_queries.py) unnests inputs and outputs
# AS d(namespace, name): Trino, Athena engine 3's engine, wants one alias per field here.
_NAME_AND_NAMESPACE = "struct<namespace:string,name:string>"
EVENT_COLUMNS = (
    ("eventtype", "string"),
    ("eventtime", "string"),
    ("producer", "string"),
    ("schemaurl", "string"),
    ("run", "struct<runid:string>"),
    ("job", _NAME_AND_NAMESPACE),
    ("inputs", f"array<{_NAME_AND_NAMESPACE}>"),
    ("outputs", f"array<{_NAME_AND_NAMESPACE}>"),
)
PARTITION_KEYS = (("dt", "string"), ("hour", "int"))
TEXT_INPUT = "org.apache.hadoop.mapred.TextInputFormat"
TEXT_OUTPUT = "org.apache.hadoop.hive.ql.io.HiveIgnoreKeyTextOutputFormat"
JSON_SERDE = "org.openx.data.jsonserde.JsonSerDe"
TEXT_SERDE = "org.apache.hadoop.hive.serde2.lazy.LazySimpleSerDe"
_Grant = lakeformation.CfnPrincipalPermissions
RAW_DELIMITER = "\x01"  # a control character: never unescaped in JSON text (RFC 8259 section 7)
VIEW_COLUMNS = (*EVENT_COLUMNS, *PARTITION_KEYS, ("source_account", "string"))
_TRINO_TYPES = {"string": "varchar", "int": "integer"}


def archive_database_name(settings: EnvironmentSettings) -> str:
    return f"{settings.glue_database_prefix}_lineage_archive"


def archive_workgroup_name(settings: EnvironmentSettings) -> str:
    return f"{settings.resource_prefix}-lineage-archive"


def projection(bucket_name: str) -> dict[str, str]:
    """The table parameters of partition projection over the archive's ``date=``/``hour=`` keys."""
    return {
        "projection.enabled": "true",
        "projection.dt.type": "date",
        "projection.dt.format": "yyyy-MM-dd",
        "projection.dt.range": f"{PROJECTION_START},NOW",
        "projection.dt.interval": "1",
        "projection.dt.interval.unit": "DAYS",
        "projection.hour.type": "integer",
        "projection.hour.range": "0,23",
        "projection.hour.digits": "2",
        "storage.location.template": f"s3://{bucket_name}/{ARCHIVE_ROOT}date=${{dt}}/hour=${{hour}}/",
    }


def _columns(pairs: tuple[tuple[str, str], ...]) -> list[glue.CfnTable.ColumnProperty]:
    return [glue.CfnTable.ColumnProperty(name=name, type=kind) for name, kind in pairs]


def trino_type(hive: str) -> str:
    """A Glue (Hive) column type as a view's definition writes it, Trino's: ``struct<a:string>`` is
    ``row(a varchar)``, ``array<int>`` is ``array(integer)``."""
    spelled = re.sub(r"(\w+):", r"\1 ", hive).replace("struct<", "row(").replace("array<", "array(").replace(">", ")")
    return re.sub(r"\b(string|int)\b", lambda m: _TRINO_TYPES[m.group(1)], spelled)


def presto_view_text(sql: str, database: str, columns: tuple[tuple[str, str], ...]) -> str:
    """``ViewOriginalText`` of a view as Athena (engine 3, Trino) stores it in the Glue catalog. Trino's
    view definition needs ``runAsInvoker`` and ``path``; an invoker's view needs no owner."""
    definition = {
        "originalSql": sql,
        "catalog": ATHENA_CATALOG,
        "schema": database,
        "columns": [{"name": name, "type": trino_type(kind)} for name, kind in columns],
        "runAsInvoker": True,
        "path": [],
    }
    return f"/* Presto View: {base64.b64encode(json.dumps(definition).encode()).decode()} */"


class ArchiveCatalog(Construct):
    """Exposes ``database_name``, ``database``, ``tables`` and ``views`` (name -> CfnTable), ``workgroup``,
    ``named_queries`` (name -> CfnNamedQuery), ``results_location``, ``location_role`` and ``grants``."""

    def __init__(
        self, scope: Construct, construct_id: str, *, settings: EnvironmentSettings, bucket: s3.IBucket, key: kms.IKey
    ) -> None:
        super().__init__(scope, construct_id)
        self.database_name = archive_database_name(settings)
        self.database = glue.CfnDatabase(
            self,
            "Database",
            catalog_id=Aws.ACCOUNT_ID,
            database_input=glue.CfnDatabase.DatabaseInputProperty(
                name=self.database_name,
                description=f"emr-lineage {settings.name}: the lineage gateway's raw-event archive",
                location_uri=f"s3://{bucket.bucket_name}/{ARCHIVE_ROOT}",
                # No IAM_ALLOWED_PRINCIPALS default on new tables: Lake Formation decides.
                create_table_default_permissions=[],
            ),
        )
        self.tables = {
            EVENTS_TABLE: self._table(
                EVENTS_TABLE,
                bucket,
                "OpenLineage events, the common fields typed (one JSON event per line)",
                "json",
                EVENT_COLUMNS,
                glue.CfnTable.SerdeInfoProperty(
                    serialization_library=JSON_SERDE,
                    parameters={"ignore.malformed.json": "true", "case.insensitive": "true"},
                ),
            ),
            RAW_TABLE: self._table(
                RAW_TABLE,
                bucket,
                "OpenLineage events, each line whole as the string raw",
                "text",
                (("raw", "string"),),
                glue.CfnTable.SerdeInfoProperty(
                    serialization_library=TEXT_SERDE,
                    parameters={"field.delim": RAW_DELIMITER, "serialization.format": RAW_DELIMITER},
                ),
            ),
        }
        self.views = {ACCOUNTS_VIEW: self._view(ACCOUNTS_VIEW, ACCOUNTS_VIEW_SQL, VIEW_COLUMNS)}
        self.results_location = f"s3://{bucket.bucket_name}/{ATHENA_RESULTS_PREFIX}"
        self.workgroup = self._workgroup(settings, key)
        self.named_queries = self._named_queries()
        self.location_arn = f"{bucket.bucket_arn}/{ARCHIVE_ROOT.rstrip('/')}"
        self.location_role, location = self._register_location(settings, bucket, key)
        self.grants = [
            grant for reader in settings.gateway.archive_readers for grant in self._grant_reader(reader, location)
        ]

    def _table(
        self,
        name: str,
        bucket: s3.IBucket,
        description: str,
        classification: str,
        columns: tuple[tuple[str, str], ...],
        serde: glue.CfnTable.SerdeInfoProperty,
    ) -> glue.CfnTable:
        table = glue.CfnTable(
            self,
            f"Table-{name}",
            catalog_id=Aws.ACCOUNT_ID,
            database_name=self.database_name,
            table_input=glue.CfnTable.TableInputProperty(
                name=name,
                description=description,
                table_type="EXTERNAL_TABLE",
                parameters={"EXTERNAL": "TRUE", "classification": classification, **projection(bucket.bucket_name)},
                partition_keys=_columns(PARTITION_KEYS),
                storage_descriptor=glue.CfnTable.StorageDescriptorProperty(
                    columns=_columns(columns),
                    location=f"s3://{bucket.bucket_name}/{ARCHIVE_ROOT}",
                    input_format=TEXT_INPUT,
                    output_format=TEXT_OUTPUT,
                    serde_info=serde,
                ),
            ),
        )
        table.node.add_dependency(self.database)
        return table

    def _view(self, name: str, sql: str, columns: tuple[tuple[str, str], ...]) -> glue.CfnTable:
        view = glue.CfnTable(
            self,
            f"View-{name}",
            catalog_id=Aws.ACCOUNT_ID,
            database_name=self.database_name,
            table_input=glue.CfnTable.TableInputProperty(
                name=name,
                table_type="VIRTUAL_VIEW",
                # No description: Trino reads it as the "comment" parameter, which marks the view as Athena's.
                parameters={"presto_view": "true", "comment": "Presto View"},
                view_original_text=presto_view_text(sql, self.database_name, columns),
                view_expanded_text="/* Presto View */",
                storage_descriptor=glue.CfnTable.StorageDescriptorProperty(
                    columns=_columns(columns), serde_info=glue.CfnTable.SerdeInfoProperty()
                ),
            ),
        )
        view.node.add_dependency(*self.tables.values())
        return view

    def _workgroup(self, settings: EnvironmentSettings, key: kms.IKey) -> athena.CfnWorkGroup:
        config = athena.CfnWorkGroup.WorkGroupConfigurationProperty(
            # Clients cannot send results elsewhere, unencrypted, or lift the scan limit.
            enforce_work_group_configuration=True,
            publish_cloud_watch_metrics_enabled=True,
            bytes_scanned_cutoff_per_query=settings.gateway.athena_scan_limit_mb * BYTES_PER_MB,
            engine_version=athena.CfnWorkGroup.EngineVersionProperty(selected_engine_version=ENGINE_VERSION),
            result_configuration=athena.CfnWorkGroup.ResultConfigurationProperty(
                output_location=self.results_location,
                encryption_configuration=athena.CfnWorkGroup.EncryptionConfigurationProperty(
                    encryption_option="SSE_KMS", kms_key=key.key_arn
                ),
                expected_bucket_owner=Aws.ACCOUNT_ID,
            ),
        )
        return athena.CfnWorkGroup(
            self,
            "Workgroup",
            name=archive_workgroup_name(settings),
            description=f"emr-lineage {settings.name}: queries of the lineage gateway's archive",
            state="ENABLED",
            # Its named queries and query history go with it on stack delete.
            recursive_delete_option=True,
            work_group_configuration=config,
        )

    def _named_queries(self) -> dict[str, athena.CfnNamedQuery]:
        queries = {}
        for name, query in QUERIES.items():
            named = athena.CfnNamedQuery(
                self,
                f"Query-{name}",
                name=name,
                description=query.description,
                database=self.database_name,
                query_string=query.sql,
                work_group=self.workgroup.ref,  # a Ref: created after the workgroup
            )
            named.node.add_dependency(self.database)
            queries[name] = named
        return queries

    def _register_location(
        self, settings: EnvironmentSettings, bucket: s3.IBucket, key: kms.IKey
    ) -> tuple[iam.Role, lakeformation.CfnResource]:
        """``raw/`` registered with Lake Formation through a read-only role of its own."""
        role = iam.Role(
            self,
            "LocationRole",
            assumed_by=iam.ServicePrincipal("lakeformation.amazonaws.com"),
            description=f"{settings.resource_prefix}: Lake Formation read access to the lineage archive's raw/",
        )
        root = ARCHIVE_ROOT.rstrip("/")
        role.add_to_policy(
            iam.PolicyStatement(
                actions=["s3:ListBucket"],
                resources=[bucket.bucket_arn],
                conditions={"StringLike": {"s3:prefix": [root, f"{root}/*"]}},
            )
        )
        objects = bucket.arn_for_objects(f"{ARCHIVE_ROOT}*")
        role.add_to_policy(iam.PolicyStatement(actions=["s3:GetObject"], resources=[objects]))
        key.grant(role, "kms:Decrypt")
        acknowledge(
            role,
            wildcard_resource_finding(self, objects),
            "Lake Formation vends read access to any event of the registered location: the archive's raw/ keys.",
        )
        location = lakeformation.CfnResource(
            self,
            "Location",
            resource_arn=self.location_arn,
            role_arn=role.role_arn,
            # A role of its own, not the service-linked one, so it can use the gateway's key.
            use_service_linked_role=False,
        )
        return role, location

    def _grant_reader(self, reader: str, location: lakeformation.CfnResource) -> list[_Grant]:
        """A reader's grants, named by its ARN (not its place in the list: a reordered list must not
        replace, and so revoke, a grant)."""
        tag = hashlib.sha256(reader.encode()).hexdigest()[:8]
        catalog = Aws.ACCOUNT_ID
        database = _Grant.DatabaseResourceProperty(catalog_id=catalog, name=self.database_name)
        data_location = _Grant.DataLocationResourceProperty(catalog_id=catalog, resource_arn=self.location_arn)
        resources: dict[str, tuple[list[str], _Grant.ResourceProperty, CfnResource]] = {
            "Database": (["DESCRIBE"], _Grant.ResourceProperty(database=database), self.database),
            "Location": (["DATA_LOCATION_ACCESS"], _Grant.ResourceProperty(data_location=data_location), location),
        }
        for name, table in {**self.tables, **self.views}.items():
            resource = _Grant.TableResourceProperty(catalog_id=catalog, database_name=self.database_name, name=name)
            resources[f"Table-{name}"] = (["SELECT", "DESCRIBE"], _Grant.ResourceProperty(table=resource), table)
        grants = []
        for what, (permissions, resource, needs) in resources.items():
            grant = _Grant(
                self,
                f"Reader-{tag}-{what}",
                principal=_Grant.DataLakePrincipalProperty(data_lake_principal_identifier=reader),
                resource=resource,
                permissions=permissions,
                permissions_with_grant_option=[],
            )
            grant.node.add_dependency(needs)
            grants.append(grant)
        return grants
