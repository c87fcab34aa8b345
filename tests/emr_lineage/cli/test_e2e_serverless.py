"""``emr-lineage e2e --serverless`` through click: moto plays EMR Serverless (job-run states driven
between polls), the e2e's local Marquez receives generated pipeline events under the e2e's parent run (no Spark)."""

from __future__ import annotations

import pytest
from click.testing import CliRunner

from emr_lineage.aws import emr_serverless
from emr_lineage.cli.app import main
from emr_lineage.pipeline import definition as pipeline
from tests.emr_lineage.e2e_support import ARTIFACTS, GRAPH_PAGE, LAKE_BUCKET, MARQUEZ_WEB, NAMESPACE, REGION, fresh
from tests.emr_lineage.generated_events import sample_pipeline_events
from tests.emr_lineage.serverless_support import (
    API_KEY,
    RunPlayer,
    api_key_secret_arn,
    each_run,
    job_runs,
    publish_serverless,
    serverless_cdk_json,
)

# The Marquez UI page the e2e points at: the lineage of the first job's first output dataset.
FAST = ["--rows", "100", "--poll-interval", "1", "--lineage-interval", "15", "--lineage-timeout", "60"]


@pytest.fixture
def app_id(e2e_aws, monkeypatch) -> str:
    return publish_serverless(monkeypatch, REGION, ARTIFACTS)


def invoke(tmp_path, *args: str, enabled: bool = True):
    cdk_json = serverless_cdk_json(tmp_path, enabled=enabled)
    return CliRunner().invoke(main, ["e2e", "--env", "dev", "--cdk-json", str(cdk_json), *FAST, *args])


def test_serverless_pass_prints_the_contract_table_and_runs_reference_the_key(
    app_id, tmp_path, e2e_marquez, e2e_parent, lineage_clock, monkeypatch
) -> None:
    monkeypatch.setattr(emr_serverless, "pause", RunPlayer(REGION, app_id, each_run(["RUNNING", "SUCCESS"], 5)))
    e2e_marquez.phases = [fresh(sample_pipeline_events(f"s3://{LAKE_BUCKET}", NAMESPACE))]
    result = invoke(tmp_path, "--serverless")
    assert result.exit_code == 0, result.output
    runs = job_runs(REGION, app_id)
    assert [r.name for r in runs] == list(pipeline.PIPELINE)
    assert "contract holds" in result.stdout
    assert f"graph: {MARQUEZ_WEB}{GRAPH_PAGE}\n" in result.stdout
    assert f"e2e passed on EMR Serverless application {app_id}" in result.stdout
    assert f"job run {runs[0].id}: ingest_orders RUNNING" in result.stderr
    assert f"job run {runs[4].id}: score_stream SUCCESS" in result.stderr
    assert "lineage read 1:" in result.stderr
    assert API_KEY not in result.output
    (defaults,) = runs[0].configuration_overrides["applicationConfiguration"]
    assert (
        defaults["properties"]["spark.openlineage.transport.auth.apiKey"] == f"EMR.secret@{api_key_secret_arn(REGION)}"
    )
    assert not [r for r in runs if API_KEY in repr(r.configuration_overrides)]


def test_serverless_failed_run_exits_1_with_its_driver_log(
    app_id, tmp_path, e2e_marquez, lineage_clock, monkeypatch
) -> None:
    monkeypatch.setattr(emr_serverless, "pause", RunPlayer(REGION, app_id, ["FAILED: boom"]))
    result = invoke(tmp_path, "--serverless")
    assert result.exit_code == 1
    (job_run,) = job_runs(REGION, app_id)
    assert f"logs: s3://{ARTIFACTS}/serverless-logs/applications/{app_id}/jobs/{job_run.id}/" in result.stderr
    assert f"error: job run ingest_orders ({job_run.id}) FAILED: boom" in result.stderr


def test_serverless_ctrl_c_cancels_the_run_and_exits_130(
    app_id, tmp_path, e2e_marquez, lineage_clock, monkeypatch
) -> None:
    monkeypatch.setattr(emr_serverless, "pause", RunPlayer(REGION, app_id, ["RUNNING", "SUCCESS", KeyboardInterrupt]))
    result = invoke(tmp_path, "--serverless")
    assert result.exit_code == 130
    first, second = job_runs(REGION, app_id)
    assert first.state == "SUCCESS" and second.state == "CANCELLED"
    assert f"error: interrupted; job run revenue_daily ({second.id}) cancelled" in result.stderr


def test_serverless_with_keep_cluster_is_exit_2(tmp_path) -> None:
    result = invoke(tmp_path, "--serverless", "--keep-cluster")
    assert result.exit_code == 2
    assert "--keep-cluster is for clusters" in result.stderr


def test_serverless_off_for_the_env_is_exit_2_before_any_cost(app_id, tmp_path, e2e_aws) -> None:
    result = invoke(tmp_path, "--serverless", enabled=False)
    assert result.exit_code == 2
    assert "emr-lineage.environments.dev.emr_serverless.enabled to true" in result.stderr
    assert e2e_aws.keys(LAKE_BUCKET) == [] and job_runs(REGION, app_id) == []
