"""The capture's events on the shared session: run structure, datasets, facets, flushing."""

from __future__ import annotations

import re
import uuid

import pytest
from pyspark.sql import functions as F

from emr_lineage.lineage.naming import dataset_identity
from emr_lineage.spark.capture.listener import LineageCapture, parent_context
from emr_lineage.spark.conf import ParentContextError

from .conftest import Captured, actions

APP = "emr_lineage_tests"  # snake_case of the fixture's appName


@pytest.fixture(scope="module")
def orders_parquet(spark, tmp_path_factory):
    path = tmp_path_factory.mktemp("in") / "orders"
    rows = [("a", 1, 2.0), ("a", 2, 3.0), ("b", 3, 10.0), ("c", 4, -1.0)]
    spark.createDataFrame(rows, "name string, id long, amount double").write.parquet(str(path))
    return path


def _fields(facet):
    return {
        name: {
            (i["name"], i["field"], i["transformations"][0]["type"], i["transformations"][0]["subtype"])
            for i in spec["inputFields"]
        }
        for name, spec in facet["fields"].items()
    }


def test_application_and_action_runs(spark, captured, orders_parquet, tmp_path):
    out = tmp_path / "curated" / "totals"
    orders = spark.read.parquet(str(orders_parquet))
    (
        orders.where(F.col("amount") > 0)
        .groupBy("name")
        .agg(F.sum("amount").alias("total"), F.max(F.col("id") * 10).alias("max_id10"))
        .write.mode("overwrite")
        .parquet(str(out))
    )
    events = captured.finish()

    app_events = [e for e in events if e["job"]["name"] == APP]
    assert [e["eventType"] for e in app_events] == ["START", "COMPLETE"]
    assert events[0] is app_events[0] and events[-1] is app_events[-1]
    app_run = app_events[0]["run"]["runId"]
    assert app_events[1]["run"]["runId"] == app_run
    assert app_events[0]["job"]["facets"]["jobType"]["jobType"] == "APPLICATION"

    runs = actions(events, APP)
    assert len(runs) == 1
    (run_events,) = runs.values()
    assert [e["eventType"] for e in run_events] == ["START", "COMPLETE"]
    complete = run_events[1]
    assert complete["job"]["name"] == f"{APP}.execute_insert_into_hadoop_fs_relation_command.curated_totals"
    assert complete["job"]["namespace"] == app_events[0]["job"]["namespace"] == "default"
    parent = complete["run"]["facets"]["parent"]
    assert parent["run"]["runId"] == app_run and (parent["job"]["namespace"], parent["job"]["name"]) == ("default", APP)
    assert parent["root"]["run"]["runId"] == app_run

    (source,) = complete["inputs"]
    assert (source["namespace"], source["name"]) == dataset_identity(orders_parquet) == ("file", str(orders_parquet))
    assert [f["name"] for f in source["facets"]["schema"]["fields"]] == ["name", "id", "amount"]
    (target,) = complete["outputs"]
    assert (target["namespace"], target["name"]) == ("file", str(out))
    facets = target["facets"]
    assert facets["schema"]["fields"] == [
        {"name": "name", "type": "string", "fields": []},
        {"name": "total", "type": "double", "fields": []},
        {"name": "max_id10", "type": "long", "fields": []},
    ]
    assert facets["lifecycleStateChange"]["lifecycleStateChange"] == "OVERWRITE"
    name = str(orders_parquet)
    assert _fields(facets["columnLineage"]) == {
        "name": {(name, "name", "DIRECT", "IDENTITY")},
        "total": {(name, "amount", "DIRECT", "AGGREGATION")},
        "max_id10": {(name, "id", "DIRECT", "AGGREGATION")},
    }
    indirect = {(i["field"], i["transformations"][0]["subtype"]) for i in facets["columnLineage"]["dataset"]}
    assert indirect == {("amount", "FILTER"), ("name", "GROUP_BY")}


