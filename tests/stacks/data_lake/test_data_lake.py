"""DataLakeStack: encrypted, versioned lake bucket; Glue databases; Lake Formation settings and location."""

from __future__ import annotations

import json

from emr_lineage.aws import parameters
from emr_lineage.aws.lake import CATALOG_ZONES, glue_database_name
from emr_lineage.settings.loader import load_settings
from tests.stacks.templates import by_type as _by_type


def _lake_bucket(tpl: dict) -> tuple[str, dict]:
    buckets = {k: v for k, v in _by_type(tpl, "AWS::S3::Bucket").items() if "BucketName" in v["Properties"]}
    assert len(buckets) == 1
    return next(iter(buckets.items()))


def test_key_rotates(synth):
    synth.template("data_lake").has_resource_properties("AWS::KMS::Key", {"EnableKeyRotation": True})


def test_lake_bucket_is_kms_encrypted_versioned_private_and_logged(synth, render):
    tpl = synth.template_json("data_lake")
    bucket_id, bucket = _lake_bucket(tpl)
    props = bucket["Properties"]
    assert (
        render(props["BucketName"]) == f"emr-lineage-{synth.env}-data-lake-{{Ref:AWS::AccountId}}-{{Ref:AWS::Region}}"
    )
    rule = props["BucketEncryption"]["ServerSideEncryptionConfiguration"][0]
    assert rule["ServerSideEncryptionByDefault"]["SSEAlgorithm"] == "aws:kms"
    key_id = next(iter(_by_type(tpl, "AWS::KMS::Key")))
    assert rule["ServerSideEncryptionByDefault"]["KMSMasterKeyID"] == {"Fn::GetAtt": [key_id, "Arn"]}
    assert rule["BucketKeyEnabled"] is True
    assert props["VersioningConfiguration"] == {"Status": "Enabled"}
    assert all(props["PublicAccessBlockConfiguration"].values())
    assert props["LoggingConfiguration"]["LogFilePrefix"] == "data-lake/"
    policies = [
        p["Properties"]
        for p in _by_type(tpl, "AWS::S3::BucketPolicy").values()
        if p["Properties"]["Bucket"] == {"Ref": bucket_id}
    ]
    statements = policies[0]["PolicyDocument"]["Statement"]
    assert any(
        s["Effect"] == "Deny" and s.get("Condition") == {"Bool": {"aws:SecureTransport": "false"}} for s in statements
    )


def test_lake_bucket_keeps_data_unless_configured_otherwise(synth):
    _, bucket = _lake_bucket(synth.template_json("data_lake"))
    expected = "Delete" if load_settings(synth.env).removal_policy.value == "destroy" else "Retain"
    assert bucket["DeletionPolicy"] == expected


def test_glue_databases_per_catalog_zone_without_iam_allowed_principals(synth, render):
    settings = load_settings(synth.env)
    tpl = synth.template_json("data_lake")
    bucket_id, _ = _lake_bucket(tpl)
    databases = {
        d["Properties"]["DatabaseInput"]["Name"]: d["Properties"]["DatabaseInput"]
        for d in _by_type(tpl, "AWS::Glue::Database").values()
    }
    assert sorted(databases) == sorted(glue_database_name(settings, z) for z in CATALOG_ZONES)
    for zone in CATALOG_ZONES:
        database = databases[glue_database_name(settings, zone)]
        assert render(database["LocationUri"]) == f"s3://{{Ref:{bucket_id}}}/{zone}/"
        assert database["CreateTableDefaultPermissions"] == []


def test_lake_formation_settings_append_admins(synth, render):
    settings = load_settings(synth.env)
    tpl = synth.template_json("data_lake")
    ((_, lake_settings),) = _by_type(tpl, "AWS::LakeFormation::DataLakeSettings").items()
    props = lake_settings["Properties"]
    assert props["MutationType"] == "APPEND"
    admins = [render(a["DataLakePrincipalIdentifier"]) for a in props["Admins"]]
    assert admins[:-1] == settings.data_lake.admin_arns
    assert admins[-1] == (
        "{Sub:arn:${AWS::Partition}:iam::${AWS::AccountId}:role/"
        "cdk-hnb659fds-cfn-exec-role-${AWS::AccountId}-${AWS::Region}}"
    )


def test_location_registered_with_a_dedicated_role_that_can_use_the_key(synth):
    tpl = synth.template_json("data_lake")
    bucket_id, _ = _lake_bucket(tpl)
    ((_, resource),) = _by_type(tpl, "AWS::LakeFormation::Resource").items()
    props = resource["Properties"]
    assert props["ResourceArn"] == {"Fn::GetAtt": [bucket_id, "Arn"]}
    assert props["UseServiceLinkedRole"] is False
    role_id = props["RoleArn"]["Fn::GetAtt"][0]
    role = tpl["Resources"][role_id]["Properties"]
    assert role["AssumeRolePolicyDocument"]["Statement"][0]["Principal"] == {"Service": "lakeformation.amazonaws.com"}
    policy = next(
        p["Properties"]
        for p in _by_type(tpl, "AWS::IAM::Policy").values()
        if p["Properties"]["Roles"] == [{"Ref": role_id}]
    )
    actions = {
        a
        for s in policy["PolicyDocument"]["Statement"]
        for a in ([s["Action"]] if isinstance(s["Action"], str) else s["Action"])
    }
    assert {
        "kms:Decrypt",
        "kms:Encrypt",
        "kms:GenerateDataKey",
        "s3:GetObject",
        "s3:PutObject",
        "s3:ListBucket",
    } <= actions
    assert not any(a.endswith("*") for a in actions)


def test_no_template_grants_iam_allowed_principals(any_synth):
    for template in any_synth.templates.values():
        assert "IAM_ALLOWED_PRINCIPALS" not in json.dumps(template)


def test_bucket_name_is_published(synth):
    synth.template("data_lake").has_resource_properties(
        "AWS::SSM::Parameter",
        {
            "Name": parameters.data_lake_bucket(synth.env),
        },
    )
