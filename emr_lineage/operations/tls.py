"""The certificate zip EMR's in-transit encryption reads: make it, stage it, find who reads it.

EMR's documented layout (https://docs.aws.amazon.com/emr/latest/ManagementGuide/emr-encryption-enable.html,
"Providing certificates for encrypting data in transit with Amazon EMR encryption"): a zip whose
PEM files are named exactly ``privateKey.pem`` (required), ``certificateChain.pem`` (required) and
``trustedCertificates.pem`` (required when no CA of Java's default trust store signed the
certificate, which is the case of a self-signed one). The certificate should be a wildcard for
the VPC's internal domain, where the nodes' host names live: ``*.ec2.internal`` in us-east-1,
``*.<region>.compute.internal`` in every other region (the page's example uses ``CN=*.ec2.internal``).

The EMR stack's security configuration points at ``s3://<artifacts bucket>/tls/emr-tls-certificates.zip``
(:data:`~emr_lineage.aws.artifacts.TLS_CERTIFICATES_KEY`) when ``emr.in_transit_encryption`` is on;
EMR downloads the zip to every node when a cluster starts, so replacing it only affects new clusters.
"""

from __future__ import annotations

import datetime as dt
import io
import json
import os
import tempfile
import zipfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from botocore.exceptions import BotoCoreError, ClientError
from cryptography import x509
from cryptography.exceptions import UnsupportedAlgorithm
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import rsa
from cryptography.x509.oid import ExtendedKeyUsageOID, NameOID

from emr_lineage.aws import emr as emr_cluster
from emr_lineage.aws.artifacts import TLS_CERTIFICATES_KEY
from emr_lineage.aws.clients import AwsError, aws_message
from emr_lineage.aws.upload import Upload, head_object, upload_once
from emr_lineage.errors import EmrLineageError

EMR_CERTIFICATES_DOC = "https://docs.aws.amazon.com/emr/latest/ManagementGuide/emr-encryption-enable.html"
PRIVATE_KEY_FILE = "privateKey.pem"
CERTIFICATE_CHAIN_FILE = "certificateChain.pem"
TRUSTED_CERTIFICATES_FILE = "trustedCertificates.pem"
# EMR's file names in the order the zip holds them; trustedCertificates.pem may only be left out when
# a CA of Java's default trust store signed the certificate (never the case of a self-signed one).
ZIP_FILES = (PRIVATE_KEY_FILE, CERTIFICATE_CHAIN_FILE, TRUSTED_CERTIFICATES_FILE)
REQUIRED_FILES = (PRIVATE_KEY_FILE, CERTIFICATE_CHAIN_FILE)
# doctor fails a certificate that ends within this time: there is time to replace it.
RENEW_BEFORE = dt.timedelta(days=30)
# A zip of three PEM files is a few KiB; doctor reads no more than this of the object or a member.
MAX_ZIP_BYTES = 1 << 20
DEFAULT_VALIDITY_DAYS = 365
MAX_VALIDITY_DAYS = 3650
RSA_KEY_BITS = 2048
# us-east-1 predates the <region>.compute.internal naming of private DNS names.
US_EAST_1 = "us-east-1"
US_EAST_1_DOMAIN = "ec2.internal"
# A node whose clock is a little behind must not see a certificate from the future.
CLOCK_SKEW = dt.timedelta(minutes=5)


class TlsError(EmrLineageError):
    """The certificate zip cannot be made or staged as asked (exit 2)."""


def internal_domain(region: str) -> str:
    """The VPC's internal DNS domain of EC2 private host names in ``region``."""
    return US_EAST_1_DOMAIN if region == US_EAST_1 else f"{region}.compute.internal"


@dataclass(frozen=True)
class CertificateZip:
    data: bytes  # the zip
    common_name: str
    not_before: dt.datetime
    not_after: dt.datetime
    sha256_fingerprint: str


