"""``emr-lineage graph --spark MASTER`` (one spark-submit on local[2], the suite's only one) and
``graph --on-emr`` against moto's EMR and S3 (moto never runs the step: the stand-in for EMR writes
what the job would, and the step's real run is only on AWS)."""

from __future__ import annotations

import json
import subprocess
import sys
import zipfile
from importlib.metadata import packages_distributions, requires
from pathlib import Path

import pytest
from click.testing import CliRunner
from packaging.requirements import Requirement

from emr_lineage.aws import emr as emr_cluster
from emr_lineage.cli.app import main
from emr_lineage.cli.graph_emr import JOB_DISTRIBUTIONS, RESULTS_PREFIX, package_zip
from emr_lineage.cli.graph_job import JOB_MODULE
from tests.emr_lineage.analysis.builders import app_run, at, dataset
from tests.emr_lineage.conftest import write_jsonl
from tests.emr_lineage.launch_support import BUCKET, REGION
from tests.emr_lineage.moto_backends import DEFAULT_ACCOUNT_ID, emr_backends
from tests.helpers import one_error_line


def _run(*args: str):
    return CliRunner().invoke(main, list(args))


@pytest.fixture
def events(tmp_path: Path) -> Path:
    directory = tmp_path / "events"
    source = dataset("s3://lake/raw", {"price": "double"})
    target = dataset(
        "s3://lake/clean", {"amount": "double"}, columns={"amount": [("s3://lake/raw", "price")]}, output=True
    )
    write_jsonl(directory / "a.jsonl", app_run("clean", at(0), inputs=[source], outputs=[target]))
    write_jsonl(directory / "b.jsonl", app_run("report", at(5), inputs=[dataset("s3://lake/clean")]))
    with (directory / "b.jsonl").open("a") as handle:
        handle.write('{"eventType": "START", "eventType": "COMPLETE"}\n')
    return directory


@pytest.mark.spark
def test_graph_on_local_spark_writes_what_graph_events_writes(events: Path, tmp_path: Path) -> None:
    # --with-runs: the job's own option too (without it, tests/emr_lineage/analysis/test_spark_graph.py)
    args = ["--events", str(events), "--skip-invalid", "--with-runs"]
    on_spark = _run("graph", "--spark", "local[2]", *args, "-o", str(tmp_path / "s.json"))
    assert on_spark.exit_code == 0, on_spark.output
    local = _run("graph", *args, "-o", str(tmp_path / "l.json"))
    assert (tmp_path / "s.json").read_bytes() == (tmp_path / "l.json").read_bytes()
    assert json.loads((tmp_path / "s.json").read_bytes())["runs"]
    assert "skipped 1 invalid event(s) (first: duplicate key 'eventType'" in on_spark.stderr
    assert "8 event(s) merged in" in on_spark.stderr and local.exit_code == 0


def test_what_the_graph_on_spark_refuses(events: Path, tmp_path: Path) -> None:
    cases = {
        ("--archive", "s3://b"): "add --spark MASTER or --on-emr",
        ("--spark", "local[2]", "--on-emr", "--archive", "s3://b"): "not both",
        ("--spark", "local[2]", "--events", str(events), "--format", "dot"): "--format json",
        ("--spark", "local[2]"): "give --events PATH... or --archive",
        ("--on-emr", "--events", str(events)): "--on-emr reads the archive",
        ("--spark", "local[2]", "--events", str(events), "--since", "2026-11-23"): "they go with --archive",
        ("--spark", "local[2]", "--events", str(events), "--env", "dev"): "--env and --cdk-json name",
        ("--spark", "local[2]", "--events", "-"): "standard input (-) is not one",
        ("--spark", "local[2]", "--events", str(tmp_path / "none")): "no such file or directory",
    }
    for args, message in cases.items():
        one_error_line(_run("graph", *args), message)


def _norm(name: str) -> str:
    return name.lower().replace("_", "-")


def _with_requirements(names: set[str]) -> set[str]:
    """``names`` and what pip installs with them (their requirements, at any depth; no extras)."""
    found, todo = set(), list(names)
    while todo:
        name = _norm(todo.pop())
        if name not in found:
            found.add(name)
            todo += [Requirement(r).name for r in requires(name) or () if "extra ==" not in r]
    return found


