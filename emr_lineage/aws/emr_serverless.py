"""EMR Serverless job runs: start one, poll it, wait for it under a total deadline, cancel it.

The same shape as :mod:`emr_lineage.aws.emr` for clusters: the API takes a full StartJobRun request
(built by :mod:`emr_lineage.launch.serverless`), an ``on_poll`` callback sees every poll (progress;
tests move moto's states from it or from :func:`pause`), and printing and prompting stay in the CLI.
A KeyboardInterrupt (Ctrl-C, or SIGTERM through the CLI group) propagates: the caller cancels the run.

States (https://docs.aws.amazon.com/emr/latest/EMR-Serverless-UserGuide/job-states.html):
SUBMITTED, QUEUED, PENDING, SCHEDULED, RUNNING, then SUCCESS, FAILED, or CANCELLING and CANCELLED.
Any other state is shown as it comes and waited on, as long as it is not one of the three ends.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from botocore.exceptions import BotoCoreError, ClientError

from emr_lineage.aws.clients import AwsError, aws_message
from emr_lineage.aws.polling import poll_until

SUCCESS = "SUCCESS"
ENDED = frozenset({SUCCESS, "FAILED", "CANCELLED"})
SERVICE = "emr-serverless"  # boto3's name of the service (and the IAM prefix)


def driver_log_uri(log_uri: str, application_id: str, job_run_id: str) -> str:
    """Where EMR Serverless writes a run's driver log when ``s3MonitoringConfiguration.logUri`` is set
    (refreshed every 15 s while it runs; rotated files under ``archived/``):
    https://docs.aws.amazon.com/emr/latest/EMR-Serverless-UserGuide/rotating-logs.html"""
    return f"{log_uri.rstrip('/')}/applications/{application_id}/jobs/{job_run_id}/SPARK_DRIVER/stderr.gz"


@dataclass(frozen=True)
class JobRun:
    """A started run: ``name`` is the job's (the script's stem), ``log_uri`` the request's monitoring URI."""

    application_id: str
    job_run_id: str
    name: str
    log_uri: str

    @property
    def driver_log_uri(self) -> str:
        return driver_log_uri(self.log_uri, self.application_id, self.job_run_id)


@dataclass(frozen=True)
class RunSnapshot:
    """One poll: the run's state, EMR's details (the failure's reason) and the seconds since the start."""

    job_run_id: str
    name: str
    state: str
    details: str | None
    elapsed: float

    @property
    def finished(self) -> bool:
        return self.state in ENDED


@dataclass(frozen=True)
class RunOutcome:
    """How a run ended, or that the deadline passed first (``timed_out``; the run may still be going)."""

    succeeded: bool
    last: RunSnapshot
    message: str
    log_uris: tuple[str, ...]
    timed_out: bool = False


def start_job_run(client: Any, request: dict[str, Any]) -> JobRun:
    """Start the run of a full StartJobRun ``request``; a refusal is one line."""
    try:
        reply = client.start_job_run(**request)
    except (ClientError, BotoCoreError) as exc:
        name = request.get("name")
        raise AwsError(f"EMR Serverless refused to start the job run {name} ({aws_message(exc)})") from None
    monitoring = request.get("configurationOverrides", {}).get("monitoringConfiguration", {})
    return JobRun(
        application_id=reply["applicationId"],
        job_run_id=reply["jobRunId"],
        name=request.get("name") or reply["jobRunId"],
        log_uri=monitoring.get("s3MonitoringConfiguration", {}).get("logUri", ""),
    )


def cancel_job_run(client: Any, run: JobRun) -> None:
    try:
        client.cancel_job_run(applicationId=run.application_id, jobRunId=run.job_run_id)
    except (ClientError, BotoCoreError) as exc:
        raise AwsError(f"could not cancel the job run {run.job_run_id} ({aws_message(exc)})") from None


def poll(client: Any, run: JobRun, elapsed: float) -> RunSnapshot:
    try:
        state = client.get_job_run(applicationId=run.application_id, jobRunId=run.job_run_id)["jobRun"]
    except (ClientError, BotoCoreError) as exc:
        raise AwsError(f"cannot read the state of the job run {run.job_run_id} ({aws_message(exc)})") from None
    return RunSnapshot(
        job_run_id=run.job_run_id,
        name=run.name,
        state=state.get("state", "UNKNOWN"),
        details=state.get("stateDetails") or None,
        elapsed=elapsed,
    )


def pause(seconds: float) -> None:
    """The wait between polls (tests replace it to move moto's states along)."""
    time.sleep(seconds)


clock: Callable[[], float] = time.monotonic  # tests replace it to pass a deadline without waiting


def wait_for_job_run(
    client: Any,
    run: JobRun,
    *,
    poll_interval: float,
    deadline_seconds: float,
    on_poll: Callable[[RunSnapshot], None] | None = None,
) -> RunOutcome:
    """Poll until the run ends or ``deadline_seconds`` (from now) pass; the caller cancels a run
    that outlived the deadline, or one interrupted (a KeyboardInterrupt propagates)."""
    snapshot, finished = poll_until(
        lambda elapsed: poll(client, run, elapsed),
        lambda snapshot: snapshot.finished,
        poll_interval=poll_interval,
        pause=pause,
        clock=clock,
        deadline_seconds=deadline_seconds,
        on_poll=on_poll,
    )
    if finished:
        return outcome_of(snapshot, run)
    return RunOutcome(
        False,
        snapshot,
        f"job run {run.name} ({run.job_run_id}) still {snapshot.state} at its deadline "
        f"({deadline_seconds / 60:g} minutes, emr_serverless.job_timeout_minutes)",
        (run.driver_log_uri,),
        timed_out=True,
    )


def outcome_of(snapshot: RunSnapshot, run: JobRun) -> RunOutcome:
    what = f"job run {run.name} ({run.job_run_id})"
    if snapshot.state == SUCCESS:
        return RunOutcome(True, snapshot, f"{what} succeeded", (run.driver_log_uri,))
    message = f"{what} {snapshot.state}"
    if snapshot.details:
        message += f": {snapshot.details}"
    return RunOutcome(False, snapshot, message, (run.driver_log_uri,))
