"""``emr-lineage graph --on-emr --archive s3://... -o FILE``: the Spark job of the graph as the one step of an
ephemeral EMR cluster (``launch``'s plan, cluster and polling), its result downloaded.

What goes to the artifacts bucket (``staged-jobs/<sha256[:16]>/``, content-addressed as ``launch`` stages):
the job's script, the ``emr_lineage`` package as a zip (``--py-files``: the executors import it) and a
bootstrap action that installs Python 3.11 and the job's dependencies at the versions installed here
(EMR 7's nodes have Python 3.9 and none of orjson, jiter, jsonschema-rs, pydantic). The job writes the graph
and its report under ``emr-logs/emr-lineage-graph/<id>/`` (the nodes may write only under the logs prefix).
Only AWS runs the step: the cluster needs a route to PyPI (or a mirror) for the bootstrap action, and its
instance role read access to the archive bucket and its KMS key.
"""

from __future__ import annotations

import hashlib
import importlib.metadata
import json
import uuid
import zipfile
from pathlib import Path
from typing import Any

from botocore.exceptions import BotoCoreError, ClientError
from rich.console import Console

from emr_lineage.aws import clients as aws_clients
from emr_lineage.aws import emr as emr_cluster
from emr_lineage.aws import parameters
from emr_lineage.aws.artifacts import LOGS_PREFIX, STAGED_JOBS_PREFIX
from emr_lineage.aws.clients import aws_message, read_parameter
from emr_lineage.aws.upload import upload_once
from emr_lineage.cli.graph_job import GraphJob, job_script, report_notes
from emr_lineage.cli.output import fail
from emr_lineage.cli.progress import Steps, cluster_poll_printer
from emr_lineage.errors import EXIT_CHECK_FAILED, EXIT_INTERRUPTED
from emr_lineage.launch import plan as launch_plan

PYTHON = "python3.11"
# What the job imports beyond the standard library (tests/emr_lineage/cli/test_graph_emr.py checks the list).
JOB_DISTRIBUTIONS = (
    "boto3",
    "jiter",
    "jsonpointer",
    "jsonschema",
    "jsonschema-rs",
    "orjson",
    "pydantic",
    "referencing",
    "requests",
    "rfc3339-validator",
)
RESULTS_PREFIX = f"{LOGS_PREFIX}emr-lineage-graph/"
_ZIP_TIME = (1980, 1, 1, 0, 0, 0)  # every entry's time: the same package makes the same zip (staged once)


def bootstrap_script() -> str:
    """The bootstrap action: Python 3.11 and the job's dependencies, pinned to this machine's versions."""
    pins = " ".join(f"{name}=={importlib.metadata.version(name)}" for name in JOB_DISTRIBUTIONS)
    return (
        "#!/bin/bash\n# emr-lineage graph --on-emr: the graph job's Python on every node.\nset -euo pipefail\n"
        f"sudo dnf install -y -q {PYTHON} {PYTHON}-pip\nsudo {PYTHON} -m pip install --quiet {pins}\n"
    )


def package_zip(path: Path) -> Path:
    """The ``emr_lineage`` package as a zip for ``--py-files`` (sources and data, no bytecode)."""
    package = job_script().parents[1]
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as archive:
        for file in sorted(package.rglob("*")):
            if file.is_file() and "__pycache__" not in file.parts and file.suffix != ".pyc":
                info = zipfile.ZipInfo(str(file.relative_to(package.parent)), _ZIP_TIME)
                info.compress_type = zipfile.ZIP_DEFLATED
                archive.writestr(info, file.read_bytes())
    return path


def _stage(s3: Any, bucket: str, path: Path) -> str:
    digest = hashlib.sha256(path.read_bytes()).hexdigest()
    key = f"{STAGED_JOBS_PREFIX}{digest[: launch_plan.JOB_KEY_HASH_CHARS]}/{path.name}"
    return upload_once(s3, path, bucket, key, sha256=digest).uri


