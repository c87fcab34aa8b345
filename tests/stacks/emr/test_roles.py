"""EmrRoles: the service role, the instance role and the optional runtime role, each scoped to what it needs."""

from __future__ import annotations

import json

import pytest

from tests.stacks.templates import as_list as _as_list
from tests.stacks.templates import by_type as _by_type
from tests.stacks.templates import export_name, lake_bucket_id
from tests.stacks.templates import logical_id as _id
from tests.stacks.templates import statements as _statements
from tests.stacks.variants import (
    EXISTING_BUCKET,
    EXISTING_DATABASES,
    EXISTING_KEY_ARN,
    PRIVATE_CA_ARN,
    TRUSTED_CA_BUNDLE,
)


def test_service_role_uses_the_v2_policy_and_passes_only_the_instance_role(synth, render):
    tpl = synth.template_json("emr")
    role_id = _id(tpl, "RolesServiceRole", "AWS::IAM::Role")
    role = tpl["Resources"][role_id]["Properties"]
    assert [render(a) for a in role["ManagedPolicyArns"]] == [
        "arn:{Ref:AWS::Partition}:iam::aws:policy/service-role/AmazonEMRServicePolicy_v2"
    ]
    passes = [s for s in _statements(tpl, role_id) if "iam:PassRole" in _as_list(s["Action"])]
    assert passes == [
        {
            "Action": "iam:PassRole",
            "Effect": "Allow",
            "Sid": "PassInstanceRole",
            "Resource": {"Fn::GetAtt": [_id(tpl, "RolesInstanceRole", "AWS::IAM::Role"), "Arn"]},
            "Condition": {"StringEquals": {"iam:PassedToService": "ec2.amazonaws.com"}},
        }
    ]


def test_service_role_may_launch_instances_with_volumes_under_the_local_disk_key(synth):
    """EMR's guide makes the service role a user of the EBS key; EBS lists Decrypt and ReEncrypt for a launch."""
    tpl = synth.template_json("emr")
    key = {"Fn::GetAtt": [_id(tpl, "SecurityLocalDiskKey", "AWS::KMS::Key"), "Arn"]}
    on_key = [s for s in _statements(tpl, _id(tpl, "RolesServiceRole", "AWS::IAM::Role")) if s["Resource"] == key]
    actions = {a: s.get("Condition") for s in on_key for a in _as_list(s["Action"])}
    assert {"kms:Decrypt", "kms:ReEncryptFrom", "kms:ReEncryptTo", "kms:GenerateDataKeyWithoutPlaintext"} <= set(
        actions
    )
    for grant in ("kms:CreateGrant", "kms:ListGrants", "kms:RevokeGrant"):
        assert actions[grant] == {"Bool": {"kms:GrantIsForAWSResource": True}}


def test_instance_role_is_scoped(synth, render):
    tpl = synth.template_json("emr")
    statements = _statements(tpl, _id(tpl, "RolesInstanceRole", "AWS::IAM::Role"))
    by_sid = {s.get("Sid"): s for s in statements}
    resources = [render(r) for s in statements for r in _as_list(s["Resource"])]
    # The only bare "*" is Lake Formation's credential vending, which has no resource-level permissions.
    assert [s["Action"] for s in statements if "*" in _as_list(s["Resource"])] == ["lakeformation:GetDataAccess"]
    # The data lake stack's bucket, handed over by app.py (tests/stacks/data_lake checks its name).
    data_lake = synth.template_json("data_lake")
    lake_bucket = lake_bucket_id(data_lake, synth.env)
    lake = "{Import:" + export_name(data_lake, {"Fn::GetAtt": [lake_bucket, "Arn"]}) + "}"
    assert sorted(render(r) for r in by_sid["WriteZones"]["Resource"]) == sorted(
        f"{lake}/{z}/*" for z in ("clean", "curated", "models")
    )
    assert f"{lake}/raw/*" in [render(r) for r in by_sid["ReadZones"]["Resource"]]
    # Nodes read staged job scripts where no deploy prunes them (jobs/ is the deploy's own folder).
    read = [render(r) for r in by_sid["ReadArtifacts"]["Resource"]]
    assert {r.rsplit("/", 2)[-2] for r in read} == {"bootstrap", "jobs", "staged-jobs", "listener", "tls"}
    assert by_sid["WriteLogs"]["Action"] == "s3:PutObject"
    assert render(by_sid["WriteLogs"]["Resource"]).endswith("/emr-logs/*")
    assert not [r for r in resources if r.endswith(":::*") or r.endswith("}/*")], "no whole-bucket object wildcards"
    glue_resources = [render(r) for r in by_sid["GlueCatalogWrite"]["Resource"]]
    assert not any(r.endswith(":table/*/*") or r.endswith(":database/*") for r in glue_resources)
    assert (
        f"arn:{{Ref:AWS::Partition}}:glue:{{Ref:AWS::Region}}:{{Ref:AWS::AccountId}}:table/emr_lineage_{synth.env}_curated/*"
        in glue_resources
    )


