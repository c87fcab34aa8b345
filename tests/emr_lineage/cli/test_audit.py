"""emr-lineage audit and runs: who read or wrote a dataset with the versions read, and the runs."""

from __future__ import annotations

import datetime as dt
import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from emr_lineage.cli.app import main
from tests.emr_lineage.analysis.builders import app_run, at, dataset
from tests.emr_lineage.conftest import write_jsonl
from tests.emr_lineage.demo_run import DemoRun
from tests.emr_lineage.fake_marquez import FakeMarquez
from tests.helpers import one_error_line


def _events() -> list[dict]:
    return (
        app_run("load", at(0), outputs=[dataset("s3://lake/orders", version="41", output=True)])
        + app_run("load", at(60), outputs=[dataset("s3://lake/orders", version="42", output=True, rows=1500)])
        + app_run("report", at(70), inputs=[dataset("s3://lake/orders", version="42", rows=1500)], final="FAIL")
    )


@pytest.fixture
def events(tmp_path: Path) -> str:
    return str(write_jsonl(tmp_path / "events.jsonl", _events()))


def _run(*args: str):
    return CliRunner().invoke(main, list(args))


def test_audit_in_a_window_with_versions(events: str) -> None:
    result = _run("audit", "--events", events, "--dataset", "s3://lake/orders", "--since", "2026-11-23T09:30Z")
    assert result.exit_code == 0, result.output
    assert "s3://lake/orders@42 (1,500 rows)" in result.stdout and "FAIL" in result.stdout
    assert "2 run(s) read or wrote s3://lake/orders (from events)" in result.stdout
    as_json = json.loads(_run("audit", "--events", events, "--dataset", "s3://lake/orders", "--format", "json").stdout)
    assert [(r["job"], r["access"], r["versionsRead"], r["versionsWritten"]) for r in as_json["runs"]] == [
        ("load", "write", [], ["41"]),
        ("load", "write", [], ["42"]),
        ("report", "read", ["42"], []),
    ]


def test_audit_from_marquez_names_issue_2733(events: str, marquez: FakeMarquez) -> None:
    marquez.store(_events())
    result = _run("audit", "--marquez", marquez.url, "--dataset", "s3://lake/orders")
    assert result.exit_code == 0, result.output
    assert "Marquez issue #2733" in result.stdout


def _runs_json(*args: str) -> dict:
    result = _run("runs", *args, "--format", "json")
    assert result.exit_code == 0, result.output
    return json.loads(result.stdout)


def test_runs_from_marquez_take_an_event_at_exactly_until_as_the_events_do(events: str, marquez: FakeMarquez) -> None:
    marquez.store([json.loads(line) for line in Path(events).read_text().splitlines()])
    until = at(61).isoformat()  # the second load's last event (its application's COMPLETE)
    from_marquez = _runs_json("--marquez", marquez.url, "--until", until)
    from_events = _runs_json("--events", events, "--until", until)
    assert (from_marquez.pop("source"), from_events.pop("source")) == ("marquez", "events")
    assert from_marquez == from_events
    assert [(r["job"], r["state"], r["end"]) for r in from_marquez["runs"]] == [
        ("load", "COMPLETE", "2026-11-23T09:01:00+00:00"),
        ("load", "COMPLETE", "2026-11-23T10:01:00+00:00"),  # ended at until: not still running
    ]


def test_runs_from_marquez_include_an_event_after_2030(tmp_path: Path, marquez: FakeMarquez) -> None:
    """Marquez's own default end of the event window is 2030-01-01: the read never leaves it to Marquez."""
    later = _events() + app_run("archive", dt.datetime(2031, 3, 1, tzinfo=dt.UTC))
    marquez.store(later)
    from_marquez = _runs_json("--marquez", marquez.url)
    from_events = _runs_json("--events", str(write_jsonl(tmp_path / "later.jsonl", later)))
    assert [r["job"] for r in from_marquez["runs"]] == ["load", "load", "report", "archive"]
    assert from_marquez["runs"] == from_events["runs"]


def test_runs_with_job_filter_and_levels(events: str) -> None:
    result = _run("runs", "--events", events, "--job", "load", "--format", "json")
    runs = json.loads(result.stdout)["runs"]
    assert [(r["job"], r["state"], r["durationSeconds"]) for r in runs] == [("load", "COMPLETE", 60.0)] * 2
    assert runs[1]["outputs"] == [
        {
            "dataset": "s3://lake/orders",
            "namespace": "s3://lake",
            "name": "orders",
            "versions": ["42"],
            "table": None,
            "statistics": {"rowCount": 1500, "size": 150000, "fileCount": 1},
        }
    ]
    table = _run("runs", "--events", events)
    assert table.exit_code == 0 and "3 run(s)" in table.stdout and "FAIL" in table.stdout
    assert table.stdout.count("s3://lake/orders@42 (1,500 rows)") == 2 and "s3://lake/orders@41" in table.stdout
    assert "4 run(s) of job load" in _run("runs", "--events", events, "--level", "action", "--job", "load").stdout


def test_runs_of_the_demo(demo_run: DemoRun) -> None:
    result = _run("runs", "--events", str(demo_run.events_path), "--format", "json")
    assert [r["job"] for r in json.loads(result.stdout)["runs"]] == [
        "ingest_orders",
        "revenue_daily",
        "customer_ltv",
        "train_model",
        "score_stream",
    ]


def test_bad_input_is_one_line(events: str, closed_port_url: str, retry_waits: list[float]) -> None:
    one_error_line(
        _run("audit", "--events", events, "--dataset", "s3://lake/ordres"), "did you mean 's3://lake/orders'"
    )
    one_error_line(
        _run("audit", "--events", events, "--dataset", "s3://lake/orders", "--until", "soon"), "--until 'soon'"
    )
    one_error_line(
        _run("runs", "--events", events, "--since", "2026-11-24", "--until", "2026-11-23"), "is after --until"
    )
    one_error_line(_run("runs", "--marquez", closed_port_url, "--timeout", "2"))
    one_error_line(_run("runs", "--events", "/no/such/file.jsonl"), "no such file or directory")


def test_runs_of_a_job_no_event_has_is_one_line_as_an_unknown_dataset(events: str) -> None:
    line = one_error_line(_run("runs", "--events", events, "--job", "nope"), "--job 'nope': no run of this job in")
    assert "job name(s) known" in line
    one_error_line(_run("runs", "--events", events, "--job", "lod"), "did you mean 'load'?")
    windowed = _run("runs", "--events", events, "--job", "report", "--until", "2026-11-23T10:00:30Z")
    assert "to 2026-11-23T10:00:30Z" in one_error_line(windowed, "--job 'report': no run of this job")
