"""Ephemeral EMR clusters: launch spec in, cluster with spark-submit steps out, then wait.

The EMR stack publishes a RunJobFlow request minus ``Steps`` in SSM (the *launch spec*). This
module reads it, stages job scripts in the artifacts bucket, adds one ``command-runner.jar``
step per job (each carrying the OpenLineage parent keys of one shared parent run), starts the
cluster so that it terminates after its steps, and polls it until the steps finish.

The API takes a *list* of jobs and an ``on_poll`` callback so that ``emr-lineage launch`` (one
job) and a multi-step command share it; printing and prompting stay in the CLI.
"""

from __future__ import annotations

import copy
import hashlib
import json
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any
from urllib.parse import quote

import boto3
import botocore.session
import jsonschema
from botocore.exceptions import BotoCoreError, ClientError
from botocore.validate import ParamValidator

from emr_lineage import parameters
from emr_lineage.artifacts_layout import JOBS_PREFIX
from emr_lineage.config import EnvironmentSettings
from emr_lineage.marquez import parent_prefixed_job_name
from emr_lineage.spark_conf import ParentContext, spark_submit_conf_args

# The parent job a launch reports when no orchestrator passed OPENLINEAGE_PARENT_* variables.
LAUNCH_PARENT_JOB = "emr_lineage_launch"
# Object metadata key holding the SHA-256 of an uploaded job (S3's ETag is not a hash for
# multipart or SSE-KMS uploads, so it cannot tell "unchanged").
SHA256_METADATA = "sha256"
DEPLOY_MODES = ("client", "cluster")
DEFAULT_POLL_SECONDS = 15.0

STEP_DONE = "COMPLETED"
STEP_FAILED = frozenset({"FAILED", "CANCELLED", "INTERRUPTED"})
CLUSTER_ENDED = frozenset({"TERMINATED", "TERMINATED_WITH_ERRORS"})

# What the launcher itself needs from the spec; botocore's model checks everything else.
LAUNCH_SPEC_SCHEMA: dict[str, Any] = {
    "type": "object",
    "required": ["ReleaseLabel", "Instances", "Applications", "ServiceRole", "JobFlowRole", "LogUri"],
    "properties": {
        "ReleaseLabel": {"type": "string", "pattern": r"^emr-\d+\.\d+\.\d+$"},
        "Instances": {"type": "object"},
        "Applications": {
            "type": "array",
            "contains": {"type": "object", "required": ["Name"], "properties": {"Name": {"pattern": "^[Ss]park$"}}},
        },
        # Ephemeral clusters disappear: without LogUri the step logs go with them.
        "LogUri": {"type": "string", "pattern": r"^s3n?://[^/]+"},
        "Tags": {"type": "array"},
    },
    "not": {"required": ["Steps"]},
}


class LaunchError(Exception):
    """A launch problem with a message for the user; ``exit_code`` follows the CLI contract."""

    exit_code = 1


class LaunchInputError(LaunchError):
    """Bad input: missing or malformed launch spec, missing parameter, unusable job file."""

    exit_code = 2


# --- AWS access -------------------------------------------------------------------------


@dataclass(frozen=True)
class AwsClients:
    ssm: Any
    s3: Any
    emr: Any

    @classmethod
    def for_settings(cls, settings: EnvironmentSettings) -> AwsClients:
        """Clients in the environment's region (or the default chain's when cdk.json has none)."""
        try:
            session = boto3.session.Session(region_name=settings.region)
            return cls(ssm=session.client("ssm"), s3=session.client("s3"), emr=session.client("emr"))
        except BotoCoreError as exc:  # e.g. NoRegionError
            raise LaunchInputError(f"AWS client setup failed: {exc} (set AWS_REGION, or region in cdk.json)") from None


def _aws_message(exc: Exception) -> str:
    if isinstance(exc, ClientError):
        err = exc.response.get("Error", {})
        return f"{err.get('Code', 'error')}: {err.get('Message', exc)}"
    return str(exc)


