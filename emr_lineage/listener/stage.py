"""Stage the OpenLineage Spark listener jar: download it, check it is a jar with the pinned SHA-256, upload it once.

:func:`fetch_jar` (download + jar check) is shared with ``stage-listener --pin``
(:mod:`emr_lineage.listener.pin`), which verifies the jar against the repository instead of a pin.
"""

from __future__ import annotations

import hashlib
import tempfile
import zipfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from emr_lineage.aws.upload import upload_once
from emr_lineage.errors import EmrLineageError
from emr_lineage.http import MIB, HttpClient, HttpError
from emr_lineage.listener.artifact import listener_s3_key
from emr_lineage.settings.model import ListenerArtifact

# The download's deadline (the whole request, retries included) and size cap.
DOWNLOAD_TIMEOUT = 300.0
DOWNLOAD_MAX_BYTES = 256 * MIB
MANIFEST = "META-INF/MANIFEST.MF"
LISTENER_CLASS = "io/openlineage/spark/agent/OpenLineageSparkListener.class"
JAR_CONTENT_TYPE = "application/java-archive"


class ListenerError(EmrLineageError):
    """Staging the listener failed; the message is one line that says what and where."""


class ListenerNotPinnedError(ListenerError):
    """cdk.json carries no SHA-256 for the listener yet."""


class ChecksumMismatchError(ListenerError):
    """The downloaded jar is not the pinned one."""


class DownloadError(ListenerError):
    """The jar could not be downloaded."""


class NotAJarError(ListenerError):
    """The download is not a jar (e.g. an HTML page from a proxy or a wrong repository URL)."""


@dataclass(frozen=True)
class StageResult:
    bucket: str
    key: str
    sha256: str
    size: int
    uploaded: bool  # False: the bucket already held this exact jar (idempotent re-run)

    @property
    def uri(self) -> str:
        return f"s3://{self.bucket}/{self.key}"


def download_client(timeout: float = DOWNLOAD_TIMEOUT, **kwargs: Any) -> HttpClient:
    """The HTTP client of the download: emr_lineage.http's retries, ``timeout`` as its deadline."""
    return HttpClient(timeout=timeout, max_bytes=DOWNLOAD_MAX_BYTES, **kwargs)


def download(url: str, destination: Path, *, http: HttpClient) -> tuple[str, int]:
    """Stream ``url`` into ``destination``; return (sha256 hex, size in bytes)."""
    digest = hashlib.sha256()
    with destination.open("wb") as out:

        def sink(chunk: bytes) -> None:
            digest.update(chunk)
            out.write(chunk)

        try:
            reply = http.get(url, sink=sink).raise_for_status()
        except HttpError as exc:
            raise DownloadError(f"download failed: {exc}") from None
    if reply.size == 0:
        raise DownloadError(f"download failed: GET {url} returned an empty body")
    return digest.hexdigest(), reply.size


@dataclass(frozen=True)
class FetchedJar:
    path: Path
    url: str
    sha256: str
    size: int


def fetch_jar(artifact: ListenerArtifact, directory: Path, *, http: HttpClient | None = None) -> FetchedJar:
    """Download the listener jar into ``directory`` and check that it is the listener's jar."""
    jar = directory / artifact.file_name
    if http is None:
        with download_client() as client:
            sha256, size = download(artifact.download_url, jar, http=client)
    else:
        sha256, size = download(artifact.download_url, jar, http=http)
    check_jar(jar, artifact.download_url)
    return FetchedJar(jar, artifact.download_url, sha256, size)


def check_jar(path: Path, url: str) -> None:
    """The listener's jar is a zip file with ``META-INF/MANIFEST.MF`` and the listener class; anything
    else (a proxy's HTML page, another artifact) is refused."""
    try:
        with zipfile.ZipFile(path) as jar:
            names = set(jar.namelist())
    except (zipfile.BadZipFile, OSError):
        problem = "not a zip file"
    else:
        missing = [entry for entry in (MANIFEST, LISTENER_CLASS) if entry not in names]
        if not missing:
            return
        problem = f"a zip file without {' and '.join(missing)}"
    raise NotAJarError(
        f"the download from {url} is not the OpenLineage listener jar ({problem}); check the Maven repository URL"
    )


def stage_listener(
    artifact: ListenerArtifact,
    bucket: str,
    *,
    s3_client: Any,
    http: HttpClient | None = None,
    maven_repository: str | None = None,
) -> StageResult:
    """Download the listener jar, check it is a jar with the pinned SHA-256, upload it to ``bucket``.

    Nothing is uploaded unless the download is the listener's jar and its checksum matches the
    pin; without a pin, staging is refused (``stage-listener --pin`` makes one). ``maven_repository``
    overrides the configured repository (a mirror, or a local server in tests). S3 problems raise
    :class:`~emr_lineage.aws.clients.AwsError`.
    """
    if artifact.sha256 is None:
        raise ListenerNotPinnedError(
            f"{artifact.file_name}: no SHA-256 pinned in cdk.json "
            "(emr-lineage.versions.openlineage_spark.sha256 is null); run 'emr-lineage stage-listener --pin' "
            "to verify the jar against the repository's checksums and write the pin (docs/listener.md)"
        )
    if maven_repository:
        artifact = artifact.model_copy(update={"maven_repository": maven_repository})
    with tempfile.TemporaryDirectory(prefix="emr-lineage-listener-") as tmp:
        jar = fetch_jar(artifact, Path(tmp), http=http)
        if jar.sha256 != artifact.sha256:
            raise ChecksumMismatchError(
                f"{artifact.file_name}: SHA-256 mismatch, downloaded {jar.sha256} from {jar.url} "
                f"but cdk.json pins {artifact.sha256}; nothing uploaded"
            )
        return upload_jar(jar, artifact, bucket, s3_client=s3_client)


def upload_jar(jar: FetchedJar, artifact: ListenerArtifact, bucket: str, *, s3_client: Any) -> StageResult:
    """Upload a verified jar to the artifacts bucket (once: an object with its SHA-256 is left alone)."""
    key = listener_s3_key(artifact)
    upload = upload_once(s3_client, jar.path, bucket, key, sha256=jar.sha256, content_type=JAR_CONTENT_TYPE)
    return StageResult(bucket=bucket, key=key, sha256=jar.sha256, size=jar.size, uploaded=upload.uploaded)
