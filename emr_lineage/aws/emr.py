"""Ephemeral EMR clusters: launch spec in, cluster with spark-submit steps out, then wait.

The EMR stack publishes a RunJobFlow request minus ``Steps`` in SSM (the *launch spec*). This
module reads it, stages job scripts in the artifacts bucket, adds one ``command-runner.jar``
step per job (each carrying the OpenLineage parent keys of one shared parent run), starts the
cluster so that it terminates after its steps, and polls it until the steps finish.

The API takes a *list* of jobs and an ``on_poll`` callback so that ``emr-lineage launch`` (one
job) and a multi-step command share it; printing and prompting stay in the CLI.
"""

from __future__ import annotations

import functools
import json
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import jsonschema
from botocore.exceptions import BotoCoreError, ClientError
from botocore.validate import ParamValidator

from emr_lineage.aws import parameters
from emr_lineage.aws.clients import AwsError, aws_message, read_parameter
from emr_lineage.aws.polling import poll_until
from emr_lineage.aws.session import service_model

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


def parse_launch_spec(text: str, where: str) -> dict[str, Any]:
    """Parse and check the launch spec; every problem names ``where`` and what is wrong."""
    try:
        spec = json.loads(text)
    except json.JSONDecodeError as exc:
        raise AwsError(
            f"launch spec at {where} is not valid JSON (line {exc.lineno}, column {exc.colno}: {exc.msg})"
        ) from None
    errors = sorted(jsonschema.Draft202012Validator(LAUNCH_SPEC_SCHEMA).iter_errors(spec), key=lambda e: list(e.path))
    if errors:
        raise AwsError(f"launch spec at {where} " + "; ".join(_schema_message(e) for e in errors))
    report = ParamValidator().validate(spec, _run_job_flow_shape())
    if report.has_errors():
        raise AwsError(f"launch spec at {where} is not a valid RunJobFlow request: " + report.generate_report())
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


@functools.cache
def _run_job_flow_shape() -> Any:
    # Read once per process, from the models the clients share (a session of its own would parse EMR's again).
    return service_model("emr").operation_model("RunJobFlow").input_shape


def load_launch_spec(ssm: Any, env: str) -> dict[str, Any]:
    name = parameters.emr_launch_spec(env)
    return parse_launch_spec(read_parameter(ssm, name, env=env, published_by="EMR stack"), name)


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


def start_cluster(emr: Any, request: dict[str, Any], *, log_uri: str) -> LaunchedCluster:
    """Start a cluster from a full RunJobFlow ``request`` (with its Steps)."""
    try:
        cluster_id = emr.run_job_flow(**request)["JobFlowId"]
        summaries = _list_steps(emr, cluster_id)
    except (ClientError, BotoCoreError) as exc:
        raise AwsError(f"EMR refused to start the cluster ({aws_message(exc)})") from None
    ids = {s["Name"]: s["Id"] for s in summaries}
    steps = tuple((s["Name"], ids[s["Name"]]) for s in request["Steps"])
    return LaunchedCluster(cluster_id=cluster_id, log_uri=log_uri, steps=steps)


def _list_steps(emr: Any, cluster_id: str) -> list[dict[str, Any]]:
    pages = emr.get_paginator("list_steps").paginate(ClusterId=cluster_id)
    return [step for page in pages for step in page["Steps"]]


def add_steps(emr: Any, cluster_id: str, steps: list[dict[str, Any]], *, log_uri: str) -> LaunchedCluster:
    """Add ``steps`` to a running cluster: the cluster with them, for :func:`wait_for_steps`."""
    try:
        ids = emr.add_job_flow_steps(JobFlowId=cluster_id, Steps=steps)["StepIds"]
    except (ClientError, BotoCoreError) as exc:
        raise AwsError(f"could not add steps to {cluster_id} ({aws_message(exc)})") from None
    names = (step["Name"] for step in steps)
    return LaunchedCluster(cluster_id=cluster_id, log_uri=log_uri, steps=tuple(zip(names, ids, strict=True)))


def terminate_cluster(emr: Any, cluster_id: str) -> None:
    try:
        emr.terminate_job_flows(JobFlowIds=[cluster_id])
    except (ClientError, BotoCoreError) as exc:
        raise AwsError(f"could not terminate {cluster_id} ({aws_message(exc)})") from None


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
        raise AwsError(f"cannot read the state of {cluster.cluster_id} ({aws_message(exc)})") from None
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
    began = time.monotonic() if started is None else started
    snapshot, _ = poll_until(
        lambda _: poll(emr, cluster, began),
        lambda snapshot: snapshot.finished,
        poll_interval=poll_interval,
        pause=pause,
        clock=time.monotonic,
        started=began,
        on_poll=on_poll,
    )
    return outcome_of(snapshot, cluster)


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
