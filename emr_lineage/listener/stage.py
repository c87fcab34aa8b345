"""Stage the OpenLineage Spark listener jar: download it, check it is a jar with the pinned SHA-256, upload it once."""

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
    pinned: bool  # False: trust on first use, the caller must pin ``sha256`` in cdk.json

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


def check_jar(path: Path, url: str) -> None:
    """A jar is a zip file with ``META-INF/MANIFEST.MF``; anything else is refused."""
    try:
        with zipfile.ZipFile(path) as jar:
            if MANIFEST in jar.namelist():
                return
            problem = f"a zip file without {MANIFEST}"
    except (zipfile.BadZipFile, OSError):
        problem = "not a zip file"
    raise NotAJarError(f"the download from {url} is not a jar ({problem}); check the Maven repository URL")


def stage_listener(
    artifact: ListenerArtifact,
    bucket: str,
    *,
    s3_client: Any,
    http: HttpClient | None = None,
    maven_repository: str | None = None,
    trust_on_first_use: bool = False,
) -> StageResult:
    """Download the listener jar, check it is a jar with the pinned SHA-256, upload it to ``bucket``.

    Nothing is uploaded unless the download is a jar whose checksum matches the pin. Without a
    pin, staging is refused unless ``trust_on_first_use`` is set: then the computed checksum is
    returned in the result for the caller to pin in cdk.json. ``maven_repository`` overrides the
    configured repository (a mirror, or a local server in tests). S3 problems raise
    :class:`~emr_lineage.aws.clients.AwsError`.
    """
    if artifact.sha256 is None and not trust_on_first_use:
        raise ListenerNotPinnedError(
            f"{artifact.file_name}: no SHA-256 pinned in cdk.json "
            "(emr-lineage.versions.openlineage_spark.sha256 is null); "
            "run 'emr-lineage stage-listener --pin' once to download it and print the checksum to pin"
        )
    if maven_repository:
        artifact = artifact.model_copy(update={"maven_repository": maven_repository})
    key = listener_s3_key(artifact)
    with tempfile.TemporaryDirectory(prefix="emr-lineage-listener-") as tmp:
        jar = Path(tmp) / artifact.file_name
        if http is None:
            with download_client() as client:
                sha256, size = download(artifact.download_url, jar, http=client)
        else:
            sha256, size = download(artifact.download_url, jar, http=http)
        check_jar(jar, artifact.download_url)
        if artifact.sha256 is not None and sha256 != artifact.sha256:
            raise ChecksumMismatchError(
                f"{artifact.file_name}: SHA-256 mismatch, downloaded {sha256} from {artifact.download_url} "
                f"but cdk.json pins {artifact.sha256}; nothing uploaded"
            )
        upload = upload_once(s3_client, jar, bucket, key, sha256=sha256, content_type=JAR_CONTENT_TYPE)
    return StageResult(
        bucket=bucket,
        key=key,
        sha256=sha256,
        size=size,
        uploaded=upload.uploaded,
        pinned=artifact.sha256 is not None,
    )
