"""The sample pipeline on one ephemeral EMR cluster, its lineage checked in Marquez.

:func:`run_e2e` does, in order: read the data lake bucket and the Marquez API URL (SSM, or
``--marquez``) and check that Marquez answers, before anything costs money; generate the
seeded sample orders locally and upload them to the lake's raw zone; start ONE cluster from
the launch spec with the five jobs of ``jobs/`` as ordered steps sharing one parent run; wait
for the steps; terminate the cluster (unless kept), also on failure and Ctrl-C; then read
Marquez until ``jobs/lineage_contract.yaml`` holds or the deadline passes.

Two things Marquez does that a contract check must undo (see docs/e2e.md):

* a job whose run has a parent is stored as ``<parent job>.<job>`` with ``parentJobName``
  set, so the applications of this run are ``emr_lineage_e2e.ingest_orders`` etc.; the
  orchestrator's prefix is removed before the contract (which names applications) is checked;
* lineage shows the *latest* version of every job, so a previous run's lineage would pass a
  contract this run never reported; jobs whose latest run is older than this cluster are
  dropped, so only this run's lineage can satisfy the contract.

Printing stays in the CLI (``emr_lineage.commands.e2e``): this module reports through
callbacks. Errors are :class:`emr_lineage.launcher.LaunchError` (exit 1) and
:class:`~emr_lineage.launcher.LaunchInputError` (exit 2), each with a message for the user.
"""

from __future__ import annotations

import copy
import dataclasses
import tempfile
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

from botocore.exceptions import BotoCoreError, ClientError

from emr_lineage import demo, launcher, parameters
from emr_lineage.config import EnvironmentSettings
from emr_lineage.contract import Contract, ContractError, ContractResult, load_contract, validate
from emr_lineage.graph import GraphError, LineageGraph, graph_from_marquez
from emr_lineage.lake_layout import glue_database_name, zone_prefix
from emr_lineage.marquez import (
    DEFAULT_DEPTH,
    MarquezClient,
    MarquezError,
    contract_start_nodes,
    detach_parent_job,
    merged_lineage,
)
from emr_lineage.spark_conf import ParentContext, ParentContextError

# The parent job every step reports (Marquez names the applications <this>.<app>).
E2E_PARENT_JOB = "emr_lineage_e2e"
LAUNCHED_BY = "emr-lineage e2e"
DEFAULT_ROWS = demo.DEFAULT_ROWS
MIN_ROWS = 100
DEFAULT_LINEAGE_TIMEOUT = 600.0
DEFAULT_LINEAGE_INTERVAL = 15.0
# What a kept cluster does when a step fails: cancel the rest and wait (for debugging).
KEEP_ACTION_ON_FAILURE = "CANCEL_AND_WAIT"
# Marquez stamps runs with its own clock. A cluster needs minutes to provision and bootstrap
# before its first step, so accepting runs from a little before our start only absorbs clock
# skew between this machine and Marquez; it cannot let a previous run's lineage in.
CLOCK_SKEW_TOLERANCE = timedelta(minutes=2)


# --- inputs -----------------------------------------------------------------------------


@dataclass(frozen=True)
class E2EOptions:
    rows: int = DEFAULT_ROWS
    keep_cluster: bool = False
    marquez_url: str | None = None  # overrides SSM's marquez api-url (e.g. an SSM port forward)
    emr_poll_interval: float = launcher.DEFAULT_POLL_SECONDS
    lineage_timeout: float = DEFAULT_LINEAGE_TIMEOUT
    lineage_interval: float = DEFAULT_LINEAGE_INTERVAL
    depth: int = DEFAULT_DEPTH
    marquez_timeout: float = 10.0


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


