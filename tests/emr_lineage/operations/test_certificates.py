"""The certificate zip of EMR's in-transit encryption: layout, certificate, staging, who reads it."""

from __future__ import annotations

import datetime as dt
import io
import zipfile
from collections.abc import Iterator

import pytest
from cryptography import x509
from cryptography.hazmat.primitives import serialization
from cryptography.x509.oid import NameOID

from emr_lineage.aws.artifacts import TLS_CERTIFICATES_KEY
from emr_lineage.aws.clients import AwsError
from emr_lineage.operations import tls
from tests.emr_lineage.operations.prepared_account import (
    BUCKET,
    ENV,
    REGION,
    SECURITY_CONFIGURATION,
    client,
    deploy_emr_stack_outputs,
    moto_account,
)


@pytest.fixture
def aws(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    yield from moto_account(monkeypatch)


NOW = dt.datetime(2026, 11, 23, 12, 0, tzinfo=dt.UTC)


def unzip(data: bytes) -> dict[str, bytes]:
    with zipfile.ZipFile(io.BytesIO(data)) as archive:
        return {name: archive.read(name) for name in archive.namelist()}


@pytest.mark.parametrize(
    "region, domain",
    [
        ("us-east-1", "ec2.internal"),
        ("eu-west-1", "eu-west-1.compute.internal"),
        ("us-west-2", "us-west-2.compute.internal"),
    ],
)
def test_the_wildcard_is_the_regions_internal_domain(region: str, domain: str) -> None:
    assert tls.internal_domain(region) == domain
    bundle = tls.certificate_zip(region, days=30, now=NOW)
    certificate = x509.load_pem_x509_certificate(unzip(bundle.data)[tls.CERTIFICATE_CHAIN_FILE])
    assert bundle.common_name == f"*.{domain}"
    assert certificate.subject.get_attributes_for_oid(NameOID.COMMON_NAME)[0].value == f"*.{domain}"
    names = certificate.extensions.get_extension_for_class(x509.SubjectAlternativeName).value
    assert names.get_values_for_type(x509.DNSName) == [f"*.{domain}"]


def test_the_zip_holds_emrs_three_pem_files_of_one_self_signed_certificate_and_its_key() -> None:
    bundle = tls.certificate_zip(REGION, days=365, now=NOW)
    files = unzip(bundle.data)
    assert sorted(files) == sorted(["privateKey.pem", "certificateChain.pem", "trustedCertificates.pem"])
    certificate = x509.load_pem_x509_certificate(files["certificateChain.pem"])
    assert files["trustedCertificates.pem"] == files["certificateChain.pem"]
    assert certificate.issuer == certificate.subject
    certificate.verify_directly_issued_by(certificate)  # signed by its own key
    key = serialization.load_pem_private_key(files["privateKey.pem"], password=None)
    assert key.public_key().public_numbers() == certificate.public_key().public_numbers()
    assert certificate.not_valid_after_utc == NOW + dt.timedelta(days=365) == bundle.not_after
    assert certificate.not_valid_before_utc < NOW
    assert certificate.extensions.get_extension_for_class(x509.BasicConstraints).value.ca


def test_two_zips_have_two_keys() -> None:
    first, second = (unzip(tls.certificate_zip(REGION, now=NOW).data)["privateKey.pem"] for _ in range(2))
    assert first != second


@pytest.mark.parametrize("days", [0, tls.MAX_VALIDITY_DAYS + 1])
def test_validity_is_bounded(days: int) -> None:
    with pytest.raises(tls.TlsError, match="--days"):
        tls.certificate_zip(REGION, days=days, now=NOW)


def test_write_new_file_never_overwrites(tmp_path) -> None:
    path = tmp_path / "tls.zip"
    tls.write_new_file(path, b"one")
    assert path.stat().st_mode & 0o777 == 0o600
    with pytest.raises(tls.TlsError, match="exists"):
        tls.write_new_file(path, b"two")
    assert path.read_bytes() == b"one"


def test_stage_uploads_to_the_key_the_security_configuration_names_and_refuses_to_overwrite(aws) -> None:
    deploy_emr_stack_outputs()
    s3 = client("s3")
    tls.refuse_to_overwrite(s3, BUCKET)  # nothing there yet
    bundle = tls.certificate_zip(REGION, now=NOW)
    staged = tls.stage(s3, BUCKET, bundle)
    assert staged.uri == f"s3://{BUCKET}/{TLS_CERTIFICATES_KEY}" == tls.certificates_uri(BUCKET)
    assert s3.get_object(Bucket=BUCKET, Key=TLS_CERTIFICATES_KEY)["Body"].read() == bundle.data
    with pytest.raises(tls.TlsError, match="--replace"):
        tls.refuse_to_overwrite(s3, BUCKET)
    use = tls.security_configuration_use(client("ssm"), client("emr"), ENV)
    assert use.name == SECURITY_CONFIGURATION and use.reads(staged.uri)


def test_a_security_configuration_without_in_transit_encryption_reads_nothing(aws) -> None:
    deploy_emr_stack_outputs(certificates=None)
    use = tls.security_configuration_use(client("ssm"), client("emr"), ENV)
    assert not use.in_transit_encryption and not use.reads(tls.certificates_uri(BUCKET))


def test_no_launch_spec_names_the_stack_to_deploy(aws) -> None:
    with pytest.raises(AwsError, match="deploy the EMR stack"):
        tls.security_configuration_use(client("ssm"), client("emr"), ENV)