def certificate_zip(
    region: str, *, days: int = DEFAULT_VALIDITY_DAYS, now: dt.datetime | None = None
) -> CertificateZip:
    """A new RSA key and a self-signed wildcard certificate for ``region``'s internal domain, zipped
    in EMR's layout. The certificate is its own chain and its own trust anchor."""
    if not 1 <= days <= MAX_VALIDITY_DAYS:
        raise TlsError(f"--days must be between 1 and {MAX_VALIDITY_DAYS}, got {days}")
    now = now or dt.datetime.now(dt.UTC)
    key = rsa.generate_private_key(public_exponent=65537, key_size=RSA_KEY_BITS)
    common_name = f"*.{internal_domain(region)}"
    name = x509.Name(
        [
            x509.NameAttribute(NameOID.COMMON_NAME, common_name),
            x509.NameAttribute(NameOID.ORGANIZATION_NAME, "emr-lineage"),
        ]
    )
    not_before = now - CLOCK_SKEW
    not_after = now + dt.timedelta(days=days)
    public_key = key.public_key()
    certificate = (
        x509.CertificateBuilder()
        .subject_name(name)
        .issuer_name(name)
        .public_key(public_key)
        .serial_number(x509.random_serial_number())
        .not_valid_before(not_before)
        .not_valid_after(not_after)
        .add_extension(x509.SubjectAlternativeName([x509.DNSName(common_name)]), critical=False)
        # As `openssl req -x509` (the documented recipe) makes it: a CA, so Java trusts it as an anchor.
        .add_extension(x509.BasicConstraints(ca=True, path_length=None), critical=True)
        .add_extension(
            x509.KeyUsage(
                digital_signature=True,
                key_encipherment=True,
                key_cert_sign=True,
                content_commitment=False,
                data_encipherment=False,
                key_agreement=False,
                crl_sign=False,
                encipher_only=False,
                decipher_only=False,
            ),
            critical=True,
        )
        # Nodes are both servers and clients of each other (Hadoop, Spark, YARN shuffle).
        .add_extension(
            x509.ExtendedKeyUsage([ExtendedKeyUsageOID.SERVER_AUTH, ExtendedKeyUsageOID.CLIENT_AUTH]), critical=False
        )
        .add_extension(x509.SubjectKeyIdentifier.from_public_key(public_key), critical=False)
        .sign(key, hashes.SHA256())
    )
    certificate_pem = certificate.public_bytes(serialization.Encoding.PEM)
    key_pem = key.private_bytes(
        serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption()
    )
    buffer = io.BytesIO()
    stamp = now.astimezone(dt.UTC).timetuple()[:6]
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED) as archive:
        # Self-signed: the certificate is its own chain and its own trust anchor.
        contents = {PRIVATE_KEY_FILE: key_pem, CERTIFICATE_CHAIN_FILE: certificate_pem}
        for file_name in ZIP_FILES:
            entry = zipfile.ZipInfo(file_name, date_time=stamp)
            entry.external_attr = 0o600 << 16  # a private key: owner only when unzipped
            archive.writestr(entry, contents.get(file_name, certificate_pem), zipfile.ZIP_DEFLATED)
    return CertificateZip(
        data=buffer.getvalue(),
        common_name=common_name,
        not_before=not_before,
        not_after=not_after,
        sha256_fingerprint=certificate.fingerprint(hashes.SHA256()).hex(),
    )


def write_new_file(path: Path, data: bytes) -> None:
    """Write ``data`` to ``path``, which must not exist yet (owner-only: it holds a private key)."""
    try:
        descriptor = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    except FileExistsError:
        raise TlsError(f"--out {path} exists; choose a new file name (the zip is never overwritten)") from None
    with os.fdopen(descriptor, "wb") as handle:
        handle.write(data)


def certificates_uri(bucket: str) -> str:
    return f"s3://{bucket}/{TLS_CERTIFICATES_KEY}"


def staged_zip(s3: Any, bucket: str) -> dict[str, Any] | None:
    """``head_object`` of the staged zip; None when there is none."""
    return head_object(s3, bucket, TLS_CERTIFICATES_KEY)


def staged_zip_data(s3: Any, bucket: str) -> bytes | None:
    """The staged zip's bytes; None when there is none. :class:`TlsError` when it is larger than a
    certificate zip can be, :class:`AwsError` when it cannot be read."""
    head = staged_zip(s3, bucket)
    if head is None:
        return None
    size = int(head.get("ContentLength", 0))
    if size > MAX_ZIP_BYTES:
        raise TlsError(f"{certificates_uri(bucket)} is {size} bytes, not a certificate zip (at most {MAX_ZIP_BYTES})")
    try:
        return s3.get_object(Bucket=bucket, Key=TLS_CERTIFICATES_KEY)["Body"].read(MAX_ZIP_BYTES + 1)
    except (ClientError, BotoCoreError) as exc:
        raise AwsError(f"cannot read {certificates_uri(bucket)} ({aws_message(exc)})") from None


@dataclass(frozen=True)
class ZipCertificate:
    """The certificate a zip in EMR's layout presents (the first of its chain)."""

    common_name: str
    not_before: dt.datetime
    not_after: dt.datetime
    self_signed: bool

    def validity_problem(self, now: dt.datetime) -> str | None:
        """Why the certificate is no good at ``now`` (expired, ending within :data:`RENEW_BEFORE`,
        not valid yet); None when it is."""
        if now >= self.not_after:
            return f"expired on {self.not_after:%Y-%m-%d %H:%M} UTC"
        if now < self.not_before:
            return f"not valid before {self.not_before:%Y-%m-%d %H:%M} UTC"
        left = self.not_after - now
        if left < RENEW_BEFORE:
            ahead = RENEW_BEFORE.days
            return f"expires on {self.not_after:%Y-%m-%d} UTC, in {left.days} day(s) (renew {ahead} days ahead)"
        return None


