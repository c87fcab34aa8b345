"""The versions a run read (an Iceberg scan's snapshot over the listener's version facet), a run's pins, and
the last run of a job with the version it wrote; `runs RUN_ID [--pins]` on the command line."""

from __future__ import annotations

import json
from pathlib import Path

from click.testing import CliRunner

from emr_lineage.analysis.pins import last_run, run_pins
from emr_lineage.analysis.runs import collect_runs
from emr_lineage.cli.app import main
from emr_lineage.lineage.graph.history import RunHistory
from tests.emr_lineage.analysis.builders import app_run, at, dataset
from tests.emr_lineage.conftest import write_jsonl
from tests.emr_lineage.generated_events import PRODUCER
from tests.helpers import one_error_line

LAKE = "s3://lake"
FACET = {"_producer": PRODUCER, "_schemaURL": "https://openlineage.io/spec/facets/1-0-0/Facet.json"}
OLD, CURRENT = "2178432019543388894", "783796053205294941"  # snapshot ids above 2**53
WRITER, READER = "00000000-0000-4000-8000-000000000001", "00000000-0000-4000-8000-000000000002"


def _as_table(event: dict, side: str, table: str) -> dict:
    """The catalog and symlinks facets the listener gives an Iceberg table of catalog ``lakehouse``."""
    for entry in event.get(side) or ():
        entry["facets"]["catalog"] = {**FACET, "name": "lakehouse", "framework": "iceberg", "type": "hadoop"}
        entry["facets"]["symlinks"] = {**FACET, "identifiers": [{"namespace": LAKE, "name": table, "type": "TABLE"}]}
    return event


def _scanned(event: dict, snapshot: float) -> dict:
    for entry in event.get("inputs") or ():
        entry.setdefault("inputFacets", {})["icebergScanReport"] = {**FACET, "snapshotId": snapshot}
    return event


def _events(scan: float | None = float(OLD)) -> list[dict]:
    """A writer writes OLD, then CURRENT; a reader's version facet says CURRENT, its scan (a double) OLD."""
    written = app_run("load", at(0), run_id=WRITER, outputs=[dataset(f"{LAKE}/orders", version=OLD, output=True)])
    again = app_run("load", at(5), outputs=[dataset(f"{LAKE}/orders", version=CURRENT, output=True)])
    read = app_run("report", at(10), run_id=READER, inputs=[dataset(f"{LAKE}/orders", version=CURRENT, rows=3)])
    read[1] = _as_table(read[1], "inputs", "clean.orders")
    read[2] = _as_table(read[2], "inputs", "clean.orders")
    if scan is not None:
        read[2] = _scanned(read[2], scan)
    return written + again + read


def _reader(events: list[dict]):
    return next(run for run in collect_runs(RunHistory.of(events)) if run.run_id == READER)


def test_the_version_read_is_the_scans_snapshot_resolved_among_the_versions_known() -> None:
    orders = (LAKE, "orders")
    assert _reader(_events()).inputs[orders] == {OLD}  # not the version facet's CURRENT
    assert _reader(_events(scan=None)).inputs[orders] == {CURRENT}  # no scan report: the facet stands
    assert _reader(_events(scan=12345.0)).inputs[orders] == set()  # no version known is that snapshot: unknown


def test_pins_name_the_catalog_table_and_list_what_cannot_be_pinned() -> None:
    events = _events()
    events += app_run("j", at(20), inputs=[dataset(f"{LAKE}/raw"), dataset(f"{LAKE}/x", version="1")])
    assert run_pins(_reader(events)) == {
        "runId": READER,
        "job": "report",
        "tables": {"lakehouse.clean.orders": OLD},
        "unpinned": [],
    }
    other = next(run for run in collect_runs(RunHistory.of(events)) if run.job == "j")
    assert run_pins(other)["unpinned"] == [
        {"dataset": "s3://lake/raw", "why": "no version reported (not an Iceberg or Delta table?)"},
        {"dataset": "s3://lake/x", "why": "the events name no catalog table for it"},
    ]


def test_the_last_run_of_a_job_with_the_version_it_wrote() -> None:
    events = _events()
    second_load = events[4:8]
    for event in second_load[2:3]:
        _as_table(event, "outputs", "clean.orders")
        event["outputs"].append(json.loads(json.dumps(event["outputs"][0])))
        event["outputs"][1]["facets"]["version"]["datasetVersion"] = OLD  # the snapshot before the write, too
    last = last_run(RunHistory.of(events), "load")
    assert last["outputs"] == {"lakehouse.clean.orders": CURRENT}


def test_runs_run_id_shows_that_run_and_pins_need_a_run_id(tmp_path: Path) -> None:
    path = str(write_jsonl(tmp_path / "e.jsonl", _events()))
    one = CliRunner().invoke(main, ["runs", READER, "--events", path, "--format", "json"])
    assert one.exit_code == 0, one.output
    assert [run["runId"] for run in json.loads(one.stdout)["runs"]] == [READER]
    pins = CliRunner().invoke(main, ["runs", READER, "--pins", "--events", path])
    assert json.loads(pins.stdout)["tables"] == {"lakehouse.clean.orders": OLD}
    one_error_line(CliRunner().invoke(main, ["runs", "--pins", "--events", path]), "--pins: give the RUN_ID")
    one_error_line(CliRunner().invoke(main, ["runs", "nope", "--pins", "--events", path]), "run nope: no run")
