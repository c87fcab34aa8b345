"""Plan and run jobs on the environment's EMR Serverless application (``emr_serverless`` in cdk.json).

A job run has no bootstrap action, so what a cluster gets from its launch spec and bootstrap action
travels with every StartJobRun request, in ``configurationOverrides`` spark-defaults built by
:func:`emr_lineage.spark.conf.serverless_spark_defaults` (the builder clusters use): the pinned
listener jar staged in the artifacts bucket (``spark.jars``), the listener and its transport (the
URL the clusters' launch spec gives: the lineage load balancer, where the gateway's ingest answers
when the gateway is on and Marquez's API otherwise; with the gateway on, a reference to its API key's
secret), the namespace, the Glue catalog and the parent run. The script is staged as for clusters
(:func:`emr_lineage.launch.plan.stage_job`).

The API key never passes through here: the request names the secret (``EMR.secret@<ARN>``, the ARN
the gateway stack publishes in SSM) and EMR Serverless reads its value when the run starts
(https://docs.aws.amazon.com/emr/latest/EMR-Serverless-UserGuide/secrets-manager.html).
The secret's whole string becomes the key, so it must be the bare key, not JSON (doctor checks it).
:func:`redacted` still masks any other credential a caller gives with ``--conf``.

The jar, the URL and the secret come from :mod:`emr_lineage.launch.listener_target`, as for running
clusters (``emr-lineage attach``).

With ``openlineage.trusted_ca``, no bootstrap action imports the CA before a job run: the CA is read here,
with the caller's credentials, verified as a node verifies it (:mod:`emr_lineage.aws.trusted_ca`), and put
in a Java truststore staged in the artifacts bucket that the driver's JVM loads
(:mod:`emr_lineage.spark.truststore`).
"""

from __future__ import annotations

import copy
import dataclasses
import uuid
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from functools import partial
from typing import Any

from emr_lineage.aws import emr_serverless, parameters
from emr_lineage.aws.artifacts import SERVERLESS_LOGS_PREFIX
from emr_lineage.aws.clients import AwsError, clients_for, read_parameter, regional_client_maker
from emr_lineage.launch.listener_target import Listener, resolve_listener_target, trusted_ca_truststore
from emr_lineage.launch.plan import (
    LAUNCH_PARENT_JOB,
    JobError,
    JobRequest,
    StagedJob,
    check_jobs,
    planned_stage,
    stage_job,
)
from emr_lineage.settings.model import EnvironmentSettings
from emr_lineage.spark.conf import (
    SPARK_DEFAULTS,
    ListenerConfig,
    ParentContext,
    masked,
    scrubbed,
    serverless_spark_defaults,
)
from emr_lineage.spark.truststore import TrustStore

ENABLED_KEY = "emr_serverless.enabled"
PUBLISHED_BY = "EMR Serverless stack"


class ServerlessDisabledError(JobError):
    """``emr_serverless.enabled`` is false for the environment: exit 2, naming the key to set."""


def require_enabled(settings: EnvironmentSettings) -> None:
    if not settings.emr_serverless.enabled:
        key = f"emr-lineage.environments.{settings.name}.{ENABLED_KEY}"
        raise ServerlessDisabledError(
            f"EMR Serverless is off for env {settings.name!r}: set {key} to true in cdk.json and deploy "
            f"(make deploy ENV={settings.name}), or launch on a cluster (without --serverless)"
        )


@dataclass(frozen=True)
class ServerlessClients:
    """The clients a job run needs, from one session of the environment (:func:`clients_for`); no
    Secrets Manager: EMR Serverless reads the gateway's key itself. ``acm_pca`` makes the AWS Private CA
    client of a region, for an ``openlineage.trusted_ca`` that is one."""

    ssm: Any
    s3: Any
    emr_serverless: Any
    acm_pca: Callable[[str], Any] | None = None

    @classmethod
    def for_settings(cls, settings: EnvironmentSettings) -> ServerlessClients:
        made = clients_for(settings, ("ssm", "s3", emr_serverless.SERVICE))
        return cls(made["ssm"], made["s3"], made[emr_serverless.SERVICE], regional_client_maker(settings, "acm-pca"))


