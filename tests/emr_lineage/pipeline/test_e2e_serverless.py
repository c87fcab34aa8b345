"""emr_lineage.pipeline.e2e_serverless: moto plays AWS (job-run states driven between polls,
tests/emr_lineage/serverless_support.py), the e2e's local Marquez receives generated pipeline events
under the e2e's parent run (no Spark)."""

from __future__ import annotations

import boto3
import pytest

from emr_lineage.aws import emr_serverless
from emr_lineage.cli.launch_serverless import listener_of
from emr_lineage.launch import serverless
from emr_lineage.pipeline import definition as pipeline
from emr_lineage.pipeline import e2e, e2e_serverless
from emr_lineage.settings.loader import load_settings
from tests.emr_lineage.e2e_support import ARTIFACTS, LAKE_BUCKET, NAMESPACE, REGION, fresh
from tests.emr_lineage.generated_events import sample_pipeline_events
from tests.emr_lineage.serverless_support import RunPlayer, each_run, job_runs, publish_serverless, serverless_cdk_json


@pytest.fixture
def app_id(e2e_aws, monkeypatch) -> str:
    return publish_serverless(monkeypatch, REGION, ARTIFACTS)


@pytest.fixture
def settings(tmp_path):
    return load_settings("dev", serverless_cdk_json(tmp_path))


def clients() -> serverless.ServerlessClients:
    made = {name: boto3.client(name, region_name=REGION) for name in ("ssm", "s3", "emr-serverless")}
    return serverless.ServerlessClients(made["ssm"], made["s3"], made["emr-serverless"])


def run(settings, said: list[str]) -> e2e.E2EResult:
    options = e2e.E2EOptions(rows=100, emr_poll_interval=1, lineage_timeout=60, lineage_interval=15)
    callbacks = e2e.Callbacks(say=said.append)
    return e2e_serverless.run_e2e_serverless(
        settings, options, listener=listener_of(settings), clients=clients(), callbacks=callbacks
    )


def test_the_five_jobs_run_in_order_under_one_parent_and_the_contract_holds(
    app_id, settings, e2e_marquez, e2e_parent, lineage_clock, monkeypatch
) -> None:
    monkeypatch.setattr(emr_serverless, "pause", RunPlayer(REGION, app_id, each_run(["RUNNING", "SUCCESS"], 5)))
    e2e_marquez.phases = [fresh(sample_pipeline_events(f"s3://{LAKE_BUCKET}", NAMESPACE))]
    said: list[str] = []
    result = run(settings, said)
    assert result.exit_code == 0, result.message
    runs = job_runs(REGION, app_id)
    assert (
        [r.name for r in runs]
        == list(pipeline.PIPELINE)
        == [r.job_driver["sparkSubmit"]["entryPoint"].rsplit("/", 1)[1][:-3] for r in runs]
    )
    assert result.job_runs == [r.id for r in runs] and result.application_id == app_id
    parents = {
        r.configuration_overrides["applicationConfiguration"][0]["properties"]["spark.openlineage.parentRunId"]
        for r in runs
    }
    assert parents == {result.parent.parent_run_id}
    jobs = {j.job_name: list(j.args) for j in e2e.pipeline_jobs(settings, f"s3://{LAKE_BUCKET}", result.parent)}
    assert all(r.job_driver["sparkSubmit"]["entryPointArguments"] == jobs[r.name] for r in runs)
    assert len(result.steps.log_uris) == 5 and result.ran_on == f"EMR Serverless application {app_id}"
    assert "all 5 job runs succeeded; reading lineage from Marquez (up to 60s)" in said


def test_a_failed_run_ends_the_pipeline(app_id, settings, e2e_marquez, lineage_clock, monkeypatch) -> None:
    script = ["RUNNING", "SUCCESS", "RUNNING", "FAILED: Job failed"]
    monkeypatch.setattr(emr_serverless, "pause", RunPlayer(REGION, app_id, script))
    result = run(settings, [])
    runs = job_runs(REGION, app_id)
    assert [r.name for r in runs] == list(pipeline.PIPELINE[:2])
    assert result.exit_code == 1 and result.lineage is None
    assert result.message == f"job run {pipeline.PIPELINE[1]} ({runs[1].id}) FAILED: Job failed"
    assert result.steps.log_uris == (
        f"s3://{ARTIFACTS}/serverless-logs/applications/{app_id}/jobs/{runs[1].id}/SPARK_DRIVER/stderr.gz",
    )