def test_the_job_finds_its_dependencies_in_the_bootstrap_list() -> None:
    """Every module the job imports outside the standard library comes from a distribution the
    bootstrap action installs on EMR (or is emr_lineage, shipped with --py-files)."""

    def imported(module: str) -> set[str]:
        code = (
            f"import sys, {module}\n"
            "files = {n.split('.')[0] for n, m in list(sys.modules.items()) if getattr(m, '__file__', None)}\n"
            "print(' '.join(sorted(files - set(sys.stdlib_module_names))))"
        )
        done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
        return set(done.stdout.split())

    # Less what the interpreter loads before any import (Debian's python3.11 loads a sitecustomize).
    loaded = sorted(imported(JOB_MODULE) - imported("sys"))
    installed, owners = _with_requirements(set(JOB_DISTRIBUTIONS)), packages_distributions()
    missing = [
        module
        for module in loaded
        if module != "emr_lineage"
        and not module.startswith("_")
        and not {_norm(d) for d in owners.get(module, [])} & installed
    ]
    assert missing == []


def test_the_package_zip_is_the_package_without_bytecode(tmp_path: Path) -> None:
    first, second = package_zip(tmp_path / "a.zip"), package_zip(tmp_path / "b.zip")
    assert first.read_bytes() == second.read_bytes()  # staged once while the package is unchanged
    names = zipfile.ZipFile(first).namelist()
    assert "emr_lineage/analysis/spark_graph_job.py" in names and not any(".pyc" in n for n in names)


def _only_cluster():
    clusters = emr_backends[DEFAULT_ACCOUNT_ID][REGION].clusters
    assert len(clusters) == 1
    return next(iter(clusters.values()))


def _emr_runs_the_job(monkeypatch: pytest.MonkeyPatch, s3, final: str, report: dict | None, graph: bytes) -> None:
    """The stand-in for EMR: the step runs, writes what the job would beside --output, and ends ``final``."""
    states = [("RUNNING", "RUNNING"), ("RUNNING", final)]

    def pause(seconds: float) -> None:
        cluster = _only_cluster()
        cluster.state, cluster.steps[0].state = states.pop(0)
        if not states:
            output = cluster.steps[0].args[cluster.steps[0].args.index("--output") + 1]
            key = output.removeprefix(f"s3://{BUCKET}/")
            if final == "COMPLETED":
                s3.put_object(Bucket=BUCKET, Key=key, Body=graph)
            if report is not None:
                s3.put_object(Bucket=BUCKET, Key=key + ".report.json", Body=json.dumps(report).encode())

    monkeypatch.setattr(emr_cluster, "pause", pause)


def test_graph_on_emr_runs_one_step_and_downloads_the_graph(launch_aws, monkeypatch, tmp_path: Path) -> None:
    graph = b'{"columnEdges": [], "edges": [], "level": "application", "nodes": []}\n'
    report = {"events": 12, "parts": 3, "problems": 1, "details": ["k: not JSON"], "source": "archive", "error": None}
    _emr_runs_the_job(monkeypatch, launch_aws.s3, "COMPLETED", report, graph)
    out = tmp_path / "graph.json"
    args = ["--on-emr", "--archive", "s3://lineage-archive", "--since", "2026-11-23", "--env", "dev", "-o", str(out)]
    result = CliRunner().invoke(main, ["graph", *args, "--with-runs"])
    assert result.exit_code == 0, result.output
    assert out.read_bytes() == graph
    assert "skipped 1 archived body(ies) that fail the gateway's checks (first: k: not JSON)" in result.stderr
    step = _only_cluster().steps[0]
    assert step.args[:5] == ["spark-submit", "--deploy-mode", "client", "--name", "spark_graph_job"]
    at_py_files = step.args.index("--py-files")
    assert step.args[at_py_files + 1].endswith("/emr_lineage.zip") and "spark.pyspark.python=python3.11" in step.args
    script = step.args.index("--archive") - 1
    assert step.args[script].endswith("/spark_graph_job.py") and script > at_py_files
    assert step.args[script + 1 :][:4] == ["--archive", "s3://lineage-archive", "--since", "2026-11-23"]
    assert f"s3://{BUCKET}/{RESULTS_PREFIX}" in step.args[step.args.index("--output") + 1]
    assert "--with-runs" in step.args[script + 1 :]
    bootstrap = [a for a in _only_cluster().bootstrap_actions if a.name == "emr-lineage-graph-python"]
    assert bootstrap and "staged-jobs/" in bootstrap[0].script_path
    staged = launch_aws.s3.get_object(Bucket=BUCKET, Key=bootstrap[0].script_path.split(f"{BUCKET}/", 1)[1])
    assert "python3.11 -m pip install" in staged["Body"].read().decode()


