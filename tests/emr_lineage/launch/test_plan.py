"""emr_lineage.launch.plan and emr_lineage.aws.emr against moto's in-process EMR, S3 and SSM.

moto never advances EMR step or cluster states, so each test drives them from the
``on_poll`` hook, the way EMR would between two polls; the wait loop runs for real.
"""

from __future__ import annotations

import copy
import json
from datetime import UTC, datetime, timedelta, timezone
from pathlib import Path

import pytest

from emr_lineage.aws import clients as aws_clients
from emr_lineage.aws import emr as emr_cluster
from emr_lineage.aws import parameters
from emr_lineage.launch import plan as launch_plan
from emr_lineage.settings.loader import load_settings
from emr_lineage.spark.conf import ParentContext
from tests.emr_lineage.launch_support import BUCKET, LOGS, MARQUEZ_WEB, REGION, launch_spec
from tests.emr_lineage.moto_backends import DEFAULT_ACCOUNT_ID, emr_backends
from tests.versions import EMR_RELEASE


@pytest.fixture(scope="session")
def settings():
    return load_settings("dev")


@pytest.fixture
def job_file(tmp_path: Path) -> Path:
    path = tmp_path / "revenue_daily.py"
    path.write_text(
        "from pyspark.sql import SparkSession\nSparkSession.builder.appName('revenue_daily').getOrCreate()\n"
    )
    return path


def backend_cluster(cluster_id: str):
    return emr_backends[DEFAULT_ACCOUNT_ID][REGION].clusters[cluster_id]


def set_states(cluster_id: str, cluster_state: str, *step_states: str, reason: str | None = None) -> None:
    """Play EMR: move the cluster and its steps (in submission order) to the given states."""
    cluster = backend_cluster(cluster_id)
    cluster.state = cluster_state
    if reason:
        cluster.last_state_change_reason = reason
    for step, state in zip(cluster.steps, step_states, strict=False):
        step.state = state


def scripted(cluster_ref: list, script: list[tuple]) -> tuple[list, callable]:
    """An on_poll hook that records each snapshot, then applies the next scripted states."""
    seen: list[emr_cluster.Snapshot] = []

    def hook(snapshot: emr_cluster.Snapshot) -> None:
        seen.append(snapshot)
        if script:
            states = script.pop(0)
            set_states(cluster_ref[0], *states)

    return seen, hook


# --- launch spec ------------------------------------------------------------------------

WHERE = "/emr-lineage/dev/emr/launch-spec"


def test_valid_launch_spec_parses() -> None:
    spec = emr_cluster.parse_launch_spec(json.dumps(launch_spec()), WHERE)
    assert spec["ReleaseLabel"] == EMR_RELEASE
    assert spec["BootstrapActions"][0]["Name"] == "install-openlineage"


def test_launch_spec_that_is_not_json_names_the_parameter_and_line() -> None:
    with pytest.raises(aws_clients.AwsError) as excinfo:
        emr_cluster.parse_launch_spec(f'{{\n  "ReleaseLabel": "{EMR_RELEASE}",\n  oops\n}}', WHERE)
    assert str(excinfo.value).startswith(f"launch spec at {WHERE} is not valid JSON (line 3")
    assert excinfo.value.exit_code == 2


@pytest.mark.parametrize(
    ("change", "expected"),
    [
        (lambda s: s.pop("ReleaseLabel"), "lacks ReleaseLabel"),
        (lambda s: (s.pop("LogUri"), s.pop("ServiceRole")), "lacks ServiceRole, LogUri"),
        (lambda s: s.update(Steps=[]), "must not contain Steps"),
        (lambda s: s.update(Applications=[{"Name": "Hive"}]), "lacks Spark in Applications"),
        (lambda s: s.update(ReleaseLabel="7.13"), "has an invalid ReleaseLabel"),
        (lambda s: s["Instances"].update(Subnet="subnet-1"), 'Unknown parameter in Instances: "Subnet"'),
        (lambda s: s.update(VisibleToAllUsers="yes"), "Invalid type for parameter VisibleToAllUsers"),
    ],
)
def test_invalid_launch_spec_says_what_is_wrong(change, expected: str) -> None:
    spec = launch_spec()
    change(spec)
    with pytest.raises(aws_clients.AwsError) as excinfo:
        emr_cluster.parse_launch_spec(json.dumps(spec), WHERE)
    assert f"launch spec at {WHERE}" in str(excinfo.value)
    assert expected in str(excinfo.value)


