"""Iceberg tables' metadata files for the tests of what changed between two versions: a snapshot entry as the
table spec writes it, local tables, and tables on S3 (moto's S3 in this process)."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.helpers import moto_s3

REGION = "eu-west-1"
BUCKET = "lake"


def snapshot_entry(
    snapshot_id: int, parent: int | None, operation: str, added: str, deleted: str | None = None
) -> dict:
    summary = {"operation": operation, "added-records": added, **({"deleted-records": deleted} if deleted else {})}
    return {"snapshot-id": snapshot_id, "parent-snapshot-id": parent, "timestamp-ms": snapshot_id, "summary": summary}


def metadata_body(snapshots: list[dict]) -> str:
    return json.dumps({"format-version": 2, "snapshots": snapshots})


def local_table(folder: Path, *versions: list[dict]) -> Path:
    """A table folder with ``v1.metadata.json``... one per list of snapshots."""
    metadata = folder / "t" / "metadata"
    metadata.mkdir(parents=True)
    for number, snapshots in enumerate(versions, start=1):
        (metadata / f"v{number}.metadata.json").write_text(metadata_body(snapshots))
    return metadata.parent


@pytest.fixture
def lake_s3(monkeypatch: pytest.MonkeyPatch) -> Iterator[object]:
    """moto's S3 in this process with the bucket ``lake``: every S3 client of the test (the command's too)."""
    with moto_s3(monkeypatch, REGION, BUCKET) as client:
        yield client


def put_metadata(s3, table: str, name: str, snapshots: list[dict] | bytes) -> None:
    """``s3://lake/<table>/metadata/<name>``: the snapshots as a metadata file, or bytes as they are."""
    body = snapshots if isinstance(snapshots, bytes) else metadata_body(snapshots)
    s3.put_object(Bucket=BUCKET, Key=f"{table}/metadata/{name}", Body=body)
