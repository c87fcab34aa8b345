"""doctor's check of ``openlineage.trusted_ca``: the certificate the load balancer presents chains to the
configured CA, as the listener's JVM verifies it (the CA's certificates as trust anchors, the host name checked).

The CA is read as a node reads it (:mod:`emr_lineage.aws.trusted_ca`: the pinned S3 bundle, or the AWS Private
CA's certificate and chain), with doctor's credentials; the handshake is Python's ``ssl`` with a context that
trusts those certificates alone. Java accepts any certificate of its truststore as an anchor, a CA that is
not a root included, so the context accepts a chain that ends at one (OpenSSL's partial-chain flag).
"""

from __future__ import annotations

import socket
import ssl
from urllib.parse import urlsplit

from cryptography import x509
from cryptography.hazmat.primitives import serialization

from emr_lineage.aws.clients import AwsError
from emr_lineage.aws.trusted_ca import CaBundle, TrustedCaError, common_name, read_trusted_ca
from emr_lineage.errors import network_reason
from emr_lineage.operations.checks import CheckResult, DoctorClients, Status, error_of
from emr_lineage.settings.trusted_ca import S3CaBundle, TrustedCa

CHECK, TITLE = "trusted-ca", "load balancer certificate chains to openlineage.trusted_ca"
HTTPS_PORT = 443
# OpenSSL's X509_V_ERR_HOSTNAME_MISMATCH and _IP_ADDRESS_MISMATCH: the chain may be good, the name is not the
# certificate's.
NAME_MISMATCHES = frozenset({62, 64})
REACH_FIX = (
    "the load balancer is internal: run doctor inside the VPC, or forward port 443 through SSM and pass "
    "--marquez https://<domain_name>:5443 with <domain_name> pointing at 127.0.0.1 (docs/e2e.md)"
)


def trusted_ca_chain(clients: DoctorClients, trusted_ca: TrustedCa, url: str, *, timeout: float) -> CheckResult:
    """Read the configured CA, then check that ``url``'s server (the load balancer) presents a certificate
    that chains to it, for the name in ``url``."""
    try:
        bundle = read_trusted_ca(trusted_ca, s3=clients.s3, acm_pca=clients.in_region("acm-pca"))
    except TrustedCaError as exc:
        return CheckResult(CHECK, TITLE, Status.FAIL, error_of(exc), _bundle_fix(trusted_ca))
    except AwsError as exc:
        action = "s3:GetObject" if isinstance(trusted_ca, S3CaBundle) else "acm-pca:GetCertificateAuthorityCertificate"
        fix = f"give doctor's credentials {action} on {trusted_ca.source}"
        return CheckResult(CHECK, TITLE, Status.FAIL, error_of(exc), fix)
    return chains_to(bundle, url, timeout=timeout)


def _bundle_fix(trusted_ca: TrustedCa) -> str:
    if isinstance(trusted_ca, S3CaBundle):
        return f"put the bundle of CA certificates at {trusted_ca.uri} and its SHA-256 in openlineage.trusted_ca.sha256"
    return f"correct openlineage.trusted_ca.arn ({trusted_ca.arn})"


def chains_to(bundle: CaBundle, url: str, *, timeout: float) -> CheckResult:
    """The TLS handshake with ``url``'s host, trusting ``bundle``'s certificates alone."""
    parts = urlsplit(url)
    host, port = parts.hostname or "", parts.port or HTTPS_PORT
    where = f"{host}:{port}"
    anchors = "".join(c.public_bytes(serialization.Encoding.PEM).decode() for c in bundle.certificates)
    context = ssl.create_default_context(cadata=anchors)
    context.verify_flags |= ssl.VERIFY_X509_PARTIAL_CHAIN
    try:
        presented = _handshake(context, host, port, timeout)
    except ssl.SSLCertVerificationError as exc:
        detail = f"{where} presents {_unverified(host, port, timeout)}: {exc.verify_message}"
        if exc.verify_code in NAME_MISMATCHES:
            fix = "reach the load balancer by the name its certificate is for (marquez.domain_name)"
        else:
            detail += f"; the configured CA is {bundle.subjects} ({bundle.source})"
            fix = (
                "the load balancer's certificate (marquez.certificate_arn) must be issued by that CA or one it "
                "signed: issue it there, or name its CA in openlineage.trusted_ca"
            )
        return CheckResult(CHECK, TITLE, Status.FAIL, detail, fix)
    except (OSError, ssl.SSLError) as exc:
        return CheckResult(
            CHECK, TITLE, Status.FAIL, f"no TLS handshake with {where}: {network_reason(exc)}", REACH_FIX
        )
    detail = f"{where} presents {presented}, which chains to {bundle.subjects} ({bundle.source})"
    return CheckResult(CHECK, TITLE, Status.PASS, detail)


def _handshake(context: ssl.SSLContext, host: str, port: int, timeout: float) -> str:
    """Who the server's certificate is for and who issued it, after a handshake ``context`` accepted."""
    with socket.create_connection((host, port), timeout=timeout) as raw:
        with context.wrap_socket(raw, server_hostname=host) as tls:
            return _describe(tls.getpeercert(binary_form=True))


def _unverified(host: str, port: int, timeout: float) -> str:
    """The certificate the server presents, read without verifying it (to say what it is)."""
    context = ssl.create_default_context()
    context.check_hostname, context.verify_mode = False, ssl.CERT_NONE
    try:
        return _handshake(context, host, port, timeout)
    except (OSError, ssl.SSLError):
        return "a certificate"


def _describe(der: bytes | None) -> str:
    if not der:
        return "no certificate"
    certificate = x509.load_der_x509_certificate(der)
    return f"{common_name(certificate.subject)} issued by {common_name(certificate.issuer)}"