def read_parameter(ssm: Any, name: str, *, env: str, published_by: str) -> str:
    """Value of one SSM parameter; a missing one says which stack publishes it."""
    try:
        return ssm.get_parameter(Name=name)["Parameter"]["Value"]
    except ClientError as exc:
        if exc.response.get("Error", {}).get("Code") == "ParameterNotFound":
            raise LaunchInputError(
                f"SSM parameter {name} not found: deploy the {published_by} for env {env!r} first "
                f"(make deploy ENV={env})"
            ) from None
        raise LaunchError(f"cannot read SSM parameter {name} ({_aws_message(exc)})") from None
    except BotoCoreError as exc:
        raise LaunchError(f"cannot read SSM parameter {name} ({exc})") from None


# --- launch spec ------------------------------------------------------------------------


def parse_launch_spec(text: str, where: str) -> dict[str, Any]:
    """Parse and check the launch spec; every problem names ``where`` and what is wrong."""
    try:
        spec = json.loads(text)
    except json.JSONDecodeError as exc:
        raise LaunchInputError(
            f"launch spec at {where} is not valid JSON (line {exc.lineno}, column {exc.colno}: {exc.msg})"
        ) from None
    errors = sorted(jsonschema.Draft202012Validator(LAUNCH_SPEC_SCHEMA).iter_errors(spec), key=lambda e: list(e.path))
    if errors:
        raise LaunchInputError(f"launch spec at {where} " + "; ".join(_schema_message(e) for e in errors))
    report = ParamValidator().validate(spec, _run_job_flow_shape())
    if report.has_errors():
        raise LaunchInputError(f"launch spec at {where} is not a valid RunJobFlow request: " + report.generate_report())
    return spec


def _schema_message(error: jsonschema.ValidationError) -> str:
    if error.validator == "required":
        missing = [k for k in error.validator_value if isinstance(error.instance, dict) and k not in error.instance]
        return "lacks " + ", ".join(missing)
    if error.validator == "not":
        return "must not contain Steps (the launcher adds them)"
    if error.validator == "contains":
        return "lacks Spark in Applications"
    if error.validator == "type" and not error.path:
        return "is not a JSON object"
    path = ".".join(str(p) for p in error.path)
    return f"has an invalid {path}: {error.message}"


def _run_job_flow_shape() -> Any:
    return botocore.session.get_session().get_service_model("emr").operation_model("RunJobFlow").input_shape


def load_launch_spec(ssm: Any, env: str) -> dict[str, Any]:
    name = parameters.emr_launch_spec(env)
    return parse_launch_spec(read_parameter(ssm, name, env=env, published_by="EMR stack"), name)


# --- jobs -------------------------------------------------------------------------------


@dataclass(frozen=True)
class JobRequest:
    """One PySpark script to run as a step. The Spark application name is the file stem."""

    script: Path
    args: tuple[str, ...] = ()
    deploy_mode: str = "client"

    @property
    def job_name(self) -> str:
        return self.script.stem

    def check(self) -> None:
        if not self.script.is_file():
            raise LaunchInputError(f"job file {self.script} not found")
        if self.script.suffix != ".py":
            raise LaunchInputError(f"job file {self.script}: expected a PySpark script ending in .py")
        if self.deploy_mode not in DEPLOY_MODES:
            raise LaunchInputError(f"deploy mode {self.deploy_mode!r}: use one of {', '.join(DEPLOY_MODES)}")


@dataclass(frozen=True)
class StagedJob:
    request: JobRequest
    uri: str
    sha256: str
    uploaded: bool  # False: the object already held these bytes


