"""``emr-lineage launch --serverless`` end to end against moto's in-process EMR Serverless, S3, SSM
and Secrets Manager (tests/emr_lineage/serverless_support.py drives the job run's states)."""

from __future__ import annotations

import hashlib
import itertools
import json
import os
import re
import signal
from pathlib import Path

import pytest
from click.testing import CliRunner

from emr_lineage.aws import emr_serverless, parameters
from emr_lineage.cli.app import main
from emr_lineage.launch.plan import file_sha256, job_s3_key
from emr_lineage.spark import iceberg
from emr_lineage.spark.conf import LISTENER_CLASS
from tests import pki
from tests.emr_lineage.launch_support import BUCKET, MARQUEZ_WEB, REGION
from tests.emr_lineage.serverless_support import (
    API_KEY,
    ROLE_ARN,
    RunPlayer,
    api_key_secret_arn,
    job_runs,
    publish_serverless,
    record_tool_requests,
    serverless_cdk_json,
)
from tests.stacks.variants import CERTIFICATE_ARN

LISTENER_URL = "http://marquez.internal.example:5000"  # the launch spec's (launch_support.launch_spec)
JAR = f"s3://{BUCKET}/listener/openlineage-spark_2.12-1.53.0.jar"


@pytest.fixture
def job_file(tmp_path: Path) -> Path:
    path = tmp_path / "jobs" / "revenue_daily.py"
    path.parent.mkdir()
    path.write_text("from pyspark.sql import SparkSession\nSparkSession.builder.getOrCreate()\n")
    return path


@pytest.fixture
def app_id(launch_aws, monkeypatch) -> str:
    return publish_serverless(monkeypatch, REGION, BUCKET)


def play(monkeypatch, app_id: str, script: list) -> RunPlayer:
    player = RunPlayer(REGION, app_id, script)
    monkeypatch.setattr(emr_serverless, "pause", player)
    return player


def run(tmp_path: Path, *args: str, gateway: bool = True, enabled: bool = True):
    cdk_json = serverless_cdk_json(tmp_path, enabled=enabled, gateway=gateway)
    argv = ["launch", "--env", "dev", "--cdk-json", str(cdk_json), *args]
    return CliRunner().invoke(main, argv, catch_exceptions=False)


def only_run(app_id: str):
    runs = job_runs(REGION, app_id)
    assert len(runs) == 1
    return runs[0]


def properties(job_run) -> dict[str, str]:
    (defaults,) = job_run.configuration_overrides["applicationConfiguration"]
    assert defaults["classification"] == "spark-defaults"
    return defaults["properties"]


MARQUEZ_API = "http://internal-marquez.example:5000"


