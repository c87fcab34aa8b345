"""emr_lineage.pipeline.e2e: moto plays AWS (EMR states driven between polls), a local HTTP server
plays Marquez with lineage built from the demo's own events (tests/emr_lineage/e2e_support.py)."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

from emr_lineage.aws import clients as aws_clients
from emr_lineage.aws import emr as emr_cluster
from emr_lineage.aws import parameters
from emr_lineage.launch.plan import file_sha256, job_s3_key
from emr_lineage.lineage.contracts.check import validate
from emr_lineage.lineage.contracts.model import load_contract
from emr_lineage.lineage.graph.from_events import build_graph
from emr_lineage.lineage.graph.from_marquez import detach_parent_job, graph_from_marquez
from emr_lineage.marquez.client import MarquezClient, MarquezError
from emr_lineage.pipeline import definition as pipeline
from emr_lineage.pipeline import e2e, e2e_lineage
from emr_lineage.settings.loader import load_settings
from emr_lineage.spark.conf import ParentContext
from tests.emr_lineage.e2e_support import (
    ARTIFACTS,
    FAILURE,
    LAKE_BUCKET,
    MARQUEZ_WEB,
    NAMESPACE,
    PARENT_JOB,
    SUCCESS,
    EmrPlayer,
    aws_environment,
    fresh,
    marquez_lineage,
    without_job,
)

LONG_AGO = datetime(2026, 1, 1, tzinfo=UTC)


def staged_key(job: str) -> str:
    """Where the e2e stages a sample job: ``staged-jobs/<sha256[:16]>/<job>.py`` (content-addressed)."""
    path = pipeline.JOBS_DIR / f"{job}.py"
    return job_s3_key(path, file_sha256(path))


@pytest.fixture(scope="session")
def settings():
    return load_settings("dev")


def contract_and_values():
    contract = load_contract(pipeline.CONTRACT)
    return contract, contract.resolve_variables({"lake": f"s3://{LAKE_BUCKET}", "namespace": NAMESPACE})


def new_parent() -> ParentContext:
    return ParentContext.new(namespace=NAMESPACE, job_name=PARENT_JOB)


# --- the served lineage is Marquez's, and reading it gives the pipeline's graph -------------


def test_served_nodes_follow_marquez_openapi(e2e_events, openapi_validator):
    reply = marquez_lineage(e2e_events, PARENT_JOB, datetime.now(UTC))
    assert {n["type"] for n in reply["graph"]} == {"JOB", "DATASET"}
    for node in reply["graph"]:
        assert openapi_validator("GraphNode", node) == [], node["id"]


def test_detached_marquez_graph_is_the_graph_of_the_events(e2e_events):
    since = datetime.now(UTC) - timedelta(seconds=1)
    reply = marquez_lineage(e2e_events, PARENT_JOB, datetime.now(UTC))
    # Marquez names every job of this run under the parent...
    assert all(n["id"].startswith(f"job:{NAMESPACE}:{PARENT_JOB}.") for n in reply["graph"] if n["type"] == "JOB")
    fresh_reply, stale = e2e_lineage.drop_stale_jobs(reply, since)
    assert stale == []
    graph = graph_from_marquez(detach_parent_job(fresh_reply, PARENT_JOB), level="application")
    # ...and once detached, the applications are the jobs of the e2e_events, with the same edges.
    expected = build_graph(e2e_events, level="application")
    assert graph.jobs() == expected.jobs() == sorted(f"job:{NAMESPACE}:{name}" for name in pipeline.PIPELINE)
    assert graph.edges() == expected.edges()
    contract, values = contract_and_values()
    assert validate(contract, graph, values).ok


def test_without_detaching_the_contract_jobs_are_missing(e2e_events):
    reply = marquez_lineage(e2e_events, PARENT_JOB, datetime.now(UTC))
    contract, values = contract_and_values()
    result = validate(contract, graph_from_marquez(reply, level="application"), values)
    assert not result.ok and {row.job for row in result.missing} >= {f"job:{NAMESPACE}:{n}" for n in pipeline.PIPELINE}


def test_jobs_whose_latest_run_predates_the_cluster_are_dropped(e2e_events):
    since = datetime.now(UTC)
    old = marquez_lineage(e2e_events, PARENT_JOB, since - timedelta(minutes=5))
    current = marquez_lineage(e2e_events, PARENT_JOB, since + timedelta(seconds=1))
    # An earlier run reported train_model; this one reported the other four.
    mixed = {"graph": without_job(current, "train_model")["graph"]}
    mixed["graph"] += [n for n in old["graph"] if n["type"] == "JOB" and ".train_model." in n["id"]]
    kept, stale = e2e_lineage.drop_stale_jobs(mixed, since)
    assert stale and all(".train_model." in s for s in stale)
    assert not any(".train_model." in n["id"] for n in kept["graph"])
    edges = [e for n in kept["graph"] for e in n["inEdges"] + n["outEdges"]]
    assert not any(".train_model." in e["origin"] + e["destination"] for e in edges)


# --- steps ------------------------------------------------------------------------------------


def test_pipeline_jobs_are_the_five_jobs_in_order_with_their_emr_arguments(settings):
    parent = new_parent()
    jobs = e2e.pipeline_jobs(settings, "s3://lake-bucket", parent)
    assert [j.job_name for j in jobs] == list(pipeline.PIPELINE)
    assert all(j.script.parent == pipeline.JOBS_DIR and j.script.is_file() for j in jobs)
    assert all(j.args[:2] == ("--lake", "s3://lake-bucket") for j in jobs)
    by_name = {j.job_name: j.args for j in jobs}
    assert by_name["customer_ltv"][2:] == ("--database", "emr_lineage_dev_curated")
    assert by_name["score_stream"][2:] == (
        "--checkpoint",
        f"s3://lake-bucket/curated/_checkpoints/score_stream/{parent.parent_run_id}",
    )


# --- run_e2e against moto and the local Marquez ------------------------------------------------


def run(settings, e2e_aws, **options):
    said: list[str] = []
    options = {"rows": 100, "emr_poll_interval": 0, "lineage_interval": 15, "lineage_timeout": 120, **options}
    result = e2e.run_e2e(
        settings,
        e2e.E2EOptions(**options),
        clients=e2e_aws.clients,
        callbacks=e2e.Callbacks(say=said.append),
        environ={},
    )
    return result, said


def conf_value(args: list[str], key: str) -> str:
    values = [a.split("=", 1)[1] for a in args if a.startswith(key + "=")]
    assert len(values) == 1, (key, args)
    return values[0]


def test_run_e2e_passes_and_terminates_the_cluster(
    settings, e2e_aws, e2e_marquez, e2e_events, lineage_clock, monkeypatch
):
    monkeypatch.setattr(emr_cluster, "pause", EmrPlayer(e2e_aws, SUCCESS))
    e2e_marquez.phases = [fresh(e2e_events)]
    result, said = run(settings, e2e_aws)

    assert result.exit_code == 0 and result.lineage.ok and result.lineage.attempts == 1, result.message
    cluster = e2e_aws.cluster()
    assert cluster.state == "TERMINATED" and result.terminated and not result.kept
    # One cluster, five ordered steps, one parent run shared by all of them.
    assert [s.name for s in cluster.steps] == list(pipeline.PIPELINE)
    parent_ids = {conf_value(s.args, "spark.openlineage.parentRunId") for s in cluster.steps}
    assert parent_ids == {result.parent.parent_run_id}
    assert {conf_value(s.args, "spark.openlineage.parentJobName") for s in cluster.steps} == {PARENT_JOB}
    for step in cluster.steps:
        assert step.args[step.args.index(f"s3://{ARTIFACTS}/{staged_key(step.name)}") + 1 :][:2] == [
            "--lake",
            f"s3://{LAKE_BUCKET}",
        ]
    tags = {t["Key"]: t["Value"] for t in e2e_aws.clients.emr.describe_cluster(ClusterId=cluster.id)["Cluster"]["Tags"]}
    assert tags["emr-lineage:launched-by"] == "emr-lineage e2e"
    assert tags["emr-lineage:parent-run-id"] == result.parent.parent_run_id
    # The seeded sample data is in the raw zone, the jobs in the artifacts bucket.
    assert "raw/orders/part-00000.csv" in e2e_aws.keys(LAKE_BUCKET, "raw/orders/")
    assert e2e_aws.keys(LAKE_BUCKET, "raw/orders_stream/")
    assert e2e_aws.keys(LAKE_BUCKET) == e2e_aws.keys(LAKE_BUCKET, "raw/")
    assert e2e_aws.keys(ARTIFACTS, "staged-jobs/") == sorted(staged_key(n) for n in pipeline.PIPELINE)
    assert result.graph_urls == [f"{MARQUEZ_WEB}lineage/job/{NAMESPACE}/{PARENT_JOB}.ingest_orders"]
    assert any("terminating" in line for line in said)


def test_lineage_arriving_late_is_retried_until_it_matches(
    settings, e2e_aws, e2e_marquez, e2e_events, lineage_clock, monkeypatch
):
    monkeypatch.setattr(emr_cluster, "pause", EmrPlayer(e2e_aws, SUCCESS))
    incomplete = fresh(e2e_events)
    e2e_marquez.phases = [lambda: None, lambda: without_job(incomplete(), "score_stream"), fresh(e2e_events)]
    result, _ = run(settings, e2e_aws)
    assert result.exit_code == 0 and result.lineage.attempts == 3
    assert lineage_clock.pauses == [15, 15]


def test_deadline_expires_with_only_old_lineage(settings, e2e_aws, e2e_marquez, e2e_events, lineage_clock, monkeypatch):
    monkeypatch.setattr(emr_cluster, "pause", EmrPlayer(e2e_aws, SUCCESS))
    e2e_marquez.phases = [lambda: marquez_lineage(e2e_events, PARENT_JOB, LONG_AGO)]
    result, _ = run(settings, e2e_aws, lineage_timeout=60)
    assert result.exit_code == 1 and not result.lineage.ok
    assert result.lineage.attempts == 5 and lineage_clock.pauses == [15, 15, 15, 15]
    assert "within 60s (5 reads)" in result.message and "before this cluster" in result.message
    assert e2e_aws.cluster().state == "TERMINATED"


def test_failed_step_fails_and_terminates_without_reading_lineage(
    settings, e2e_aws, e2e_marquez, e2e_events, lineage_clock, monkeypatch
):
    monkeypatch.setattr(emr_cluster, "pause", EmrPlayer(e2e_aws, FAILURE))
    e2e_marquez.phases = [fresh(e2e_events)]
    result, _ = run(settings, e2e_aws)
    assert result.exit_code == 1 and "revenue_daily" in result.message and "FAILED" in result.message
    assert result.lineage is None and e2e_marquez.lineage_reads() == 0
    assert e2e_aws.cluster().state == "TERMINATED"


def test_keep_cluster_leaves_it_up_and_waiting_on_failure(
    settings, e2e_aws, e2e_marquez, e2e_events, lineage_clock, monkeypatch
):
    monkeypatch.setattr(
        emr_cluster,
        "pause",
        EmrPlayer(e2e_aws, [("WAITING", "COMPLETED", "FAILED", "CANCELLED", "CANCELLED", "CANCELLED")]),
    )
    e2e_marquez.phases = [fresh(e2e_events)]
    result, said = run(settings, e2e_aws, keep_cluster=True)
    cluster = e2e_aws.cluster()
    assert result.exit_code == 1 and result.kept and not result.terminated
    assert cluster.state == "WAITING"
    assert cluster.keep_job_flow_alive_when_no_steps is True
    assert {s.action_on_failure for s in cluster.steps} == {"CANCEL_AND_WAIT"}
    assert any(f"aws emr terminate-clusters --cluster-ids {cluster.id}" in line for line in said)


def test_ctrl_c_while_waiting_terminates_the_cluster(
    settings, e2e_aws, e2e_marquez, e2e_events, lineage_clock, monkeypatch
):
    monkeypatch.setattr(emr_cluster, "pause", EmrPlayer(e2e_aws, SUCCESS, interrupt_at=1))
    e2e_marquez.phases = [fresh(e2e_events)]
    with pytest.raises(KeyboardInterrupt):
        run(settings, e2e_aws)
    assert e2e_aws.cluster().state == "TERMINATED"


def test_unreachable_marquez_fails_before_anything_is_uploaded_or_started(settings, e2e_aws, closed_port_url):
    with pytest.raises(MarquezError, match="does not answer.*--marquez http://localhost"):
        run(settings, e2e_aws, marquez_url=closed_port_url)
    assert e2e_aws.clusters() == [] and e2e_aws.keys(LAKE_BUCKET) == [] and e2e_aws.keys(ARTIFACTS) == []


@pytest.mark.parametrize(
    ("missing", "stack"),
    [(parameters.data_lake_bucket("dev"), "data lake stack"), (parameters.marquez_api_url("dev"), "Marquez stack")],
)
def test_missing_parameter_names_it_and_its_stack(settings, monkeypatch, e2e_marquez, missing, stack):
    for e2e_aws in aws_environment(monkeypatch, e2e_marquez.url, skip=(missing,)):
        with pytest.raises(aws_clients.AwsError) as info:
            run(settings, e2e_aws)
        assert missing in str(info.value) and stack in str(info.value)
        assert e2e_aws.clusters() == []


def test_wait_for_lineage_reports_the_last_error_when_marquez_stays_down(closed_port_url, lineage_clock):
    contract, values = contract_and_values()
    with MarquezClient(closed_port_url, retries=0) as client:
        outcome = e2e_lineage.wait_for_lineage(
            client, contract, values, new_parent(), datetime.now(UTC), timeout=30, interval=15
        )
    assert not outcome.ok and outcome.attempts == 3 and outcome.last.result is None
    assert "last read failed" in outcome.message and "unreachable" in outcome.message


def test_checkpoint_of_each_run_is_new(settings):
    a, b = new_parent(), new_parent()
    assert e2e.checkpoint_uri("s3://x", a) != e2e.checkpoint_uri("s3://x", b)
    # EMR may write only to the clean, curated and models zones.
    assert e2e.checkpoint_uri("s3://x", a).startswith("s3://x/curated/")