def test_launch_spec_must_be_an_object() -> None:
    with pytest.raises(aws_clients.AwsError, match="is not a JSON object"):
        emr_cluster.parse_launch_spec("[1, 2]", WHERE)


def test_missing_launch_spec_tells_to_deploy_the_emr_stack(launch_aws, settings, job_file: Path) -> None:
    launch_aws.ssm.delete_parameter(Name=parameters.emr_launch_spec("dev"))
    with pytest.raises(aws_clients.AwsError) as excinfo:
        launch_plan.prepare_launch(launch_aws, settings, [launch_plan.JobRequest(job_file)], parent=None)
    message = str(excinfo.value)
    assert parameters.emr_launch_spec("dev") in message
    assert "deploy the EMR stack for env 'dev'" in message
    # Nothing was staged for a launch that cannot happen.
    assert launch_aws.s3.list_objects_v2(Bucket=BUCKET).get("KeyCount") == 0


# --- steps and request ------------------------------------------------------------------


STAGED_KEY = f"staged-jobs/{'0' * 16}/revenue_daily.py"  # where a script whose SHA-256 is 0...0 is staged


def staged(job_file: Path, *args: str, deploy_mode: str = "client") -> launch_plan.StagedJob:
    return launch_plan.StagedJob(
        launch_plan.JobRequest(job_file, args, deploy_mode), f"s3://{BUCKET}/{STAGED_KEY}", "0" * 64, True
    )


def test_step_runs_spark_submit_with_parent_keys_and_job_args(job_file: Path) -> None:
    parent = ParentContext(
        parent_job_namespace="airflow",
        parent_job_name="daily.revenue",
        parent_run_id="3f5e2c1a-9b7d-4e2f-8a61-0c9d8e7f6a5b",
        root_job_namespace="airflow",
        root_job_name="daily",
        root_run_id="0b1c2d3e-4f50-4617-8293-a4b5c6d7e8f9",
    )
    step = launch_plan.build_step(staged(job_file, "--date", "2026-11-20"), parent)
    assert step["Name"] == "revenue_daily"
    assert step["ActionOnFailure"] == "TERMINATE_CLUSTER"
    assert step["HadoopJarStep"]["Jar"] == "command-runner.jar"
    assert step["HadoopJarStep"]["Args"] == [
        "spark-submit", "--deploy-mode", "client", "--name", "revenue_daily",
        "--conf", "spark.openlineage.parentJobName=daily.revenue",
        "--conf", "spark.openlineage.parentJobNamespace=airflow",
        "--conf", "spark.openlineage.parentRunId=3f5e2c1a-9b7d-4e2f-8a61-0c9d8e7f6a5b",
        "--conf", "spark.openlineage.rootParentJobName=daily",
        "--conf", "spark.openlineage.rootParentJobNamespace=airflow",
        "--conf", "spark.openlineage.rootParentRunId=0b1c2d3e-4f50-4617-8293-a4b5c6d7e8f9",
        f"s3://{BUCKET}/{STAGED_KEY}", "--date", "2026-11-20",
    ]  # fmt: skip


