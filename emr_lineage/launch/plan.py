"""Plan a launch: stage job scripts, build their EMR steps and the RunJobFlow request."""

from __future__ import annotations

import ast
import copy
import shlex
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any
from urllib.parse import quote

from emr_lineage.aws import parameters
from emr_lineage.aws.artifacts import STAGED_JOBS_PREFIX
from emr_lineage.aws.clients import AwsClients, AwsError, read_parameter
from emr_lineage.aws.emr import load_launch_spec
from emr_lineage.aws.upload import file_sha256, upload_once
from emr_lineage.errors import EmrLineageError
from emr_lineage.settings.model import EnvironmentSettings
from emr_lineage.spark.conf import ParentContext, spark_submit_conf_args

# The parent job a launch reports when no orchestrator passed OPENLINEAGE_PARENT_* variables.
LAUNCH_PARENT_JOB = "emr_lineage_launch"
# Hex digits of the script's SHA-256 in its staging key (64 bits: no collision in one bucket).
JOB_KEY_HASH_CHARS = 16
DEPLOY_MODES = ("client", "cluster")


class JobError(EmrLineageError):
    """A job that cannot be launched as asked (missing or non-.py script, duplicate names): exit 2."""


@dataclass(frozen=True)
class JobRequest:
    """One PySpark script to run as a step. The Spark application name is the file stem."""

    script: Path
    args: tuple[str, ...] = ()
    deploy_mode: str = "client"
    py_files: tuple[Path, ...] | None = None  # modules staged beside it (--py-files); None: local_modules(script)

    def __post_init__(self) -> None:
        if self.py_files is None:
            object.__setattr__(self, "py_files", local_modules(self.script))

    @property
    def job_name(self) -> str:
        return self.script.stem

    def check(self) -> None:
        if not self.script.is_file():
            raise JobError(f"job file {self.script} not found")
        if self.script.suffix != ".py":
            raise JobError(f"job file {self.script}: expected a PySpark script ending in .py")
        if self.deploy_mode not in DEPLOY_MODES:
            raise JobError(f"deploy mode {self.deploy_mode!r}: use one of {', '.join(DEPLOY_MODES)}")
        for module in self.py_files or ():
            if not module.is_file():
                raise JobError(f"{self.script.name}: module {module} not found")


def local_modules(script: Path) -> tuple[Path, ...]:
    """The modules beside ``script`` that it imports (``import as_of`` and ``jobs/as_of.py``): on EMR they
    must travel with it, as a local spark-submit finds them in the script's folder."""
    try:
        tree = ast.parse(script.read_text(encoding="utf-8"))
    except (OSError, SyntaxError, UnicodeDecodeError, ValueError):
        return ()  # check() names a missing script; Spark names a broken one
    names = {alias.name for node in ast.walk(tree) if isinstance(node, ast.Import) for alias in node.names}
    names |= {
        node.module for node in ast.walk(tree) if isinstance(node, ast.ImportFrom) and node.module and not node.level
    }
    found = (script.with_name(f"{name}.py") for name in sorted(names) if "." not in name)
    return tuple(module for module in found if module.is_file() and module != script)


@dataclass(frozen=True)
class StagedJob:
    request: JobRequest
    uri: str
    sha256: str
    uploaded: bool  # False: the object already held these bytes (or, planned, nothing was uploaded)
    planned: bool = False  # where it would be staged (a dry run): S3 was neither read nor written
    py_files: tuple[str, ...] = ()  # where the request's py_files are staged


def job_s3_key(script: Path, sha256: str) -> str:
    """``staged-jobs/<sha256[:16]>/<file name>``: content-addressed, so a pending step of another launch
    never runs a script staged after it; the file name is kept (the app name is its stem)."""
    return f"{STAGED_JOBS_PREFIX}{sha256[:JOB_KEY_HASH_CHARS]}/{script.name}"


def check_jobs(jobs: Sequence[JobRequest]) -> list[str]:
    """Every job's check, and their names (unique: a step's or a job run's name is the file stem)."""
    if not jobs:
        raise JobError("no job to launch")
    for job in jobs:
        job.check()
    names = [j.job_name for j in jobs]
    if len(set(names)) != len(names):
        raise JobError("two jobs share a file name; step names must be unique: " + ", ".join(names))
    return names


def planned_stage(bucket: str, job: JobRequest) -> StagedJob:
    """Where :func:`stage_job` would put ``job.script`` and its modules, without uploading (dry runs)."""
    sha256 = file_sha256(job.script)
    modules = tuple(f"s3://{bucket}/{job_s3_key(m, file_sha256(m))}" for m in job.py_files or ())
    uri = f"s3://{bucket}/{job_s3_key(job.script, sha256)}"
    return StagedJob(job, uri, sha256, uploaded=False, planned=True, py_files=modules)


