"""emr_lineage.launch.serverless against moto's in-process SSM, S3, Secrets Manager and EMR Serverless:
what a job run's request holds, where its parts come from, and that the API key is never shown."""

from __future__ import annotations

import json
from pathlib import Path

import boto3
import pytest

from emr_lineage.aws import parameters
from emr_lineage.aws.clients import AwsError
from emr_lineage.cli.launch_serverless import listener_of
from emr_lineage.launch import plan as launch_plan
from emr_lineage.launch import serverless
from emr_lineage.settings.loader import load_settings
from emr_lineage.spark.conf import MASK
from tests.emr_lineage.launch_support import BUCKET, REGION, launch_spec
from tests.emr_lineage.serverless_support import API_KEY, ROLE_ARN, publish_serverless, serverless_cdk_json


@pytest.fixture
def app_id(launch_aws, monkeypatch) -> str:
    return publish_serverless(monkeypatch, REGION, BUCKET)


@pytest.fixture
def clients(app_id) -> serverless.ServerlessClients:
    made = {name: boto3.client(name, region_name=REGION) for name in ("ssm", "s3", "emr-serverless", "secretsmanager")}
    return serverless.ServerlessClients(made["ssm"], made["s3"], made["emr-serverless"], made["secretsmanager"])


@pytest.fixture
def job(tmp_path: Path) -> launch_plan.JobRequest:
    script = tmp_path / "revenue_daily.py"
    script.write_text("print('hi')\n")
    return launch_plan.JobRequest(script=script, args=("--date", "2026-11-20"))


def settings_for(tmp_path: Path, **kwargs):
    return load_settings("dev", serverless_cdk_json(tmp_path, **kwargs))


def test_the_target_comes_from_what_the_stacks_publish(clients, app_id, tmp_path) -> None:
    settings = settings_for(tmp_path)
    target = serverless.resolve_target(clients, settings, listener_of(settings))
    assert (target.application_id, target.role_arn, target.bucket) == (app_id, ROLE_ARN, BUCKET)
    assert target.lineage_url == "http://marquez.internal.example:5000"  # the clusters' launch spec's
    assert target.glue_catalog_id == "123456789012"
    assert target.log_uri == f"s3://{BUCKET}/serverless-logs/"
    assert target.api_key == API_KEY and API_KEY not in repr(target)


def test_a_json_secret_is_read_as_the_ingest_reads_it(clients, launch_aws, tmp_path) -> None:
    arn = launch_aws.ssm.get_parameter(Name=parameters.gateway_api_key_secret("dev"))["Parameter"]["Value"]
    clients.secretsmanager.put_secret_value(SecretId=arn, SecretString=json.dumps({"apiKey": "from-json"}))
    settings = settings_for(tmp_path)
    assert serverless.resolve_target(clients, settings, listener_of(settings)).api_key == "from-json"
    clients.secretsmanager.put_secret_value(SecretId=arn, SecretString="   ")
    with pytest.raises(AwsError, match=f"secret {arn} is empty"):
        serverless.resolve_target(clients, settings, listener_of(settings))


def test_a_launch_spec_without_a_transport_url_is_an_error(clients, launch_aws, tmp_path) -> None:
    spec = launch_spec()
    spec["Configurations"] = []
    launch_aws.ssm.put_parameter(
        Name=parameters.emr_launch_spec("dev"), Value=json.dumps(spec), Type="String", Overwrite=True
    )
    settings = settings_for(tmp_path)
    with pytest.raises(AwsError, match="has no spark.openlineage.transport.url in spark-defaults"):
        serverless.resolve_target(clients, settings, listener_of(settings))


def test_the_request_and_what_may_be_shown_of_it(clients, app_id, job, tmp_path) -> None:
    settings = settings_for(tmp_path)
    plan = serverless.prepare_serverless(clients, settings, [job], listener=listener_of(settings), parent=None)
    (request,) = plan.requests
    assert plan.parent_is_new and plan.timeout_minutes == settings.emr_serverless.job_timeout_minutes
    assert request["applicationId"] == app_id and request["executionRoleArn"] == ROLE_ARN
    assert request["name"] == "revenue_daily" and request["executionTimeoutMinutes"] == 120
    assert request["jobDriver"]["sparkSubmit"] == {
        "entryPoint": plan.staged[0].uri,
        "entryPointArguments": ["--date", "2026-11-20"],
    }
    (defaults,) = request["configurationOverrides"]["applicationConfiguration"]
    assert defaults["properties"]["spark.openlineage.transport.auth.apiKey"] == API_KEY
    shown = serverless.redacted(request)
    assert (
        shown["configurationOverrides"]["applicationConfiguration"][0]["properties"][
            "spark.openlineage.transport.auth.apiKey"
        ]
        == MASK
    )
    assert API_KEY not in json.dumps(shown) and API_KEY not in repr(plan.target)
    assert defaults["properties"]["spark.openlineage.transport.auth.apiKey"] == API_KEY  # the request is untouched
    assert plan.staged[0].uploaded


def test_two_requests_never_share_a_client_token(clients, app_id, job, tmp_path) -> None:
    settings = settings_for(tmp_path)
    first, second = (
        serverless.prepare_serverless(clients, settings, [job], listener=listener_of(settings), parent=None)
        for _ in range(2)
    )
    assert first.requests[0]["clientToken"] != second.requests[0]["clientToken"]


def test_an_unpinned_jar_is_bad_input(clients, app_id, job, tmp_path) -> None:
    settings = settings_for(tmp_path)
    unpinned = settings.model_copy(
        update={
            "versions": settings.versions.model_copy(
                update={"openlineage_spark": settings.versions.openlineage_spark.model_copy(update={"sha256": None})}
            )
        }
    )
    with pytest.raises(launch_plan.JobError, match="the listener jar is not pinned"):
        serverless.prepare_serverless(clients, unpinned, [job], listener=listener_of(unpinned), parent=None)


def test_an_aws_error_never_quotes_the_key(clients, app_id, job, tmp_path, monkeypatch) -> None:
    settings = settings_for(tmp_path)
    plan = serverless.prepare_serverless(clients, settings, [job], listener=listener_of(settings), parent=None)

    def quoting(client, request):
        raise AwsError(f"EMR Serverless refused to start the job run x (ValidationException: bad value {API_KEY})")

    monkeypatch.setattr(serverless.emr_serverless, "start_job_run", quoting)
    with pytest.raises(AwsError) as raised:
        serverless.start_run(clients.emr_serverless, plan.requests[0])
    assert API_KEY not in str(raised.value) and f"bad value {MASK}" in str(raised.value)


def test_a_refused_start_is_one_aws_error(clients, app_id, job, tmp_path) -> None:
    settings = settings_for(tmp_path)
    plan = serverless.prepare_serverless(clients, settings, [job], listener=listener_of(settings), parent=None)
    request = {**plan.requests[0], "executionRoleArn": "arn:aws:iam::999999999999:role/elsewhere"}
    with pytest.raises(AwsError, match="Cross-account pass role is not allowed") as raised:
        serverless.start_run(clients.emr_serverless, request)
    assert "\n" not in str(raised.value) and API_KEY not in str(raised.value)