def test_the_job_role_commits_iceberg_tables_in_the_zone_databases(synth, render):
    """Iceberg's GlueCatalog commits with GetTable, then CreateTable or UpdateTable; its S3FileIO writes the data and
    metadata files under the table's location, the zone's prefix (a table of a database without one: the warehouse,
    curated/), and aborts the multipart upload of a file it fails to write."""
    tpl = synth.template_json("emr")
    by_sid = {s.get("Sid"): s for s in _statements(tpl, _id(tpl, "RolesInstanceRole", "AWS::IAM::Role"))}
    glue = "arn:{Ref:AWS::Partition}:glue:{Ref:AWS::Region}:{Ref:AWS::AccountId}"
    for zone in ("clean", "curated"):
        tables = f"{glue}:table/emr_lineage_{synth.env}_{zone}/*"
        assert tables in [render(r) for r in by_sid["GlueCatalogRead"]["Resource"]]
        assert tables in [render(r) for r in by_sid["GlueCatalogWrite"]["Resource"]]
    assert {"glue:GetDatabase", "glue:GetTable"} <= set(by_sid["GlueCatalogRead"]["Action"])
    assert {"glue:CreateTable", "glue:UpdateTable"} <= set(by_sid["GlueCatalogWrite"]["Action"])
    writes = by_sid["WriteZones"]
    assert set(_as_list(writes["Action"])) == {"s3:PutObject", "s3:DeleteObject", "s3:AbortMultipartUpload"}
    assert {"clean", "curated"} <= {render(r).rsplit("/", 2)[-2] for r in writes["Resource"]}


def test_runtime_role_gets_the_data_and_lake_formation_session_tags(optional_synth, render):
    tpl = optional_synth.template_json("emr")
    runtime = _id(tpl, "RolesRuntimeRole", "AWS::IAM::Role")
    instance = _id(tpl, "RolesInstanceRole", "AWS::IAM::Role")
    sids = {s.get("Sid") for s in _statements(tpl, runtime)}
    assert {"ReadZones", "WriteZones", "GlueCatalogRead", "LakeFormationDataAccess"} <= sids
    assert not {"ReadZones", "WriteZones"} & {s.get("Sid") for s in _statements(tpl, instance)}
    # The EMR Serverless job role's own grants are tested in test_serverless.py.
    grants = [
        g
        for k, g in _by_type(tpl, "AWS::LakeFormation::PrincipalPermissions").items()
        if not k.startswith("Serverless")
    ]
    assert grants and all(
        g["Properties"]["Principal"]["DataLakePrincipalIdentifier"] == {"Fn::GetAtt": [runtime, "Arn"]} for g in grants
    )
    (config,) = _by_type(tpl, "AWS::EMR::SecurityConfiguration").values()
    document = json.loads(render(config["Properties"]["SecurityConfiguration"]))
    assert document["AuthorizationConfiguration"] == {
        "IAMConfiguration": {"EnableApplicationScopedIAMRole": True},
        "LakeFormationConfiguration": {"AuthorizedSessionTagValue": "Amazon EMR"},
    }


def test_instance_role_reads_only_the_gateways_api_key_through_secrets_manager(synth):
    """The bootstrap reads the gateway's key with the instance role: that one secret, and its KMS
    key only on Secrets Manager's behalf."""
    tpl, gateway = synth.template_json("emr"), synth.template_json("gateway")
    by_sid = {s.get("Sid"): s for s in _statements(tpl, _id(tpl, "RolesInstanceRole", "AWS::IAM::Role"))}
    (secret_id,) = _by_type(gateway, "AWS::SecretsManager::Secret")
    (key_id,) = _by_type(gateway, "AWS::KMS::Key")
    assert by_sid["ReadGatewayApiKey"]["Action"] == ["secretsmanager:GetSecretValue", "secretsmanager:DescribeSecret"]
    assert by_sid["ReadGatewayApiKey"]["Resource"] == {"Fn::ImportValue": export_name(gateway, {"Ref": secret_id})}
    decrypt = by_sid["DecryptGatewayApiKey"]
    assert decrypt["Action"] == "kms:Decrypt"
    assert decrypt["Resource"] == {"Fn::ImportValue": export_name(gateway, {"Fn::GetAtt": [key_id, "Arn"]})}
    assert decrypt["Condition"] == {
        "StringEquals": {
            "kms:ViaService": {"Fn::Join": ["", ["secretsmanager.", {"Ref": "AWS::Region"}, ".amazonaws.com"]]}
        }
    }
    # The gateway key's policy lets the account's IAM policies grant its use (the role is not in it).
    policy = json.dumps(gateway["Resources"][key_id]["Properties"]["KeyPolicy"])
    assert ":root" in policy and "InstanceRole" not in policy


