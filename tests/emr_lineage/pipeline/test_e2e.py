"""emr_lineage.pipeline.e2e: moto plays AWS (EMR states driven between polls), the Marquez stand-in
receives the demo's own events as the listener reports them under the e2e's parent run
(tests/emr_lineage/e2e_support.py)."""

from __future__ import annotations

import json
import uuid
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest

from emr_lineage.aws import clients as aws_clients
from emr_lineage.aws import emr as emr_cluster
from emr_lineage.aws import parameters
from emr_lineage.launch.plan import file_sha256, job_s3_key
from emr_lineage.lineage.contracts.model import load_contract
from emr_lineage.lineage.graph.from_events import build_graph
from emr_lineage.marquez.client import MarquezClient, MarquezError
from emr_lineage.pipeline import definition as pipeline
from emr_lineage.pipeline import e2e, e2e_lineage
from emr_lineage.settings.loader import load_settings
from emr_lineage.spark.conf import ParentContext
from tests.emr_lineage.e2e_support import (
    ARTIFACTS,
    E2E_PARENT,
    FAILURE,
    GRAPH_PAGE,
    LAKE_BUCKET,
    MARQUEZ_WEB,
    NAMESPACE,
    PARENT_JOB,
    SUCCESS,
    EmrPlayer,
    aws_environment,
    fresh,
    launched,
    without_job,
)
from tests.emr_lineage.lineage.rule_events import run_event
from tests.emr_lineage.serverless_support import REPO_CDK_JSON
from tests.stacks.variants import as_spoke

LONG_AGO = datetime(2026, 1, 1, tzinfo=UTC)
# The first job's first output: where the e2e's graph URL points (Marquez's UI shows no edges on an application).


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


