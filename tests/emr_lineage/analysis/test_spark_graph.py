"""The Spark job's graph is the local loader's graph of the same events (issue 25 part 3).

The job's function runs on the session-wide local[2] SparkSession of tests/conftest.py over a
generated multi-file archive (the gateway's layout; pretty-printed objects, copies resent in another
hour, a body the gateway refuses) and over event files (JSON Lines split across files and a ``.json``
array); the local side is ``read_archive`` (moto S3) + ``build_graph`` and ``build_graph_streamed``.
"""

from __future__ import annotations

import datetime as dt
import json
import sys
from pathlib import Path

import pytest

from emr_lineage.analysis.sources import read_archive
from emr_lineage.analysis.spark_graph import BuildOptions, archive_globs, archive_line, merge_parts
from emr_lineage.analysis.spark_graph_job import build_on_spark
from emr_lineage.aws.archive import ArchiveLocation, archive_key
from emr_lineage.lineage.door.event import canonical_json, dedup_id
from emr_lineage.lineage.events.reader import stream_events
from emr_lineage.lineage.graph.from_events import build_graph, build_graph_streamed
from emr_lineage.lineage.graph.model import LineageGraph
from emr_lineage.lineage.times import Window
from tests.emr_lineage.analysis.builders import app_run, at, dataset
from tests.emr_lineage.conftest import write_jsonl
from tests.helpers import moto_s3

BUCKET = "lineage-archive"


@pytest.fixture
def sc(spark, monkeypatch: pytest.MonkeyPatch):
    """The session's SparkContext, its Python workers run by this Python (the one emr_lineage is installed in,
    as spark-submit's PYSPARK_PYTHON makes it for the job)."""
    monkeypatch.setattr(spark.sparkContext, "pythonExec", sys.executable)
    return spark.sparkContext


def _events() -> list[dict]:
    """Three applications a chain of datasets apart, with schemas and column lineage; s3a/s3 namespaces."""
    raw = dataset("s3a://lake/raw/orders", {"id": "long", "amount": "double"})
    clean = dataset(
        "s3://lake/clean/orders",
        {"id": "long", "amount": "decimal(10,2)"},
        columns={"amount": [("s3a://lake/raw/orders", "amount")], "id": [("s3a://lake/raw/orders", "id")]},
        output=True,
    )
    daily = dataset(
        "s3://lake/curated/daily", {"total": "double"}, columns={"total": [("s3://lake/clean/orders", "amount")]}
    )
    events = app_run("clean_orders", at(0), inputs=[raw], outputs=[clean])
    events += app_run("daily", at(50), inputs=[dataset("s3://lake/clean/orders")], outputs=[daily], final="FAIL")
    events += app_run("daily", at(70), inputs=[dataset("s3://lake/clean/orders")], outputs=[daily])
    for index in range(6):  # more objects than partitions
        events += app_run(f"app_{index}", at(100 + index), inputs=[dataset(f"s3://lake/in/{index}", {"x": "int"})])
    return events


def _objects(events: list[dict]) -> dict[str, bytes]:
    """Archive key -> body: every third pretty-printed, every fourth resent an hour later, and one
    body that is not an event."""
    objects = {}
    for index, event in enumerate(events):
        moment = dt.datetime.fromisoformat(event["eventTime"])
        body = json.dumps(event, indent=2 if index % 3 == 0 else None).encode()
        if index % 5 == 0:
            body = body.replace(b"\n", b"\r\n")
        key = archive_key(moment, event["run"]["runId"], moment, dedup_id(canonical_json(event)))
        objects[key] = body
        if index % 4 == 0:
            objects[archive_key(moment + dt.timedelta(hours=1), event["run"]["runId"], moment, "x" * 16)] = body
    moment = at(30)
    objects[archive_key(moment, "refused", moment, "f" * 16)] = b"[1, 2]"
    return objects