def test_run_request_adds_steps_name_tags_and_auto_termination(job_file: Path) -> None:
    spec = launch_spec()
    original = copy.deepcopy(spec)
    parent = ParentContext.new(namespace="emr-lineage-dev", job_name=launch_plan.LAUNCH_PARENT_JOB)
    step = launch_plan.build_step(staged(job_file), parent)
    name = launch_plan.cluster_name(
        "emr-lineage-dev", [launch_plan.JobRequest(job_file)], datetime(2026, 11, 21, 19, 30, 5, tzinfo=UTC)
    )
    request = launch_plan.build_run_request(spec, [step], name=name, extra_tags={"environment": "dev2", "run": "x"})
    assert request["Name"] == "emr-lineage-dev-revenue_daily-20261121T193005Z"
    assert request["Steps"] == [step]
    assert request["Instances"]["KeepJobFlowAliveWhenNoSteps"] is False
    assert request["Tags"] == [
        {"Key": "project", "Value": "emr-lineage"},
        {"Key": "environment", "Value": "dev2"},
        {"Key": "run", "Value": "x"},
    ]
    assert spec == original  # the spec read from SSM is not modified


# --- staging ----------------------------------------------------------------------------


def test_job_is_uploaded_once_at_a_content_addressed_key(launch_aws, job_file: Path) -> None:
    job = launch_plan.JobRequest(job_file)
    first = launch_plan.stage_job(launch_aws.s3, BUCKET, job)
    key = f"staged-jobs/{launch_plan.file_sha256(job_file)[:16]}/revenue_daily.py"
    assert first.uploaded and first.uri == f"s3://{BUCKET}/{key}"
    head = launch_aws.s3.head_object(Bucket=BUCKET, Key=key)
    assert head["Metadata"]["sha256"] == first.sha256 == launch_plan.file_sha256(job_file)

    second = launch_plan.stage_job(launch_aws.s3, BUCKET, job)
    assert not second.uploaded and second.uri == first.uri
    assert launch_aws.s3.head_object(Bucket=BUCKET, Key=key)["LastModified"] == head["LastModified"]


def test_a_module_beside_the_job_that_it_imports_is_staged_and_given_to_spark_submit(launch_aws, tmp_path) -> None:
    job_file, helper = tmp_path / "report.py", tmp_path / "helper.py"
    job_file.write_text("import json\nimport helper\nfrom helper import x\nfrom . import y\nimport os.path\n")
    helper.write_text("x = 1\n")
    (tmp_path / "unused.py").write_text("z = 2\n")
    job = launch_plan.JobRequest(job_file)
    assert job.py_files == (helper,)  # imported and beside it: not json, os.path, a relative import, unused.py
    staged_job = launch_plan.stage_job(launch_aws.s3, BUCKET, job)
    key = f"staged-jobs/{launch_plan.file_sha256(helper)[:16]}/helper.py"
    assert staged_job.py_files == (f"s3://{BUCKET}/{key}",) and launch_aws.s3.head_object(Bucket=BUCKET, Key=key)
    assert launch_plan.planned_stage(BUCKET, job).py_files == staged_job.py_files
    args = launch_plan.build_step(staged_job, ParentContext.new(namespace="n", job_name="p"))["HadoopJarStep"]["Args"]
    assert args[-3:] == ["--py-files", f"s3://{BUCKET}/{key}", staged_job.uri]
    helper.unlink()
    with pytest.raises(launch_plan.JobError, match="report.py: module .*helper.py not found"):
        launch_plan.JobRequest(job_file, py_files=(helper,)).check()


def test_a_changed_job_gets_a_new_key_and_the_staged_one_stays(launch_aws, job_file: Path) -> None:
    # A pending step of an earlier launch keeps running the script it was planned with.
    job = launch_plan.JobRequest(job_file)
    first = launch_plan.stage_job(launch_aws.s3, BUCKET, job)
    original = job_file.read_text()
    job_file.write_text(original + "# changed\n")
    second = launch_plan.stage_job(launch_aws.s3, BUCKET, job)
    assert second.uploaded and second.sha256 != first.sha256 and second.uri != first.uri
    assert second.uri.endswith("/revenue_daily.py")  # the file name, hence the Spark app name, is kept
    read = {
        uri: launch_aws.s3.get_object(Bucket=BUCKET, Key=uri.removeprefix(f"s3://{BUCKET}/"))["Body"].read().decode()
        for uri in (first.uri, second.uri)
    }
    assert read == {first.uri: original, second.uri: original + "# changed\n"}
    step = launch_plan.build_step(second, ParentContext.new(namespace="n", job_name="p"))
    assert step["Name"] == "revenue_daily" and step["HadoopJarStep"]["Args"][-1] == second.uri