@dataclass(frozen=True)
class Target:
    """Where and as whom job runs run, and where their listener reports (with the gateway on, the ARN
    of the secret holding its API key: job runs reference it, nothing here reads it)."""

    application_id: str
    role_arn: str
    bucket: str
    jar_uri: str
    lineage_url: str
    glue_catalog_id: str
    api_key_secret: str | None = None
    truststore: TrustStore | None = None  # with openlineage.trusted_ca: what the driver's JVM trusts

    @property
    def log_uri(self) -> str:
        return f"s3://{self.bucket}/{SERVERLESS_LOGS_PREFIX}"


def resolve_target(clients: ServerlessClients, settings: EnvironmentSettings, listener: Listener) -> Target:
    """Read what the stacks publish (application, job role, and the listener's target:
    :func:`resolve_listener_target`); check that the pinned jar is staged."""
    env = settings.name
    application_id = read_parameter(
        clients.ssm, parameters.serverless_application_id(env), env=env, published_by=PUBLISHED_BY
    )
    role_arn = read_parameter(clients.ssm, parameters.serverless_job_role_arn(env), env=env, published_by=PUBLISHED_BY)
    shared = resolve_listener_target(clients.ssm, clients.s3, settings, listener)
    return Target(
        application_id=application_id,
        role_arn=role_arn,
        bucket=shared.bucket,
        jar_uri=shared.jar_uri,
        lineage_url=shared.lineage_url,
        glue_catalog_id=shared.glue_catalog_id or role_arn.split(":")[4],
        api_key_secret=shared.api_key_secret,
    )


def job_run_request(
    target: Target,
    staged: StagedJob,
    parent: ParentContext,
    settings: EnvironmentSettings,
    *,
    launched_by: str,
    user_properties: Mapping[str, str] | None = None,
) -> dict[str, Any]:
    """The StartJobRun request of one staged job (a new client token: a retry never starts it twice)."""
    job = staged.request
    listener = ListenerConfig.for_settings(settings.openlineage, api_url=target.lineage_url)
    properties = serverless_spark_defaults(
        listener,
        jar_uri=target.jar_uri,
        api_key_secret=target.api_key_secret,
        parent=parent,
        glue_catalog_id=target.glue_catalog_id,
        app_name=job.job_name,
        user_properties=user_properties,
        truststore=target.truststore,
    )
    if staged.py_files:  # spark-submit reads --py-files from this property too (SparkSubmitArguments)
        properties["spark.submit.pyFiles"] = ",".join(staged.py_files)
    spark_submit: dict[str, Any] = {"entryPoint": staged.uri}
    if job.args:
        spark_submit["entryPointArguments"] = list(job.args)
    return {
        "applicationId": target.application_id,
        "executionRoleArn": target.role_arn,
        "name": job.job_name[:256],
        "clientToken": str(uuid.uuid4()),
        "jobDriver": {"sparkSubmit": spark_submit},
        "configurationOverrides": {
            "applicationConfiguration": [{"classification": SPARK_DEFAULTS, "properties": properties}],
            "monitoringConfiguration": {"s3MonitoringConfiguration": {"logUri": target.log_uri}},
        },
        "executionTimeoutMinutes": settings.emr_serverless.job_timeout_minutes,
        "tags": {
            "emr-lineage:job": job.job_name[:256],
            "emr-lineage:parent-run-id": parent.parent_run_id,
            "emr-lineage:launched-by": launched_by,
        },
    }


def spark_defaults_of_request(request: Mapping[str, Any]) -> dict[str, str]:
    """The ``spark-defaults`` properties a StartJobRun request sends ({} if none)."""
    for configuration in request.get("configurationOverrides", {}).get("applicationConfiguration", []):
        if configuration.get("classification") == SPARK_DEFAULTS:
            return dict(configuration.get("properties") or {})
    return {}


def redacted(request: Mapping[str, Any]) -> dict[str, Any]:
    """``request`` as it may be shown: every credential in its Spark properties masked."""
    shown = copy.deepcopy(dict(request))
    for configuration in shown.get("configurationOverrides", {}).get("applicationConfiguration", []):
        configuration["properties"] = masked(configuration.get("properties", {}))
    return shown


@dataclass(frozen=True)
class ServerlessPlan:
    """Everything decided before the first job run starts (jobs are already staged)."""

    env: str
    target: Target
    staged: tuple[StagedJob, ...]
    parent: ParentContext
    parent_is_new: bool
    namespace: str
    requests: tuple[dict[str, Any], ...]  # one per job, in order; show redacted() (a --conf may hold a key)
    timeout_minutes: int


