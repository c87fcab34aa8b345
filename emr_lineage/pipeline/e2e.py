"""The sample pipeline on one ephemeral EMR cluster, its lineage checked in Marquez.

:func:`run_e2e` does, in order: read the data lake bucket and the Marquez API URL (SSM, or
``--marquez``) and check that Marquez answers, before anything costs money; generate the
seeded sample orders locally and upload them to the lake's raw zone; start ONE cluster from
the launch spec with the five jobs of ``jobs/`` as ordered steps sharing one parent run; wait
for the steps; terminate the cluster (unless kept), also on failure and Ctrl-C; then read
Marquez until ``jobs/lineage_contract.yaml`` holds or the deadline passes.

The lineage read is that of the raw events Marquez stored for this run's parent run
(:mod:`emr_lineage.pipeline.e2e_lineage`): Marquez's own lineage view renames jobs run under a parent,
keeps only each job's latest completed version and shows no edges on a Spark application (docs/e2e.md).

Printing stays in the CLI (``emr_lineage.cli.e2e``): this module reports through callbacks.
What keeps it from running raises an :class:`~emr_lineage.errors.EmrLineageError` (exit 2) with
a message for the user; a failed step or contract is the result's ``exit_code`` 1.
"""

from __future__ import annotations

import copy
import dataclasses
import tempfile
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Any

from emr_lineage.aws import clients as aws_clients
from emr_lineage.aws import emr as emr_cluster
from emr_lineage.aws import parameters
from emr_lineage.aws.emr_serverless import RunOutcome
from emr_lineage.aws.lake import glue_database_name, zone_prefix
from emr_lineage.aws.upload import upload
from emr_lineage.errors import EmrLineageError
from emr_lineage.http import DEFAULT_TIMEOUT
from emr_lineage.launch import plan as launch_plan
from emr_lineage.lineage.contracts.model import Contract, load_contract
from emr_lineage.marquez.client import MarquezClient, MarquezError, NotMarquezError
from emr_lineage.pipeline import definition as pipeline
from emr_lineage.pipeline import demo
from emr_lineage.pipeline.e2e_lineage import (
    DEFAULT_LINEAGE_INTERVAL,
    DEFAULT_LINEAGE_TIMEOUT,
    LineageAttempt,
    LineageOutcome,
    graph_urls,
    wait_for_lineage,
)
from emr_lineage.settings.model import EnvironmentSettings
from emr_lineage.spark import iceberg
from emr_lineage.spark.conf import ParentContext, ParentContextError

# The parent job every step reports (Marquez names the applications <this>.<app>).
E2E_PARENT_JOB = "emr_lineage_e2e"
LAUNCHED_BY = "emr-lineage e2e"
# What a kept cluster does when a step fails: cancel the rest and wait (for debugging).
KEEP_ACTION_ON_FAILURE = "CANCEL_AND_WAIT"


@dataclass(frozen=True)
class E2EOptions:
    rows: int = pipeline.DEFAULT_ROWS
    keep_cluster: bool = False
    marquez_url: str | None = None  # overrides SSM's marquez api-url (e.g. an SSM port forward)
    emr_poll_interval: float = emr_cluster.DEFAULT_POLL_SECONDS
    lineage_timeout: float = DEFAULT_LINEAGE_TIMEOUT
    lineage_interval: float = DEFAULT_LINEAGE_INTERVAL
    marquez_timeout: float = DEFAULT_TIMEOUT


@dataclass(frozen=True)
class Targets:
    """Where this environment's pipeline runs and reports (from SSM, or overridden)."""

    lake_bucket: str
    marquez_api: str
    marquez_api_from: str  # "--marquez" or the SSM parameter name
    marquez_web: str | None

    @property
    def lake(self) -> str:
        return f"s3://{self.lake_bucket}"


def resolve_targets(clients: aws_clients.AwsClients, settings: EnvironmentSettings, marquez_url: str | None) -> Targets:
    env = settings.name
    bucket = aws_clients.read_parameter(
        clients.ssm, parameters.data_lake_bucket(env), env=env, published_by="data lake stack"
    )
    if marquez_url:
        api, source = marquez_url, "--marquez"
    elif settings.hub is not None:
        raise aws_clients.AwsError(
            f"env {env!r} is a spoke: its lineage is in the hub's Marquez ({settings.hub.endpoint_service_name}); "
            "pass the hub's Marquez API URL with --marquez"
        )
    else:
        source = parameters.marquez_api_url(env)
        api = aws_clients.read_parameter(clients.ssm, source, env=env, published_by="Marquez stack")
    return Targets(bucket, api, source, launch_plan.marquez_web_url(clients.ssm, env))