def read_certificate_zip(data: bytes) -> ZipCertificate:
    """Check a zip is in EMR's layout (:data:`ZIP_FILES`), its private key unencrypted and the key of
    its certificate; :class:`TlsError` says what is wrong (the first problem found)."""
    try:
        with zipfile.ZipFile(io.BytesIO(data)) as archive:
            names = set(archive.namelist())
            missing = [name for name in REQUIRED_FILES if name not in names]
            if missing:
                raise TlsError(
                    f"the zip lacks {', '.join(missing)} (it holds: {', '.join(sorted(names)) or 'nothing'})"
                )
            files = {name: _member(archive, name) for name in ZIP_FILES if name in names}
    # RuntimeError: an encrypted member; NotImplementedError: a compression zipfile cannot read.
    except (zipfile.BadZipFile, zipfile.LargeZipFile, EOFError, ValueError, RuntimeError, NotImplementedError) as exc:
        raise TlsError(f"not a readable zip ({' '.join(str(exc).split())})") from None
    try:
        chain = x509.load_pem_x509_certificates(files[CERTIFICATE_CHAIN_FILE])
    except ValueError:
        raise TlsError(f"{CERTIFICATE_CHAIN_FILE} holds no PEM certificate that parses") from None
    certificate = chain[0]
    try:
        key = serialization.load_pem_private_key(files[PRIVATE_KEY_FILE], password=None)
    except (ValueError, TypeError, UnsupportedAlgorithm):
        raise TlsError(f"{PRIVATE_KEY_FILE} holds no unencrypted PEM private key that parses") from None
    if _public(key.public_key()) != _public(certificate.public_key()):
        raise TlsError(f"{PRIVATE_KEY_FILE} is not the key of the certificate in {CERTIFICATE_CHAIN_FILE}")
    self_signed = certificate.issuer == certificate.subject
    if self_signed and TRUSTED_CERTIFICATES_FILE not in files:
        raise TlsError(f"the zip lacks {TRUSTED_CERTIFICATES_FILE}, which a self-signed certificate needs")
    names_attribute = certificate.subject.get_attributes_for_oid(NameOID.COMMON_NAME)
    return ZipCertificate(
        common_name=str(names_attribute[0].value) if names_attribute else certificate.subject.rfc4514_string(),
        not_before=certificate.not_valid_before_utc,
        not_after=certificate.not_valid_after_utc,
        self_signed=self_signed,
    )


def _member(archive: zipfile.ZipFile, name: str) -> bytes:
    with archive.open(name) as handle:
        data = handle.read(MAX_ZIP_BYTES + 1)
    if len(data) > MAX_ZIP_BYTES:
        raise TlsError(f"{name} in the zip is larger than {MAX_ZIP_BYTES} bytes, not a PEM file")
    return data


def _public(key: Any) -> bytes:
    return key.public_bytes(serialization.Encoding.DER, serialization.PublicFormat.SubjectPublicKeyInfo)


def refuse_to_overwrite(s3: Any, bucket: str) -> None:
    """Raise :class:`TlsError` when a zip is staged already: running clusters use it."""
    if staged_zip(s3, bucket) is not None:
        raise TlsError(
            f"{certificates_uri(bucket)} exists and running clusters use it; pass --replace to upload a new "
            "certificate (clusters started from then on get it)"
        )


def stage(s3: Any, bucket: str, bundle: CertificateZip) -> Upload:
    """Upload the zip to :data:`TLS_CERTIFICATES_KEY` (over any zip there: see :func:`refuse_to_overwrite`)."""
    # A private file for the upload helper: mkstemp makes it readable by its owner only.
    descriptor, name = tempfile.mkstemp(suffix=".zip", prefix="emr-tls-")
    try:
        with os.fdopen(descriptor, "wb") as handle:
            handle.write(bundle.data)
        return upload_once(s3, Path(name), bucket, TLS_CERTIFICATES_KEY, content_type="application/zip")
    finally:
        os.unlink(name)


@dataclass(frozen=True)
class SecurityConfigurationUse:
    """What the environment's security configuration does with the certificate zip."""

    name: str
    in_transit_encryption: bool
    certificates_uri: str | None  # TLSCertificateConfiguration.S3Object of a PEM provider

    def reads(self, uri: str) -> bool:
        return self.in_transit_encryption and self.certificates_uri == uri


def security_configuration_use(ssm: Any, emr: Any, env: str) -> SecurityConfigurationUse:
    """The security configuration named in the environment's launch spec, as EMR has it."""
    spec = emr_cluster.load_launch_spec(ssm, env)
    name = spec.get("SecurityConfiguration")
    if not name:
        raise AwsError(f"the launch spec of env {env!r} names no SecurityConfiguration; deploy the EMR stack")
    try:
        text = emr.describe_security_configuration(Name=name)["SecurityConfiguration"]
    except (ClientError, BotoCoreError) as exc:
        raise AwsError(f"cannot read EMR security configuration {name} ({aws_message(exc)})") from None
    try:
        encryption = json.loads(text).get("EncryptionConfiguration") or {}
    except (ValueError, AttributeError):
        raise AwsError(f"EMR security configuration {name} is not a JSON object") from None
    tls = (encryption.get("InTransitEncryptionConfiguration") or {}).get("TLSCertificateConfiguration") or {}
    uri = tls.get("S3Object") if tls.get("CertificateProviderType") == "PEM" else None
    return SecurityConfigurationUse(name, bool(encryption.get("EnableInTransitEncryption")), uri)