def resolve_targets(clients: launcher.AwsClients, env: str, marquez_url: str | None) -> Targets:
    bucket = launcher.read_parameter(
        clients.ssm, parameters.data_lake_bucket(env), env=env, published_by="data lake stack"
    )
    if marquez_url:
        api, source = marquez_url, "--marquez"
    else:
        source = parameters.marquez_api_url(env)
        api = launcher.read_parameter(clients.ssm, source, env=env, published_by="Marquez stack")
    return Targets(bucket, api, source, launcher.marquez_web_url(clients.ssm, env))


def check_marquez(targets: Targets, timeout: float) -> None:
    """One cheap read, so an unreachable Marquez fails before a cluster is paid for."""
    try:
        with MarquezClient(targets.marquez_api, timeout=timeout, retries=1) as client:
            client.get("namespaces", {"limit": 1})
    except MarquezError as exc:
        raise launcher.LaunchInputError(
            f"Marquez API {targets.marquez_api} (from {targets.marquez_api_from}) does not answer: {exc}. "
            "It is internal to the VPC: run from inside it, or forward a port with SSM and pass "
            "--marquez http://localhost:<port> (docs/e2e.md)"
        ) from None


def load_pipeline_contract(path: Path = demo.CONTRACT) -> Contract:
    try:
        return load_contract(path)
    except ContractError as exc:
        raise launcher.LaunchInputError(str(exc)) from None


def contract_values(contract: Contract, settings: EnvironmentSettings, targets: Targets) -> dict[str, str]:
    try:
        return contract.resolve_variables({"lake": targets.lake, "namespace": settings.openlineage.namespace})
    except ContractError as exc:
        raise launcher.LaunchInputError(str(exc)) from None


def choose_parent(
    settings: EnvironmentSettings, environ: Mapping[str, str] | None = None
) -> tuple[ParentContext, bool]:
    """The orchestrator's parent run (OPENLINEAGE_PARENT_*) or a new one; True when new."""
    try:
        parent = ParentContext.from_env(environ)
    except ParentContextError as exc:
        raise launcher.LaunchInputError(f"OPENLINEAGE_PARENT_* environment: {exc}") from None
    if parent is not None:
        return parent, False
    return ParentContext.new(namespace=settings.openlineage.namespace, job_name=E2E_PARENT_JOB), True


# --- the pipeline's steps ---------------------------------------------------------------


def checkpoint_uri(lake: str, parent: ParentContext) -> str:
    """A fresh checkpoint per run: with a used one, the available-now stream finds nothing new,
    writes nothing and reports no output. Under the curated zone because EMR may write only
    to the clean, curated and models zones (the jobs' own default, ``checkpoints/``, is none)."""
    return f"{lake}/{zone_prefix('curated')}_checkpoints/score_stream/{parent.parent_run_id}"


def pipeline_jobs(
    settings: EnvironmentSettings, lake: str, parent: ParentContext, jobs_dir: Path = demo.JOBS_DIR
) -> list[launcher.JobRequest]:
    """The five jobs in pipeline order with the arguments they take on EMR (docs/pipeline.md)."""
    extra = {
        "customer_ltv": ("--database", glue_database_name(settings, "curated")),
        "score_stream": ("--checkpoint", checkpoint_uri(lake, parent)),
    }
    return [
        launcher.JobRequest(script=jobs_dir / f"{name}.py", args=("--lake", lake, *extra.get(name, ())))
        for name in demo.PIPELINE
    ]


def prepare_pipeline(
    clients: launcher.AwsClients,
    settings: EnvironmentSettings,
    jobs: Sequence[launcher.JobRequest],
    parent: ParentContext,
    *,
    keep_cluster: bool,
) -> launcher.LaunchPlan:
    """The launcher's plan (jobs staged), re-tagged, and kept alive when asked."""
    plan = launcher.prepare_launch(clients, settings, jobs, parent=parent, parent_job_name=parent.parent_job_name)
    request = copy.deepcopy(plan.request)
    request["Tags"] = [
        {"Key": t["Key"], "Value": LAUNCHED_BY if t["Key"] == "emr-lineage:launched-by" else t.get("Value", "")}
        for t in request["Tags"]
    ]
    if keep_cluster:
        request["Instances"]["KeepJobFlowAliveWhenNoSteps"] = True
        for step in request["Steps"]:
            step["ActionOnFailure"] = KEEP_ACTION_ON_FAILURE
    return dataclasses.replace(plan, request=request)