def test_success_carries_the_listener_and_a_reference_to_the_key(
    app_id, launch_aws, job_file, tmp_path, monkeypatch
) -> None:
    launch_aws.ssm.put_parameter(Name=parameters.marquez_api_url("dev"), Value=MARQUEZ_API, Type="String")
    player = play(monkeypatch, app_id, ["PENDING", "RUNNING", "SUCCESS"])
    sent = record_tool_requests(monkeypatch)
    result = run(tmp_path, "--serverless", "--job", str(job_file), "--poll-interval", "0.5", "--", "--date", "x")
    assert result.exit_code == 0, result.output
    assert player.pauses == [0.5, 0.5, 0.5]
    job_run = only_run(app_id)
    staged = f"s3://{BUCKET}/{job_s3_key(job_file, file_sha256(job_file))}"
    assert job_run.job_driver == {"sparkSubmit": {"entryPoint": staged, "entryPointArguments": ["--date", "x"]}}
    assert job_run.execution_role_arn == ROLE_ARN and job_run.execution_timeout_minutes == 120
    props = properties(job_run)
    run_id = re.search(r"parent run id (\S+) \(new; job emr-lineage-dev/emr_lineage_launch\)", result.stderr)
    assert run_id, result.stderr
    assert props["spark.jars"] == f"{JAR},{iceberg.EMR_RUNTIME_JAR}"
    assert props["spark.extraListeners"] == LISTENER_CLASS
    assert props["spark.openlineage.transport.url"] == LISTENER_URL
    assert props["spark.openlineage.transport.auth.type"] == "api_key"
    reference = f"EMR.secret@{api_key_secret_arn(REGION)}"
    assert props["spark.openlineage.transport.auth.apiKey"] == reference  # EMR Serverless reads the key
    assert props["spark.openlineage.namespace"] == "emr-lineage-dev"
    assert props["spark.openlineage.parentRunId"] == run_id.group(1)
    assert props["spark.openlineage.parentJobName"] == "emr_lineage_launch"
    assert props["spark.glue.accountId"] == "123456789012"
    assert props["spark.app.name"] == "revenue_daily"
    (start,) = [s for s in sent if s.operation == "StartJobRun"]
    assert reference in start.text
    assert not [s for s in sent if API_KEY in s.text] and API_KEY not in result.output
    assert {s.service for s in sent} == {"ssm", "s3", "emr-serverless"}  # never Secrets Manager
    log_uri = f"s3://{BUCKET}/serverless-logs/"
    assert job_run.configuration_overrides["monitoringConfiguration"] == {
        "s3MonitoringConfiguration": {"logUri": log_uri}
    }
    assert job_run.tags["emr-lineage:parent-run-id"] == run_id.group(1)

    for state in ("SUBMITTED", "PENDING", "RUNNING", "SUCCESS"):
        assert re.search(rf"\[\d\d:\d\d\] job run {job_run.id}: revenue_daily {state}\n", result.stderr)
    assert f"logs: {log_uri}applications/{app_id}/jobs/{job_run.id}/SPARK_DRIVER/stderr.gz" in result.stdout
    # Marquez's UI page of the application's runs (its job holds no edges: they are on its Spark actions) ...
    assert f"runs: {MARQUEZ_WEB}/lineage/job/emr-lineage-dev/emr_lineage_launch.revenue_daily\n" in result.stdout
    # ... and the command that shows its lineage, from the raw events Marquez stored
    # (this run's events: from a little before it started; the application and its datasets)
    assert re.search(
        rf"lineage: emr-lineage graph --marquez {re.escape(MARQUEZ_API)} --since \d{{4}}-\d\d-\d\dT\d\d:\d\d:\d\dZ "
        r"--node job:emr-lineage-dev:revenue_daily --depth 0 --format html -o revenue_daily-lineage.html\n",
        result.stdout,
    )
    assert f"job run revenue_daily ({job_run.id}) succeeded on EMR Serverless application {app_id}" in result.stdout
    assert f"EMR Serverless reads secret {api_key_secret_arn(REGION)} when the run starts" in result.stderr


def test_failure_exits_1_with_the_driver_log(app_id, job_file, tmp_path, monkeypatch) -> None:
    play(monkeypatch, app_id, ["RUNNING", "FAILED: Job failed, ExitCode: 1"])
    result = run(tmp_path, "--serverless", "--job", str(job_file), "--poll-interval", "1")
    assert result.exit_code == 1
    job_run = only_run(app_id)
    assert f"/applications/{app_id}/jobs/{job_run.id}/SPARK_DRIVER/stderr.gz" in result.stderr
    assert f"error: job run revenue_daily ({job_run.id}) FAILED: Job failed, ExitCode: 1" in result.stderr
    assert API_KEY not in result.output


def test_the_deadline_cancels_the_run_and_exits_1(app_id, job_file, tmp_path, monkeypatch) -> None:
    play(monkeypatch, app_id, ["RUNNING"])
    ticks = itertools.count(step=4000)  # seconds; the deadline is 120 minutes
    monkeypatch.setattr(emr_serverless, "clock", lambda: next(ticks))
    result = run(tmp_path, "--serverless", "--job", str(job_file), "--poll-interval", "1")
    assert result.exit_code == 1
    job_run = only_run(app_id)
    assert job_run.state == "CANCELLED"
    assert "still RUNNING at its deadline (120 minutes, emr_serverless.job_timeout_minutes); cancelled" in result.stderr


class Sigterm(Exception):
    """In a player's script: the CI runner sends SIGTERM (the CLI group reads it as Ctrl-C)."""

    def __new__(cls):
        os.kill(os.getpid(), signal.SIGTERM)
        raise AssertionError("SIGTERM did not interrupt")