def check_marquez(targets: Targets, timeout: float) -> None:
    """One cheap read, so an unreachable Marquez fails before a cluster is paid for."""
    try:
        with MarquezClient(targets.marquez_api, timeout=timeout, retries=1) as client:
            client.probe()
    except NotMarquezError:
        raise
    except MarquezError as exc:
        raise MarquezError(
            f"Marquez API {targets.marquez_api} (from {targets.marquez_api_from}) does not answer: {exc}. "
            "It is internal to the VPC: run from inside it, or forward a port with SSM and pass "
            "--marquez http://localhost:<port> (docs/e2e.md)"
        ) from None


def load_pipeline_contract(path: Path = pipeline.CONTRACT) -> Contract:
    return load_contract(path)


def contract_values(contract: Contract, settings: EnvironmentSettings, targets: Targets) -> dict[str, str]:
    return contract.resolve_variables({"lake": targets.lake, "namespace": settings.openlineage.namespace})


def choose_parent(
    settings: EnvironmentSettings, environ: Mapping[str, str] | None = None
) -> tuple[ParentContext, bool]:
    """The orchestrator's parent run (OPENLINEAGE_PARENT_*) or a new one; True when new."""
    try:
        parent = ParentContext.from_env(environ)
    except ParentContextError as exc:
        raise ParentContextError(f"OPENLINEAGE_PARENT_* environment: {exc}") from None
    if parent is not None:
        return parent, False
    return ParentContext.new(namespace=settings.openlineage.namespace, job_name=E2E_PARENT_JOB), True


def checkpoint_uri(lake: str, parent: ParentContext) -> str:
    """A fresh checkpoint per run: with a used one, the available-now stream finds nothing new,
    writes nothing and reports no output. Under the curated zone because EMR may write only
    to the clean, curated and models zones (the jobs' own default, ``checkpoints/``, is none)."""
    return f"{lake}/{zone_prefix('curated')}_checkpoints/score_stream/{parent.parent_run_id}"


def emr_tables(settings: EnvironmentSettings) -> dict[str, str]:
    """Each table's name on EMR: in the Iceberg catalog, in the Glue database of its zone, e.g.
    ``lakehouse.emr_lineage_dev_curated.revenue_daily`` (its data under that database's location)."""
    return {
        table: iceberg.table_name(glue_database_name(settings, zone), table)
        for table, zone in pipeline.TABLE_ZONES.items()
    }


def pipeline_jobs(
    settings: EnvironmentSettings, lake: str, parent: ParentContext, jobs_dir: Path = pipeline.JOBS_DIR
) -> list[launch_plan.JobRequest]:
    """The five jobs in pipeline order with the arguments they take on EMR (docs/pipeline.md)."""
    tables = emr_tables(settings)
    extra = {"score_stream": ("--checkpoint", checkpoint_uri(lake, parent))}
    return [
        launch_plan.JobRequest(
            script=jobs_dir / f"{name}.py",
            args=(*pipeline.job_arguments(name, lake, tables), *extra.get(name, ())),
        )
        for name in pipeline.PIPELINE
    ]


def prepare_pipeline(
    clients: aws_clients.AwsClients,
    settings: EnvironmentSettings,
    jobs: Sequence[launch_plan.JobRequest],
    parent: ParentContext,
    *,
    keep_cluster: bool,
) -> launch_plan.LaunchPlan:
    """The launcher's plan (jobs staged), kept alive when asked."""
    plan = launch_plan.prepare_launch(
        clients, settings, jobs, parent=parent, parent_job_name=parent.parent_job_name, launched_by=LAUNCHED_BY
    )
    request = copy.deepcopy(plan.request)
    if keep_cluster:
        request["Instances"]["KeepJobFlowAliveWhenNoSteps"] = True
        for step in request["Steps"]:
            step["ActionOnFailure"] = KEEP_ACTION_ON_FAILURE
    return dataclasses.replace(plan, request=request)


@dataclass(frozen=True)
class StagedData:
    uris: tuple[str, ...]
    bytes: int