# --- sample data ------------------------------------------------------------------------


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
            try:
                s3.upload_file(str(path), bucket, key)
            except (ClientError, BotoCoreError, OSError) as exc:
                raise launcher.LaunchError(f"cannot upload sample data to {uri} ({exc})") from None
            uris.append(uri)
            size += path.stat().st_size
    return StagedData(tuple(uris), size)


# --- lineage in Marquez -----------------------------------------------------------------


def start_nodes(contract: Contract, values: Mapping[str, str], parent: ParentContext) -> list[str]:
    """Where to read lineage from: the contract's jobs under Marquez's parent-prefixed names, and its datasets."""
    return contract_start_nodes(contract, values, parent.parent_job_name)


def _instant(value: Any) -> datetime | None:
    """A Marquez timestamp: ISO-8601 text (API) or epoch seconds (some test fixtures)."""
    if isinstance(value, (int, float)):
        return datetime.fromtimestamp(value, UTC)
    if isinstance(value, str) and value:
        try:
            parsed = datetime.fromisoformat(value.replace("Z", "+00:00"))
        except ValueError:
            return None
        return parsed if parsed.tzinfo else parsed.replace(tzinfo=UTC)
    return None


def latest_run_time(node: Mapping[str, Any]) -> datetime | None:
    run = (node.get("data") or {}).get("latestRun") or {}
    times = [t for t in (_instant(run.get(k)) for k in ("createdAt", "updatedAt", "startedAt", "endedAt")) if t]
    return max(times) if times else None


def drop_stale_jobs(reply: Mapping[str, Any], since: datetime) -> tuple[dict[str, Any], list[str]]:
    """Remove JOB nodes whose latest run began before ``since`` (and edges touching them)."""
    stale = sorted(
        node["id"]
        for node in reply.get("graph", ())
        if node.get("type") == "JOB" and ((t := latest_run_time(node)) is None or t < since)
    )
    if not stale:
        return dict(reply), []
    gone = set(stale)
    nodes = []
    for node in reply["graph"]:
        if node["id"] in gone:
            continue
        node = dict(node)
        for key in ("inEdges", "outEdges"):
            node[key] = [
                e for e in node.get(key) or () if e.get("origin") not in gone and e.get("destination") not in gone
            ]
        nodes.append(node)
    return {"graph": nodes}, stale


@dataclass(frozen=True)
class LineageAttempt:
    """One read of Marquez: the contract result, or why there is none."""

    number: int
    elapsed: float
    result: ContractResult | None
    graph: LineageGraph | None
    stale_jobs: tuple[str, ...] = ()
    error: str | None = None

    @property
    def ok(self) -> bool:
        return self.result is not None and self.result.ok


@dataclass(frozen=True)
class LineageOutcome:
    ok: bool
    attempts: int
    last: LineageAttempt
    message: str


def read_lineage(
    client: MarquezClient,
    contract: Contract,
    values: Mapping[str, str],
    parent: ParentContext,
    since: datetime,
    depth: int = DEFAULT_DEPTH,
) -> tuple[ContractResult, LineageGraph, list[str]]:
    """Marquez's lineage around the contract, limited to this run, checked against the contract.

    The reads are those of ``emr-lineage validate --marquez`` (``merged_lineage`` with
    unknown nodes skipped, ``graph_from_marquez``, ``validate``).
    """
    reply = merged_lineage(client, start_nodes(contract, values, parent), depth, missing_ok=True)
    fresh, stale = drop_stale_jobs(reply, since)
    graph = graph_from_marquez(detach_parent_job(fresh, parent.parent_job_name), level=contract.level)
    return validate(contract, graph, values), graph, stale


