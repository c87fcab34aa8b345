"""runs and audit: runs with state and times, the runs that read or wrote a dataset, and the
versions (``version`` facet) and statistics of what each read and wrote."""

from __future__ import annotations

import datetime as dt
import json

from emr_lineage.analysis.audit import MARQUEZ_VERSIONS_NOTE, Audit, audit
from emr_lineage.analysis.impact import Lineage
from emr_lineage.analysis.runs import RunRecord, dataset_lines, format_duration, select_runs
from emr_lineage.analysis.runs import collect_runs as collect_history_runs
from emr_lineage.lineage.graph.history import INPUT, OUTPUT, RunHistory
from tests.emr_lineage.analysis.builders import app_run, at, dataset
from tests.emr_lineage.demo_run import DemoRun

LAKE = "s3://lake"


def collect_runs(events: list[dict], level: str = "application") -> list[RunRecord]:
    return collect_history_runs(RunHistory.of(events), level)


def _audit(events: list[dict], dataset: str, source: str = "events") -> Audit:
    return audit(collect_runs(events), Lineage.of(events), dataset, source=source)


def _pipeline() -> list[dict]:
    """Two runs of ``load`` (Iceberg snapshots 1 then 2), a failed ``report`` reading snapshot 2."""
    return (
        app_run("load", at(0), outputs=[dataset(f"{LAKE}/orders", version="1", output=True, rows=40)], seconds=90)
        + app_run(
            "load", at(60), outputs=[dataset(f"{LAKE}/orders", version="2", output=True, rows=1200)], spark="3.5.6"
        )
        + app_run(
            "report",
            at(70),
            inputs=[dataset(f"{LAKE}/orders", version="2", rows=1200), dataset(f"{LAKE}/fx", version="v7")],
            outputs=[dataset(f"{LAKE}/report", output=True)],
            final="FAIL",
        )
    )


def test_runs_fold_actions_into_their_application() -> None:
    runs = collect_runs(_pipeline())
    assert [(r.job, r.state) for r in runs] == [("load", "COMPLETE"), ("load", "COMPLETE"), ("report", "FAIL")]
    first = runs[0]
    assert first.start == at(0) and first.end == at(1.5) and format_duration(first.duration) == "90.0s"
    assert first.actions == {"load.write"} and first.outputs == {("s3://lake", "orders"): {"1"}}
    assert runs[2].inputs == {("s3://lake", "orders"): {"2"}, ("s3://lake", "fx"): {"v7"}}
    assert len(collect_runs(_pipeline(), "action")) == 6
    assert [r.job for r in select_runs(runs, "report")] == ["report"]
    assert len(select_runs(collect_runs(_pipeline(), "action"), "load")) == 4  # the app runs and their actions


def test_each_dataset_of_a_run_has_the_statistics_and_each_property_the_value_reported_last() -> None:
    first, second, report = collect_runs(_pipeline())
    orders = ("s3://lake", "orders")
    assert first.counts(OUTPUT, orders) == {"rowCount": 40, "size": 4000, "fileCount": 1}
    assert report.counts(INPUT, orders) == {"rowCount": 1200, "size": 120000, "fileCount": 1}
    assert report.counts(INPUT, ("s3://lake", "fx")) is None and report.counts(OUTPUT, orders) is None
    assert second.properties["processing_engine.version"][1] == "3.5.6" and first.properties == {}
    as_json = second.as_dict()
    assert as_json["outputs"][0]["statistics"] == {"rowCount": 1200, "size": 120000, "fileCount": 1}
    assert as_json["properties"] == {"processing_engine.name": "spark", "processing_engine.version": "3.5.6"}


def test_statistics_reported_twice_keep_the_later_event_s_whatever_the_order() -> None:
    events = app_run("load", at(0), outputs=[dataset(f"{LAKE}/orders", output=True, rows=5)])
    later_count = app_run("load", at(0), outputs=[dataset(f"{LAKE}/orders", output=True, rows=9)], seconds=120)
    action, again = events[2]["run"], later_count[2]["run"]
    again["runId"], again["facets"]["parent"] = action["runId"], action["facets"]["parent"]  # one action, twice
    for ordered in (events + later_count[2:3], later_count[2:3] + events):
        [run] = collect_runs(ordered)
        assert run.counts(OUTPUT, ("s3://lake", "orders")) == {"rowCount": 9, "size": 900, "fileCount": 1}


