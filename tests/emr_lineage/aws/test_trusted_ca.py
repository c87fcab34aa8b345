"""emr_lineage.aws.trusted_ca: the configured CA read as a node reads it, against moto's S3 and AWS Private CA:
the pinned bundle or the Private CA's certificate and chain, certificates only, never printed."""

from __future__ import annotations

import hashlib
import uuid

import boto3
import pytest
from cryptography.hazmat.primitives import hashes

from emr_lineage.aws.clients import AwsError
from emr_lineage.aws.trusted_ca import TrustedCaError, ca_bundle, read_trusted_ca
from emr_lineage.settings.trusted_ca import PrivateCa, S3CaBundle
from tests import pki
from tests.helpers import moto_s3

REGION = "eu-west-1"
CA_REGION = "eu-central-1"  # a central PKI's region, not the environment's
BUCKET = "estate-pki"


@pytest.fixture
def s3(monkeypatch):
    with moto_s3(monkeypatch, REGION, BUCKET) as client:
        yield client


def pca_in(region: str):
    return boto3.client("acm-pca", region_name=region)


def staged(s3, data: bytes, pin: bytes | None = None) -> S3CaBundle:
    s3.put_object(Bucket=BUCKET, Key="ca/estate.pem", Body=data)
    return S3CaBundle(type="s3", uri=f"s3://{BUCKET}/ca/estate.pem", sha256=hashlib.sha256(pin or data).hexdigest())


def test_the_pinned_bundle_gives_its_certificates(s3, root, issuing) -> None:
    bundle = read_trusted_ca(staged(s3, pki.bundle(root, issuing, text=b"# estate\n")), s3=s3, acm_pca=pca_in)
    assert [c.fingerprint for c in (root, issuing)] == [
        c.fingerprint(hashes.SHA256()).hex() for c in bundle.certificates
    ]
    assert bundle.subjects == "CN=Estate Root CA; CN=Estate Issuing CA"
    assert bundle.source == f"s3://{BUCKET}/ca/estate.pem"


def test_another_bundle_than_the_pinned_one_is_refused_with_the_pin_to_set(s3, root) -> None:
    other = pki.certificate_authority("Someone Else").pem
    with pytest.raises(TrustedCaError) as refused:
        read_trusted_ca(staged(s3, other, pin=root.pem), s3=s3, acm_pca=pca_in)
    message = str(refused.value)
    assert f"has SHA-256 {hashlib.sha256(other).hexdigest()}, not the pinned" in message
    assert "openlineage.trusted_ca.sha256" in message and "BEGIN" not in message


def test_a_missing_object_is_an_aws_error(s3) -> None:
    ca = S3CaBundle(type="s3", uri=f"s3://{BUCKET}/ca/gone.pem", sha256="0" * 64)
    with pytest.raises(AwsError, match=f"cannot read the trusted CA bundle s3://{BUCKET}/ca/gone.pem .NoSuchKey"):
        read_trusted_ca(ca, s3=s3, acm_pca=pca_in)


@pytest.mark.parametrize(
    ("content", "message"),
    [
        (lambda root: root.pem + root.key_pem, "holds a private key: refused"),
        (lambda root: b"nothing here\n", "holds no PEM certificate"),
        (lambda root: b"-----BEGIN CERTIFICATE-----\nAAAA\n-----END CERTIFICATE-----\n", "does not parse"),
    ],
    ids=["private-key", "no-certificate", "malformed"],
)
def test_anything_but_certificates_is_refused_without_quoting_it(root, content, message) -> None:
    data = content(root)
    with pytest.raises(TrustedCaError, match=message) as refused:
        ca_bundle(data, "s3://estate-pki/ca/estate.pem")
    said = str(refused.value)
    assert "s3://estate-pki/ca/estate.pem" in said
    assert not [line for line in data.decode().splitlines() if len(line) > 20 and line in said]


def test_a_private_ca_of_another_region_gives_its_certificate_and_chain(s3, root, issuing) -> None:
    pca = pca_in(CA_REGION)
    arn = pca.create_certificate_authority(
        CertificateAuthorityConfiguration={
            "KeyAlgorithm": "EC_prime256v1",
            "SigningAlgorithm": "SHA256WITHECDSA",
            "Subject": {"CommonName": "Estate Issuing CA"},
        },
        CertificateAuthorityType="SUBORDINATE",
        IdempotencyToken=uuid.uuid4().hex[:16],
    )["CertificateAuthorityArn"]
    pca.import_certificate_authority_certificate(
        CertificateAuthorityArn=arn, Certificate=issuing.pem, CertificateChain=root.pem
    )
    regions = []

    def in_region(region: str):
        regions.append(region)
        return pca_in(region)

    bundle = read_trusted_ca(PrivateCa(type="aws_private_ca", arn=arn), s3=s3, acm_pca=in_region)

    assert regions == [CA_REGION]
    assert bundle.subjects == "CN=Estate Issuing CA; CN=Estate Root CA" and bundle.source == arn


def test_an_unreadable_private_ca_says_what_the_caller_needs(s3) -> None:
    arn = f"arn:aws:acm-pca:{CA_REGION}:123456789012:certificate-authority/{uuid.uuid4()}"
    with pytest.raises(AwsError, match="acm-pca:GetCertificateAuthorityCertificate on it") as refused:
        read_trusted_ca(PrivateCa(type="aws_private_ca", arn=arn), s3=s3, acm_pca=pca_in)
    assert arn in str(refused.value) and "\n" not in str(refused.value)