def test_graph_on_emr_a_refused_input_and_a_failed_step(launch_aws, monkeypatch, tmp_path: Path) -> None:
    refused = {"events": 0, "parts": 0, "problems": 0, "details": [], "source": "archive"}
    refused["error"] = "s3://lineage-archive: no events to build a graph from"
    _emr_runs_the_job(monkeypatch, launch_aws.s3, "FAILED", refused, b"")
    args = ["graph", "--on-emr", "--archive", "s3://lineage-archive", "-o", str(tmp_path / "g.json")]
    refusal = _run(*args)  # progress lines, then the job's refusal as the one error line
    assert refusal.exit_code == 2 and refusal.stderr.splitlines()[-1] == f"error: {refused['error']}"
    assert [line for line in refusal.stderr.splitlines() if line.startswith("error:")] == [f"error: {refused['error']}"]
    emr_backends[DEFAULT_ACCOUNT_ID][REGION].clusters.clear()
    _emr_runs_the_job(monkeypatch, launch_aws.s3, "FAILED", None, b"")
    failed = _run(*args)
    assert failed.exit_code == 1 and "error: step spark_graph_job" in failed.stderr and "logs: " in failed.stderr


# What spark-submit printed for --spark nonsense://x (Spark 3.5), and a PySpark job's failure.
SPARK_REFUSES_THE_MASTER = """\
26/11/28 21:49:36 WARN Utils: Set SPARK_LOCAL_IP if you need to bind to another address
Exception in thread "main" org.apache.spark.SparkException: Master must either be yarn or start with spark, \
mesos, k8s, or local
\tat org.apache.spark.deploy.SparkSubmit.error(SparkSubmit.scala:1052)
\tat org.apache.spark.deploy.SparkSubmit.prepareSubmitEnvironment(SparkSubmit.scala:261)
\tat org.apache.spark.deploy.SparkSubmit.main(SparkSubmit.scala)
"""
PYSPARK_FAILS = """\
Traceback (most recent call last):
  File "/x/spark_graph_job.py", line 10, in <module>
    main()
py4j.protocol.Py4JJavaError: An error occurred while calling o31.load.
: org.apache.spark.SparkException: Job aborted.
\tat org.apache.spark.sql.Dataset.load(Dataset.scala:1)
Caused by: java.io.FileNotFoundException: File file:/lake/x does not exist
\tat org.apache.hadoop.fs.RawLocalFileSystem.getFileStatus(RawLocalFileSystem.java:1)

26/11/28 21:49:40 INFO ShutdownHookManager: Shutdown hook called
"""


@pytest.mark.parametrize(
    "log, reason",
    [
        (SPARK_REFUSES_THE_MASTER, "Master must either be yarn or start with spark, mesos, k8s, or local"),
        (PYSPARK_FAILS, "File file:/lake/x does not exist"),
    ],
)
def test_a_spark_job_that_fails_is_one_line_with_sparks_reason(
    log: str, reason: str, events: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    def spark_submit(script, args, properties, *, stdout, stderr, **kwargs) -> int:
        stderr.write(log.encode())
        return 1

    monkeypatch.setattr("emr_lineage.spark.local.run_script", spark_submit)
    line = one_error_line(_run("graph", "--spark", "nonsense://x", "--events", str(events)), "nonsense://x")
    assert line.endswith(f"failed (exit 1): {reason}"), line
