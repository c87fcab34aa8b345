"""Stage the OpenLineage Spark listener jar: the verified jar of the cache (fetched with Maven when it is
not there yet, :mod:`emr_lineage.listener.maven`) uploaded once to the artifacts bucket."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from emr_lineage.aws.upload import upload_once
from emr_lineage.listener.artifact import listener_s3_key
from emr_lineage.listener.jar import FetchedJar
from emr_lineage.settings.versions import ListenerArtifact

JAR_CONTENT_TYPE = "application/java-archive"


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


def upload_jar(jar: FetchedJar, artifact: ListenerArtifact, bucket: str, *, s3_client: Any) -> StageResult:
    """Upload a verified jar to the artifacts bucket (once: an object with its SHA-256 is left alone)."""
    key = listener_s3_key(artifact)
    upload = upload_once(s3_client, jar.path, bucket, key, sha256=jar.sha256, content_type=JAR_CONTENT_TYPE)
    return StageResult(bucket=bucket, key=key, sha256=jar.sha256, size=jar.size, uploaded=upload.uploaded)