def test_a_run_still_going_has_no_end() -> None:
    events = app_run("slow", at(0))[:2]
    [run] = collect_runs(events)
    assert run.state == "START" and run.end is None and run.duration is None


def test_audit_lists_readers_and_writers_with_versions() -> None:
    report = _audit(_pipeline(), "s3a://lake/orders/")
    assert [(a.run.job, a.access, a.versions_read, a.versions_written) for a in report.accesses] == [
        ("load", "write", (), ("1",)),
        ("load", "write", (), ("2",)),
        ("report", "read", ("2",), ()),
    ]
    assert dataset_lines(report.accesses[2].run, INPUT) == ["s3://lake/fx@v7", "s3://lake/orders@2 (1,200 rows)"]
    assert dataset_lines(report.accesses[1].run, OUTPUT) == ["s3://lake/orders@2 (1,200 rows)"]
    assert report.notes == []
    as_json = report.as_dict()["runs"][2]
    assert as_json["state"] == "FAIL" and as_json["versionsRead"] == ["2"]


def test_audit_from_marquez_says_where_versions_are_kept() -> None:
    report = _audit(_pipeline(), f"{LAKE}/orders", "marquez")
    assert MARQUEZ_VERSIONS_NOTE in report.notes and "#2733" in MARQUEZ_VERSIONS_NOTE


def test_the_demo_runs(demo_run: DemoRun) -> None:
    runs = collect_runs(demo_run.events())
    assert [r.job for r in runs] == ["ingest_orders", "revenue_daily", "customer_ltv", "train_model", "score_stream"]
    assert all(r.state == "COMPLETE" and r.duration and r.duration > dt.timedelta(0) for r in runs)
    report = _audit(demo_run.events(), f"{demo_run.out}/lake/clean/orders_clean")
    assert [(a.run.job, a.access) for a in report.accesses] == [
        ("ingest_orders", "write"),
        ("revenue_daily", "read"),
        ("customer_ltv", "read"),
        ("train_model", "read"),
    ]
    # orders_clean is an Iceberg table: the snapshot ingest_orders wrote is the one the SQL readers read
    # (train_model reads it through Spark ML's RDD jobs, whose events carry no version)
    (written,) = report.accesses[0].versions_written
    assert [a.versions_read for a in report.accesses[1:]] == [(written,), (written,), ()]
    assert report.notes == []
    # the rows the listener reported writing are the rows of that snapshot, as the table's metadata records it
    table = next(iter(report.accesses[0].run.outputs))
    snapshots = {
        str(snapshot["snapshot-id"]): snapshot["summary"]
        for metadata in (demo_run.out / "lake" / "clean" / "orders_clean" / "metadata").glob("*.metadata.json")
        for snapshot in json.loads(metadata.read_text())["snapshots"]
    }
    rows = report.accesses[0].run.counts(OUTPUT, table)["rowCount"]
    assert rows > 0 and str(rows) == snapshots[written]["added-records"]


def test_a_run_is_named_as_the_graph_names_its_job() -> None:
    """The same choice among the names a run's events give: the most specific, a real one over the
    placeholder of an event without a job name, then the larger (namespace, name)."""
    from emr_lineage.lineage.graph.from_events import build_graph

    def event(kind: str, run_id: str, job: dict) -> dict:
        return {"eventType": kind, "eventTime": at(0).isoformat(), "run": {"runId": run_id}, "job": job}

    events = [
        event("START", "r1", {"namespace": "a"}),  # no name yet: the placeholder
        event("COMPLETE", "r1", {"namespace": "a", "name": "etl"}),
        event("START", "r2", {"namespace": "nsA", "name": "abd"}),
        event("COMPLETE", "r2", {"namespace": "nsB", "name": "abc"}),
    ]
    jobs = {(node["namespace"], node["name"]) for node in build_graph(events).nodes.values() if node["type"] == "JOB"}
    runs = {(run.namespace, run.job) for run in collect_runs(events)}
    assert runs == jobs == {("a", "etl"), ("nsB", "abc")}