@pytest.mark.parametrize(("name", "expected"), [("missing.py", "not found"), ("job.scala", "ending in .py")])
def test_unusable_job_file_is_bad_input(tmp_path: Path, name: str, expected: str) -> None:
    if name.endswith(".scala"):
        (tmp_path / name).write_text("object Job")
    with pytest.raises(launch_plan.JobError, match=expected):
        launch_plan.JobRequest(tmp_path / name).check()


# --- prepare, start, wait ---------------------------------------------------------------


def test_new_parent_run_is_created_and_shared_by_all_steps(launch_aws, settings, tmp_path: Path) -> None:
    jobs = []
    for stem in ("ingest_orders", "revenue_daily"):
        (tmp_path / f"{stem}.py").write_text(f"# {stem}\n")
        jobs.append(launch_plan.JobRequest(tmp_path / f"{stem}.py"))
    plan = launch_plan.prepare_launch(launch_aws, settings, jobs, parent=None)
    assert plan.parent_is_new
    assert plan.parent.parent_job_namespace == "emr-lineage-dev"
    assert plan.parent.parent_job_name == launch_plan.LAUNCH_PARENT_JOB
    run_id = plan.parent.parent_run_id
    for step in plan.request["Steps"]:
        assert f"spark.openlineage.parentRunId={run_id}" in step["HadoopJarStep"]["Args"]
    assert {"Key": "emr-lineage:parent-run-id", "Value": run_id} in plan.request["Tags"]

    cluster = emr_cluster.start_cluster(launch_aws.emr, plan.request, log_uri=plan.log_uri)
    assert [name for name, _ in cluster.steps] == ["ingest_orders", "revenue_daily"]
    described = launch_aws.emr.describe_cluster(ClusterId=cluster.cluster_id)["Cluster"]
    assert described["AutoTerminate"] is True  # KeepJobFlowAliveWhenNoSteps was forced off
    assert described["Name"].startswith("emr-lineage-dev-ingest_orders+revenue_daily-")


def test_parent_from_orchestrator_is_passed_through(launch_aws, settings, job_file: Path) -> None:
    parent = ParentContext.from_env(
        {
            "OPENLINEAGE_PARENT_JOB_NAMESPACE": "airflow",
            "OPENLINEAGE_PARENT_JOB_NAME": "daily.revenue",
            "OPENLINEAGE_PARENT_RUN_ID": "3f5e2c1a-9b7d-4e2f-8a61-0c9d8e7f6a5b",
        }
    )
    plan = launch_plan.prepare_launch(launch_aws, settings, [launch_plan.JobRequest(job_file)], parent=parent)
    assert not plan.parent_is_new
    args = plan.request["Steps"][0]["HadoopJarStep"]["Args"]
    assert "spark.openlineage.parentRunId=3f5e2c1a-9b7d-4e2f-8a61-0c9d8e7f6a5b" in args
    assert "spark.openlineage.parentJobNamespace=airflow" in args


def test_wait_reports_progress_until_the_step_completes(launch_aws, settings, job_file: Path) -> None:
    plan = launch_plan.prepare_launch(launch_aws, settings, [launch_plan.JobRequest(job_file)], parent=None)
    cluster = emr_cluster.start_cluster(launch_aws.emr, plan.request, log_uri=plan.log_uri)
    ref = [cluster.cluster_id]
    set_states(cluster.cluster_id, "STARTING", "PENDING")
    seen, hook = scripted(ref, [("BOOTSTRAPPING", "PENDING"), ("RUNNING", "RUNNING"), ("RUNNING", "COMPLETED")])
    outcome = emr_cluster.wait_for_steps(launch_aws.emr, cluster, poll_interval=0, on_poll=hook)
    assert outcome.succeeded
    assert [(s.cluster_state, s.steps[0].state) for s in seen] == [
        ("STARTING", "PENDING"),
        ("BOOTSTRAPPING", "PENDING"),
        ("RUNNING", "RUNNING"),
        ("RUNNING", "COMPLETED"),
    ]
    assert all(later.elapsed >= earlier.elapsed for earlier, later in zip(seen, seen[1:], strict=False))
    step_id = cluster.steps[0][1]
    assert outcome.log_uris == (f"{LOGS}{cluster.cluster_id}/steps/{step_id}/",)


