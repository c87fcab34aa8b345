"""Stage the OpenLineage Spark listener jar: download it, check its SHA-256 against the pin, upload it once."""

from __future__ import annotations

import hashlib
import tempfile
from dataclasses import dataclass
from pathlib import Path

import requests
from requests.adapters import HTTPAdapter
from urllib3.util import Retry

from emr_lineage.errors import EmrLineageError
from emr_lineage.listener.artifact import SHA256_METADATA_KEY, listener_s3_key
from emr_lineage.settings.model import ListenerArtifact

# Passed as --sha256 while cdk.json has no pin: synth still works, but the bootstrap stops with
# a clear message instead of trusting whatever is in the bucket.


_CHUNK = 1 << 20


class ListenerError(EmrLineageError):
    """Staging the listener failed; the message is one line that says what and where."""


class ListenerNotPinnedError(ListenerError):
    """cdk.json carries no SHA-256 for the listener yet."""


class ChecksumMismatchError(ListenerError):
    """The downloaded jar is not the pinned one."""


class DownloadError(ListenerError):
    """The jar could not be downloaded."""


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


def http_session(*, total_retries: int = 4, backoff_factor: float = 0.5) -> requests.Session:
    """A session that retries connection errors and 429/5xx answers with exponential backoff."""
    retry = Retry(
        total=total_retries,
        backoff_factor=backoff_factor,
        status_forcelist=(429, 500, 502, 503, 504),
        allowed_methods=frozenset({"GET", "HEAD"}),
        raise_on_status=False,
    )
    session = requests.Session()
    adapter = HTTPAdapter(max_retries=retry)
    session.mount("http://", adapter)
    session.mount("https://", adapter)
    return session


def download(url: str, destination: Path, *, session: requests.Session, timeout: float = 60.0) -> tuple[str, int]:
    """Stream ``url`` into ``destination``; return (sha256 hex, size in bytes)."""
    digest = hashlib.sha256()
    size = 0
    try:
        with session.get(url, stream=True, timeout=timeout) as response:
            if response.status_code != 200:
                raise DownloadError(f"download failed: GET {url} answered HTTP {response.status_code}")
            with destination.open("wb") as out:
                for chunk in response.iter_content(_CHUNK):
                    digest.update(chunk)
                    size += len(chunk)
                    out.write(chunk)
    except requests.RequestException as exc:
        reason = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
        raise DownloadError(f"download failed: GET {url}: {reason}") from None
    if size == 0:
        raise DownloadError(f"download failed: GET {url} returned an empty body")
    return digest.hexdigest(), size


def _existing_sha256(s3_client, bucket: str, key: str) -> str | None:
    from botocore.exceptions import ClientError

    try:
        head = s3_client.head_object(Bucket=bucket, Key=key)
    except ClientError as exc:
        if exc.response.get("Error", {}).get("Code") in ("404", "NoSuchKey", "NotFound"):
            return None
        raise
    return head.get("Metadata", {}).get(SHA256_METADATA_KEY)


def stage_listener(
    artifact: ListenerArtifact,
    bucket: str,
    *,
    s3_client,
    session: requests.Session | None = None,
    maven_repository: str | None = None,
    trust_on_first_use: bool = False,
) -> StageResult:
    """Download the listener jar, verify its SHA-256, upload it to ``bucket``.

    Nothing is uploaded unless the checksum matches the pin. Without a pin, staging is refused
    unless ``trust_on_first_use`` is set: then the computed checksum is returned in the result
    for the caller to pin in cdk.json. ``maven_repository`` overrides the configured repository
    (a mirror, or a local server in tests).
    """
    if artifact.sha256 is None and not trust_on_first_use:
        raise ListenerNotPinnedError(
            f"{artifact.file_name}: no SHA-256 pinned in cdk.json "
            "(emr-lineage.versions.openlineage_spark.sha256 is null); "
            "run 'emr-lineage stage-listener --pin' once to download it and print the checksum to pin"
        )
    if maven_repository:
        artifact = artifact.model_copy(update={"maven_repository": maven_repository})
    session = session or http_session()
    key = listener_s3_key(artifact)
    with tempfile.TemporaryDirectory(prefix="emr-lineage-listener-") as tmp:
        jar = Path(tmp) / artifact.file_name
        sha256, size = download(artifact.download_url, jar, session=session)
        if artifact.sha256 is not None and sha256 != artifact.sha256:
            raise ChecksumMismatchError(
                f"{artifact.file_name}: SHA-256 mismatch, downloaded {sha256} from {artifact.download_url} "
                f"but cdk.json pins {artifact.sha256}; nothing uploaded"
            )
        if _existing_sha256(s3_client, bucket, key) == sha256:
            uploaded = False
        else:
            s3_client.upload_file(
                str(jar),
                bucket,
                key,
                ExtraArgs={"Metadata": {SHA256_METADATA_KEY: sha256}, "ContentType": "application/java-archive"},
            )
            uploaded = True
    return StageResult(
        bucket=bucket, key=key, sha256=sha256, size=size, uploaded=uploaded, pinned=artifact.sha256 is not None
    )