def file_sha256(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as handle:
        for block in iter(lambda: handle.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def stage_job(s3: Any, bucket: str, job: JobRequest) -> StagedJob:
    """Upload ``job.script`` to ``s3://<bucket>/jobs/<file name>`` unless it is already there."""
    key = JOBS_PREFIX + job.script.name
    uri = f"s3://{bucket}/{key}"
    local = file_sha256(job.script)
    try:
        head = s3.head_object(Bucket=bucket, Key=key)
        remote = head.get("Metadata", {}).get(SHA256_METADATA)
    except ClientError as exc:
        if exc.response.get("Error", {}).get("Code") not in ("404", "NoSuchKey", "NotFound"):
            raise LaunchError(f"cannot read {uri} ({_aws_message(exc)})") from None
        remote = None
    if remote == local:
        return StagedJob(job, uri, local, uploaded=False)
    try:
        s3.upload_file(str(job.script), bucket, key, ExtraArgs={"Metadata": {SHA256_METADATA: local}})
    except (ClientError, BotoCoreError, OSError) as exc:
        raise LaunchError(f"cannot upload {job.script} to {uri} ({_aws_message(exc)})") from None
    return StagedJob(job, uri, local, uploaded=True)


def build_step(
    staged: StagedJob, parent: ParentContext, *, action_on_failure: str = "TERMINATE_CLUSTER"
) -> dict[str, Any]:
    """A command-runner.jar step: spark-submit of the staged script with the parent keys."""
    job = staged.request
    args = ["spark-submit", "--deploy-mode", job.deploy_mode, "--name", job.job_name]
    args += spark_submit_conf_args(parent.spark_properties())
    args += [staged.uri, *job.args]
    return {
        "Name": job.job_name,
        "ActionOnFailure": action_on_failure,
        "HadoopJarStep": {"Jar": "command-runner.jar", "Args": args},
    }


def cluster_name(prefix: str, jobs: Sequence[JobRequest], now: datetime) -> str:
    label = "+".join(j.job_name for j in jobs)
    return f"{prefix}-{label}-{now.strftime('%Y%m%dT%H%M%SZ')}"[:256]


def build_run_request(
    spec: Mapping[str, Any],
    steps: Sequence[Mapping[str, Any]],
    *,
    name: str,
    extra_tags: Mapping[str, str],
) -> dict[str, Any]:
    """The launch spec plus Steps, our Name and tags, and auto-termination after the steps."""
    request = copy.deepcopy(dict(spec))
    request["Name"] = name
    request["Steps"] = [dict(s) for s in steps]
    request["Instances"]["KeepJobFlowAliveWhenNoSteps"] = False
    tags = {t["Key"]: t.get("Value", "") for t in request.get("Tags", [])}
    tags.update(extra_tags)
    request["Tags"] = [{"Key": k, "Value": v} for k, v in tags.items()]
    return request


# --- launching --------------------------------------------------------------------------


@dataclass(frozen=True)
class LaunchPlan:
    """Everything decided before the cluster starts (jobs are already staged)."""

    env: str
    staged: tuple[StagedJob, ...]
    parent: ParentContext
    parent_is_new: bool
    namespace: str
    log_uri: str
    request: dict[str, Any]


def prepare_launch(
    clients: AwsClients,
    settings: EnvironmentSettings,
    jobs: Sequence[JobRequest],
    *,
    parent: ParentContext | None,
    parent_job_name: str = LAUNCH_PARENT_JOB,
    now: datetime | None = None,
) -> LaunchPlan:
    """Read the spec and bucket, stage every job, and build the RunJobFlow request.

    ``parent`` is the orchestrator's context (``ParentContext.from_env()``); when None, one
    new parent run is created and shared by all steps.
    """
    if not jobs:
        raise LaunchInputError("no job to launch")
    for job in jobs:
        job.check()
    names = [j.job_name for j in jobs]
    if len(set(names)) != len(names):
        raise LaunchInputError("two jobs share a file name; step names must be unique: " + ", ".join(names))
    env = settings.name
    spec = load_launch_spec(clients.ssm, env)
    bucket = read_parameter(clients.ssm, parameters.artifacts_bucket(env), env=env, published_by="EMR stack")
    staged = tuple(stage_job(clients.s3, bucket, job) for job in jobs)
    namespace = settings.openlineage.namespace
    parent_is_new = parent is None
    if parent is None:
        parent = ParentContext.new(namespace=namespace, job_name=parent_job_name)
    now = now or datetime.now(UTC)
    request = build_run_request(
        spec,
        [build_step(s, parent) for s in staged],
        name=cluster_name(spec.get("Name") or settings.resource_prefix, jobs, now),
        extra_tags={
            "emr-lineage:jobs": " ".join(names)[:256],
            "emr-lineage:parent-run-id": parent.parent_run_id,
            "emr-lineage:launched-by": "emr-lineage launch",
        },
    )
    return LaunchPlan(
        env=env,
        staged=staged,
        parent=parent,
        parent_is_new=parent_is_new,
        namespace=namespace,
        log_uri=spec["LogUri"],
        request=request,
    )


@dataclass(frozen=True)
class LaunchedCluster:
    cluster_id: str
    log_uri: str
    steps: tuple[tuple[str, str], ...]  # (step name, step id) in submission order

    def step_log_uri(self, step_id: str) -> str:
        return step_log_uri(self.log_uri, self.cluster_id, step_id)

    @property
    def node_log_uri(self) -> str:
        """Where bootstrap-action logs of every node land (useful when bootstrapping fails)."""
        return f"{self.log_uri.rstrip('/')}/{self.cluster_id}/node/"


def step_log_uri(log_uri: str, cluster_id: str, step_id: str) -> str:
    """EMR archives a step's stdout.gz/stderr.gz/controller.gz here."""
    return f"{log_uri.rstrip('/')}/{cluster_id}/steps/{step_id}/"


def start_cluster(emr: Any, plan: LaunchPlan) -> LaunchedCluster:
    try:
        cluster_id = emr.run_job_flow(**plan.request)["JobFlowId"]
        summaries = _list_steps(emr, cluster_id)
    except (ClientError, BotoCoreError) as exc:
        raise LaunchError(f"EMR refused to start the cluster ({_aws_message(exc)})") from None
    ids = {s["Name"]: s["Id"] for s in summaries}
    steps = tuple((s["Name"], ids[s["Name"]]) for s in plan.request["Steps"])
    return LaunchedCluster(cluster_id=cluster_id, log_uri=plan.log_uri, steps=steps)


def _list_steps(emr: Any, cluster_id: str) -> list[dict[str, Any]]:
    pages = emr.get_paginator("list_steps").paginate(ClusterId=cluster_id)
    return [step for page in pages for step in page["Steps"]]


def terminate_cluster(emr: Any, cluster_id: str) -> None:
    try:
        emr.terminate_job_flows(JobFlowIds=[cluster_id])
    except (ClientError, BotoCoreError) as exc:
        raise LaunchError(f"could not terminate {cluster_id} ({_aws_message(exc)})") from None


# --- waiting ----------------------------------------------------------------------------


@dataclass(frozen=True)
class StepStatus:
    name: str
    step_id: str
    state: str
    reason: str | None = None
    log_file: str | None = None


@dataclass(frozen=True)
class Snapshot:
    """One poll: what the progress display shows and what decides the outcome."""

    cluster_id: str
    cluster_state: str
    cluster_reason: str | None
    steps: tuple[StepStatus, ...]
    elapsed: float

    @property
    def failed_step(self) -> StepStatus | None:
        return next((s for s in self.steps if s.state in STEP_FAILED), None)

    @property
    def succeeded(self) -> bool:
        return all(s.state == STEP_DONE for s in self.steps)

    @property
    def finished(self) -> bool:
        return self.succeeded or self.failed_step is not None or self.cluster_state in CLUSTER_ENDED


@dataclass(frozen=True)
class Outcome:
    succeeded: bool
    last: Snapshot
    message: str
    log_uris: tuple[str, ...] = field(default_factory=tuple)


def poll(emr: Any, cluster: LaunchedCluster, started: float) -> Snapshot:
    try:
        description = emr.describe_cluster(ClusterId=cluster.cluster_id)["Cluster"]["Status"]
        by_id = {s["Id"]: s for s in _list_steps(emr, cluster.cluster_id)}
    except (ClientError, BotoCoreError) as exc:
        raise LaunchError(f"cannot read the state of {cluster.cluster_id} ({_aws_message(exc)})") from None
    steps = []
    for name, step_id in cluster.steps:
        status = by_id.get(step_id, {}).get("Status", {})
        failure = status.get("FailureDetails") or {}
        steps.append(
            StepStatus(
                name=name,
                step_id=step_id,
                state=status.get("State", "UNKNOWN"),
                reason=failure.get("Message")
                or failure.get("Reason")
                or (status.get("StateChangeReason") or {}).get("Message"),
                log_file=failure.get("LogFile"),
            )
        )
    return Snapshot(
        cluster_id=cluster.cluster_id,
        cluster_state=description.get("State", "UNKNOWN"),
        cluster_reason=(description.get("StateChangeReason") or {}).get("Message"),
        steps=tuple(steps),
        elapsed=time.monotonic() - started,
    )


def pause(seconds: float) -> None:
    """The wait between polls (tests replace it to move moto's states along)."""
    time.sleep(seconds)


def wait_for_steps(
    emr: Any,
    cluster: LaunchedCluster,
    *,
    poll_interval: float = DEFAULT_POLL_SECONDS,
    on_poll: Callable[[Snapshot], None] | None = None,
    started: float | None = None,
) -> Outcome:
    """Poll until every step completed, one failed, or the cluster ended early.

    ``on_poll`` sees every snapshot (progress display; tests drive states from it). A
    KeyboardInterrupt from it or from the pause propagates: the caller decides what to do
    with the still-running cluster.
    """
    started = time.monotonic() if started is None else started
    while True:
        snapshot = poll(emr, cluster, started)
        if on_poll is not None:
            on_poll(snapshot)
        if snapshot.finished:
            return outcome_of(snapshot, cluster)
        pause(poll_interval)


def outcome_of(snapshot: Snapshot, cluster: LaunchedCluster) -> Outcome:
    if snapshot.succeeded:
        return Outcome(
            True, snapshot, "all steps completed", tuple(cluster.step_log_uri(s.step_id) for s in snapshot.steps)
        )
    failed = snapshot.failed_step
    if failed is not None:
        message = f"step {failed.name} ({failed.step_id}) {failed.state}"
        if failed.reason:
            message += f": {failed.reason}"
        logs = [cluster.step_log_uri(failed.step_id)]
        if failed.log_file:
            logs.insert(0, failed.log_file)
        return Outcome(False, snapshot, message, tuple(logs))
    # The cluster ended before the steps did: bootstrap or provisioning failure.
    message = f"cluster {snapshot.cluster_id} {snapshot.cluster_state} before its steps completed"
    if snapshot.cluster_reason:
        message += f": {snapshot.cluster_reason}"
    return Outcome(False, snapshot, message, (cluster.node_log_uri,))


# --- Marquez ----------------------------------------------------------------------------


def marquez_job_name(app_name: str, parent: ParentContext) -> str:
    """The name under which Marquez shows ``app_name`` run under ``parent``."""
    return parent_prefixed_job_name(app_name, parent.parent_job_name)


def marquez_job_url(web_url: str, namespace: str, job_name: str) -> str:
    """The Marquez web route for a job's lineage: ``/lineage/job/<namespace>/<name>``."""
    return f"{web_url.rstrip('/')}/lineage/job/{quote(namespace, safe='')}/{quote(job_name, safe='')}"


def marquez_web_url(ssm: Any, env: str) -> str | None:
    """The Marquez web URL, or None when the Marquez stack is not deployed (not fatal)."""
    try:
        return read_parameter(ssm, parameters.marquez_web_url(env), env=env, published_by="Marquez stack")
    except LaunchError:
        return None
