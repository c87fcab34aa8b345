"""The archive as Athena tables (stacks/gateway/archive_catalog.py): the Glue database and its two
projected tables, the view of the source account, the workgroup, the named queries (the CLI's SQL, byte
for byte), Lake Formation."""

from __future__ import annotations

import base64
import json

from emr_lineage.aws.archive_queries import ACCOUNTS_VIEW, ACCOUNTS_VIEW_SQL, EVENTS_TABLE, QUERIES, RAW_TABLE
from emr_lineage.settings.loader import load_settings
from stacks.gateway.archive_catalog import (
    BYTES_PER_MB,
    ENGINE_VERSION,
    EVENT_COLUMNS,
    JSON_SERDE,
    PARTITION_KEYS,
    RAW_DELIMITER,
    TEXT_SERDE,
    trino_type,
)
from stacks.gateway.storage import ATHENA_RESULTS_EXPIRATION_DAYS, ATHENA_RESULTS_PREFIX
from tests.stacks.templates import by_type, one, statements
from tests.stacks.variants import ARCHIVE_READER

GRANT = "AWS::LakeFormation::PrincipalPermissions"


def _in_archive(bucket_id: str, suffix: str) -> dict:
    return {"Fn::Join": ["", ["s3://", {"Ref": bucket_id}, suffix]]}


def _tables(tpl: dict, kind: str = "EXTERNAL_TABLE") -> dict[str, dict]:
    """The Glue tables of ``kind`` (``VIRTUAL_VIEW``: the views), by name."""
    return {
        t["Properties"]["TableInput"]["Name"]: t
        for t in by_type(tpl, "AWS::Glue::Table").values()
        if t["Properties"]["TableInput"]["TableType"] == kind
    }


def test_two_tables_over_the_archive_with_partition_projection_and_no_crawler(synth):
    tpl = synth.template_json("gateway")
    bucket_id, _ = one(tpl, "AWS::S3::Bucket")
    database_id, database = one(tpl, "AWS::Glue::Database")
    name = database["Properties"]["DatabaseInput"]["Name"]
    assert name == f"{load_settings(synth.env).glue_database_prefix}_lineage_archive"
    assert database["Properties"]["DatabaseInput"]["CreateTableDefaultPermissions"] == []
    tables = _tables(tpl)
    assert sorted(tables) == sorted([EVENTS_TABLE, RAW_TABLE]) and len(by_type(tpl, "AWS::Glue::Table")) == 3
    assert not by_type(tpl, "AWS::Glue::Crawler") and not by_type(tpl, "AWS::Glue::Partition")
    for table in tables.values():
        assert table["DependsOn"] == [database_id] and table["Properties"]["DatabaseName"] == name
        table_input = table["Properties"]["TableInput"]
        assert table_input["TableType"] == "EXTERNAL_TABLE"
        assert table_input["PartitionKeys"] == [{"Name": "dt", "Type": "string"}, {"Name": "hour", "Type": "int"}]
        assert table_input["StorageDescriptor"]["Location"] == _in_archive(bucket_id, "/raw/")
        params = table_input["Parameters"]
        assert {k: v for k, v in params.items() if k.startswith("projection.")} == {
            "projection.enabled": "true",
            "projection.dt.type": "date",
            "projection.dt.format": "yyyy-MM-dd",
            "projection.dt.range": "2024-01-01,NOW",
            "projection.dt.interval": "1",
            "projection.dt.interval.unit": "DAYS",
            "projection.hour.type": "integer",
            "projection.hour.range": "0,23",
            "projection.hour.digits": "2",
        }
        # The archive's keys: raw/date=YYYY-MM-DD/hour=HH/<group>/<file>.json (emr_lineage/aws/archive.py).
        assert params["storage.location.template"] == _in_archive(bucket_id, "/raw/date=${dt}/hour=${hour}/")


