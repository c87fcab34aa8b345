"""Reading a certificate zip back, as doctor does: EMR's layout, the certificate and its key, its validity."""

from __future__ import annotations

import datetime as dt
import io
import zipfile

import pytest
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import rsa

from emr_lineage.operations import tls

REGION = "eu-west-1"
NOW = dt.datetime(2026, 11, 23, 12, 0, tzinfo=dt.UTC)


def files_of(data: bytes) -> dict[str, bytes]:
    with zipfile.ZipFile(io.BytesIO(data)) as archive:
        return {name: archive.read(name) for name in archive.namelist()}


def zip_of(files: dict[str, bytes]) -> bytes:
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as archive:
        for name, content in files.items():
            archive.writestr(name, content)
    return buffer.getvalue()


@pytest.fixture(scope="module")
def made() -> tls.CertificateZip:
    return tls.certificate_zip(REGION, days=365, now=NOW)


def test_the_tls_commands_zip_reads_back_with_its_certificate(made: tls.CertificateZip) -> None:
    certificate = tls.read_certificate_zip(made.data)
    assert certificate == tls.ZipCertificate(
        common_name=f"*.{REGION}.compute.internal",
        not_before=made.not_before,
        not_after=made.not_after,
        self_signed=True,
    )
    assert set(files_of(made.data)) == set(tls.ZIP_FILES)


@pytest.mark.parametrize("data", [b"", b"zip", b"PK\x03\x04 truncated"])
def test_garbage_is_not_a_readable_zip(data: bytes) -> None:
    with pytest.raises(tls.TlsError, match=r"^not a readable zip \("):
        tls.read_certificate_zip(data)


@pytest.mark.parametrize("missing", tls.REQUIRED_FILES)
def test_a_missing_required_member_is_named(made: tls.CertificateZip, missing: str) -> None:
    files = files_of(made.data)
    del files[missing]
    with pytest.raises(tls.TlsError, match=f"^the zip lacks {missing} \\(it holds: "):
        tls.read_certificate_zip(zip_of(files))


def test_a_self_signed_certificate_needs_the_trusted_certificates(made: tls.CertificateZip) -> None:
    files = files_of(made.data)
    del files[tls.TRUSTED_CERTIFICATES_FILE]
    with pytest.raises(tls.TlsError, match=f"lacks {tls.TRUSTED_CERTIFICATES_FILE}, which a self-signed"):
        tls.read_certificate_zip(zip_of(files))


def test_members_in_a_folder_are_not_emrs_layout(made: tls.CertificateZip) -> None:
    files = {f"certs/{name}": content for name, content in files_of(made.data).items()}
    with pytest.raises(tls.TlsError, match="lacks privateKey.pem, certificateChain.pem"):
        tls.read_certificate_zip(zip_of(files))


def test_a_chain_that_does_not_parse(made: tls.CertificateZip) -> None:
    files = files_of(made.data) | {tls.CERTIFICATE_CHAIN_FILE: b"-----BEGIN CERTIFICATE-----\nnope\n"}
    with pytest.raises(tls.TlsError, match="certificateChain.pem holds no PEM certificate that parses"):
        tls.read_certificate_zip(zip_of(files))


def test_a_key_of_another_certificate(made: tls.CertificateZip) -> None:
    other = tls.certificate_zip(REGION, now=NOW)
    files = files_of(made.data) | {tls.PRIVATE_KEY_FILE: files_of(other.data)[tls.PRIVATE_KEY_FILE]}
    with pytest.raises(tls.TlsError, match="privateKey.pem is not the key of the certificate"):
        tls.read_certificate_zip(zip_of(files))


def test_an_encrypted_key_is_refused(made: tls.CertificateZip) -> None:
    key = rsa.generate_private_key(public_exponent=65537, key_size=2048)
    encrypted = key.private_bytes(
        serialization.Encoding.PEM,
        serialization.PrivateFormat.PKCS8,
        serialization.BestAvailableEncryption(b"secret"),
    )
    files = files_of(made.data) | {tls.PRIVATE_KEY_FILE: encrypted}
    with pytest.raises(tls.TlsError, match="holds no unencrypted PEM private key"):
        tls.read_certificate_zip(zip_of(files))


def test_validity_at_an_injected_time(made: tls.CertificateZip) -> None:
    certificate = tls.read_certificate_zip(made.data)
    assert certificate.validity_problem(NOW) is None
    last_good = made.not_after - tls.RENEW_BEFORE
    assert certificate.validity_problem(last_good) is None
    soon = last_good + dt.timedelta(seconds=1)
    assert certificate.validity_problem(soon) == "expires on 2027-11-23 UTC, in 29 day(s) (renew 30 days ahead)"
    assert certificate.validity_problem(made.not_after) == "expired on 2027-11-23 12:00 UTC"
    assert certificate.validity_problem(made.not_before - dt.timedelta(days=1)) == (
        "not valid before 2026-11-23 11:55 UTC"
    )
