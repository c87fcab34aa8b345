"""``emr-lineage launch`` end to end against moto's in-process EMR, S3 and SSM.

moto never advances EMR states, so the tests replace ``emr_cluster.pause`` (the wait between
two polls) with a stand-in for EMR that moves the cluster and step along; the command's
polling, progress output and exit codes run for real. Ctrl-C is a KeyboardInterrupt raised
from that pause, where a real one lands almost always.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable
from pathlib import Path

import pytest
from click.testing import CliRunner

from emr_lineage.aws import emr as emr_cluster
from emr_lineage.aws import parameters
from emr_lineage.cli import launch as launch_command
from emr_lineage.cli.app import main
from emr_lineage.launch.plan import file_sha256, job_s3_key
from tests.emr_lineage.launch_support import BUCKET, LOGS, MARQUEZ_WEB, REGION, launch_spec
from tests.emr_lineage.moto_backends import DEFAULT_ACCOUNT_ID, emr_backends

PARENT_ENV = {
    "OPENLINEAGE_PARENT_JOB_NAMESPACE": "airflow-prod",
    "OPENLINEAGE_PARENT_JOB_NAME": "daily_revenue.run_spark",
    "OPENLINEAGE_PARENT_RUN_ID": "01234567-89ab-4cde-8f01-23456789abcd",
}
UUID_RE = r"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}"


@pytest.fixture
def job_file(tmp_path: Path) -> Path:
    path = tmp_path / "jobs" / "revenue_daily.py"
    path.parent.mkdir()
    path.write_text(
        "from pyspark.sql import SparkSession\nspark = SparkSession.builder.appName('revenue_daily').getOrCreate()\n"
    )
    return path


def staged_key(job_file: Path) -> str:
    """Where launch stages the script: ``jobs/<sha256[:16]>/revenue_daily.py``."""
    key = job_s3_key(job_file, file_sha256(job_file))
    assert re.fullmatch(r"staged-jobs/[0-9a-f]{16}/revenue_daily\.py", key)
    return key


def only_cluster():
    clusters = emr_backends[DEFAULT_ACCOUNT_ID][REGION].clusters
    assert len(clusters) == 1
    return next(iter(clusters.values()))


def emr_plays(monkeypatch: pytest.MonkeyPatch, script: Iterable[tuple[str, str] | type[BaseException]]) -> list[float]:
    """Replace the pause between polls: each pause applies the next (cluster, step) states.

    An exception class in the script is raised instead (KeyboardInterrupt = Ctrl-C).
    """
    remaining = list(script)
    pauses: list[float] = []

    def pause(seconds: float) -> None:
        pauses.append(seconds)
        item = remaining.pop(0)
        if isinstance(item, type):
            raise item()
        cluster = only_cluster()
        cluster.state, cluster.steps[0].state = item

    monkeypatch.setattr(emr_cluster, "pause", pause)
    return pauses


def run(*args: str, input: str | None = None, env: dict | None = None):
    return CliRunner().invoke(main, ["launch", *args], input=input, env=env, catch_exceptions=False)


MARQUEZ_API = "http://internal-marquez.example:5000"


def test_success_prints_progress_log_location_and_marquez_url(launch_aws, job_file: Path, monkeypatch) -> None:
    launch_aws.ssm.put_parameter(Name=parameters.marquez_api_url("dev"), Value=MARQUEZ_API, Type="String")
    pauses = emr_plays(monkeypatch, [("BOOTSTRAPPING", "PENDING"), ("RUNNING", "RUNNING"), ("RUNNING", "COMPLETED")])
    result = run("--env", "dev", "--job", str(job_file), "--poll-interval", "0.01", "--", "--date", "2026-11-20")
    assert result.exit_code == 0, result.output
    assert pauses == [0.01, 0.01, 0.01]
    cluster = only_cluster()
    step = cluster.steps[0]

    # Progress: one line per state change, with elapsed time.
    assert re.search(r"\[\d\d:\d\d\] cluster WAITING: revenue_daily RUNNING", result.stderr)
    assert re.search(r"\[\d\d:\d\d\] cluster BOOTSTRAPPING: revenue_daily PENDING", result.stderr)
    assert re.search(r"\[\d\d:\d\d\] cluster RUNNING: revenue_daily COMPLETED", result.stderr)
    assert f"job {job_file} uploaded to s3://{BUCKET}/{staged_key(job_file)}" in result.stderr
    run_id = re.search(rf"parent run id ({UUID_RE}) \(new; job emr-lineage-dev/emr_lineage_launch\)", result.stderr)
    assert run_id, result.stderr

    assert f"logs: {LOGS}{cluster.id}/steps/{step.id}/" in result.stdout
    # Marquez's UI page of the application's runs (its job holds no edges: they are on its Spark actions) ...
    assert f"runs: {MARQUEZ_WEB}/lineage/job/emr-lineage-dev/emr_lineage_launch.revenue_daily\n" in result.stdout
    # ... and the command that shows its lineage, from the raw events Marquez stored
    # (this run's events: from a little before it started; the application and its datasets)
    assert re.search(
        rf"lineage: emr-lineage graph --marquez {re.escape(MARQUEZ_API)} --since \d{{4}}-\d\d-\d\dT\d\d:\d\d:\d\dZ "
        r"--node job:emr-lineage-dev:revenue_daily --depth 0 --format html -o revenue_daily-lineage.html\n",
        result.stdout,
    )
    assert f"all steps completed on {cluster.id}" in result.stdout

    # The cluster really carries the job as a step with the printed parent run id and job args.
    assert step.args[:5] == ["spark-submit", "--deploy-mode", "client", "--name", "revenue_daily"]
    assert f"spark.openlineage.parentRunId={run_id.group(1)}" in step.args
    assert step.args[-3:] == [f"s3://{BUCKET}/{staged_key(job_file)}", "--date", "2026-11-20"]
    assert cluster.keep_job_flow_alive_when_no_steps is False
    assert cluster.log_uri == LOGS


def test_failed_step_exits_1_with_reason_and_log_location(launch_aws, job_file: Path, monkeypatch) -> None:
    emr_plays(monkeypatch, [("RUNNING", "RUNNING"), ("TERMINATING", "FAILED")])
    result = run("--env", "dev", "--job", str(job_file), "--poll-interval", "1")
    assert result.exit_code == 1
    cluster = only_cluster()
    step = cluster.steps[0]
    assert f"logs: {LOGS}{cluster.id}/steps/{step.id}/" in result.stderr
    assert f"error: step revenue_daily ({step.id}) FAILED" in result.stderr
    assert "all steps completed" not in result.output


def test_cluster_failing_in_bootstrap_exits_1_with_node_logs(launch_aws, job_file: Path, monkeypatch) -> None:
    emr_plays(monkeypatch, [("TERMINATED_WITH_ERRORS", "PENDING")])
    result = run("--env", "dev", "--job", str(job_file), "--poll-interval", "1")
    assert result.exit_code == 1
    cluster = only_cluster()
    assert "TERMINATED_WITH_ERRORS before its steps completed" in result.stderr
    assert f"logs: {LOGS}{cluster.id}/node/" in result.stderr


def test_no_wait_prints_the_cluster_id_and_returns(launch_aws, job_file: Path, monkeypatch) -> None:
    pauses = emr_plays(monkeypatch, [])
    result = run("--env", "dev", "--job", str(job_file), "--no-wait")
    assert result.exit_code == 0, result.output
    cluster = only_cluster()
    assert result.stdout == f"{cluster.id}\n"
    assert pauses == []  # never polled
    assert f"step revenue_daily logs: {LOGS}{cluster.id}/steps/{cluster.steps[0].id}/" in result.stderr
    assert cluster.state == "WAITING" and cluster.steps[0].state == "RUNNING"
    # without the Marquez stack's API URL in SSM, the command says what goes where it would be
    assert f"runs: {MARQUEZ_WEB}/lineage/job/emr-lineage-dev/emr_lineage_launch.revenue_daily\n" in result.stderr
    [line] = [line for line in result.stderr.splitlines() if line.startswith("lineage: ")]
    assert line.startswith("lineage: emr-lineage graph --marquez ") and "--marquez MARQUEZ_API_URL " in line
    assert line.endswith(
        " --node job:emr-lineage-dev:revenue_daily --depth 0 --format html -o revenue_daily-lineage.html"
    )


def test_unchanged_job_is_not_uploaded_again(launch_aws, job_file: Path, monkeypatch) -> None:
    assert run("--env", "dev", "--job", str(job_file), "--no-wait").exit_code == 0
    first = launch_aws.s3.head_object(Bucket=BUCKET, Key=staged_key(job_file))
    emr_backends[DEFAULT_ACCOUNT_ID][REGION].clusters.clear()
    result = run("--env", "dev", "--job", str(job_file), "--no-wait")
    assert result.exit_code == 0, result.output
    assert f"job {job_file} unchanged at s3://{BUCKET}/{staged_key(job_file)}, not re-uploaded" in result.stderr
    assert launch_aws.s3.head_object(Bucket=BUCKET, Key=staged_key(job_file))["LastModified"] == first["LastModified"]


def test_parent_context_from_environment(launch_aws, job_file: Path, monkeypatch) -> None:
    emr_plays(monkeypatch, [("RUNNING", "COMPLETED")])
    result = run("--env", "dev", "--job", str(job_file), "--poll-interval", "1", env=PARENT_ENV)
    assert result.exit_code == 0, result.output
    run_id = PARENT_ENV["OPENLINEAGE_PARENT_RUN_ID"]
    assert (
        f"parent run id {run_id} from OPENLINEAGE_PARENT_* (job airflow-prod/daily_revenue.run_spark)" in result.stderr
    )
    args = only_cluster().steps[0].args
    assert f"spark.openlineage.parentRunId={run_id}" in args
    assert "spark.openlineage.parentJobName=daily_revenue.run_spark" in args
    assert f"runs: {MARQUEZ_WEB}/lineage/job/emr-lineage-dev/daily_revenue.run_spark.revenue_daily\n" in result.stdout
    assert "--node job:emr-lineage-dev:revenue_daily " in result.stdout  # the application, not its parent


def test_partial_parent_context_is_bad_input(launch_aws, job_file: Path) -> None:
    env = {"OPENLINEAGE_PARENT_RUN_ID": PARENT_ENV["OPENLINEAGE_PARENT_RUN_ID"]}
    result = run("--env", "dev", "--job", str(job_file), env=env)
    assert result.exit_code == 2
    assert "parent context is partial: missing OPENLINEAGE_PARENT_JOB_NAMESPACE" in result.stderr
    assert emr_backends[DEFAULT_ACCOUNT_ID][REGION].clusters == {}


@pytest.mark.parametrize("answer", ["y", "n"])
def test_ctrl_c_asks_whether_to_terminate(launch_aws, job_file: Path, monkeypatch, answer: str) -> None:
    emr_plays(monkeypatch, [("RUNNING", "RUNNING"), KeyboardInterrupt])
    monkeypatch.setattr(launch_command, "stdin_is_interactive", lambda: True)
    result = run("--env", "dev", "--job", str(job_file), "--poll-interval", "1", input=f"{answer}\n")
    assert result.exit_code == 130
    cluster = only_cluster()
    assert f"terminate the cluster {cluster.id}? [y/N]" in result.stderr
    if answer == "y":
        assert cluster.state == "TERMINATED"
        assert f"cluster {cluster.id} terminating" in result.stderr
    else:
        assert cluster.state == "RUNNING"
        assert f"aws emr terminate-clusters --cluster-ids {cluster.id}" in result.stderr


def test_ctrl_c_without_a_terminal_terminates(launch_aws, job_file: Path, monkeypatch) -> None:
    emr_plays(monkeypatch, [KeyboardInterrupt])
    result = run("--env", "dev", "--job", str(job_file), "--poll-interval", "1")
    assert result.exit_code == 130
    cluster = only_cluster()
    assert cluster.state == "TERMINATED"
    assert f"interrupted with no terminal to ask: terminating {cluster.id}" in result.stderr
    assert "[y/N]" not in result.stderr


def test_missing_launch_spec_is_bad_input(launch_aws, job_file: Path) -> None:
    launch_aws.ssm.delete_parameter(Name=parameters.emr_launch_spec("dev"))
    result = run("--env", "dev", "--job", str(job_file))
    assert result.exit_code == 2
    assert (
        f"error: SSM parameter {parameters.emr_launch_spec('dev')} not found: "
        "deploy the EMR stack for env 'dev' first (make deploy ENV=dev)"
    ) in result.stderr
    assert launch_aws.s3.list_objects_v2(Bucket=BUCKET)["KeyCount"] == 0


def test_malformed_launch_spec_is_bad_input(launch_aws, job_file: Path) -> None:
    spec = launch_spec()
    del spec["ReleaseLabel"]
    launch_aws.ssm.put_parameter(
        Name=parameters.emr_launch_spec("dev"), Value=json.dumps(spec), Type="String", Overwrite=True
    )
    result = run("--env", "dev", "--job", str(job_file))
    assert result.exit_code == 2
    assert f"error: launch spec at {parameters.emr_launch_spec('dev')} lacks ReleaseLabel" in result.stderr
    assert "Traceback" not in result.output

    launch_aws.ssm.put_parameter(
        Name=parameters.emr_launch_spec("dev"), Value="{not json", Type="String", Overwrite=True
    )
    result = run("--env", "dev", "--job", str(job_file))
    assert result.exit_code == 2
    assert "is not valid JSON (line 1, column 2" in result.stderr


@pytest.mark.parametrize("bucket", ["no-such-artifacts-bucket", "Not_A_Bucket_Name"])
def test_a_missing_or_invalid_artifacts_bucket_is_one_line_and_exit_2(launch_aws, job_file: Path, bucket) -> None:
    launch_aws.ssm.put_parameter(Name=parameters.artifacts_bucket("dev"), Value=bucket, Type="String", Overwrite=True)
    result = run("--env", "dev", "--job", str(job_file))
    assert result.exit_code == 2
    errors = [line for line in result.stderr.splitlines() if line.startswith("error: ")]
    assert len(errors) == 1 and bucket in errors[0] and "Traceback" not in result.output
    assert launch_aws.emr.list_clusters()["Clusters"] == []


def test_missing_job_file_is_bad_input(launch_aws, tmp_path: Path) -> None:
    result = run("--env", "dev", "--job", str(tmp_path / "nope.py"))
    assert result.exit_code == 2
    assert f"error: job file {tmp_path / 'nope.py'} not found" in result.stderr


def test_unknown_env_is_bad_input(launch_aws, job_file: Path) -> None:
    result = run("--env", "staging", "--job", str(job_file))
    assert result.exit_code == 2
    assert (
        result.stderr
        == "error: unknown environment 'staging' (--env, or -c env= for cdk); cdk.json defines: dev, prod\n"
    )
