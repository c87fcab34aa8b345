"""The one SHA-256-guarded upload: a local file goes to ``s3://bucket/key`` with its SHA-256 in
the object's metadata, and is not uploaded again while the object carries that same SHA-256.

S3's ETag cannot tell "unchanged" (it is no content hash for multipart or SSE-KMS uploads), so
the checksum is kept as user metadata (``x-amz-meta-sha256``). Used by ``listener stage`` (the
listener jar) and by ``launch``/``e2e`` (job scripts, at content-addressed keys).
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from boto3.exceptions import Boto3Error
from botocore.exceptions import BotoCoreError, ClientError

from emr_lineage.aws.clients import AwsError, aws_message

# S3 user metadata key that records the uploaded file's checksum (x-amz-meta-sha256).
SHA256_METADATA_KEY = "sha256"
_NOT_FOUND = ("404", "NoSuchKey", "NotFound")


@dataclass(frozen=True)
class Upload:
    bucket: str
    key: str
    sha256: str
    uploaded: bool  # False: the object already carried this SHA-256, nothing was sent

    @property
    def uri(self) -> str:
        return f"s3://{self.bucket}/{self.key}"


def file_sha256(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as handle:
        for block in iter(lambda: handle.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def head_object(s3: Any, bucket: str, key: str) -> dict[str, Any] | None:
    """``head_object`` of ``s3://bucket/key``; None when there is no such object.

    Any other failure (no bucket, access denied, no credentials) raises :class:`AwsError`.
    """
    try:
        return s3.head_object(Bucket=bucket, Key=key)
    except ClientError as exc:
        if exc.response.get("Error", {}).get("Code") in _NOT_FOUND:
            return None
        raise AwsError(f"cannot read s3://{bucket}/{key} ({_problem(exc, bucket)})") from None
    except BotoCoreError as exc:
        raise AwsError(f"cannot read s3://{bucket}/{key} ({_problem(exc, bucket)})") from None


def stored_sha256(s3: Any, bucket: str, key: str) -> str | None:
    """The SHA-256 recorded on ``s3://bucket/key``; None when there is no such object (or no record)."""
    head = head_object(s3, bucket, key)
    return None if head is None else head.get("Metadata", {}).get(SHA256_METADATA_KEY)


def upload_once(
    s3: Any, path: Path, bucket: str, key: str, *, sha256: str | None = None, content_type: str | None = None
) -> Upload:
    """Upload ``path`` to ``s3://bucket/key`` unless the object there already carries its SHA-256.

    ``sha256`` is the file's checksum when the caller has computed it already. S3 problems
    (missing bucket, invalid name, access denied, no credentials) raise :class:`AwsError`.
    """
    digest = sha256 or file_sha256(path)
    if stored_sha256(s3, bucket, key) == digest:
        return Upload(bucket, key, digest, uploaded=False)
    extra: dict[str, Any] = {"Metadata": {SHA256_METADATA_KEY: digest}}
    if content_type:
        extra["ContentType"] = content_type
    upload(s3, path, bucket, key, extra=extra)
    return Upload(bucket, key, digest, uploaded=True)


def upload(s3: Any, path: Path, bucket: str, key: str, *, extra: dict[str, Any] | None = None) -> None:
    """Upload ``path`` to ``s3://bucket/key``; S3 problems raise one-line :class:`AwsError`."""
    try:
        s3.upload_file(str(path), bucket, key, ExtraArgs=extra)
    except (ClientError, BotoCoreError, Boto3Error, OSError) as exc:
        raise AwsError(f"cannot upload {path} to s3://{bucket}/{key} ({_problem(exc, bucket)})") from None


def _problem(exc: BaseException, bucket: str) -> str:
    """One line for an S3 failure; boto3's upload wraps the ClientError, so look through it."""
    cause: BaseException | None = exc
    while cause is not None and not isinstance(cause, ClientError):
        cause = cause.__cause__ or cause.__context__
    if isinstance(cause, ClientError):
        code = cause.response.get("Error", {}).get("Code")
        if code == "NoSuchBucket":
            return f"bucket {bucket!r} does not exist"
        if code in ("AccessDenied", "403"):
            return f"access denied to bucket {bucket!r} ({aws_message(cause)})"
        return aws_message(cause)
    return aws_message(exc if isinstance(exc, Exception) else Exception(exc))