def stage_job(s3: Any, bucket: str, job: JobRequest) -> StagedJob:
    """Upload ``job.script`` to ``s3://<bucket>/staged-jobs/<sha256[:16]>/<file name>`` unless it is there,
    and each of its modules the same way."""
    sha256 = file_sha256(job.script)
    upload = upload_once(s3, job.script, bucket, job_s3_key(job.script, sha256), sha256=sha256)
    modules = tuple(
        upload_once(s3, module, bucket, job_s3_key(module, digest), sha256=digest).uri
        for module, digest in ((m, file_sha256(m)) for m in job.py_files or ())
    )
    return StagedJob(job, upload.uri, upload.sha256, uploaded=upload.uploaded, py_files=modules)


def build_step(
    staged: StagedJob, parent: ParentContext, *, action_on_failure: str = "TERMINATE_CLUSTER"
) -> dict[str, Any]:
    """A command-runner.jar step: spark-submit of the staged script with the parent keys."""
    job = staged.request
    args = ["spark-submit", "--deploy-mode", job.deploy_mode, "--name", job.job_name]
    args += spark_submit_conf_args(parent.spark_properties())
    if staged.py_files:
        args += ["--py-files", ",".join(staged.py_files)]
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
    launched_by: str = "emr-lineage launch",
    now: datetime | None = None,
) -> LaunchPlan:
    """Read the spec and bucket, stage every job, and build the RunJobFlow request.

    ``parent`` is the orchestrator's context (``ParentContext.from_env()``); when None, one
    new parent run is created and shared by all steps.
    """
    names = check_jobs(jobs)
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
            "emr-lineage:launched-by": launched_by,
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


# Event times are the cluster's clock. A cluster needs minutes to provision and bootstrap before its first
# step, so reading from a little before the launch only absorbs clock skew between this machine and it.
CLOCK_SKEW_TOLERANCE = timedelta(minutes=2)


def lineage_since(now: datetime | None = None) -> datetime:
    """The earliest event time a run launched ``now`` (default: now) can report, clock skew allowed for."""
    return (now or datetime.now(UTC)) - CLOCK_SKEW_TOLERANCE


def graph_command(
    api_url: str, node: str, output: str, *, since: datetime | None = None, depth: int | None = None
) -> str:
    """The command that writes the HTML report of ``node``'s lineage (``job:<namespace>:<name>``) from the raw
    events Marquez stored (docs/graph.md, "Marquez's own lineage view"): with ``since`` (e.g.
    :func:`lineage_since`), those of a run from then on; with ``depth``, the jobs that far from ``node``."""
    words = ["emr-lineage", "graph", "--marquez", shlex.quote(api_url)]
    if since is not None:
        words += ["--since", since.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")]
    words += ["--node", shlex.quote(node)]
    if depth is not None:
        words += ["--depth", str(depth)]
    return " ".join([*words, "--format", "html", "-o", shlex.quote(output)])


def marquez_job_name(app_name: str, parent: ParentContext) -> str:
    """The name under which Marquez shows ``app_name`` run under ``parent``: ``<parent job>.<app>``, unless
    it already starts so (OpenLineageDao.java). That job holds the application's runs; its edges are on its
    Spark actions (docs/graph.md, "Marquez's own lineage view")."""
    prefix = parent.parent_job_name + "."
    return app_name if app_name.startswith(prefix) else prefix + app_name


def marquez_lineage_url(web_url: str, kind: str, namespace: str, name: str) -> str:
    """The Marquez web route of a job's (``kind="job"``) or a dataset's (``"dataset"``) lineage:
    ``/lineage/<kind>/<namespace>/<name>``."""
    return f"{web_url.rstrip('/')}/lineage/{kind}/{quote(namespace, safe='')}/{quote(name, safe='')}"


def marquez_web_url(ssm: Any, env: str) -> str | None:
    """The Marquez web URL, or None when the Marquez stack is not deployed (not fatal)."""
    return _optional_parameter(ssm, parameters.marquez_web_url(env), env)


def marquez_api_url(ssm: Any, env: str) -> str | None:
    """The Marquez API URL, or None when the Marquez stack is not deployed (not fatal)."""
    return _optional_parameter(ssm, parameters.marquez_api_url(env), env)


def _optional_parameter(ssm: Any, name: str, env: str) -> str | None:
    try:
        return read_parameter(ssm, name, env=env, published_by="Marquez stack")
    except AwsError:
        return None