def pause(seconds: float) -> None:
    """The wait between two reads of Marquez (tests replace it to let lineage "arrive")."""
    time.sleep(seconds)


# The deadline's clock (tests replace it together with ``pause``).
clock = time.monotonic


def wait_for_lineage(
    client: MarquezClient,
    contract: Contract,
    values: Mapping[str, str],
    parent: ParentContext,
    since: datetime,
    *,
    timeout: float = DEFAULT_LINEAGE_TIMEOUT,
    interval: float = DEFAULT_LINEAGE_INTERVAL,
    depth: int = DEFAULT_DEPTH,
    on_attempt: Callable[[LineageAttempt], None] | None = None,
) -> LineageOutcome:
    """Read Marquez until the contract holds or ``timeout`` seconds have passed.

    Lineage arrives asynchronously (the listener posts while the steps run, Marquez versions
    a job on COMPLETE), so a missing edge, an unknown node or an unreachable Marquez is
    retried; at least one read is always made.
    """
    started = clock()
    number = 0
    while True:
        number += 1
        try:
            result, graph, stale = read_lineage(client, contract, values, parent, since, depth)
            attempt = LineageAttempt(number, clock() - started, result, graph, tuple(stale))
        except (MarquezError, GraphError) as exc:
            attempt = LineageAttempt(number, clock() - started, None, None, error=str(exc))
        if on_attempt is not None:
            on_attempt(attempt)
        if attempt.ok:
            return LineageOutcome(
                True, number, attempt, f"lineage matches the contract ({len(attempt.result.matched)} edges)"
            )
        remaining = timeout - (clock() - started)
        if remaining <= 0:
            return LineageOutcome(False, number, attempt, _deadline_message(attempt, timeout, number))
        pause(min(interval, remaining))


def _deadline_message(attempt: LineageAttempt, timeout: float, attempts: int) -> str:
    base = f"lineage in Marquez did not match the contract within {timeout:g}s ({attempts} reads)"
    if attempt.result is None:
        return f"{base}; last read failed: {attempt.error}"
    result = attempt.result
    text = f"{base}: {len(result.missing)} missing, {len(result.unexpected)} unexpected edge(s)"
    if attempt.stale_jobs:
        text += f"; {len(attempt.stale_jobs)} job(s) in Marquez only from runs before this cluster"
    return text


# --- the whole run ----------------------------------------------------------------------


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
    steps: launcher.Outcome | None = None
    lineage: LineageOutcome | None = None
    graph_urls: list[str] = field(default_factory=list)
    message: str = ""
    exit_code: int = 1


@dataclass
class Callbacks:
    """How the CLI hears about progress (all optional)."""

    say: Callable[[str], None] = lambda _text: None
    on_poll: Callable[[launcher.Snapshot], None] | None = None
    on_attempt: Callable[[LineageAttempt], None] | None = None
    on_cluster: Callable[[E2EResult], None] | None = None  # cluster id known (Ctrl-C handling)


def graph_urls(targets: Targets, namespace: str, parent: ParentContext, options: E2EOptions) -> list[str]:
    """The Marquez web page of the pipeline's graph (first job), via SSM's web URL and, with
    ``--marquez``, via the same host (the ALB serves the UI at / beside /api)."""
    job = launcher.marquez_job_name(demo.PIPELINE[0], parent)
    bases = [targets.marquez_web] if targets.marquez_web else []
    if options.marquez_url:
        override = options.marquez_url.rstrip("/").removesuffix("/api/v1")
        if override not in {b.rstrip("/") for b in bases}:
            bases.append(override)
    return [launcher.marquez_job_url(base, namespace, job) for base in bases]


