"""MarquezDatabase: PostgreSQL on RDS, encrypted, TLS only, in isolated subnets, reached only by Marquez."""

from __future__ import annotations

import json

import pytest
from aws_cdk import aws_rds as rds

from emr_lineage.settings.loader import ConfigError, load_settings
from stacks.lineage_service.database import postgres_engine_version
from tests.stacks.templates import ingress as _ingress
from tests.stacks.templates import one as _one
from tests.stacks.templates import security_group_id as _group_id


def test_database_is_a_postgres_major_rds_keeps_current_encrypted_and_sized_per_env(synth):
    db = load_settings(synth.env).database
    tpl = synth.template_json("lineage")
    _, instance = _one(tpl, "AWS::RDS::DBInstance")
    props = instance["Properties"]
    assert props["Engine"] == "postgres"
    # The major alone: RDS's minor upgrades stay (a pinned minor would be undone by the next deploy).
    assert props["EngineVersion"] == db.postgres_version == "17"
    assert props["AutoMinorVersionUpgrade"] is True and props["AllowMajorVersionUpgrade"] is True
    _, parameters = _one(tpl, "AWS::RDS::DBParameterGroup")
    assert parameters["Properties"]["Family"] == f"postgres{db.postgres_version}"
    assert props["StorageEncrypted"] is True
    assert props["PubliclyAccessible"] is False
    assert props["DBInstanceClass"] == f"db.{db.instance_type}"
    assert props["MultiAZ"] is db.multi_az
    assert props["BackupRetentionPeriod"] == db.backup_retention_days
    assert props["DeletionProtection"] is db.deletion_protection
    assert props["AllocatedStorage"] == str(db.allocated_storage_gib)
    assert props["MaxAllocatedStorage"] == db.max_allocated_storage_gib
    assert props["DBName"] == "marquez"


def test_database_removal_policy_follows_config(synth):
    _, instance = _one(synth.template_json("lineage"), "AWS::RDS::DBInstance")
    expected = {"destroy": "Delete", "retain": "Retain", "snapshot": "Snapshot"}[
        load_settings(synth.env).removal_policy.value
    ]
    assert instance["DeletionPolicy"] == expected


def test_database_credentials_are_generated_into_secrets_manager(synth):
    tpl = synth.template_json("lineage")
    secret_id, secret = _one(tpl, "AWS::SecretsManager::Secret")
    generate = secret["Properties"]["GenerateSecretString"]
    assert json.loads(generate["SecretStringTemplate"]) == {"username": "marquez"}
    assert generate["GenerateStringKey"] == "password"
    _, instance = _one(tpl, "AWS::RDS::DBInstance")
    password = json.dumps(instance["Properties"]["MasterUserPassword"])
    assert "resolve:secretsmanager" in password and secret_id in password


def test_database_requires_tls(synth):
    synth.template("lineage").has_resource_properties(
        "AWS::RDS::DBParameterGroup", {"Parameters": {"rds.force_ssl": "1"}}
    )


def test_database_lives_in_isolated_subnets(synth):
    _, group = _one(synth.template_json("lineage"), "AWS::RDS::DBSubnetGroup")
    network_tpl = synth.template_json("network")
    isolated = {
        k
        for k, v in network_tpl["Resources"].items()
        if v["Type"] == "AWS::EC2::Subnet"
        and {"Key": "aws-cdk:subnet-type", "Value": "Isolated"} in v["Properties"]["Tags"]
    }
    imported = json.dumps(group["Properties"]["SubnetIds"])
    assert isolated and all(subnet in imported for subnet in isolated)


def test_database_accepts_only_the_marquez_tasks_and_the_retention_task(synth):
    tpl = synth.template_json("lineage")
    rules = _ingress(tpl, _group_id(tpl, "DatabaseSecurityGroup"))
    sources = sorted(r["SourceSecurityGroupId"]["Fn::GetAtt"][0] for r in rules)
    assert sources == sorted([_group_id(tpl, "MarquezSecurityGroup"), _group_id(tpl, "RetentionSecurityGroup")])
    assert all((r["FromPort"], r["ToPort"]) == (5432, 5432) for r in rules)