@pytest.fixture
def archive(tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    """The same objects in a directory (the Spark job's archive) and in moto's S3 (read_archive's)."""
    objects = _objects(_events())
    for key, body in objects.items():
        path = tmp_path / "archive" / key
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(body)
    with moto_s3(monkeypatch, "us-east-1", BUCKET) as s3:
        for key, body in objects.items():
            s3.put_object(Bucket=BUCKET, Key=key, Body=body)
        yield tmp_path / "archive", s3


def _local_archive_graph(s3, window: Window, level: str = "application", runs: bool = False) -> LineageGraph:
    return build_graph(read_archive(s3, ArchiveLocation(BUCKET), window, now=lambda: at(600)).events, level, runs)


@pytest.mark.parametrize(("level", "runs"), [("application", False), ("action", True)])
def test_the_spark_graph_of_an_archive_is_the_local_loaders(sc, archive, level: str, runs: bool) -> None:
    directory, s3 = archive
    graph, summary = build_on_spark(sc, BuildOptions(level, runs=runs), archive=str(directory), window=Window())
    assert graph.to_dict() == _local_archive_graph(s3, Window(), level, runs).to_dict()
    assert ("runs" in graph.to_dict()) is runs
    assert summary.parts >= 2 and summary.problems == 1 and "JSON array" in summary.details[0]
    assert {n["namespace"] for n in graph.to_dict()["nodes"] if n["type"] == "DATASET"} == {"s3://lake"}
    assert graph.to_dict()["columnEdges"]


def test_a_window_reads_the_hours_read_archive_reads(sc, archive) -> None:
    directory, s3 = archive
    window = Window(at(45), at(80))
    graph, _ = build_on_spark(sc, BuildOptions(), archive=str(directory), window=window)
    assert graph.to_dict() == _local_archive_graph(s3, window).to_dict()
    assert {n["name"] for n in graph.to_dict()["nodes"] if n["type"] == "JOB"} == {"daily"}
    assert len(archive_globs("s3://b/p", Window(at(0), at(10)))) == 3  # an hour of slack either side
    assert archive_globs("s3://b", Window()) == ["s3://b/raw/date=*/hour=*/*/*.json"]


def test_the_spark_graph_of_event_files_is_the_local_loaders(sc, tmp_path: Path) -> None:
    events = _events()
    write_jsonl(tmp_path / "in" / "a.jsonl", events[:9])
    write_jsonl(tmp_path / "in" / "more" / "b.ndjson", events[9:] + events[:3])  # repeats merge to nothing new
    (tmp_path / "c.json").write_text(json.dumps(events[5:12]))
    paths = [str(tmp_path / "in"), str(tmp_path / "c.json")]
    for options in (BuildOptions(), BuildOptions("action", column_lineage=False, runs=True)):
        graph, summary = build_on_spark(sc, options, events=paths)
        local = build_graph_streamed(stream_events(paths), options.level, options.column_lineage, options.runs)
        assert graph.to_dict() == local.to_dict()
        assert summary.events == len(events) + 3 + 7 and summary.problems == 0


def test_a_bad_line_is_counted_and_worded(sc, tmp_path: Path) -> None:
    path = tmp_path / "bad.jsonl"
    path.write_text(json.dumps(_events()[0]) + '\n{"eventType": "START", "eventType": "COMPLETE"}\n')
    graph, summary = build_on_spark(sc, BuildOptions(), events=[str(path)])
    assert summary.events == 1 and summary.problems == 1 and "duplicate key 'eventType'" in summary.details[0]
    assert graph.jobs() == ["job:emr-lineage-dev:clean_orders"]


def test_archived_objects_are_checked_as_the_gateway_checks_them() -> None:
    event = _events()[0]
    pretty = json.dumps(event, indent=2).replace("\n", "\r\n").encode()
    checked, line = archive_line(pretty)
    assert checked is not None and isinstance(line, bytes) and b"\n" not in line
    assert archive_line(b"{not json")[0] is None
    assert merge_parts([], BuildOptions())[1].events == 0


def test_the_job_refuses_invalid_events_unless_skipped_and_an_empty_source(sc, tmp_path: Path) -> None:
    """The job's run() (what spark-submit runs, here on the tests' session): its report and output."""
    from emr_lineage.analysis.spark_graph_job import _arguments, run

    path = tmp_path / "bad.jsonl"
    path.write_text(json.dumps(_events()[0]) + '\n{"eventType": "START", "eventType": "COMPLETE"}\n')
    output = tmp_path / "graph.json"
    refused = run(sc, _arguments(["--events", str(path), "--output", str(output)]))
    assert "duplicate key 'eventType'" in refused["error"] and "--skip-invalid skips them" in refused["error"]
    assert not output.exists()
    skipped = run(sc, _arguments(["--events", str(path), "--output", str(output), "--skip-invalid"]))
    assert skipped["error"] is None and skipped["problems"] == 1 and skipped["nodes"] == 1 and output.is_file()
    assert skipped["driver_peak_rss"] >= skipped["driver_rss_at_start"] > 0
    (tmp_path / "archive").mkdir()
    empty = run(sc, _arguments(["--archive", str(tmp_path / "archive"), "--output", str(tmp_path / "g.json")]))
    assert empty["error"].endswith("archive: no events to build a graph from")