def stage_sample_data(s3: Any, bucket: str, rows: int) -> StagedData:
    """Generate the seeded orders locally (the demo's generator) and upload them to the raw zone.

    The same seed and size always give the same files under the same keys, so a rerun
    overwrites its own objects; nothing else in the lake is touched.
    """
    uris: list[str] = []
    size = 0
    with tempfile.TemporaryDirectory(prefix="emr-lineage-e2e-") as tmp:
        lake = Path(tmp) / "lake"
        demo.generate_data(lake, rows)
        for path in sorted(p for p in lake.rglob("*") if p.is_file()):
            key = path.relative_to(lake).as_posix()
            uri = f"s3://{bucket}/{key}"
            upload(s3, path, bucket, key)
            uris.append(uri)
            size += path.stat().st_size
    return StagedData(tuple(uris), size)


@dataclass
class E2EResult:
    """What happened; ``exit_code`` 0 only when every step completed and the contract holds."""

    env: str
    parent: ParentContext
    parent_is_new: bool
    targets: Targets
    cluster_id: str | None = None
    cluster_name: str | None = None
    terminated: bool = False
    kept: bool = False
    terminate_error: str | None = None
    steps: emr_cluster.Outcome | RunOutcome | None = None  # the cluster's steps, or the last job run
    lineage: LineageOutcome | None = None
    graph_urls: list[str] = field(default_factory=list)
    since: datetime | None = None  # the earliest event time of this run's lineage, once it was started
    message: str = ""
    exit_code: int = 1
    application_id: str | None = None  # --serverless: the EMR Serverless application
    job_runs: list[str] = field(default_factory=list)  # --serverless: the runs started, in order

    @property
    def ran_on(self) -> str:
        """Where the pipeline ran: the cluster, or the EMR Serverless application."""
        return self.cluster_id or f"EMR Serverless application {self.application_id}"


@dataclass
class Callbacks:
    """How the CLI hears about progress (all optional)."""

    say: Callable[[str], None] = lambda _text: None
    on_poll: Callable[[Any], None] | None = None  # a cluster's Snapshot, or a job run's RunSnapshot
    on_attempt: Callable[[LineageAttempt], None] | None = None
    on_cluster: Callable[[E2EResult], None] | None = None  # cluster id (or a job run) known: Ctrl-C handling


def run_e2e(
    settings: EnvironmentSettings,
    options: E2EOptions,
    *,
    clients: aws_clients.AwsClients | None = None,
    callbacks: Callbacks | None = None,
    environ: Mapping[str, str] | None = None,
) -> E2EResult:
    """Run the whole end-to-end check (see the module docstring). Bad input raises
    an ``EmrLineageError`` before anything is uploaded or started; a KeyboardInterrupt
    propagates after the cluster was terminated (unless kept)."""
    cb = callbacks or Callbacks()
    clients = clients or aws_clients.AwsClients.for_settings(settings)
    contract, values, result = start_e2e(settings, options, clients, environ)
    env, targets, parent = settings.name, result.targets, result.parent
    # The launcher reads these again; reading them now keeps a missing one from costing an upload.
    emr_cluster.load_launch_spec(clients.ssm, env)
    aws_clients.read_parameter(clients.ssm, parameters.artifacts_bucket(env), env=env, published_by="EMR stack")
    cb.say(f"Marquez API {targets.marquez_api} answers (from {targets.marquez_api_from})")

    jobs = pipeline_jobs(settings, targets.lake, parent)
    for job in jobs:
        job.check()
    stage_data(clients.s3, targets, options.rows, cb)
    plan = prepare_pipeline(clients, settings, jobs, parent, keep_cluster=options.keep_cluster)
    report_staged(plan.staged, result, cb)
    return _run_pipeline(clients, plan, contract, values, parent, options, cb, result)


def start_e2e(
    settings: EnvironmentSettings, options: E2EOptions, clients: Any, environ: Mapping[str, str] | None
) -> tuple[Contract, dict[str, str], E2EResult]:
    """What every e2e does first, before anything costs money: the options, the contract, the parent run,
    the targets and a Marquez that answers. ``clients`` has ``ssm`` (cluster's or EMR Serverless')."""
    if options.rows < pipeline.MIN_ROWS:
        raise EmrLineageError(f"--rows must be at least {pipeline.MIN_ROWS}, got {options.rows}")
    contract = load_pipeline_contract()
    parent, parent_is_new = choose_parent(settings, environ)
    targets = resolve_targets(clients, settings, options.marquez_url)
    values = contract_values(contract, settings, targets)
    check_marquez(targets, options.marquez_timeout)
    result = E2EResult(env=settings.name, parent=parent, parent_is_new=parent_is_new, targets=targets)
    result.graph_urls = graph_urls(targets.marquez_web, options.marquez_url, contract, values)
    return contract, values, result


