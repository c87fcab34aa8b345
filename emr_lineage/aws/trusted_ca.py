"""The CA of ``openlineage.trusted_ca``, read by the tools as the bootstrap action reads it on a node: the S3
bundle, refused unless its SHA-256 is the pinned one, or the AWS Private CA's certificate and the chain above
it (GetCertificateAuthorityCertificate); in both cases PEM certificates and nothing else.

``launch --serverless`` builds the job runs' truststore from it (:mod:`emr_lineage.spark.truststore`) and
``doctor`` checks the load balancer's certificate against it, each with the caller's credentials.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from botocore.exceptions import BotoCoreError, ClientError
from cryptography import x509
from cryptography.x509.oid import NameOID

from emr_lineage.aws.clients import AwsError, aws_message
from emr_lineage.errors import EmrLineageError
from emr_lineage.settings.trusted_ca import S3CaBundle, TrustedCa

# A bundle of CA certificates is a few KiB; nothing larger is read.
MAX_BUNDLE_BYTES = 1 << 20
_PRIVATE_KEY = re.compile(rb"-----BEGIN (?:[A-Z0-9]+ )*PRIVATE KEY-----")
_CERTIFICATE = b"-----BEGIN CERTIFICATE-----"


class TrustedCaError(EmrLineageError):
    """The configured CA is not what it must be: another bundle than the pinned one, anything but
    certificates (exit 2; the message never holds the bundle's content)."""


@dataclass(frozen=True)
class CaBundle:
    """The configured CA's certificates, verified, and where they come from (the S3 URI or the CA's ARN)."""

    source: str
    pem: bytes
    certificates: tuple[x509.Certificate, ...]

    @property
    def subjects(self) -> str:
        """Who the certificates are, for messages: their common names (or whole subjects), in order."""
        return "; ".join(common_name(c.subject) for c in self.certificates)


def common_name(name: x509.Name) -> str:
    found = name.get_attributes_for_oid(NameOID.COMMON_NAME)
    return f"CN={found[0].value}" if found else name.rfc4514_string()


def ca_bundle(data: bytes, source: str) -> CaBundle:
    """``data`` as a bundle of PEM certificates (text between them is allowed, as in most bundles); a
    private key, no certificate or one that does not parse is a :class:`TrustedCaError`."""
    if _PRIVATE_KEY.search(data):
        raise TrustedCaError(
            f"the trusted CA bundle {source} holds a private key: refused (it must hold CA certificates only; "
            "replace it, and its pin)"
        )
    if _CERTIFICATE not in data:
        raise TrustedCaError(f"the trusted CA bundle {source} holds no PEM certificate (-----BEGIN CERTIFICATE-----)")
    try:
        certificates = tuple(x509.load_pem_x509_certificates(data))
    except ValueError:
        raise TrustedCaError(f"a certificate of the trusted CA bundle {source} does not parse") from None
    return CaBundle(source, data, certificates)


def read_trusted_ca(trusted_ca: TrustedCa, *, s3: Any, acm_pca: Callable[[str], Any]) -> CaBundle:
    """The configured CA, verified: ``s3`` reads a bundle, ``acm_pca`` makes the AWS Private CA client of a
    region (the CA's, which the ARN names). An AWS failure is an :class:`AwsError`, a bundle that is not the
    pinned one or not certificates a :class:`TrustedCaError`."""
    if isinstance(trusted_ca, S3CaBundle):
        data = _object(s3, trusted_ca)
        actual = hashlib.sha256(data).hexdigest()
        if actual != trusted_ca.sha256:
            raise TrustedCaError(
                f"{trusted_ca.uri} has SHA-256 {actual}, not the pinned {trusted_ca.sha256}: if the new bundle is "
                "yours, pin it (openlineage.trusted_ca.sha256 in cdk.json) and deploy"
            )
        return ca_bundle(data, trusted_ca.uri)
    try:
        answer = acm_pca(trusted_ca.region).get_certificate_authority_certificate(
            CertificateAuthorityArn=trusted_ca.arn
        )
    except (ClientError, BotoCoreError) as exc:
        raise AwsError(
            f"cannot read the certificate of {trusted_ca.arn} ({aws_message(exc)}); it needs "
            "acm-pca:GetCertificateAuthorityCertificate on it, and a CA of another account shared with this one"
        ) from None
    parts = [answer.get("Certificate"), answer.get("CertificateChain")]
    return ca_bundle("\n".join(p.strip() for p in parts if p).encode() + b"\n", trusted_ca.arn)


def _object(s3: Any, bundle: S3CaBundle) -> bytes:
    try:
        body = s3.get_object(Bucket=bundle.bucket, Key=bundle.key)["Body"]
        data = body.read(MAX_BUNDLE_BYTES + 1)
    except (ClientError, BotoCoreError) as exc:
        raise AwsError(f"cannot read the trusted CA bundle {bundle.uri} ({aws_message(exc)})") from None
    if len(data) > MAX_BUNDLE_BYTES:
        raise TrustedCaError(f"{bundle.uri} is larger than {MAX_BUNDLE_BYTES} bytes: not a bundle of CA certificates")
    return data
