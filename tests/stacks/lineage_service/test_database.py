"""MarquezDatabase: PostgreSQL on RDS, encrypted, TLS only, in isolated subnets, reached only by Marquez."""

from __future__ import annotations

import json

from emr_lineage.settings.loader import load_settings
from tests.stacks.templates import ingress as _ingress
from tests.stacks.templates import one as _one
from tests.stacks.templates import security_group_id as _group_id


def test_database_is_postgres_14_or_newer_encrypted_and_sized_per_env(synth):
    db = load_settings(synth.env).database
    _, instance = _one(synth.template_json("lineage"), "AWS::RDS::DBInstance")
    props = instance["Properties"]
    assert props["Engine"] == "postgres"
    assert props["EngineVersion"] == db.postgres_version
    assert int(props["EngineVersion"].split(".")[0]) >= 14
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