def test_events_has_typed_columns_and_events_raw_keeps_each_line_whole(synth):
    tables = _tables(synth.template_json("gateway"))
    events = tables[EVENTS_TABLE]["Properties"]["TableInput"]["StorageDescriptor"]
    assert [(c["Name"], c["Type"]) for c in events["Columns"]] == list(EVENT_COLUMNS)
    assert dict(EVENT_COLUMNS)["inputs"] == "array<struct<namespace:string,name:string>>"
    assert events["SerdeInfo"] == {
        "SerializationLibrary": JSON_SERDE,
        "Parameters": {"ignore.malformed.json": "true", "case.insensitive": "true"},
    }
    raw = tables[RAW_TABLE]["Properties"]["TableInput"]["StorageDescriptor"]
    assert raw["Columns"] == [{"Name": "raw", "Type": "string"}]
    assert raw["SerdeInfo"]["SerializationLibrary"] == TEXT_SERDE
    assert raw["SerdeInfo"]["Parameters"] == {"field.delim": "\x01", "serialization.format": "\x01"}
    assert RAW_DELIMITER == "\x01"
    for table in (events, raw):
        assert table["InputFormat"] == "org.apache.hadoop.mapred.TextInputFormat"


def test_the_accounts_view_is_events_and_each_events_source_account_as_athena_stores_a_view(synth):
    """Run on Trino from the template by tests/stacks/gateway/test_archive_on_trino.py; here, its shape."""
    tpl = synth.template_json("gateway")
    (view,) = _tables(tpl, "VIRTUAL_VIEW").values()
    table_input = view["Properties"]["TableInput"]
    assert table_input["Name"] == ACCOUNTS_VIEW
    assert table_input["Parameters"] == {"presto_view": "true", "comment": "Presto View"}
    assert "Description" not in table_input  # Trino would read it as the comment that marks the view
    assert table_input["ViewExpandedText"] == "/* Presto View */"
    text = table_input["ViewOriginalText"]
    assert text.startswith("/* Presto View: ") and text.endswith(" */")
    definition = json.loads(base64.b64decode(text.removeprefix("/* Presto View: ").removesuffix(" */")))
    columns = [*EVENT_COLUMNS, *PARTITION_KEYS, ("source_account", "string")]
    assert definition == {
        "originalSql": ACCOUNTS_VIEW_SQL,
        "catalog": "awsdatacatalog",
        "schema": f"emr_lineage_{synth.env}_lineage_archive",
        "columns": [{"name": name, "type": trino_type(kind)} for name, kind in columns],
        "runAsInvoker": True,
        "path": [],
    }
    assert [(c["Name"], c["Type"]) for c in table_input["StorageDescriptor"]["Columns"]] == columns
    assert sorted(view["DependsOn"]) == sorted(
        k for k, t in by_type(tpl, "AWS::Glue::Table").items() if t["Properties"]["TableInput"]["Name"] != ACCOUNTS_VIEW
    )


def test_trino_types_are_the_glue_types_as_a_view_writes_them():
    assert trino_type("string") == "varchar" and trino_type("int") == "integer"
    assert trino_type("struct<runid:string>") == "row(runid varchar)"
    assert trino_type("array<struct<namespace:string,name:string>>") == "array(row(namespace varchar,name varchar))"