def test_projection_lineage_append_and_failure(spark, captured, orders_parquet, tmp_path):
    out = tmp_path / "projected"
    projected = spark.read.parquet(str(orders_parquet)).select(
        "id", F.upper("name").alias("upper_name"), (F.col("amount") * 2).alias("doubled")
    )
    projected.write.mode("append").parquet(str(out))
    with pytest.raises(Exception, match="already exists"):
        projected.write.mode("error").parquet(str(out))
    events = captured.finish()
    runs = list(actions(events, APP).values())
    assert [[e["eventType"] for e in run] for run in runs] == [["START", "COMPLETE"], ["START", "FAIL"]]
    appended = runs[0][1]["outputs"][0]["facets"]
    assert "lifecycleStateChange" not in appended  # an append changes no lifecycle
    name = str(orders_parquet)
    assert _fields(appended["columnLineage"]) == {
        "id": {(name, "id", "DIRECT", "IDENTITY")},
        "upper_name": {(name, "name", "DIRECT", "TRANSFORMATION")},
        "doubled": {(name, "amount", "DIRECT", "TRANSFORMATION")},
    }
    failed = runs[1][1]
    assert "already exists" in failed["run"]["facets"]["errorMessage"]["message"]
    assert failed["outputs"][0]["name"] == str(out)


def test_reads_without_outputs_and_in_memory_data(spark, captured, orders_parquet):
    assert spark.read.parquet(str(orders_parquet)).count() == 4
    spark.range(5).count()  # no dataset involved: no action run
    events = captured.finish()
    runs = list(actions(events, APP).values())
    assert len(runs) == 1
    complete = runs[0][-1]
    assert complete["outputs"] == [] and [i["name"] for i in complete["inputs"]] == [str(orders_parquet)]
    assert complete["job"]["name"].startswith(f"{APP}.")


def test_finish_flushes_every_event_before_it_returns(spark, captured, orders_parquet, tmp_path):
    # Listener callbacks run later, on Spark's listener-bus thread; finish() must wait for them.
    for index in range(5):
        spark.read.parquet(str(orders_parquet)).write.mode("overwrite").parquet(str(tmp_path / f"copy{index}"))
    events = captured.finish()
    assert len(actions(events, APP)) == 5
    assert len(events) == 2 + 5 * 2
    assert (events[-1]["job"]["name"], events[-1]["eventType"]) == (APP, "COMPLETE")
    assert captured.capture.counts["events"] == len(events) and captured.capture.counts["errors"] == 0


def test_parent_run_from_environment(spark, tmp_path, monkeypatch, orders_parquet):
    parent_id, root_id = str(uuid.uuid4()), str(uuid.uuid4())
    monkeypatch.setenv("OPENLINEAGE_PARENT_JOB_NAMESPACE", "airflow")
    monkeypatch.setenv("OPENLINEAGE_PARENT_JOB_NAME", "orders_dag.ingest")
    monkeypatch.setenv("OPENLINEAGE_PARENT_RUN_ID", parent_id)
    monkeypatch.setenv("OPENLINEAGE_ROOT_PARENT_JOB_NAMESPACE", "airflow")
    monkeypatch.setenv("OPENLINEAGE_ROOT_PARENT_JOB_NAME", "orders_dag")
    monkeypatch.setenv("OPENLINEAGE_ROOT_PARENT_RUN_ID", root_id)
    captured = Captured(spark, tmp_path / "events.jsonl")
    spark.read.parquet(str(orders_parquet)).count()
    events = captured.finish()
    start = events[0]
    parent_job = start["run"]["facets"]["parent"]["job"]
    assert (parent_job["namespace"], parent_job["name"]) == ("airflow", "orders_dag.ingest")
    assert start["run"]["facets"]["parent"]["run"]["runId"] == parent_id
    assert start["run"]["facets"]["parent"]["root"]["run"]["runId"] == root_id
    (action,) = actions(events, APP).values()
    parent = action[-1]["run"]["facets"]["parent"]
    assert parent["run"]["runId"] == start["run"]["runId"]  # actions hang under the application
    assert parent["root"]["job"]["name"] == "orders_dag" and parent["root"]["run"]["runId"] == root_id


