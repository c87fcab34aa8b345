"""The lake bucket: an existing one (data_lake.existing_bucket, in the optional variant) is imported and granted,
never created, changed or deleted; its name is what the tools read."""

from __future__ import annotations

import copy
import json

import aws_cdk as cdk

import app as cdk_app
from emr_lineage.aws import parameters
from tests.stacks.templates import as_list, by_type, published, statements
from tests.stacks.variants import EXISTING_BUCKET, EXISTING_DATABASES, EXISTING_KEY_ARN

BUCKET_ARN = "arn:{Ref:AWS::Partition}:s3:::" + EXISTING_BUCKET


def test_the_existing_bucket_and_databases_are_never_created_so_never_deleted(optional_synth):
    """No stack makes (so no destroy deletes) the bucket, a key for it or the existing databases."""
    data_lake = optional_synth.template_json("data_lake")
    # The server access logs bucket stays: the artifacts and archive buckets log into it.
    (logs,) = by_type(data_lake, "AWS::S3::Bucket")
    assert logs.startswith("ServerAccessLogsBucket")
    assert by_type(data_lake, "AWS::KMS::Key") == {}
    for name, template in optional_synth.templates.items():
        assert not [k for k in template["Resources"] if k.startswith(("ExistingBucket", "ExistingKey"))], name
        for database in by_type(template, "AWS::Glue::Database").values():
            assert database["Properties"]["DatabaseInput"]["Name"] not in EXISTING_DATABASES, name
        # Nothing writes the existing bucket's policy, encryption or logging.
        for kind in ("AWS::S3::Bucket", "AWS::S3::BucketPolicy"):
            assert EXISTING_BUCKET not in json.dumps(by_type(template, kind)), (name, kind)
        assert EXISTING_KEY_ARN not in json.dumps(by_type(template, "AWS::KMS::Key")), name


def test_the_tools_read_the_existing_buckets_name(optional_synth):
    data_lake = optional_synth.template_json("data_lake")
    assert published(data_lake, parameters.data_lake_bucket(optional_synth.env)) == EXISTING_BUCKET
    assert data_lake["Outputs"]["DataLakeBucketName"]["Value"] == EXISTING_BUCKET
    # The other stacks name the bucket and key literally: the only export left is the access logs bucket.
    exports = [o["Value"] for o in data_lake["Outputs"].values() if "Export" in o]
    assert [e["Ref"] for e in exports] == [k for k in by_type(data_lake, "AWS::S3::Bucket")]


def test_the_zone_databases_live_in_the_existing_bucket(optional_synth, render):
    data_lake = optional_synth.template_json("data_lake")
    locations = {
        d["Properties"]["DatabaseInput"]["Name"]: render(d["Properties"]["DatabaseInput"]["LocationUri"])
        for d in by_type(data_lake, "AWS::Glue::Database").values()
    }
    assert locations == {f"emr_lineage_prod_{z}": f"s3://{EXISTING_BUCKET}/{z}/" for z in ("clean", "curated")}


def test_the_existing_bucket_is_registered_through_a_role_that_may_use_its_key(optional_synth, render):
    data_lake = optional_synth.template_json("data_lake")
    ((_, location),) = by_type(data_lake, "AWS::LakeFormation::Resource").items()
    props = location["Properties"]
    assert render(props["ResourceArn"]) == BUCKET_ARN
    assert props["UseServiceLinkedRole"] is False
    found = statements(data_lake, props["RoleArn"]["Fn::GetAtt"][0])
    by_resource = {}
    for statement in found:
        for resource in as_list(statement["Resource"]):
            by_resource.setdefault(render(resource), set()).update(as_list(statement["Action"]))
    assert by_resource == {
        BUCKET_ARN: {"s3:ListBucket"},
        f"{BUCKET_ARN}/*": {"s3:GetObject", "s3:PutObject", "s3:DeleteObject"},
        EXISTING_KEY_ARN: {"kms:Decrypt", "kms:Encrypt", "kms:GenerateDataKey"},
    }


def _construct(cdk_context: dict, **existing_bucket) -> dict[str, cdk.Stack]:
    """dev's stacks (construction only, no synth) with an existing bucket and EMR Serverless on."""
    context = copy.deepcopy(cdk_context)
    environment = context["emr-lineage"]["environments"]["dev"]
    environment["data_lake"].pop("noncurrent_version_expiration_days")
    environment["data_lake"]["existing_bucket"] = {"name": EXISTING_BUCKET, **existing_bucket}
    environment["emr_serverless"]["enabled"] = True
    return cdk_app.build_app(cdk.App(context={**context, "env": "dev"}))


def _resource_types(stack: cdk.Stack) -> set[str]:
    return {c.cfn_resource_type for c in stack.node.find_all() if isinstance(c, cdk.CfnResource)}


def test_an_sse_s3_bucket_its_owner_registered_gets_no_key_and_no_registration(cdk_context, render):
    """kms_key_arn null (SSE-S3) and registered_with_lake_formation: EMR writes SSE-S3 and nothing uses a key."""
    stacks = _construct(cdk_context, registered_with_lake_formation=True)
    data_lake, emr = stacks["data_lake"], stacks["emr"]
    assert data_lake.key is None and data_lake.location is None and data_lake.location_role is None
    kinds = _resource_types(data_lake)
    assert not kinds & {"AWS::KMS::Key", "AWS::LakeFormation::Resource"}
    assert "AWS::S3::Bucket" in kinds  # the server access logs bucket
    document = json.loads(render(emr.resolve(emr.security.security_configuration.security_configuration)))
    at_rest = document["EncryptionConfiguration"]["AtRestEncryptionConfiguration"]
    assert at_rest["S3EncryptionConfiguration"] == {"EncryptionMode": "SSE-S3"}
    for role in (emr.roles.job_role, emr.roles.instance_role, emr.serverless.job_role):
        policy = emr.resolve(role.node.find_child("DefaultPolicy").document)
        lake = [s for s in policy["Statement"] if EXISTING_BUCKET in json.dumps(s)]
        assert lake and all(not a.startswith("kms:") for s in lake for a in as_list(s["Action"]))
        # The only KMS use left is of the stacks' own keys (the nodes' disks, the gateway's API key).
        assert all("arn:aws:kms" not in json.dumps(s["Resource"]) for s in policy["Statement"])
    # The Lake Formation grants still name the bucket's location (its owner registered it).
    (location,) = [g for n, g in emr.grants.grants.items() if n == "DataLocation"]
    assert EXISTING_BUCKET in json.dumps(emr.resolve(location.resource))