def test_the_job_role_reads_only_the_gateways_raw_archive(synth, render):
    """graph --on-emr --archive reads raw events with the clusters' job role: list the archive bucket, get
    raw/ objects, decrypt with the gateway key through S3 only."""
    tpl, gateway = synth.template_json("emr"), synth.template_json("gateway")
    by_sid = {s.get("Sid"): s for s in _statements(tpl, _id(tpl, "RolesInstanceRole", "AWS::IAM::Role"))}
    (bucket_id,) = (b for b in _by_type(gateway, "AWS::S3::Bucket") if "Archive" in b)
    (key_id,) = _by_type(gateway, "AWS::KMS::Key")
    assert by_sid["ListGatewayArchive"]["Action"] == "s3:ListBucket"
    assert render(by_sid["ListGatewayArchive"]["Resource"]) == render(
        {"Fn::ImportValue": export_name(gateway, {"Fn::GetAtt": [bucket_id, "Arn"]})}
    )
    assert by_sid["ReadGatewayArchive"]["Action"] == "s3:GetObject"
    assert render(by_sid["ReadGatewayArchive"]["Resource"]).endswith("/raw/*")
    decrypt = by_sid["DecryptGatewayArchive"]
    assert decrypt["Action"] == "kms:Decrypt"
    assert decrypt["Resource"] == {"Fn::ImportValue": export_name(gateway, {"Fn::GetAtt": [key_id, "Arn"]})}
    assert render(decrypt["Condition"]["StringEquals"]["kms:ViaService"]) == "s3.{Ref:AWS::Region}.amazonaws.com"


def test_the_existing_bucket_key_and_databases_are_granted_by_the_roles_own_policies(optional_synth, render):
    """An imported bucket's policy and key policy are its owner's: the job roles' identity policies name the
    existing bucket's zones, its key and the existing databases; the nodes' instance role, its key (EMRFS)."""
    tpl = optional_synth.template_json("emr")
    bucket = f"arn:{{Ref:AWS::Partition}}:s3:::{EXISTING_BUCKET}"
    glue = "arn:{Ref:AWS::Partition}:glue:{Ref:AWS::Region}:{Ref:AWS::AccountId}"
    key_actions = {"kms:Decrypt", "kms:Encrypt", "kms:GenerateDataKey", "kms:DescribeKey"}
    for prefix in ("RolesRuntimeRole", "ServerlessJobRole"):
        found = _statements(tpl, _id(tpl, prefix, "AWS::IAM::Role"))
        by_sid = {s.get("Sid"): s for s in found}
        assert render(by_sid["ListDataLake"]["Resource"]) == bucket
        assert sorted(render(r) for r in by_sid["ReadZones"]["Resource"]) == sorted(
            f"{bucket}/{z}/*" for z in ("raw", "clean", "curated", "models")
        )
        assert sorted(render(r) for r in by_sid["WriteZones"]["Resource"]) == sorted(
            f"{bucket}/{z}/*" for z in ("clean", "curated", "models")
        )
        (on_key,) = [s for s in found if s["Resource"] == EXISTING_KEY_ARN]
        assert set(_as_list(on_key["Action"])) == key_actions
        for sid in ("GlueCatalogRead", "GlueCatalogWrite"):
            resources = {render(r) for r in by_sid[sid]["Resource"]}
            for name in EXISTING_DATABASES:
                assert {f"{glue}:database/{name}", f"{glue}:table/{name}/*"} <= resources
    instance = _statements(tpl, _id(tpl, "RolesInstanceRole", "AWS::IAM::Role"))
    (on_key,) = [s for s in instance if s["Resource"] == EXISTING_KEY_ARN]
    assert set(_as_list(on_key["Action"])) == key_actions


@pytest.mark.parametrize("variant", ["optional", "cognito"])
def test_the_instance_role_reads_the_trusted_ca_alone(variant, synths, optional_synth, cognito_synth, render):
    """The bootstrap imports openlineage.trusted_ca with the instance role: the bundle's one object (prod+optional),
    the Private CA's certificate (dev+cognito); without it (dev, prod), nothing of the kind."""
    synth = {"optional": optional_synth, "cognito": cognito_synth}[variant]
    tpl = synth.template_json("emr")
    by_sid = {s.get("Sid"): s for s in _statements(tpl, _id(tpl, "RolesInstanceRole", "AWS::IAM::Role"))}
    read = by_sid["ReadTrustedCa"]
    if variant == "optional":
        assert read["Action"] == "s3:GetObject"
        assert render(read["Resource"]) == "arn:{Ref:AWS::Partition}:s3:::" + TRUSTED_CA_BUNDLE["uri"][len("s3://") :]
    else:
        assert (read["Action"], read["Resource"]) == ("acm-pca:GetCertificateAuthorityCertificate", PRIVATE_CA_ARN)
    runtime = _by_type(tpl, "AWS::IAM::Role")
    others = [r for r in runtime if r != _id(tpl, "RolesInstanceRole", "AWS::IAM::Role")]
    assert not [r for r in others if "ReadTrustedCa" in json.dumps(_statements(tpl, r))]
    for plain in synths.values():
        assert "ReadTrustedCa" not in json.dumps(plain.template_json("emr"))