def test_parent_conf_wins_over_environment_and_partial_context_is_an_error(monkeypatch):
    run_id = str(uuid.uuid4())
    monkeypatch.setenv("OPENLINEAGE_PARENT_JOB_NAMESPACE", "env-ns")
    monkeypatch.setenv("OPENLINEAGE_PARENT_JOB_NAME", "env-job")
    monkeypatch.setenv("OPENLINEAGE_PARENT_RUN_ID", str(uuid.uuid4()))
    context = parent_context(
        {
            "spark.openlineage.parentJobNamespace": "conf-ns",
            "spark.openlineage.parentJobName": "conf-job",
            "spark.openlineage.parentRunId": run_id,
        }
    )
    assert (context.parent_job_namespace, context.parent_job_name, context.parent_run_id) == (
        "conf-ns",
        "conf-job",
        run_id,
    )
    monkeypatch.delenv("OPENLINEAGE_PARENT_RUN_ID")
    with pytest.raises(ParentContextError, match="OPENLINEAGE_PARENT_RUN_ID"):
        parent_context({})


def test_streaming_query_is_one_streaming_action(spark, captured, tmp_path):
    source = tmp_path / "incoming"
    source.mkdir()
    (source / "part-1.csv").write_text("id,amount\n1,2.5\n2,4.0\n")
    (source / "part-2.csv").write_text("id,amount\n3,1.0\n")
    sink = tmp_path / "scored"
    stream = spark.readStream.option("header", "true").schema("id string, amount string").csv(str(source))
    query = (
        stream.select("id", (F.col("amount").cast("double") * 2).alias("score"))
        .writeStream.format("parquet")
        .option("path", str(sink))
        .option("checkpointLocation", str(tmp_path / "checkpoint"))
        .trigger(availableNow=True)
        .start()
    )
    query.awaitTermination(120)
    events = captured.finish()
    runs = list(actions(events, APP).values())
    assert len(runs) == 1
    run = runs[0]
    assert [e["eventType"] for e in run] == ["START", "COMPLETE"]
    complete = run[-1]
    assert complete["job"]["facets"]["jobType"]["processingType"] == "STREAMING"
    assert re.fullmatch(rf"{APP}\.write_to_micro_batch_data_source_v1\.\w+_scored", complete["job"]["name"])
    assert [(i["namespace"], i["name"]) for i in complete["inputs"]] == [("file", str(source))]
    (output,) = complete["outputs"]
    assert (output["namespace"], output["name"]) == ("file", str(sink))
    assert _fields(output["facets"]["columnLineage"]) == {
        "id": {(str(source), "id", "DIRECT", "IDENTITY")},
        "score": {(str(source), "amount", "DIRECT", "TRANSFORMATION")},
    }
    assert events[-1]["job"]["facets"]["jobType"]["processingType"] == "STREAMING"


def test_emit_failure_never_fails_the_job(spark, orders_parquet, tmp_path):
    # A transport that cannot write: the job still runs; the capture counts the errors.
    from emr_lineage.spark.capture.transport import make_client

    blocked = tmp_path / "not-a-dir"
    blocked.write_text("")
    client = make_client(
        {
            "spark.openlineage.transport.type": "file",
            "spark.openlineage.transport.location": str(blocked / "events.jsonl"),
        }
    )
    capture = LineageCapture(spark, client).start()
    assert spark.read.parquet(str(orders_parquet)).count() == 4
    capture.finish()
    assert capture.counts["events"] == 0
    assert capture.counts["errors"] == 4 and "emit failed" in capture.errors[0]
