"""emr_lineage.aws.emr_serverless against moto's in-process EMR Serverless: runs are born SUBMITTED and
moved between polls (tests/emr_lineage/serverless_support.py); no sleeps, the clock is injected."""

from __future__ import annotations

import itertools

import boto3
import pytest
from moto import mock_aws

from emr_lineage.aws import emr_serverless
from emr_lineage.aws.clients import AwsError
from emr_lineage.spark.conf import SPARK_DEFAULTS
from tests.emr_lineage.serverless_support import RELEASE, ROLE_ARN, RunPlayer
from tests.helpers import fake_aws_credentials

REGION = "eu-west-1"
LOGS = "s3://artifacts/serverless-logs/"


@pytest.fixture
def client(monkeypatch):
    fake_aws_credentials(monkeypatch, REGION)
    monkeypatch.setattr("moto.emrserverless.models.JOB_STATUS", "SUBMITTED")
    with mock_aws():
        yield boto3.client(emr_serverless.SERVICE, region_name=REGION)


def request(app_id: str, role: str = ROLE_ARN) -> dict:
    return {
        "applicationId": app_id,
        "executionRoleArn": role,
        "name": "revenue_daily",
        "clientToken": "token-1",
        "jobDriver": {"sparkSubmit": {"entryPoint": "s3://artifacts/staged-jobs/abc/revenue_daily.py"}},
        "configurationOverrides": {
            "applicationConfiguration": [{"classification": SPARK_DEFAULTS, "properties": {"spark.x": "1"}}],
            "monitoringConfiguration": {"s3MonitoringConfiguration": {"logUri": LOGS}},
        },
        "executionTimeoutMinutes": 5,
    }


def started(client) -> emr_serverless.JobRun:
    app_id = client.create_application(name="app", releaseLabel=RELEASE, type="SPARK")["applicationId"]
    return emr_serverless.start_job_run(client, request(app_id))


def test_driver_log_uri_is_where_emr_serverless_writes_it() -> None:
    for log_uri in (LOGS, LOGS.rstrip("/")):
        assert emr_serverless.driver_log_uri(log_uri, "00app", "00run") == (
            "s3://artifacts/serverless-logs/applications/00app/jobs/00run/SPARK_DRIVER/stderr.gz"
        )


def test_a_run_is_waited_on_through_every_state_even_unknown_ones(client, monkeypatch) -> None:
    run = started(client)
    assert run.name == "revenue_daily" and run.log_uri == LOGS
    script = ["QUEUED", "PENDING", "SCHEDULED", "SOME_NEW_STATE", "RUNNING", "SUCCESS"]
    monkeypatch.setattr(emr_serverless, "pause", RunPlayer(REGION, run.application_id, script))
    seen: list[str] = []
    outcome = emr_serverless.wait_for_job_run(
        client, run, poll_interval=2, deadline_seconds=600, on_poll=lambda s: seen.append(s.state)
    )
    assert seen == ["SUBMITTED", *script]
    assert outcome.succeeded and not outcome.timed_out
    assert outcome.log_uris == (run.driver_log_uri,)


@pytest.mark.parametrize(("state", "details"), [("FAILED", "Job failed, ExitCode: 1"), ("CANCELLED", None)])
def test_a_run_that_does_not_succeed_says_why(client, monkeypatch, state, details) -> None:
    run = started(client)
    script = [f"{state}: {details}" if details else state]
    monkeypatch.setattr(emr_serverless, "pause", RunPlayer(REGION, run.application_id, script))
    outcome = emr_serverless.wait_for_job_run(client, run, poll_interval=1, deadline_seconds=600)
    assert not outcome.succeeded
    assert outcome.message == f"job run revenue_daily ({run.job_run_id}) {state}" + (f": {details}" if details else "")


def test_the_deadline_ends_the_wait_without_cancelling(client, monkeypatch) -> None:
    run = started(client)
    monkeypatch.setattr(emr_serverless, "pause", RunPlayer(REGION, run.application_id, ["RUNNING"]))
    ticks = itertools.count(step=100)
    monkeypatch.setattr(emr_serverless, "clock", lambda: next(ticks))
    outcome = emr_serverless.wait_for_job_run(client, run, poll_interval=10, deadline_seconds=250)
    assert outcome.timed_out and not outcome.succeeded
    assert "still RUNNING at its deadline" in outcome.message
    assert client.get_job_run(applicationId=run.application_id, jobRunId=run.job_run_id)["jobRun"]["state"] == "RUNNING"
    emr_serverless.cancel_job_run(client, run)
    assert (
        client.get_job_run(applicationId=run.application_id, jobRunId=run.job_run_id)["jobRun"]["state"] == "CANCELLED"
    )


def test_aws_errors_are_one_line(client) -> None:
    app_id = client.create_application(name="app", releaseLabel=RELEASE, type="SPARK")["applicationId"]
    with pytest.raises(AwsError, match=r"refused to start the job run revenue_daily \(AccessDeniedException: Cross-"):
        emr_serverless.start_job_run(client, request(app_id, role="arn:aws:iam::999999999999:role/other"))
    ghost = emr_serverless.JobRun(app_id, "00nothere", "x", LOGS)
    with pytest.raises(AwsError, match="cannot read the state of the job run 00nothere"):
        emr_serverless.poll(client, ghost, 0)
    with pytest.raises(AwsError, match="could not cancel the job run 00nothere"):
        emr_serverless.cancel_job_run(client, ghost)