def run_e2e(
    settings: EnvironmentSettings,
    options: E2EOptions,
    *,
    clients: launcher.AwsClients | None = None,
    callbacks: Callbacks | None = None,
    environ: Mapping[str, str] | None = None,
) -> E2EResult:
    """Run the whole end-to-end check (see the module docstring). Bad input raises
    ``LaunchInputError`` before anything is uploaded or started; a KeyboardInterrupt
    propagates after the cluster was terminated (unless kept)."""
    cb = callbacks or Callbacks()
    if options.rows < MIN_ROWS:
        raise launcher.LaunchInputError(f"--rows must be at least {MIN_ROWS}, got {options.rows}")
    contract = load_pipeline_contract()
    parent, parent_is_new = choose_parent(settings, environ)
    clients = clients or launcher.AwsClients.for_settings(settings)
    env = settings.name
    targets = resolve_targets(clients, env, options.marquez_url)
    values = contract_values(contract, settings, targets)
    check_marquez(targets, options.marquez_timeout)
    # The launcher reads these again; reading them now keeps a missing one from costing an upload.
    launcher.load_launch_spec(clients.ssm, env)
    launcher.read_parameter(clients.ssm, parameters.artifacts_bucket(env), env=env, published_by="EMR stack")
    result = E2EResult(env=env, parent=parent, parent_is_new=parent_is_new, targets=targets)
    result.graph_urls = graph_urls(targets, settings.openlineage.namespace, parent, options)
    cb.say(f"Marquez API {targets.marquez_api} answers (from {targets.marquez_api_from})")

    jobs = pipeline_jobs(settings, targets.lake, parent)
    for job in jobs:
        job.check()
    staged_data = stage_sample_data(clients.s3, targets.lake_bucket, options.rows)
    cb.say(
        f"sample data: {options.rows} orders, {len(staged_data.uris)} files ({staged_data.bytes} bytes) uploaded to {targets.lake}/{zone_prefix('raw')}"
    )
    plan = prepare_pipeline(clients, settings, jobs, parent, keep_cluster=options.keep_cluster)
    for staged in plan.staged:
        state = "uploaded to" if staged.uploaded else "unchanged at"
        cb.say(f"job {staged.request.job_name} {state} {staged.uri}")
    origin = "new" if parent_is_new else "from OPENLINEAGE_PARENT_*"
    cb.say(
        f"parent run id {parent.parent_run_id} ({origin}; job {parent.parent_job_namespace}/{parent.parent_job_name})"
    )

    since = datetime.now(UTC) - CLOCK_SKEW_TOLERANCE
    cluster = launcher.start_cluster(clients.emr, plan)
    result.cluster_id, result.cluster_name = cluster.cluster_id, plan.request["Name"]
    cb.say(f"cluster {cluster.cluster_id} starting ({plan.request['Name']}), {len(cluster.steps)} steps")
    if cb.on_cluster is not None:
        cb.on_cluster(result)
    try:
        result.steps = launcher.wait_for_steps(
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
    with MarquezClient(targets.marquez_api, timeout=options.marquez_timeout) as client:
        result.lineage = wait_for_lineage(
            client,
            contract,
            values,
            parent,
            since,
            timeout=options.lineage_timeout,
            interval=options.lineage_interval,
            depth=options.depth,
            on_attempt=cb.on_attempt,
        )
    result.message = result.lineage.message
    result.exit_code = 0 if result.lineage.ok else 1
    if result.terminate_error:
        result.exit_code, result.message = 1, f"{result.message}; but {result.terminate_error}"
    return result


def _end_cluster(clients: launcher.AwsClients, result: E2EResult, options: E2EOptions, cb: Callbacks) -> None:
    cid = result.cluster_id
    if cid is None:
        return
    if options.keep_cluster:
        result.kept = True
        cb.say(f"cluster {cid} kept (--keep-cluster); stop it with: aws emr terminate-clusters --cluster-ids {cid}")
        return
    try:
        launcher.terminate_cluster(clients.emr, cid)
    except launcher.LaunchError as exc:
        result.terminate_error = f"{exc}; stop it with: aws emr terminate-clusters --cluster-ids {cid}"
        cb.say(f"WARNING: {result.terminate_error}")
        return
    result.terminated = True
    cb.say(f"cluster {cid} terminating")
