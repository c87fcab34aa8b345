"""EmrSecurity: the security configuration document and the EMR-managed security groups."""

from __future__ import annotations

import json

from emr_lineage.aws.tags import EMR_MANAGED_TAG
from emr_lineage.settings.loader import load_settings
from tests.stacks.templates import by_type as _by_type
from tests.stacks.templates import logical_id as _id
from tests.stacks.variants import EXISTING_KEY_ARN


def test_security_configuration_document(synth, render):
    tpl = synth.template_json("emr")
    (config,) = _by_type(tpl, "AWS::EMR::SecurityConfiguration").values()
    document = json.loads(render(config["Properties"]["SecurityConfiguration"]))
    encryption = document["EncryptionConfiguration"]
    assert encryption["EnableAtRestEncryption"] is True
    assert encryption["EnableInTransitEncryption"] is load_settings(synth.env).emr.in_transit_encryption
    at_rest = encryption["AtRestEncryptionConfiguration"]
    assert at_rest["S3EncryptionConfiguration"]["EncryptionMode"] == "SSE-KMS"
    assert at_rest["S3EncryptionConfiguration"]["AwsKmsKey"].startswith(f"{{Import:EmrLineage-{synth.env}-DataLake:")
    local = at_rest["LocalDiskEncryptionConfiguration"]
    assert local["EncryptionKeyProviderType"] == "AwsKms" and local["EnableEbsEncryption"] is True
    assert local["AwsKmsKey"] == "{GetAtt:" + _id(tpl, "SecurityLocalDiskKey", "AWS::KMS::Key") + ".Arn}"
    tls = encryption["InTransitEncryptionConfiguration"]["TLSCertificateConfiguration"]
    assert tls["CertificateProviderType"] == "PEM"
    assert tls["S3Object"].endswith("/tls/emr-tls-certificates.zip")
    assert "AuthorizationConfiguration" not in document  # runtime role off by default


def test_emr_security_groups_open_nothing_and_carry_the_managed_policy_tag(synth):
    tpl = synth.template_json("emr")
    # The EMR Serverless application's group (prod) is tested in test_serverless.py.
    groups = {
        k: v["Properties"]
        for k, v in _by_type(tpl, "AWS::EC2::SecurityGroup").items()
        if not k.startswith("ServerlessSecurityGroup")
    }
    assert len(groups) == 3
    for props in groups.values():
        assert "SecurityGroupIngress" not in props
        assert {"Key": EMR_MANAGED_TAG[0], "Value": EMR_MANAGED_TAG[1]} in props["Tags"]
    assert not _by_type(tpl, "AWS::EC2::SecurityGroupIngress")


def test_emrfs_encrypts_with_the_existing_buckets_key(optional_synth, render):
    """data_lake.existing_bucket with kms_key_arn: EMRFS writes SSE-KMS with that key (no import of a stack's)."""
    tpl = optional_synth.template_json("emr")
    (config,) = _by_type(tpl, "AWS::EMR::SecurityConfiguration").values()
    document = json.loads(render(config["Properties"]["SecurityConfiguration"]))
    s3 = document["EncryptionConfiguration"]["AtRestEncryptionConfiguration"]["S3EncryptionConfiguration"]
    assert s3 == {"EncryptionMode": "SSE-KMS", "AwsKmsKey": EXISTING_KEY_ARN}