@pytest.mark.parametrize("interrupt", [KeyboardInterrupt, Sigterm], ids=["ctrl-c", "sigterm"])
def test_ctrl_c_or_sigterm_cancels_the_run_and_exits_130(app_id, job_file, tmp_path, monkeypatch, interrupt) -> None:
    cancelled = []
    original = emr_serverless.cancel_job_run
    monkeypatch.setattr(emr_serverless, "cancel_job_run", lambda c, r: cancelled.append(r) or original(c, r))
    play(monkeypatch, app_id, ["RUNNING", interrupt])
    handler_before = signal.getsignal(signal.SIGTERM)
    result = run(tmp_path, "--serverless", "--job", str(job_file), "--poll-interval", "1")
    assert result.exit_code == 130
    job_run = only_run(app_id)
    assert [r.job_run_id for r in cancelled] == [job_run.id] and job_run.state == "CANCELLED"
    assert result.stderr.endswith(f"error: interrupted; job run revenue_daily ({job_run.id}) cancelled\n")
    assert signal.getsignal(signal.SIGTERM) is handler_before


def test_disabled_env_is_exit_2_naming_the_key(launch_aws, job_file, tmp_path) -> None:
    result = run(tmp_path, "--serverless", "--job", str(job_file), enabled=False)
    assert result.exit_code == 2
    assert "emr-lineage.environments.dev.emr_serverless.enabled to true in cdk.json" in result.stderr
    assert launch_aws.s3.list_objects_v2(Bucket=BUCKET)["KeyCount"] == 0


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--serverless", "--deploy-mode", "cluster"], "--deploy-mode is for clusters"),
        (["--conf", "spark.x=1"], "--conf is for EMR Serverless job runs: add --serverless"),
        (["--dry-run"], "--dry-run is for EMR Serverless job runs: add --serverless"),
        (["--serverless", "--conf", "novalue"], "'novalue': expected KEY=VALUE"),
    ],
)
def test_options_of_the_other_path_are_exit_2(launch_aws, job_file, tmp_path, args, message) -> None:
    result = run(tmp_path, *args, "--job", str(job_file))
    assert result.exit_code == 2
    assert message in result.stderr and result.stderr.count("error: ") == 1


def test_without_the_gateway_no_key_is_read_or_sent(app_id, job_file, tmp_path, monkeypatch) -> None:
    play(monkeypatch, app_id, ["SUCCESS"])
    result = run(tmp_path, "--serverless", "--job", str(job_file), "--poll-interval", "1", gateway=False)
    assert result.exit_code == 0, result.output
    assert not any("auth" in key for key in properties(only_run(app_id)))
    assert "without an API key (gateway off)" in result.stderr


def test_dry_run_shows_the_request_with_the_keys_reference_and_starts_nothing(
    app_id, job_file, tmp_path, launch_aws
) -> None:
    result = run(tmp_path, "--serverless", "--dry-run", "--job", str(job_file))
    assert result.exit_code == 0, result.output
    reference = f"EMR.secret@{api_key_secret_arn(REGION)}"
    assert f'"spark.openlineage.transport.auth.apiKey": "{reference}"' in result.stdout
    assert API_KEY not in result.output
    assert job_runs(REGION, app_id) == []
    staged = job_s3_key(job_file, file_sha256(job_file))
    assert launch_aws.s3.list_objects_v2(Bucket=BUCKET, Prefix=staged)["KeyCount"] == 0


def test_dry_run_masks_every_credential_given_with_conf_and_says_what_the_request_uses(
    app_id, job_file, tmp_path, launch_aws
) -> None:
    conf = [
        *("--conf", "spark.hadoop.fs.s3a.secret.key=s3-secret-0123"),
        *("--conf", "spark.openlineage.transport.headers.Authorization=Bearer token-4567"),
        *("--conf", "spark.openlineage.transport.type=http"),
        *("--conf", "spark.openlineage.transport.url=http://mine.example:5000"),
    ]
    result = run(tmp_path, "--serverless", "--dry-run", *conf, "--job", str(job_file))
    assert result.exit_code == 0, result.output
    assert "s3-secret-0123" not in result.output and "token-4567" not in result.output
    shown = json.loads(result.stdout)["configurationOverrides"]["applicationConfiguration"][0]["properties"]
    secrets = ("spark.hadoop.fs.s3a.secret.key", "spark.openlineage.transport.headers.Authorization")
    assert [shown[key] for key in secrets] == ["****", "****"]
    # stderr names what the request uses: the caller's transport, not the launch spec's URL or the gateway's key
    assert LISTENER_URL not in result.stderr and api_key_secret_arn(REGION) not in result.stderr
    assert "reporting to http://mine.example:5000 with the Authorization header given with --conf" in result.stderr
    # and the script was not uploaded: nothing says it is in S3
    staged = f"s3://{BUCKET}/{job_s3_key(job_file, file_sha256(job_file))}"
    assert f"job {job_file} would be uploaded to {staged} (dry run: not uploaded)" in result.stderr
    assert "unchanged" not in result.stderr


