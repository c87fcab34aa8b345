"""What an Iceberg table's own metadata says happened between two of its snapshots.

An Iceberg table keeps every snapshot it still has in its metadata file (``metadata/v<N>.metadata.json``
under the table's location; the table spec, https://iceberg.apache.org/spec/#table-metadata): its id,
its parent, its time and a summary whose ``operation``, ``added-records`` and ``deleted-records`` say
what it changed. The snapshots after one up to another are the second's ancestors back to the first.

A table on the local file system (namespace ``file``, as local Spark reports it) is read from its folder,
a table on S3 (namespace ``s3://BUCKET``, as EMR reports it) with ``ListObjectsV2`` and ``GetObject`` on its
``metadata/`` prefix. The latest metadata file is the one of the highest version: ``v<N>.metadata.json``
(a Hadoop catalog) or ``<N>-<uuid>.metadata.json`` (Glue, Hive). Of a table elsewhere, or one that cannot
be read, what changed comes from the events alone.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from botocore.exceptions import BotoCoreError, ClientError

from emr_lineage.aws.clients import AwsError, aws_client, aws_message
from emr_lineage.lineage.naming import canonical_namespace

_METADATA = re.compile(r"^(?:v)?(\d+)(?:-[^.]*)?\.metadata\.json$")


@dataclass(frozen=True)
class Snapshot:
    snapshot_id: str
    parent_id: str | None
    timestamp_ms: int
    operation: str
    added_records: int | None
    deleted_records: int | None

    def as_dict(self) -> dict[str, Any]:
        return {
            "snapshotId": self.snapshot_id,
            "operation": self.operation,
            "timestampMs": self.timestamp_ms,
            "addedRecords": self.added_records,
            "deletedRecords": self.deleted_records,
        }


def _count(summary: dict[str, Any], key: str) -> int | None:
    value = summary.get(key)
    return int(value) if isinstance(value, str) and value.isdigit() else None


def latest_metadata(names: Iterable[str]) -> str | None:
    """Of the file names (or keys) ``names``, the metadata file of the highest version; None when there is none."""
    versions = [(int(m.group(1)), name) for name in names if (m := _METADATA.match(name.rsplit("/", 1)[-1]))]
    return max(versions)[1] if versions else None


def parse_snapshots(table: Any) -> dict[str, Snapshot]:
    """The snapshots of a table's metadata (the decoded JSON of its metadata file) by id."""
    snapshots = {}
    for entry in (table.get("snapshots") if isinstance(table, dict) else None) or ():
        if not isinstance(entry, dict) or "snapshot-id" not in entry:
            continue
        summary = entry.get("summary") if isinstance(entry.get("summary"), dict) else {}
        parent = entry.get("parent-snapshot-id")
        snapshot = Snapshot(
            snapshot_id=str(entry["snapshot-id"]),
            parent_id=None if parent is None else str(parent),
            timestamp_ms=int(entry.get("timestamp-ms") or 0),
            operation=str(summary.get("operation") or ""),
            added_records=_count(summary, "added-records"),
            deleted_records=_count(summary, "deleted-records"),
        )
        snapshots[snapshot.snapshot_id] = snapshot
    return snapshots


def local_snapshots(namespace: str, name: str) -> dict[str, Snapshot] | None:
    """The snapshots of the Iceberg table at ``name`` (namespace ``file``) by id, from its latest metadata
    file; None when it is not a local Iceberg table or its metadata cannot be read."""
    if namespace != "file":
        return None
    metadata = Path(name) / "metadata"
    try:
        latest = latest_metadata(path.name for path in metadata.iterdir())
        return None if latest is None else parse_snapshots(json.loads((metadata / latest).read_text()))
    except (OSError, ValueError):
        return None


def s3_snapshots(s3: Any, bucket: str, table_path: str) -> dict[str, Snapshot] | None:
    """The snapshots of the Iceberg table at ``s3://bucket/table_path`` by id, from its latest metadata file;
    None when it has none. AWS's refusals and unreadable JSON are raised (``ClientError``, ``ValueError``)."""
    prefix = table_path.strip("/") + "/metadata/"
    keys = (
        item["Key"]
        for page in s3.get_paginator("list_objects_v2").paginate(Bucket=bucket, Prefix=prefix)
        for item in page.get("Contents", ())
        if "/" not in item["Key"][len(prefix) :]  # the metadata folder itself, not below it
    )
    latest = latest_metadata(keys)
    if latest is None:
        return None
    return parse_snapshots(json.loads(s3.get_object(Bucket=bucket, Key=latest)["Body"].read()))


@dataclass
class TableSnapshots:
    """Reads tables' snapshots, local or on S3 (an S3 client made at the first S3 table, by ``make_s3``); what
    could not be read is in ``problems``, one line each, so that a command can say why it shows less."""

    make_s3: Callable[[], Any] = lambda: aws_client("s3")
    problems: list[str] = field(default_factory=list)
    _s3: Any = field(default=None, init=False, repr=False)

    def __call__(self, namespace: str, name: str) -> dict[str, Snapshot] | None:
        canonical = canonical_namespace(namespace)  # s3a:// and s3n:// are S3 too
        if not canonical.startswith("s3://"):
            return local_snapshots(namespace, name)
        where = f"{canonical}/{name.strip('/')}/metadata/"
        try:
            self._s3 = self._s3 or self.make_s3()
            return s3_snapshots(self._s3, canonical.removeprefix("s3://"), name)
        except (AwsError, BotoCoreError, ClientError) as exc:
            reason = str(exc) if isinstance(exc, AwsError) else aws_message(exc)
            self.problems.append(f"cannot read the Iceberg metadata in {where}: {reason}")
        except json.JSONDecodeError as exc:
            self.problems.append(
                f"cannot read the Iceberg metadata in {where}: not JSON ({exc.msg}, line {exc.lineno})"
            )
        except ValueError:  # e.g. a snapshot's timestamp that is not a number
            self.problems.append(f"cannot read the Iceberg metadata in {where}: a snapshot's fields are not Iceberg's")
        return None


def snapshots_between(snapshots: dict[str, Snapshot], first: str, second: str) -> list[Snapshot] | None:
    """The snapshots after ``first`` up to ``second``, oldest first: ``second``'s ancestors back to ``first``.
    None when ``second`` is not in the table's metadata or ``first`` is not among its ancestors (the table was
    replaced, or the snapshots expired)."""
    chain = []
    current = snapshots.get(second)
    while current is not None and current.snapshot_id != first:
        chain.append(current)
        current = snapshots.get(current.parent_id) if current.parent_id else None
    if current is None:
        return None
    return chain[::-1]