def test_the_workgroup_enforces_encrypted_results_and_the_scan_limit(synth):
    tpl = synth.template_json("gateway")
    bucket_id, bucket = one(tpl, "AWS::S3::Bucket")
    key_id, _ = one(tpl, "AWS::KMS::Key")
    _, workgroup = one(tpl, "AWS::Athena::WorkGroup")
    props = workgroup["Properties"]
    assert props["Name"] == f"emr-lineage-{synth.env}-lineage-archive" and props["RecursiveDeleteOption"] is True
    config = props["WorkGroupConfiguration"]
    limit_mb = load_settings(synth.env).gateway.athena_scan_limit_mb
    assert config["BytesScannedCutoffPerQuery"] == limit_mb * BYTES_PER_MB
    assert 10_000_000 <= config["BytesScannedCutoffPerQuery"] < 2**31  # Athena's minimum; CloudFormation's int
    assert config["EnforceWorkGroupConfiguration"] is True
    assert config["EngineVersion"] == {"SelectedEngineVersion": ENGINE_VERSION}
    assert config["ResultConfiguration"] == {
        "OutputLocation": _in_archive(bucket_id, f"/{ATHENA_RESULTS_PREFIX}"),
        "EncryptionConfiguration": {"EncryptionOption": "SSE_KMS", "KmsKey": {"Fn::GetAtt": [key_id, "Arn"]}},
        "ExpectedBucketOwner": {"Ref": "AWS::AccountId"},
    }
    rules = bucket["Properties"]["LifecycleConfiguration"]["Rules"]
    (results,) = [r for r in rules if r.get("Prefix") == ATHENA_RESULTS_PREFIX]
    assert results["ExpirationInDays"] == ATHENA_RESULTS_EXPIRATION_DAYS


def test_the_named_queries_are_the_clis_sql(synth):
    tpl = synth.template_json("gateway")
    workgroup_id, _ = one(tpl, "AWS::Athena::WorkGroup")
    named = {q["Properties"]["Name"]: q["Properties"] for q in by_type(tpl, "AWS::Athena::NamedQuery").values()}
    assert sorted(named) == sorted(QUERIES)
    for name, query in QUERIES.items():
        assert named[name]["QueryString"] == query.sql
        assert named[name]["Description"] == query.description and len(query.description) <= 1024
        assert named[name]["WorkGroup"] == {"Ref": workgroup_id}
        assert named[name]["Database"] == f"emr_lineage_{synth.env}_lineage_archive"


def test_raw_is_registered_with_lake_formation_through_a_read_only_role(synth):
    tpl = synth.template_json("gateway")
    bucket_id, _ = one(tpl, "AWS::S3::Bucket")
    _, location = one(tpl, "AWS::LakeFormation::Resource")
    raw_arn = {"Fn::Join": ["", [{"Fn::GetAtt": [bucket_id, "Arn"]}, "/raw"]]}
    assert location["Properties"]["ResourceArn"] == raw_arn
    assert location["Properties"]["UseServiceLinkedRole"] is False
    role_id = location["Properties"]["RoleArn"]["Fn::GetAtt"][0]
    actions = sorted(
        a for s in statements(tpl, role_id) for a in ([s["Action"]] if isinstance(s["Action"], str) else s["Action"])
    )
    assert actions == ["kms:Decrypt", "s3:GetObject", "s3:ListBucket"]
    # Without readers in cdk.json (dev, prod): no grants.
    assert not by_type(tpl, GRANT)


def test_the_platform_teams_role_is_granted_the_tables_and_the_location(optional_synth):
    tpl = optional_synth.template_json("gateway")
    grants = [g["Properties"] for g in by_type(tpl, GRANT).values()]
    assert {g["Principal"]["DataLakePrincipalIdentifier"] for g in grants} == {ARCHIVE_READER}
    by_resource = {next(iter(g["Resource"])) + ":" + g["Resource"].get("Table", {}).get("Name", ""): g for g in grants}
    tables = (EVENTS_TABLE, RAW_TABLE, ACCOUNTS_VIEW)
    assert sorted(by_resource) == sorted(["DataLocation:", "Database:", *(f"Table:{table}" for table in tables)])
    assert by_resource["Database:"]["Permissions"] == ["DESCRIBE"]
    assert by_resource["DataLocation:"]["Permissions"] == ["DATA_LOCATION_ACCESS"]
    for table in tables:
        assert by_resource[f"Table:{table}"]["Permissions"] == ["SELECT", "DESCRIBE"]
    assert all(g["PermissionsWithGrantOption"] == [] for g in grants)