def renumbered(events: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """``events`` as another run of the same jobs reports them: every run id (and each reference to it) new."""
    runs = {e["run"]["runId"]: str(uuid.uuid4()) for e in events}

    def walk(value: Any) -> Any:
        if isinstance(value, dict):
            return {k: runs.get(v, v) if k == "runId" else walk(v) for k, v in value.items()}
        return [walk(v) for v in value] if isinstance(value, list) else value

    return [walk(e) for e in events]


# Other e2e runs' parent runs: the same parent job, other run ids.
OTHER_PARENT = ParentContext(
    parent_job_namespace=NAMESPACE, parent_job_name=PARENT_JOB, parent_run_id="0199f2e2-0000-7000-8000-00000000e1e1"
)
MEANWHILE_PARENT = ParentContext(
    parent_job_namespace=NAMESPACE, parent_job_name=PARENT_JOB, parent_run_id="0199f2e2-0000-7000-8000-00000000e1e2"
)


def earlier_run(events: list[dict[str, Any]], start: datetime) -> list[dict[str, Any]]:
    """The same jobs' events from another e2e (another parent run of the same parent job), from ``start``."""
    return launched(renumbered(events), OTHER_PARENT, start=start)


# --- a read of Marquez: this run's events, built and checked as event files are ----------------------


def read(marquez, since: datetime, parent: ParentContext = E2E_PARENT):
    contract, values = contract_and_values()
    with MarquezClient(marquez.url) as client:
        return e2e_lineage.read_lineage(client, contract, values, parent, since)


def test_a_read_is_the_graph_of_this_run_s_events(e2e_marquez, e2e_events):
    since = datetime.now(UTC) - timedelta(seconds=1)
    e2e_marquez.store(launched(e2e_events))
    result, graph, skipped = read(e2e_marquez, since)
    expected = build_graph(e2e_events, level="application")
    assert graph.jobs() == expected.jobs() == sorted(f"job:{NAMESPACE}:{name}" for name in pipeline.PIPELINE)
    assert graph.edges() == expected.edges() and graph.column_edges == expected.column_edges
    assert result.ok and skipped == 0


def test_a_read_keeps_only_the_runs_this_parent_run_launched(e2e_marquez, e2e_events):
    """Another e2e of the same jobs (another parent run), an hour before this one or meanwhile, cannot fill
    a gap of this run: train_model is missing although the other runs reported it."""
    since = datetime.now(UTC) - timedelta(seconds=1)
    meanwhile = launched(renumbered(e2e_events), MEANWHILE_PARENT)
    e2e_marquez.store(
        earlier_run(e2e_events, since - timedelta(hours=1))
        + meanwhile
        + without_job(launched(e2e_events), "train_model")
    )
    result, graph, _ = read(e2e_marquez, since)
    assert f"job:{NAMESPACE}:train_model" not in graph.jobs() and len(graph.jobs()) == 4
    assert {row.job for row in result.missing} == {f"job:{NAMESPACE}:train_model"} and not result.unexpected
    # read from long before, the earlier run's events are in the window, and still not this parent run's
    everything, _, _ = read(e2e_marquez, LONG_AGO)
    assert {row.job for row in everything.missing} == {f"job:{NAMESPACE}:train_model"}
    earlier, _, _ = read(e2e_marquez, LONG_AGO, OTHER_PARENT)
    assert earlier.ok  # under its own parent run, it holds


def test_a_read_counts_the_events_that_fail_the_event_checks(e2e_marquez, e2e_events):
    since = datetime.now(UTC) - timedelta(seconds=1)
    legacy = run_event(NAMESPACE, "legacy", eventTime=datetime.now(UTC).isoformat())
    legacy["run"]["facets"] = {"custom": {"value": 1}}  # Marquez takes a facet without _producer/_schemaURL
    e2e_marquez.store([*launched(e2e_events), legacy])
    result, _, skipped = read(e2e_marquez, since)
    assert result.ok and skipped == 1


# --- steps ------------------------------------------------------------------------------------


def test_pipeline_jobs_are_the_five_jobs_in_order_with_their_emr_arguments(settings):
    parent = new_parent()
    jobs = e2e.pipeline_jobs(settings, "s3://lake-bucket", parent)
    assert [j.job_name for j in jobs] == list(pipeline.PIPELINE)
    assert all(j.script.parent == pipeline.JOBS_DIR and j.script.is_file() for j in jobs)
    by_name = {j.job_name: j.args for j in jobs}
    assert by_name["ingest_orders"] == ("--lake", "s3://lake-bucket", "--orders-table", ORDERS)
    assert by_name["revenue_daily"] == ("--orders-table", ORDERS, "--revenue-table", REVENUE)
    assert by_name["customer_ltv"] == (
        "--orders-table",
        ORDERS,
        "--ltv-table",
        "lakehouse.emr_lineage_dev_curated.customer_ltv",
    )
    assert by_name["train_model"] == ("--lake", "s3://lake-bucket", "--orders-table", ORDERS)
    assert by_name["score_stream"] == (
        "--lake",
        "s3://lake-bucket",
        "--checkpoint",
        f"s3://lake-bucket/curated/_checkpoints/score_stream/{parent.parent_run_id}",
    )


ORDERS = "lakehouse.emr_lineage_dev_clean.orders_clean"
REVENUE = "lakehouse.emr_lineage_dev_curated.revenue_daily"


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
    settings, e2e_aws, e2e_marquez, e2e_events, e2e_parent, lineage_clock, monkeypatch
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
    jobs = {j.job_name: list(j.args) for j in e2e.pipeline_jobs(settings, f"s3://{LAKE_BUCKET}", result.parent)}
    for step in cluster.steps:
        assert step.args[step.args.index(f"s3://{ARTIFACTS}/{staged_key(step.name)}") + 1 :] == jobs[step.name]
    tags = {t["Key"]: t["Value"] for t in e2e_aws.clients.emr.describe_cluster(ClusterId=cluster.id)["Cluster"]["Tags"]}
    assert tags["emr-lineage:launched-by"] == "emr-lineage e2e"
    assert tags["emr-lineage:parent-run-id"] == result.parent.parent_run_id
    # The seeded sample data is in the raw zone, the jobs in the artifacts bucket.
    assert "raw/orders/part-00000.csv" in e2e_aws.keys(LAKE_BUCKET, "raw/orders/")
    assert e2e_aws.keys(LAKE_BUCKET, "raw/orders_stream/")
    assert e2e_aws.keys(LAKE_BUCKET) == e2e_aws.keys(LAKE_BUCKET, "raw/")
    # jobs/as_of.py, which four of the jobs import, travels with them (--py-files)
    assert e2e_aws.keys(ARTIFACTS, "staged-jobs/") == sorted(staged_key(n) for n in (*pipeline.PIPELINE, "as_of"))
    shipped = {s.name for s in cluster.steps if f"s3://{ARTIFACTS}/{staged_key('as_of')}" in s.args}
    assert shipped == {"revenue_daily", "customer_ltv", "train_model"}
    assert result.graph_urls == [f"{MARQUEZ_WEB}{GRAPH_PAGE}"]
    assert any("terminating" in line for line in said)


def test_lineage_arriving_late_is_retried_until_it_matches(
    settings, e2e_aws, e2e_marquez, e2e_events, e2e_parent, lineage_clock, monkeypatch
):
    monkeypatch.setattr(emr_cluster, "pause", EmrPlayer(e2e_aws, SUCCESS))
    incomplete = fresh(e2e_events)
    e2e_marquez.phases = [lambda: [], lambda: without_job(incomplete(), "score_stream"), fresh(e2e_events)]
    result, _ = run(settings, e2e_aws)
    assert result.exit_code == 0 and result.lineage.attempts == 3
    assert lineage_clock.pauses == [15, 15]


def test_deadline_expires_with_only_an_earlier_run_s_lineage(
    settings, e2e_aws, e2e_marquez, e2e_events, e2e_parent, lineage_clock, monkeypatch
):
    monkeypatch.setattr(emr_cluster, "pause", EmrPlayer(e2e_aws, SUCCESS))
    e2e_marquez.phases = [lambda: earlier_run(e2e_events, LONG_AGO)]
    result, _ = run(settings, e2e_aws, lineage_timeout=60)
    assert result.exit_code == 1 and not result.lineage.ok
    assert result.lineage.attempts == 5 and lineage_clock.pauses == [15, 15, 15, 15]
    assert "within 60s (5 reads): 11 missing, 0 unexpected edge(s)" in result.message
    assert e2e_aws.cluster().state == "TERMINATED"


@pytest.mark.parametrize("parent", ["another-parent-run", "this-parent-run-id"])
def test_an_earlier_run_of_the_same_jobs_cannot_make_it_pass(
    settings, e2e_aws, e2e_marquez, e2e_events, e2e_parent, lineage_clock, monkeypatch, parent
):
    """This run never reports train_model; an e2e of the same jobs an hour before did. Neither that run,
    under its own parent run, nor its events under this parent run id (they are before this run began)
    let its train_model count."""
    monkeypatch.setattr(emr_cluster, "pause", EmrPlayer(e2e_aws, SUCCESS))
    other = OTHER_PARENT if parent == "another-parent-run" else e2e_parent

    def arrive() -> list[dict[str, Any]]:
        old = launched(renumbered(e2e_events), other, start=datetime.now(UTC) - timedelta(hours=1))
        return old + launched(without_job(e2e_events, "train_model"))

    e2e_marquez.phases = [arrive]
    result, _ = run(settings, e2e_aws, lineage_timeout=15)
    assert result.exit_code == 1 and result.lineage.attempts == 2
    assert {row.job for row in result.lineage.last.result.missing} == {f"job:{NAMESPACE}:train_model"}
    assert "2 missing, 0 unexpected edge(s)" in result.message


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


def test_the_graph_url_is_that_of_the_first_output_marquez_names() -> None:
    """The lineage page of the first output that is one dataset as Marquez names it: a ``table:`` alias (the
    catalog's name) and a tree (a location and all under it) name none; with neither, no URL (the CLI gives
    the ``graph`` command instead)."""
    from emr_lineage.lineage.contracts.model import parse_contract

    def urls(*outputs: str) -> list[str]:
        jobs = "".join(f"  - name: j{n}\n    outputs: [ {json.dumps(out)} ]\n" for n, out in enumerate(outputs))
        contract = parse_contract(f"version: 1\nnamespace: ns\njobs:\n{jobs}")
        return e2e_lineage.graph_urls(MARQUEZ_WEB, None, contract, {})

    lake = f"s3://{LAKE_BUCKET}"
    page = f"{MARQUEZ_WEB}{GRAPH_PAGE}"
    assert urls("table:customer_ltv", f"{lake}/models/**", f"{lake}/curated/order_scores") == [page]
    assert urls("table:db.customer_ltv", f"{lake}/models/**") == []


def test_a_spoke_without_marquez_asks_for_the_hubs_instead_of_its_own_stack(tmp_path, monkeypatch, e2e_marquez) -> None:
    document = json.loads(REPO_CDK_JSON.read_text())
    as_spoke(document["context"]["emr-lineage"]["environments"]["dev"])
    (tmp_path / "cdk.json").write_text(json.dumps(document))
    spoke = load_settings("dev", tmp_path / "cdk.json")
    for e2e_aws in aws_environment(monkeypatch, e2e_marquez.url, skip=(parameters.marquez_api_url("dev"),)):
        with pytest.raises(aws_clients.AwsError, match="env 'dev' is a spoke: its lineage is in the hub's Marquez"):
            run(spoke, e2e_aws)
        assert e2e_aws.clusters() == []