def plan_graph_step(
    clients: aws_clients.AwsClients, settings: Any, job: GraphJob, work: Path
) -> tuple[launch_plan.LaunchPlan, str, str]:
    """The launch plan of the job's step (package zip and bootstrap staged), the bucket and the result's key."""
    env = settings.name
    bucket = read_parameter(clients.ssm, parameters.artifacts_bucket(env), env=env, published_by="EMR stack")
    result_key = f"{RESULTS_PREFIX}{uuid.uuid4()}/graph.json"
    request = launch_plan.JobRequest(job_script(), tuple(job.arguments(f"s3://{bucket}/{result_key}")))
    plan = launch_plan.prepare_launch(
        clients, settings, [request], parent=None, launched_by="emr-lineage graph --on-emr"
    )
    (work / "emr-lineage-graph-python.sh").write_text(bootstrap_script(), encoding="utf-8")
    bootstrap = _stage(clients.s3, bucket, work / "emr-lineage-graph-python.sh")
    package = _stage(clients.s3, bucket, package_zip(work / "emr_lineage.zip"))
    args = plan.request["Steps"][0]["HadoopJarStep"]["Args"]
    at = args.index(plan.staged[0].uri)
    python = ["--conf", f"spark.pyspark.python={PYTHON}", "--conf", f"spark.pyspark.driver.python={PYTHON}"]
    args[at:at] = ["--py-files", package, *python]
    actions = plan.request.setdefault("BootstrapActions", [])
    actions.append({"Name": "emr-lineage-graph-python", "ScriptBootstrapAction": {"Path": bootstrap, "Args": []}})
    return plan, bucket, result_key


def _download(s3: Any, bucket: str, key: str) -> bytes | None:
    try:
        return s3.get_object(Bucket=bucket, Key=key)["Body"].read()
    except (BotoCoreError, ClientError) as exc:
        if isinstance(exc, ClientError) and exc.response.get("Error", {}).get("Code") in ("NoSuchKey", "404"):
            return None
        raise aws_clients.AwsError(f"cannot read s3://{bucket}/{key}: {aws_message(exc)}") from None


def graph_on_emr(env: str | None, cdk_json: Path | None, job: GraphJob, poll_interval: float) -> bytes:
    """The graph's JSON from the job run as the step of a new cluster of ``env``."""
    import tempfile

    from emr_lineage.settings.loader import load_settings

    settings = load_settings(env, cdk_json) if cdk_json is not None else load_settings(env)
    console = Console(stderr=True, highlight=False, markup=False, soft_wrap=True)
    clients = aws_clients.AwsClients.for_settings(settings)
    with tempfile.TemporaryDirectory(prefix="emr-lineage-graph-") as directory:
        plan, bucket, result_key = plan_graph_step(clients, settings, job, Path(directory))
    cluster = emr_cluster.start_cluster(clients.emr, plan.request, log_uri=plan.log_uri)
    console.print(f"cluster {cluster.cluster_id} starting ({plan.request['Name']}); the graph job is its one step")
    try:
        with Steps(f"cluster {cluster.cluster_id}", console=console) as steps:
            outcome = emr_cluster.wait_for_steps(
                clients.emr, cluster, poll_interval=poll_interval, on_poll=cluster_poll_printer(steps)
            )
    except KeyboardInterrupt:
        emr_cluster.terminate_cluster(clients.emr, cluster.cluster_id)
        fail(f"interrupted; cluster {cluster.cluster_id} terminating", EXIT_INTERRUPTED)
    report = _download(clients.s3, bucket, result_key + ".report.json")
    if report is not None:
        report_notes(json.loads(report))  # the job's refusal is the one error line (exit 2)
    if not outcome.succeeded:
        for log_uri in outcome.log_uris:
            console.print(f"logs: {log_uri}")
        fail(outcome.message, EXIT_CHECK_FAILED)
    data = _download(clients.s3, bucket, result_key)
    if data is None:
        fail(f"the step completed but wrote no graph at s3://{bucket}/{result_key}", EXIT_CHECK_FAILED)
    console.print(f"graph downloaded from s3://{bucket}/{result_key}; the cluster terminates on its own")
    return data
