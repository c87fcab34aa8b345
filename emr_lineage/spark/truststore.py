"""The trusted CA (``openlineage.trusted_ca``) for a Spark driver no bootstrap action prepared: an EMR
Serverless job run, or a cluster emr-lineage did not start.

On the clusters emr-lineage starts, the bootstrap action imports the CA into every JDK's cacerts. Elsewhere
the driver's JVM is pointed at a truststore of its own (``-Djavax.net.ssl.trustStore``): the public roots
(Mozilla's, as certifi ships them for ``requests``; AWS's endpoints chain to Amazon's roots among them) and
the CA, PKCS12, password :data:`TRUSTSTORE_PASSWORD`. The OpenLineage HTTP transport builds its TLS context
from the JVM's default trust (Apache HttpClient 5's ``SSLContexts.createDefault()``, when its listener starts;
its ``sslContextConfig`` only loads client keys), so this is what the listener trusts. It replaces cacerts for
everything else in that JVM too, hence the public roots.

:func:`truststore_properties` gives the Spark properties for a :class:`TrustStore` (EMR Serverless job runs,
``attach``); :func:`stage_truststore` builds one and puts it in the artifacts bucket, under ``truststores/``
at a key of its certificates, as a zip Spark unpacks into the driver's working directory (``spark.archives``).
"""

from __future__ import annotations

import functools
import hashlib
import io
import re
import tempfile
import warnings
import zipfile
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.serialization import pkcs12
from requests import certs

from emr_lineage.aws.artifacts import TRUSTSTORES_PREFIX
from emr_lineage.aws.trusted_ca import CaBundle
from emr_lineage.aws.upload import head_object, upload

DRIVER_JAVA_OPTIONS = "spark.driver.extraJavaOptions"
SPARK_ARCHIVES = "spark.archives"
# The environment of a YARN application master, which in cluster mode is the driver's JVM: the JVM reads
# JAVA_TOOL_OPTIONS before its command line, so a cluster's own spark.driver.extraJavaOptions (EMR sets
# defaults there) is neither replaced nor read.
APP_MASTER_JAVA_TOOL_OPTIONS = "spark.yarn.appMasterEnv.JAVA_TOOL_OPTIONS"
# cacerts' own password: until a shipped store is unpacked the JVM falls back to cacerts with it (JDK 17's
# TrustStoreManager), so what Spark downloads before then still verifies. It guards nothing (public certificates).
TRUSTSTORE_PASSWORD = "changeit"
TRUSTSTORE_TYPE = "PKCS12"
# A store emr-lineage named before (its path holds this) is replaced; any other is the caller's own.
TRUSTSTORE_MARK = "emr-lineage"
ARCHIVE_ALIAS = "emr-lineage-truststore"  # the directory Spark unpacks the archive into
STORE_FILE = "truststore.p12"
CA_ALIAS_PREFIX = "emr-lineage-ca-"  # as the bootstrap action names the CA's certificates in cacerts
_OPTIONS = re.compile(r"(?:^|\s)-Djavax\.net\.ssl\.trustStore(?:Password|Type)?=\S*")
_PATH = re.compile(r"-Djavax\.net\.ssl\.trustStore=(\S+)")
# A fixed time in the zip: the same certificates make the same archive entry.
_ZIP_TIME = (2020, 1, 1, 0, 0, 0)


@dataclass(frozen=True, kw_only=True)
class TrustStore:
    """Where a Spark driver's JVM finds the truststore of ``openlineage.trusted_ca``.

    ``path`` is the file the JVM opens. With ``archive`` (``s3://.../x.zip#<alias>``, the zip holding it), Spark
    unpacks the archive into the driver's working directory as ``<alias>/`` before the application starts, and
    ``path`` is relative to it: EMR Serverless, and YARN cluster mode. Without, ``path`` is an absolute path on
    the node where the driver runs (a client-mode driver: the archive would not be in its working directory).
    """

    path: str
    archive: str | None = None


def truststore_properties(store: TrustStore, existing: Mapping[str, str] | None = None) -> dict[str, str]:
    """The Spark properties to set so that the driver's JVM, where the listener runs, trusts ``store``: the
    ``-Djavax.net.ssl.trustStore``, ``trustStorePassword`` and ``trustStoreType`` options on
    ``spark.driver.extraJavaOptions``, and the archive on ``spark.archives``; executors send no lineage.

    ``existing`` is what the application gets otherwise (a cluster's spark-defaults, a job's properties): a value
    set at submit time replaces the defaults' one, so its options and archives are kept and ours appended. A
    store emr-lineage named before (:data:`TRUSTSTORE_MARK` in its path; an archive of the same alias) is
    replaced, so a
    second call changes nothing; with a truststore of the caller's own, nothing is returned (a JVM loads one
    truststore, and the caller's may hold what their jobs need)."""
    existing = existing or {}
    options = existing.get(DRIVER_JAVA_OPTIONS, "")
    named = _PATH.search(options)
    if named and TRUSTSTORE_MARK not in named.group(1):
        return {}
    ours = _java_options(store)
    kept = _OPTIONS.sub("", options).strip()
    properties = {DRIVER_JAVA_OPTIONS: f"{kept} {ours}".strip()}
    if store.archive:
        alias = "#" + store.archive.rpartition("#")[2]
        archives = [a for a in existing.get(SPARK_ARCHIVES, "").split(",") if a.strip() and not a.endswith(alias)]
        properties[SPARK_ARCHIVES] = ",".join([*archives, store.archive])
    return properties


