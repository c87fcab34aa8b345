"""`emr-lineage demo` end to end (the real CLI, real local Spark, the real OpenLineage listener), and failures.

The demo runs in its own process, like a user's `make demo`: each job is a spark-submit run of its own.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from collections import defaultdict
from pathlib import Path

import pytest

from emr_lineage.lineage.events.reader import load_events
from emr_lineage.lineage.graph.from_events import build_graph
from emr_lineage.lineage.naming import dataset_identity
from emr_lineage.lineage.schemas.checks import check_event
from emr_lineage.pipeline.definition import PIPELINE
from emr_lineage.pipeline.demo import DemoError, run_pipeline, spark_properties
from tests.emr_lineage.demo_run import MODEL, MODEL_PARTS, DemoRun
from tests.helpers import ctrl_c_as_in_a_terminal

BIN = Path(sys.executable).parent
# Application -> (inputs, outputs) relative to the lake: the Iceberg tables by their locations (the lake is the
# catalog's warehouse), and the parts of the saved model as one entry.
EXPECTED = {
    "ingest_orders": ({"raw/orders"}, {"clean/orders_clean"}),
    "revenue_daily": ({"clean/orders_clean"}, {"curated/revenue_daily"}),
    "customer_ltv": ({"clean/orders_clean"}, {"curated/customer_ltv"}),
    "train_model": ({"clean/orders_clean"}, {MODEL}),
    "score_stream": ({MODEL, "raw/orders_stream"}, {"curated/order_scores"}),
}
# The Iceberg tables, by location, and the table name each one's symlink gives (database: its zone).
TABLES = {
    "clean/orders_clean": "clean.orders_clean",
    "curated/revenue_daily": "curated.revenue_daily",
    "curated/customer_ltv": "curated.customer_ltv",
}


@pytest.fixture(scope="module")
def demo(demo_run: DemoRun):
    """(output directory, the process's result, its events) of the test run's one demo."""
    return demo_run.out, demo_run, demo_run.events()


def test_demo_succeeds_and_prints_the_summary(demo):
    out, proc, _ = demo
    assert proc.returncode == 0, proc.stdout + proc.stderr
    for name in PIPELINE:
        assert name in proc.stdout
    written, read = proc.model_parts()
    assert 0 < len(written) <= MODEL_PARTS and 0 < len(read) <= MODEL_PARTS and written & read
    assert f"5 jobs, {proc.datasets()} datasets" in proc.stdout and f"{proc.contract_edges()} edges" in proc.stdout
    assert f"models/order_value_model/** ({len(written)} parts)" in proc.stdout
    assert f"lineage matches lineage_contract.yaml: {proc.contract_edges()} edges" in proc.stdout
    # stderr holds the progress: what runs now, then each job's time; Spark's output goes to spark.log
    lines = [line.split("] ", 1)[1] for line in proc.stderr.splitlines()]
    steps = len(PIPELINE) + 2
    running = [f"running {name}: {n}/{steps}" for n, name in enumerate(PIPELINE, 1)]
    finished = [line.split(":")[0] for line in lines if line.endswith(" lineage events")]
    assert [line for line in lines if line.startswith("running ")] == running, proc.stderr
    assert finished == list(PIPELINE), proc.stderr
    assert lines[-1] == f"validating lineage, writing report: {steps}/{steps}", proc.stderr
    assert "OpenLineageSparkListener" in proc.file("spark.log").read_text()


def test_every_event_validates_against_the_openlineage_schemas(demo):
    _, run, events = demo
    assert len(events) > 2 * len(PIPELINE)
    for number, event in enumerate(events, start=1):
        assert check_event(event, strict=True) is None, f"events.jsonl:{number}"
    assert len(load_events([run.events_path], strict=True)) == len(events)


def test_each_application_has_one_run_and_its_spark_jobs_hang_under_it(demo):
    _, _, events = demo
    apps = {e["job"]["name"]: e for e in events if e["job"]["facets"]["jobType"]["jobType"] == "APPLICATION"}
    assert sorted(apps) == sorted(PIPELINE)
    app_states = defaultdict(list)
    for event in events:
        if event["job"]["name"] in apps:
            app_states[event["job"]["name"]].append(event["eventType"])
    assert all(states == ["START", "COMPLETE"] for states in app_states.values()), app_states
    run_ids = {name: e["run"]["runId"] for name, e in apps.items()}
    for event in events:
        name = event["job"]["name"]
        if name in apps:
            assert "parent" not in event["run"]["facets"]  # no orchestrator in the demo
            continue
        app = name.split(".", 1)[0]
        assert app in apps and name.startswith(app + ".")
        assert event["run"]["facets"]["parent"]["run"]["runId"] == run_ids[app]
        assert event["job"]["facets"]["jobType"]["jobType"] in ("SQL_JOB", "RDD_JOB")


def _relative(lake: Path, dataset: dict) -> str:
    namespace, root = dataset_identity(lake)
    assert dataset["namespace"] == namespace
    relative = dataset["name"].removeprefix(root + "/")
    return MODEL if relative.startswith(MODEL.removesuffix("**")) else relative


def test_each_job_reads_and_writes_the_expected_datasets(demo):
    out, _, events = demo
    lake = out.resolve() / "lake"
    seen = defaultdict(lambda: (set(), set()))
    for event in events:
        app = event["job"]["name"].split(".", 1)[0]
        seen[app][0].update(_relative(lake, d) for d in event.get("inputs", []))
        seen[app][1].update(_relative(lake, d) for d in event.get("outputs", []))
    assert dict(seen) == EXPECTED


def test_the_iceberg_tables_carry_their_snapshot_ids_on_reads_and_writes(demo):
    """The real listener, with the Iceberg runtime beside it on the driver's classpath, reports each table by
    location with a symlink naming it and ``facets.version.datasetVersion``, its snapshot id: the one each
    write committed, and the same one on every SQL read of it afterwards."""
    out, _, events = demo
    lake = out.resolve() / "lake"
    written: dict[str, set[str]] = defaultdict(set)
    read: dict[tuple[str, str], set[str | None]] = defaultdict(set)
    for event in events:
        app = event["job"]["name"].split(".", 1)[0]
        for side in ("inputs", "outputs"):
            for dataset in event.get(side, []):
                relative = _relative(lake, dataset)
                if relative not in TABLES or "atomic_replace_table_as_select" not in event["job"]["name"]:
                    continue  # the table writes and the SQL reads inside them
                (symlink,) = dataset["facets"]["symlinks"]["identifiers"]
                assert (symlink["name"], symlink["type"]) == (TABLES[relative], "TABLE")
                version = dataset["facets"].get("version", {}).get("datasetVersion")
                if side == "outputs" and event["eventType"] == "COMPLETE":
                    written[relative].add(version)
                elif side == "inputs":
                    read[(app, relative)].add(version)
    assert set(written) == set(TABLES) and all(len(ids) == 1 and None not in ids for ids in written.values())
    assert set(read) == {("revenue_daily", "clean/orders_clean"), ("customer_ltv", "clean/orders_clean")}
    assert all(ids == written["clean/orders_clean"] for ids in read.values())  # the snapshot ingest_orders wrote


def test_output_facets_the_graph_relies_on(demo):
    """Column lineage, lifecycle and the table's symlink, as the real listener (1.53.0) reports them."""
    _, _, events = demo
    by_job = {e["job"]["name"]: e for e in events if e["eventType"] == "COMPLETE"}
    ingest = by_job["ingest_orders.overwrite_by_expression.clean_orders_clean"]
    (output,) = ingest["outputs"]
    assert output["facets"]["lifecycleStateChange"]["lifecycleStateChange"] == "OVERWRITE"
    lineage = output["facets"]["columnLineage"]["fields"]
    assert {f["field"] for f in lineage["order_value"]["inputFields"]} >= {"quantity", "unit_price", "discount"}
    ltv = by_job["customer_ltv.overwrite_by_expression.curated_customer_ltv"]
    (table,) = ltv["outputs"]
    assert table["facets"]["lifecycleStateChange"]["lifecycleStateChange"] == "OVERWRITE"
    assert table["facets"]["symlinks"]["identifiers"][0]["type"] == "TABLE"
    assert "lifetime_value" in table["facets"]["columnLineage"]["fields"]
    batch = by_job["score_stream.execute_insert_into_hadoop_fs_relation_command.curated_order_scores"]
    assert batch["outputs"][0]["name"].endswith("/lake/curated/order_scores")
    streaming = by_job["score_stream.project"]
    assert streaming["job"]["facets"]["jobType"]["processingType"] == "STREAMING"
    assert streaming["inputs"][0]["name"].endswith("/lake/raw/orders_stream")


def test_report_and_graph(demo):
    _, run, events = demo
    html = run.file("report.html").read_text()
    graph = build_graph(events)
    assert sorted(graph.nodes[j]["name"] for j in graph.jobs()) == sorted(PIPELINE)
    for name in PIPELINE:
        assert name in html


def test_bad_rows_is_a_usage_error(tmp_path):
    proc = subprocess.run(
        [str(BIN / "emr-lineage"), "demo", "--out-dir", str(tmp_path), "--rows", "5"],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert proc.returncode == 2 and "--rows" in proc.stderr and "Traceback" not in proc.stderr


@pytest.mark.spark
@pytest.mark.parametrize("how", ["ctrl-c", "sigterm"])
def test_an_interrupted_demo_exits_130_saying_so(tmp_path, how):
    # Ctrl-C reaches the whole process group; a CI runner sends SIGTERM to the process. Either
    # way the running Spark job fails inside py4j, which must read as "interrupted", not as a failure.
    out = tmp_path / "out"
    proc = subprocess.Popen(
        [str(BIN / "emr-lineage"), "demo", "--out-dir", str(out), "--rows", "200"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        start_new_session=True,
        preexec_fn=ctrl_c_as_in_a_terminal,
    )
    events = out / "events.jsonl"
    deadline = time.monotonic() + 120
    while not (events.exists() and events.stat().st_size) and proc.poll() is None and time.monotonic() < deadline:
        time.sleep(0.1)  # polling a real process: the first job has reported lineage, Spark is running
    if how == "ctrl-c":
        os.killpg(proc.pid, signal.SIGINT)
    else:
        proc.send_signal(signal.SIGTERM)
    _, stderr = proc.communicate(timeout=120)
    assert proc.returncode == 130, stderr
    assert stderr.strip().splitlines()[-1] == "error: interrupted"
    assert "Traceback" not in stderr and "Py4J" not in stderr


@pytest.mark.spark
def test_a_job_that_cannot_start_stops_the_demo_with_its_error(tmp_path):
    # A real failure on the first job: the driver's JVM cannot start (Spark passes SPARK_SUBMIT_OPTS to it,
    # with -XX:+IgnoreUnrecognizedVMOptions, so the option must be a known one with an impossible value).
    env = {**os.environ, "SPARK_SUBMIT_OPTS": "-Xss1k"}
    proc = subprocess.run(
        [str(BIN / "emr-lineage"), "demo", "--out-dir", str(tmp_path), "--rows", "200"],
        capture_output=True,
        text=True,
        timeout=120,
        env=env,
    )
    assert proc.returncode == 1
    assert "error: ingest_orders failed: exit status 1 (Spark log:" in proc.stderr and "Traceback" not in proc.stderr
    assert "Could not create the Java Virtual Machine" in (tmp_path / "spark.log").read_text()
    assert "revenue_daily" not in proc.stdout + proc.stderr  # later jobs never ran
    assert not (tmp_path / "report.html").exists()


def test_a_failing_job_stops_the_pipeline_with_its_python_error(tmp_path, listener_lineage):
    out = tmp_path
    started = []
    with pytest.raises(DemoError) as info:
        run_pipeline(
            out / "empty-lake",
            spark_properties(out, listener_lineage, listener_lineage.iceberg_runtime),
            log=out / "spark.log",
            events=out / "events.jsonl",
            jobs=("revenue_daily", "customer_ltv"),
            on_job=lambda name, run: started.append(name),
        )
    assert str(info.value).startswith("revenue_daily failed: exit status 1: ")
    assert "AnalysisException: [TABLE_OR_VIEW_NOT_FOUND]" in str(info.value)
    assert started == ["revenue_daily"]
    events = [json.loads(line) for line in (out / "events.jsonl").read_text().splitlines()]
    # The listener sees the Spark application end, not the Python script's failure: it reports COMPLETE.
    assert [(e["job"]["name"], e["eventType"]) for e in events] == [
        ("revenue_daily", "START"),
        ("revenue_daily", "COMPLETE"),
    ]
    assert all(check_event(e, strict=True) is None for e in events)


def _missing_paths(fixture, event, path="") -> list[str]:
    """Key paths of an integration-test fragment absent from our event (values not compared;
    a list is compared through its first element). Tags come from the integration's config."""
    missing = []
    if path.endswith("/columnLineage/fields"):
        # Keyed by column name (data, not shape): compare one output column's entry.
        if not isinstance(event, dict) or not event:
            return [path]
        return _missing_paths(next(iter(fixture.values())), next(iter(event.values())), f"{path}/*")
    if isinstance(fixture, dict):
        if not isinstance(event, dict):
            return [path or "/"]
        for key, value in fixture.items():
            if key == "tags":
                continue
            if key not in event:
                missing.append(f"{path}/{key}")
            else:
                missing += _missing_paths(value, event[key], f"{path}/{key}")
    elif isinstance(fixture, list) and fixture:
        if not isinstance(event, list) or not event:
            return [path]
        missing += _missing_paths(fixture[0], event[0], f"{path}[0]")
    return missing


@pytest.mark.parametrize(
    ("fixture", "job"),
    [
        (
            "ol_container_pysparkHadoopFSEndEvent.json",
            "customer_ltv.overwrite_by_expression.curated_customer_ltv",
        ),
        (
            "ol_container_pysparkCTASWithColumnLineageEnd.json",
            "customer_ltv.overwrite_by_expression.curated_customer_ltv",
        ),
        (
            "ol_container_columnLineageSingleInputComplete.json",
            "ingest_orders.overwrite_by_expression.clean_orders_clean",
        ),
        (
            "ol_container_applicationLevelStartJob.json",
            "revenue_daily.atomic_replace_table_as_select.curated_revenue_daily",
        ),
    ],
)
def test_events_have_the_shape_of_the_spark_integration_fixtures(demo, reference_dir, fixture, job):
    _, _, events = demo
    expected = json.loads((reference_dir / "openlineage" / "fixtures" / fixture).read_text())
    (event,) = [e for e in events if e["job"]["name"] == job and e["eventType"] == expected["eventType"]]
    assert _missing_paths(expected, event) == []
    if "parent" in expected.get("run", {}).get("facets", {}):
        assert event["run"]["facets"]["parent"]["job"]["name"] == job.split(".")[0]


def test_each_job_names_its_application_to_the_listener(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The application's job name is given, not left to the listener's read of the SparkContext at start,
    which under load can come back "unknown" (and then no action folds into its application)."""
    from emr_lineage.pipeline import demo
    from emr_lineage.spark.conf import APP_NAME_PROPERTY

    named: list[tuple[str, str]] = []

    def run_script(script: Path, args: list[str], properties: dict[str, str], **_: object) -> int:
        named.append((Path(script).stem, properties[APP_NAME_PROPERTY]))
        return 0

    monkeypatch.setattr(demo, "run_script", run_script)
    run_pipeline(tmp_path, {"k": "v"}, log=tmp_path / "spark.log", jobs=("ingest_orders", "revenue_daily_v2"))
    assert named == [("ingest_orders", "ingest_orders"), ("revenue_daily_v2", "revenue_daily")]