def prepare_serverless(
    clients: ServerlessClients,
    settings: EnvironmentSettings,
    jobs: Sequence[JobRequest],
    *,
    listener: Listener,
    parent: ParentContext | None,
    parent_job_name: str = LAUNCH_PARENT_JOB,
    launched_by: str = "emr-lineage launch --serverless",
    user_properties: Mapping[str, str] | None = None,
    upload: bool = True,
) -> ServerlessPlan:
    """Check the jobs, read the target, stage every job (``upload`` False: only where it would go) and
    build its StartJobRun request; ``parent`` None: one new parent run shared by every job run."""
    require_enabled(settings)
    check_jobs(jobs)
    target = resolve_target(clients, settings, listener)
    target = dataclasses.replace(
        target,
        truststore=trusted_ca_truststore(clients.s3, settings, target.bucket, upload=upload, acm_pca=clients.acm_pca),
    )
    stage = (lambda job: stage_job(clients.s3, target.bucket, job)) if upload else partial(planned_stage, target.bucket)
    staged = tuple(stage(job) for job in jobs)
    namespace = settings.openlineage.namespace
    parent_is_new = parent is None
    if parent is None:
        parent = ParentContext.new(namespace=namespace, job_name=parent_job_name)
    requests = tuple(
        job_run_request(target, s, parent, settings, launched_by=launched_by, user_properties=user_properties)
        for s in staged
    )
    return ServerlessPlan(
        env=settings.name,
        target=target,
        staged=staged,
        parent=parent,
        parent_is_new=parent_is_new,
        namespace=namespace,
        requests=requests,
        timeout_minutes=settings.emr_serverless.job_timeout_minutes,
    )


def start_run(client: Any, request: Mapping[str, Any]) -> emr_serverless.JobRun:
    """Start the run of a request of a :class:`ServerlessPlan`; an AWS error's message never carries a
    credential of the request (should AWS or botocore quote a property's value)."""
    try:
        return emr_serverless.start_job_run(client, dict(request))
    except AwsError as exc:
        raise AwsError(scrubbed(str(exc), _secrets(request))) from None


def _secrets(request: Mapping[str, Any]) -> list[str]:
    shown = redacted(request)["configurationOverrides"]["applicationConfiguration"]
    sent = request["configurationOverrides"]["applicationConfiguration"]
    return [
        value
        for ours, theirs in zip(sent, shown, strict=True)
        for key, value in ours.get("properties", {}).items()
        if value and theirs["properties"][key] != value
    ]


class RunInterruptedError(KeyboardInterrupt):
    """Ctrl-C or SIGTERM while a job run was waited on, after it was cancelled (or that failed)."""

    def __init__(self, run: emr_serverless.JobRun, cancel_error: str | None) -> None:
        super().__init__(run.job_run_id)
        self.run, self.cancel_error = run, cancel_error

    @property
    def fate(self) -> str:
        what = f"job run {self.run.name} ({self.run.job_run_id})"
        if self.cancel_error:
            return (
                f"{what} NOT cancelled: {self.cancel_error}; cancel it with: aws emr-serverless cancel-job-run "
                f"--application-id {self.run.application_id} --job-run-id {self.run.job_run_id}"
            )
        return f"{what} cancelled"


def wait_or_cancel(
    client: Any,
    run: emr_serverless.JobRun,
    *,
    poll_interval: float,
    deadline_minutes: int,
    on_poll: Callable[[emr_serverless.RunSnapshot], None] | None = None,
) -> emr_serverless.RunOutcome:
    """Wait for ``run``; past the deadline, or on Ctrl-C/SIGTERM (:class:`RunInterruptedError`), cancel it."""
    try:
        outcome = emr_serverless.wait_for_job_run(
            client, run, poll_interval=poll_interval, deadline_seconds=deadline_minutes * 60, on_poll=on_poll
        )
    except KeyboardInterrupt:
        raise RunInterruptedError(run, _cancel(client, run)) from None
    if outcome.timed_out:
        problem = _cancel(client, run)
        note = f"; cancelling it failed: {problem}" if problem else "; cancelled"
        outcome = emr_serverless.RunOutcome(False, outcome.last, outcome.message + note, outcome.log_uris, True)
    return outcome


def _cancel(client: Any, run: emr_serverless.JobRun) -> str | None:
    try:
        emr_serverless.cancel_job_run(client, run)
    except AwsError as exc:
        return str(exc)
    return None