def stage_data(s3: Any, targets: Targets, rows: int, cb: Callbacks) -> None:
    staged_data = stage_sample_data(s3, targets.lake_bucket, rows)
    cb.say(
        f"sample data: {rows} orders, {len(staged_data.uris)} files ({staged_data.bytes} bytes) "
        f"uploaded to {targets.lake}/{zone_prefix('raw')}"
    )


def report_staged(staged_jobs: Sequence[launch_plan.StagedJob], result: E2EResult, cb: Callbacks) -> None:
    for staged in staged_jobs:
        state = "uploaded to" if staged.uploaded else "unchanged at"
        cb.say(f"job {staged.request.job_name} {state} {staged.uri}")
    parent = result.parent
    origin = "new" if result.parent_is_new else "from OPENLINEAGE_PARENT_*"
    cb.say(
        f"parent run id {parent.parent_run_id} ({origin}; job {parent.parent_job_namespace}/{parent.parent_job_name})"
    )


def _run_pipeline(
    clients: aws_clients.AwsClients,
    plan: launch_plan.LaunchPlan,
    contract: Contract,
    values: Mapping[str, str],
    parent: ParentContext,
    options: E2EOptions,
    cb: Callbacks,
    result: E2EResult,
) -> E2EResult:
    """Start the cluster, wait for its steps (ending it whatever happens), then for the lineage."""
    since = result.since = launch_plan.lineage_since()
    cluster = emr_cluster.start_cluster(clients.emr, plan.request, log_uri=plan.log_uri)
    result.cluster_id, result.cluster_name = cluster.cluster_id, plan.request["Name"]
    cb.say(f"cluster {cluster.cluster_id} starting ({plan.request['Name']}), {len(cluster.steps)} steps")
    if cb.on_cluster is not None:
        cb.on_cluster(result)
    try:
        result.steps = emr_cluster.wait_for_steps(
            clients.emr, cluster, poll_interval=options.emr_poll_interval, on_poll=cb.on_poll
        )
    finally:
        # Also on a failed step, an AWS error or Ctrl-C: an e2e cluster must not keep billing.
        _end_cluster(clients, result, options, cb)

    if not result.steps.succeeded:
        result.message = result.steps.message
        return result
    cb.say(
        f"all {len(cluster.steps)} steps completed; reading lineage from Marquez (up to {options.lineage_timeout:g}s)"
    )
    check_lineage(result, contract, values, since, options, cb)
    if result.terminate_error:
        result.exit_code, result.message = 1, f"{result.message}; but {result.terminate_error}"
    return result


def check_lineage(
    result: E2EResult,
    contract: Contract,
    values: Mapping[str, str],
    since: datetime,
    options: E2EOptions,
    cb: Callbacks,
) -> None:
    """Read Marquez until the contract holds for this run's jobs (started after ``since``) or the deadline."""
    with MarquezClient(result.targets.marquez_api, timeout=options.marquez_timeout) as client:
        result.lineage = wait_for_lineage(
            client,
            contract,
            values,
            result.parent,
            since,
            timeout=options.lineage_timeout,
            interval=options.lineage_interval,
            on_attempt=cb.on_attempt,
        )
    result.message = result.lineage.message
    result.exit_code = 0 if result.lineage.ok else 1


def _end_cluster(clients: aws_clients.AwsClients, result: E2EResult, options: E2EOptions, cb: Callbacks) -> None:
    cid = result.cluster_id
    if cid is None:
        return
    if options.keep_cluster:
        result.kept = True
        cb.say(f"cluster {cid} kept (--keep-cluster); stop it with: aws emr terminate-clusters --cluster-ids {cid}")
        return
    try:
        emr_cluster.terminate_cluster(clients.emr, cid)
    except aws_clients.AwsError as exc:
        result.terminate_error = f"{exc}; stop it with: aws emr terminate-clusters --cluster-ids {cid}"
        cb.say(f"WARNING: {result.terminate_error}")
        return
    result.terminated = True
    cb.say(f"cluster {cid} terminating")
