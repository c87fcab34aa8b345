"""What an Iceberg table's own metadata says happened between two of its snapshots.

An Iceberg table keeps every snapshot it still has in its metadata file (``metadata/v<N>.metadata.json``
under the table's location; the table spec, https://iceberg.apache.org/spec/#table-metadata): its id,
its parent, its time and a summary whose ``operation``, ``added-records`` and ``deleted-records`` say
what it changed. The snapshots after one up to another are the second's ancestors back to the first.

Only a table on the local file system (a dataset of namespace ``file``, as local Spark reports
it) is read here; of a table elsewhere (S3), what changed comes from the events alone.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

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


def local_snapshots(namespace: str, name: str) -> dict[str, Snapshot] | None:
    """The snapshots of the Iceberg table at ``name`` (namespace ``file``) by id, from its latest metadata
    file; None when it is not a local Iceberg table or its metadata cannot be read."""
    if namespace != "file":
        return None
    metadata = Path(name) / "metadata"
    try:
        files = [(int(m.group(1)), f) for f in metadata.iterdir() if (m := _METADATA.match(f.name))]
        if not files:
            return None
        table = json.loads(max(files)[1].read_text())
    except (OSError, ValueError):
        return None
    snapshots = {}
    for entry in table.get("snapshots") or ():
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