def test_failed_step_gives_its_reason_and_log_location(launch_aws, settings, job_file: Path) -> None:
    plan = launch_plan.prepare_launch(launch_aws, settings, [launch_plan.JobRequest(job_file)], parent=None)
    cluster = emr_cluster.start_cluster(launch_aws.emr, plan.request, log_uri=plan.log_uri)
    step = backend_cluster(cluster.cluster_id).steps[0]
    step.last_state_change_reason = "Step failed with exitCode 1"
    seen, hook = scripted([cluster.cluster_id], [("RUNNING", "FAILED")])
    outcome = emr_cluster.wait_for_steps(launch_aws.emr, cluster, poll_interval=0, on_poll=hook)
    assert not outcome.succeeded
    assert len(seen) == 2
    assert outcome.message == f"step revenue_daily ({step.id}) FAILED: Step failed with exitCode 1"
    assert outcome.log_uris == (f"{LOGS}{cluster.cluster_id}/steps/{step.id}/",)


def test_cluster_that_ends_before_its_steps_points_at_bootstrap_logs(launch_aws, settings, job_file: Path) -> None:
    plan = launch_plan.prepare_launch(launch_aws, settings, [launch_plan.JobRequest(job_file)], parent=None)
    cluster = emr_cluster.start_cluster(launch_aws.emr, plan.request, log_uri=plan.log_uri)
    reason = "On the master instance (i-0abc), bootstrap action 1 returned a non-zero return code"
    seen, hook = scripted([cluster.cluster_id], [("TERMINATED_WITH_ERRORS", "PENDING")])
    backend_cluster(cluster.cluster_id).last_state_change_reason = reason
    outcome = emr_cluster.wait_for_steps(launch_aws.emr, cluster, poll_interval=0, on_poll=hook)
    assert not outcome.succeeded
    assert outcome.message.endswith(f"TERMINATED_WITH_ERRORS before its steps completed: {reason}")
    assert outcome.log_uris == (f"{LOGS}{cluster.cluster_id}/node/",)


def test_second_step_failure_after_first_completed(launch_aws, settings, tmp_path: Path) -> None:
    jobs = []
    for stem in ("ingest_orders", "revenue_daily"):
        (tmp_path / f"{stem}.py").write_text(f"# {stem}\n")
        jobs.append(launch_plan.JobRequest(tmp_path / f"{stem}.py"))
    plan = launch_plan.prepare_launch(launch_aws, settings, jobs, parent=None)
    cluster = emr_cluster.start_cluster(launch_aws.emr, plan.request, log_uri=plan.log_uri)
    seen, hook = scripted(
        [cluster.cluster_id], [("RUNNING", "COMPLETED", "RUNNING"), ("TERMINATING", "COMPLETED", "FAILED")]
    )
    outcome = emr_cluster.wait_for_steps(launch_aws.emr, cluster, poll_interval=0, on_poll=hook)
    assert [tuple(s.state for s in snap.steps) for snap in seen] == [
        ("RUNNING", "PENDING"),  # moto: first step RUNNING, the others PENDING
        ("COMPLETED", "RUNNING"),
        ("COMPLETED", "FAILED"),
    ]
    assert not outcome.succeeded and outcome.message.startswith("step revenue_daily")


