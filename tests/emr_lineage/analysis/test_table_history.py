"""An Iceberg table's own metadata: its snapshots from the latest metadata file, and the ones between two."""

from __future__ import annotations

import json
from pathlib import Path

from emr_lineage.analysis.runs import collect_runs
from emr_lineage.analysis.table_history import local_snapshots, snapshots_between
from emr_lineage.lineage.graph.history import OUTPUT, RunHistory
from tests.emr_lineage.demo_run import DemoRun


def _snapshot(snapshot_id: int, parent: int | None, operation: str, added: str, deleted: str | None = None) -> dict:
    summary = {"operation": operation, "added-records": added, **({"deleted-records": deleted} if deleted else {})}
    return {"snapshot-id": snapshot_id, "parent-snapshot-id": parent, "timestamp-ms": snapshot_id, "summary": summary}


def _table(tmp_path: Path, *versions: list[dict]) -> Path:
    metadata = tmp_path / "t" / "metadata"
    metadata.mkdir(parents=True)
    for number, snapshots in enumerate(versions, start=1):
        (metadata / f"v{number}.metadata.json").write_text(json.dumps({"format-version": 2, "snapshots": snapshots}))
    return metadata.parent


def test_the_latest_metadata_file_gives_the_snapshots_and_the_chain_between_two(tmp_path: Path) -> None:
    first = [_snapshot(7, None, "append", "40")]
    latest = first + [_snapshot(8, 7, "append", "5"), _snapshot(9007199254740993, 8, "overwrite", "100", "45")]
    snapshots = local_snapshots("file", str(_table(tmp_path, first, latest)))
    assert sorted(snapshots) == ["7", "8", "9007199254740993"]  # ids beyond a double's precision kept exactly
    between = snapshots_between(snapshots, "7", "9007199254740993")
    assert [(s.operation, s.added_records, s.deleted_records) for s in between] == [
        ("append", 5, None),
        ("overwrite", 100, 45),
    ]
    assert snapshots_between(snapshots, "8", "8") == []
    assert snapshots_between(snapshots, "9007199254740993", "7") is None  # not an ancestor
    assert snapshots_between(snapshots, "7", "404") is None


def test_only_a_local_iceberg_table_is_read(tmp_path: Path) -> None:
    assert local_snapshots("s3://lake", "orders") is None
    assert local_snapshots("file", str(tmp_path / "missing")) is None
    (tmp_path / "plain" / "metadata").mkdir(parents=True)
    (tmp_path / "plain" / "metadata" / "v1.metadata.json").write_text("{not json")
    assert local_snapshots("file", str(tmp_path / "plain")) is None


def test_the_demo_s_table_holds_the_snapshot_the_listener_reported(demo_run: DemoRun) -> None:
    ingest = next(r for r in collect_runs(RunHistory.of(demo_run.events())) if r.job == "ingest_orders")
    table = next(key for key in ingest.outputs if key[1].endswith("/clean/orders_clean"))
    (written,) = ingest.outputs[table]
    snapshot = local_snapshots(*table)[written]
    assert snapshot.added_records == ingest.counts(OUTPUT, table)["rowCount"] > 0