def _java_options(store: TrustStore) -> str:
    return (
        f"-Djavax.net.ssl.trustStore={store.path} -Djavax.net.ssl.trustStorePassword={TRUSTSTORE_PASSWORD} "
        f"-Djavax.net.ssl.trustStoreType={TRUSTSTORE_TYPE}"
    )


def cluster_mode_properties(store: TrustStore) -> dict[str, str]:
    """The properties that make a YARN cluster-mode driver (its application master's JVM) trust a shipped
    ``store``: its archive on ``spark.archives``, its options in the master's JAVA_TOOL_OPTIONS. ``attach``
    merges them into a running cluster's spark-defaults; a client-mode driver on the primary node trusts the
    CA through that node's cacerts instead (the bootstrap script's ``--trusted-ca-only`` step)."""
    if not store.archive:
        raise ValueError("a cluster-mode driver needs the truststore shipped as an archive")
    return {SPARK_ARCHIVES: store.archive, APP_MASTER_JAVA_TOOL_OPTIONS: _java_options(store)}


@functools.cache
def public_roots() -> tuple[x509.Certificate, ...]:
    """Mozilla's root CAs, as certifi ships them for ``requests`` (what a JDK's cacerts holds, near enough)."""
    found = []
    for block in Path(certs.where()).read_bytes().split(b"-----END CERTIFICATE-----")[:-1]:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # cryptography warns of a few old roots' serial numbers
            try:
                found.append(x509.load_pem_x509_certificate(block + b"-----END CERTIFICATE-----\n"))
            except ValueError:  # one a future cryptography refuses: Java would not miss it
                continue
    return tuple(found)


def _alias(certificate: x509.Certificate, prefix: str) -> bytes:
    return (prefix + certificate.fingerprint(hashes.SHA256()).hex()[:16]).encode()


def java_truststore(bundle: CaBundle) -> bytes:
    """A PKCS12 truststore Java reads (each certificate a trusted entry): the CA's certificates, then the
    public roots, password :data:`TRUSTSTORE_PASSWORD`."""
    entries = {_alias(c, CA_ALIAS_PREFIX): c for c in bundle.certificates}
    entries.update({_alias(c, "public-"): c for c in public_roots()})
    return pkcs12.serialize_java_truststore(
        [pkcs12.PKCS12Certificate(c, name) for name, c in entries.items()],
        serialization.BestAvailableEncryption(TRUSTSTORE_PASSWORD.encode()),
    )


def truststore_key(bundle: CaBundle) -> str:
    """The archive's key in the artifacts bucket: one per set of certificates (the store's bytes differ from
    one build to the next, its encryption's salt being random)."""
    digest = hashlib.sha256()
    for certificate in (*bundle.certificates, *public_roots()):
        digest.update(certificate.fingerprint(hashes.SHA256()))
    return f"{TRUSTSTORES_PREFIX}{digest.hexdigest()[:32]}.zip"


def truststore_archive(bundle: CaBundle) -> bytes:
    """The zip of :func:`java_truststore`, as ``spark.archives`` ships it."""
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED) as archive:
        archive.writestr(zipfile.ZipInfo(STORE_FILE, date_time=_ZIP_TIME), java_truststore(bundle))
    return buffer.getvalue()


def stage_truststore(s3: Any, bucket: str, bundle: CaBundle, *, upload_it: bool = True) -> TrustStore:
    """The truststore of ``bundle`` in ``bucket`` (uploaded unless there already, or ``upload_it`` is False:
    where it would be), as a :class:`TrustStore` a job run unpacks. S3 problems are an AwsError."""
    key = truststore_key(bundle)
    if upload_it and head_object(s3, bucket, key) is None:
        with tempfile.TemporaryDirectory(prefix="emr-lineage-truststore-") as folder:
            path = Path(folder) / STORE_FILE
            path.write_bytes(truststore_archive(bundle))
            upload(s3, path, bucket, key, extra={"ContentType": "application/zip"})
    return TrustStore(path=f"{ARCHIVE_ALIAS}/{STORE_FILE}", archive=f"s3://{bucket}/{key}#{ARCHIVE_ALIAS}")