def test_interrupt_propagates_and_terminate_ends_the_cluster(launch_aws, settings, job_file: Path) -> None:
    plan = launch_plan.prepare_launch(launch_aws, settings, [launch_plan.JobRequest(job_file)], parent=None)
    cluster = emr_cluster.start_cluster(launch_aws.emr, plan.request, log_uri=plan.log_uri)

    def ctrl_c(snapshot: emr_cluster.Snapshot) -> None:
        raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        emr_cluster.wait_for_steps(launch_aws.emr, cluster, poll_interval=0, on_poll=ctrl_c)
    assert launch_aws.emr.describe_cluster(ClusterId=cluster.cluster_id)["Cluster"]["Status"]["State"] == "WAITING"
    emr_cluster.terminate_cluster(launch_aws.emr, cluster.cluster_id)
    assert launch_aws.emr.describe_cluster(ClusterId=cluster.cluster_id)["Cluster"]["Status"]["State"] == "TERMINATED"


def test_wait_pauses_the_poll_interval_between_polls(launch_aws, settings, job_file: Path, monkeypatch) -> None:
    plan = launch_plan.prepare_launch(launch_aws, settings, [launch_plan.JobRequest(job_file)], parent=None)
    cluster = emr_cluster.start_cluster(launch_aws.emr, plan.request, log_uri=plan.log_uri)
    pauses: list[float] = []

    def fake_pause(seconds: float) -> None:
        pauses.append(seconds)
        set_states(cluster.cluster_id, "RUNNING", "COMPLETED" if len(pauses) == 3 else "RUNNING")

    monkeypatch.setattr(emr_cluster, "pause", fake_pause)
    assert emr_cluster.wait_for_steps(launch_aws.emr, cluster, poll_interval=7.5).succeeded
    assert pauses == [7.5, 7.5, 7.5]


# --- Marquez ----------------------------------------------------------------------------


def test_marquez_lineage_url_of_a_job_uses_the_parent_qualified_name() -> None:
    parent = ParentContext.new(namespace="emr-lineage-dev", job_name=launch_plan.LAUNCH_PARENT_JOB)
    name = launch_plan.marquez_job_name("revenue_daily", parent)
    assert name == "emr_lineage_launch.revenue_daily"
    assert launch_plan.marquez_job_name("emr_lineage_launch.revenue_daily", parent) == name
    assert (
        launch_plan.marquez_lineage_url("http://marquez/", "job", "s3://ns/x", name)
        == "http://marquez/lineage/job/s3%3A%2F%2Fns%2Fx/emr_lineage_launch.revenue_daily"
    )
    # a dataset's lineage page (e2e's graph URL: Marquez's UI shows no edges on a Spark application's job)
    assert (
        launch_plan.marquez_lineage_url("http://marquez", "dataset", "s3://lake", "clean/orders_clean")
        == "http://marquez/lineage/dataset/s3%3A%2F%2Flake/clean%2Forders_clean"
    )


def test_the_graph_command_of_a_node_from_a_time_and_to_a_depth() -> None:
    since = datetime(2026, 11, 21, 12, 0, 5, 123456, tzinfo=timezone(timedelta(hours=2)))
    assert launch_plan.graph_command("http://m:5000", "job:ns:app", "app-lineage.html", since=since, depth=0) == (
        "emr-lineage graph --marquez http://m:5000 --since 2026-11-21T10:00:05Z --node job:ns:app --depth 0 "
        "--format html -o app-lineage.html"
    )
    assert launch_plan.graph_command("MARQUEZ_API_URL", "job:a b:c", "c.html") == (
        "emr-lineage graph --marquez MARQUEZ_API_URL --node 'job:a b:c' --format html -o c.html"
    )


def test_marquez_web_and_api_urls_are_optional(launch_aws) -> None:
    assert launch_plan.marquez_web_url(launch_aws.ssm, "dev") == MARQUEZ_WEB
    launch_aws.ssm.delete_parameter(Name=parameters.marquez_web_url("dev"))
    assert launch_plan.marquez_web_url(launch_aws.ssm, "dev") is None
    assert launch_plan.marquez_api_url(launch_aws.ssm, "dev") is None  # the launch_aws fixture publishes none
    api = "http://internal-marquez.example:5000"
    launch_aws.ssm.put_parameter(Name=parameters.marquez_api_url("dev"), Value=api, Type="String")
    assert launch_plan.marquez_api_url(launch_aws.ssm, "dev") == api