def test_a_callers_transport_and_jars_are_kept(app_id, job_file, tmp_path, monkeypatch) -> None:
    play(monkeypatch, app_id, ["SUCCESS"])
    conf = ["--conf", "spark.openlineage.transport.type=console", "--conf", "spark.jars=s3://mine/a.jar"]
    result = run(tmp_path, "--serverless", *conf, "--job", str(job_file), "--poll-interval", "1")
    assert result.exit_code == 0, result.output
    props = properties(only_run(app_id))
    assert props["spark.openlineage.transport.type"] == "console"
    assert not any(k.startswith("spark.openlineage.transport.") and k.endswith(("url", "apiKey")) for k in props)
    assert props["spark.jars"] == f"s3://mine/a.jar,{JAR},{iceberg.EMR_RUNTIME_JAR}"


def test_a_jar_not_staged_is_exit_2_before_any_upload(app_id, job_file, tmp_path, launch_aws) -> None:
    launch_aws.s3.delete_object(Bucket=BUCKET, Key="listener/openlineage-spark_2.12-1.53.0.jar")
    result = run(tmp_path, "--serverless", "--job", str(job_file))
    assert result.exit_code == 2
    assert f"the pinned listener jar is not staged at {JAR}: run emr-lineage listener stage --env dev" in result.stderr
    assert job_runs(REGION, app_id) == []


def test_no_wait_prints_the_run_id(app_id, job_file, tmp_path, monkeypatch) -> None:
    player = play(monkeypatch, app_id, [])
    result = run(tmp_path, "--serverless", "--no-wait", "--job", str(job_file))
    assert result.exit_code == 0, result.output
    assert result.stdout == f"{only_run(app_id).id}\n" and player.pauses == []


def test_a_missing_application_parameter_is_exit_2(app_id, job_file, tmp_path, launch_aws) -> None:
    launch_aws.ssm.delete_parameter(Name=parameters.serverless_application_id("dev"))
    result = run(tmp_path, "--serverless", "--job", str(job_file))
    assert result.exit_code == 2
    assert "deploy the EMR Serverless stack for env 'dev' first" in result.stderr


def test_with_a_trusted_ca_the_dry_run_names_the_truststore_it_would_stage(
    app_id, job_file, tmp_path, launch_aws
) -> None:
    bundle = pki.certificate_authority("Estate Root CA").pem
    launch_aws.s3.put_object(Bucket=BUCKET, Key="pki/estate.pem", Body=bundle)
    cdk_json = serverless_cdk_json(tmp_path)
    document = json.loads(cdk_json.read_text())
    env = document["context"]["emr-lineage"]["environments"]["dev"]
    env["marquez"].update(certificate_arn=CERTIFICATE_ARN, domain_name="lineage.dev.example.com")
    env["openlineage"]["trusted_ca"] = {
        "type": "s3",
        "uri": f"s3://{BUCKET}/pki/estate.pem",
        "sha256": hashlib.sha256(bundle).hexdigest(),
    }
    cdk_json.write_text(json.dumps(document))

    argv = ["launch", "--env", "dev", "--cdk-json", str(cdk_json), "--serverless", "--dry-run", "--job", str(job_file)]
    result = CliRunner().invoke(main, argv, catch_exceptions=False)

    assert result.exit_code == 0, result.output
    shown = json.loads(result.stdout)["configurationOverrides"]["applicationConfiguration"][0]["properties"]
    archive = shown["spark.archives"]
    assert archive.startswith(f"s3://{BUCKET}/truststores/") and archive.endswith(".zip#emr-lineage-truststore")
    assert f"its driver trusts openlineage.trusted_ca and the public roots: truststore {archive}" in result.stderr
    assert launch_aws.s3.list_objects_v2(Bucket=BUCKET, Prefix="truststores/")["KeyCount"] == 0  # a dry run
