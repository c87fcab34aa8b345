"""DataLakeStack: encrypted, versioned lake bucket; Glue databases; Lake Formation settings and location."""

from __future__ import annotations

import copy
import json

from emr_lineage.aws import parameters
from emr_lineage.aws.lake import CATALOG_ZONES, glue_database_name
from emr_lineage.settings.loader import load_settings
from tests.stacks.templates import by_type as _by_type
from tests.stacks.templates import lake_bucket_id


def _lake_bucket(tpl: dict, env: str) -> tuple[str, dict]:
    bucket_id = lake_bucket_id(tpl, env)
    return bucket_id, tpl["Resources"][bucket_id]


def test_key_rotates(synth):
    synth.template("data_lake").has_resource_properties("AWS::KMS::Key", {"EnableKeyRotation": True})


def test_lake_bucket_is_kms_encrypted_versioned_private_and_logged(synth, render):
    tpl = synth.template_json("data_lake")
    bucket_id, bucket = _lake_bucket(tpl, synth.env)
    props = bucket["Properties"]
    # CloudFormation names it: a bucket a destroy retains would block the next deploy under a fixed name.
    assert "BucketName" not in props
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
    _, bucket = _lake_bucket(synth.template_json("data_lake"), synth.env)
    expected = "Delete" if load_settings(synth.env).removal_policy.value == "destroy" else "Retain"
    assert bucket["DeletionPolicy"] == expected


def test_glue_databases_per_catalog_zone_without_iam_allowed_principals(synth, render):
    settings = load_settings(synth.env)
    tpl = synth.template_json("data_lake")
    bucket_id, _ = _lake_bucket(tpl, synth.env)
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
    admins = [a["DataLakePrincipalIdentifier"] for a in props["Admins"]]
    *configured, deploy_role, default_database_role = admins
    assert [render(a) for a in configured] == settings.data_lake.admin_arns
    assert render(deploy_role) == (
        "{Sub:arn:${AWS::Partition}:iam::${AWS::AccountId}:role/"
        "cdk-hnb659fds-cfn-exec-role-${AWS::AccountId}-${AWS::Region}}"
    )
    assert default_database_role == {"Fn::GetAtt": [_default_database_role(tpl), "Arn"]}
    # What Lake Formation governs here waits for the deploy role to be an admin.
    (settings_id,) = _by_type(tpl, "AWS::LakeFormation::DataLakeSettings")
    governed = [*_by_type(tpl, "AWS::Glue::Database"), *_by_type(tpl, "AWS::LakeFormation::Resource")]
    governed += list(_by_type(tpl, "Custom::AWS"))
    assert governed and all(settings_id in tpl["Resources"][g]["DependsOn"] for g in governed)


def _default_database_role(tpl: dict) -> str:
    (role_id,) = [k for k in _by_type(tpl, "AWS::IAM::Role") if k.startswith("DefaultDatabaseRole")]
    return role_id


def test_the_default_database_is_made_when_missing_and_never_deleted(synth):
    """Spark's catalog client needs it; the Athena or Glue console may have made it already."""
    tpl = synth.template_json("data_lake")
    ((_, resource),) = _by_type(tpl, "Custom::AWS").items()
    create = json.loads("".join(p if isinstance(p, str) else "?" for p in _parts(resource["Properties"]["Create"])))
    assert create["action"] == "CreateDatabase" and create["ignoreErrorCodesMatching"] == "AlreadyExistsException"
    assert create["parameters"]["DatabaseInput"]["Name"] == "default"
    assert create["parameters"]["DatabaseInput"]["CreateTableDefaultPermissions"] == []
    assert "Update" not in resource["Properties"] and "Delete" not in resource["Properties"]
    policy = next(
        p["Properties"]["PolicyDocument"]["Statement"]
        for p in _by_type(tpl, "AWS::IAM::Policy").values()
        if {"Ref": _default_database_role(tpl)} in p["Properties"]["Roles"]
    )
    (statement,) = policy
    assert statement["Action"] == "glue:CreateDatabase"
    assert [
        json.dumps(r).endswith(':database/default"]]}') or json.dumps(r).endswith(':catalog"]]}')
        for r in statement["Resource"]
    ] == [True, True]


def _parts(value) -> list:
    return value["Fn::Join"][1] if isinstance(value, dict) else [value]


def test_location_registered_with_a_dedicated_role_that_can_use_the_key(synth):
    tpl = synth.template_json("data_lake")
    bucket_id, _ = _lake_bucket(tpl, synth.env)
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


def test_an_environment_sharing_the_account_leaves_its_lake_formation_settings_to_the_owner(cdk_context):
    """data_lake.manage_lake_formation_settings false: no settings object, no default database of its own."""
    import aws_cdk as cdk

    from emr_lineage.settings.loader import settings_from_context
    from stacks.data_lake import DataLakeStack

    block = copy.deepcopy(cdk_context["emr-lineage"])
    block["environments"]["dev"]["data_lake"]["manage_lake_formation_settings"] = False
    app = cdk.App(context=cdk_context)  # its feature flags
    stack = DataLakeStack(app, "DataLake", settings=settings_from_context(block, "dev"))
    tpl = app.synth().get_stack_by_name(stack.stack_name).template
    assert _by_type(tpl, "AWS::LakeFormation::DataLakeSettings") == {}
    assert _by_type(tpl, "Custom::AWS") == {}
    assert len(_by_type(tpl, "AWS::Glue::Database")) == len(CATALOG_ZONES)
