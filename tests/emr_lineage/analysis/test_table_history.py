"""An Iceberg table's own metadata: its snapshots from the latest metadata file, and the ones between two."""

from __future__ import annotations

from pathlib import Path

from emr_lineage.analysis.runs import collect_runs
from emr_lineage.analysis.table_history import TableSnapshots, local_snapshots, snapshots_between
from emr_lineage.lineage.graph.history import OUTPUT, RunHistory
from tests.emr_lineage.analysis.iceberg_metadata import local_table, put_metadata, snapshot_entry
from tests.emr_lineage.demo_run import DemoRun


def test_the_latest_metadata_file_gives_the_snapshots_and_the_chain_between_two(tmp_path: Path) -> None:
    first = [snapshot_entry(7, None, "append", "40")]
    latest = first + [
        snapshot_entry(8, 7, "append", "5"),
        snapshot_entry(9007199254740993, 8, "overwrite", "100", "45"),
    ]
    snapshots = local_snapshots("file", str(local_table(tmp_path, first, latest)))
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


def test_a_table_on_s3_is_read_from_its_latest_metadata_file(lake_s3) -> None:
    table = "warehouse/sales.db/orders"
    first = [snapshot_entry(7, None, "append", "40")]
    put_metadata(lake_s3, table, "00001-0b7c.metadata.json", first)  # as Glue's catalog names them
    put_metadata(lake_s3, table, "00002-41aa.metadata.json", first + [snapshot_entry(8, 7, "overwrite", "60", "40")])
    put_metadata(lake_s3, table, "snap-8-1-5d2e.avro", b"manifest list")
    put_metadata(lake_s3, table, "old/00009-ffff.metadata.json", b"{}")  # below the metadata folder: not the table's
    tables = TableSnapshots()

    snapshots = tables("s3://lake", table)

    assert sorted(snapshots) == ["7", "8"]
    assert [(s.operation, s.added_records, s.deleted_records) for s in snapshots_between(snapshots, "7", "8")] == [
        ("overwrite", 60, 40)
    ]
    assert tables("s3a://lake", f"/{table}/") == snapshots
    assert tables("s3://lake", "warehouse/sales.db/not_iceberg") is None and tables.problems == []


def test_what_cannot_be_read_on_s3_is_a_problem_line_and_no_snapshots(lake_s3) -> None:
    put_metadata(lake_s3, "broken", "v3.metadata.json", b"{not json")
    put_metadata(lake_s3, "odd", "v1.metadata.json", [{"snapshot-id": 1, "timestamp-ms": "soon"}])
    tables = TableSnapshots()
    assert tables("s3://lake", "broken") is None
    assert tables("s3://lake", "odd") is None
    assert tables("s3://no-such-bucket", "orders") is None
    assert tables.problems == [
        "cannot read the Iceberg metadata in s3://lake/broken/metadata/: not JSON "
        "(Expecting property name enclosed in double quotes, line 1)",
        "cannot read the Iceberg metadata in s3://lake/odd/metadata/: a snapshot's fields are not Iceberg's",
        "cannot read the Iceberg metadata in s3://no-such-bucket/orders/metadata/: NoSuchBucket: "
        "The specified bucket does not exist",
    ]


def test_the_demo_s_table_holds_the_snapshot_the_listener_reported(demo_run: DemoRun) -> None:
    ingest = next(r for r in collect_runs(RunHistory.of(demo_run.events())) if r.job == "ingest_orders")
    table = next(key for key in ingest.outputs if key[1].endswith("/clean/orders_clean"))
    (written,) = ingest.outputs[table]
    snapshot = local_snapshots(*table)[written]
    assert snapshot.added_records == ingest.counts(OUTPUT, table)["rowCount"] > 0