def test_database_secret_and_exported_logs_use_the_lineage_service_key(synth):
    tpl = synth.template_json("lineage")
    key_id, _ = _one(tpl, "AWS::KMS::Key")
    key_arn = {"Fn::GetAtt": [key_id, "Arn"]}
    _, secret = _one(tpl, "AWS::SecretsManager::Secret")
    assert secret["Properties"]["KmsKeyId"] == key_arn
    (instance_id, instance) = _one(tpl, "AWS::RDS::DBInstance")
    identifier = instance["Properties"]["DBInstanceIdentifier"]
    exported = {
        json.dumps(g["Properties"]["LogGroupName"]): g["Properties"]["KmsKeyId"]
        for g in tpl["Resources"].values()
        if g["Type"] == "AWS::Logs::LogGroup" and "LogGroupName" in g["Properties"]
    }
    # Named after the instance, as RDS names them (created first, to set the key and retention).
    assert exported == {
        json.dumps({"Fn::Join": ["", ["/aws/rds/instance/", identifier, f"/{export}"]]}): key_arn
        for export in ("postgresql", "upgrade")
    }
    # The Marquez tasks (and the retention task) get the password through Secrets Manager, decrypting with the key.
    decrypters = [
        s["Principal"]["AWS"]["Fn::GetAtt"][0]
        for s in tpl["Resources"][key_id]["Properties"]["KeyPolicy"]["Statement"]
        if s["Action"] == "kms:Decrypt" and "Fn::GetAtt" in s["Principal"].get("AWS", {})
    ]
    assert "MarquezTaskExecutionRole" in " ".join(decrypters)


def test_the_instance_and_its_log_groups_are_named_anew_by_each_stack_made(synth):
    """A destroy keeps prod's log groups; the next deploy's instance, a new stack's, names new ones."""
    _, instance = _one(synth.template_json("lineage"), "AWS::RDS::DBInstance")
    stack_uuid = {"Fn::Select": [2, {"Fn::Split": ["/", {"Ref": "AWS::StackId"}]}]}
    assert instance["Properties"]["DBInstanceIdentifier"] == {
        "Fn::Join": ["-", [f"emr-lineage-{synth.env}-marquez", {"Fn::Select": [0, {"Fn::Split": ["-", stack_uuid]}]}]]
    }


def test_the_password_is_kept_as_long_as_the_data_it_opens(synth):
    """A final snapshot (prod) needs the password of the instance it was taken of."""
    tpl = synth.template_json("lineage")
    (_, instance), (_, secret) = _one(tpl, "AWS::RDS::DBInstance"), _one(tpl, "AWS::SecretsManager::Secret")
    expected = {"Delete": "Delete", "Snapshot": "Retain", "Retain": "Retain"}[instance["DeletionPolicy"]]
    assert secret["DeletionPolicy"] == expected
    assert "Name" not in secret["Properties"]  # a retained secret must not block the next deploy


def test_database_reports_os_metrics_every_minute(synth):
    tpl = synth.template_json("lineage")
    _, instance = _one(tpl, "AWS::RDS::DBInstance")
    props = instance["Properties"]
    assert props["MonitoringInterval"] == 60
    role = tpl["Resources"][props["MonitoringRoleArn"]["Fn::GetAtt"][0]]["Properties"]
    assert role["AssumeRolePolicyDocument"]["Statement"][0]["Principal"] == {"Service": "monitoring.rds.amazonaws.com"}
    assert json.dumps(role["ManagedPolicyArns"]).endswith('service-role/AmazonRDSEnhancedMonitoringRole"]]}]')


def test_every_configured_postgres_major_is_one_the_pinned_cdk_knows():
    for env in ("dev", "prod"):
        major = load_settings(env).database.postgres_version
        assert hasattr(rds.PostgresEngineVersion, f"VER_{major}"), major
        assert postgres_engine_version(major).postgres_full_version == major
    with pytest.raises(
        ConfigError, match=r"^database\.postgres_version 99: use one the pinned aws-cdk-lib knows: 14, 15,"
    ):
        postgres_engine_version("99")
