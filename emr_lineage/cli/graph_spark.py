"""``emr-lineage graph --spark MASTER`` and ``graph --on-emr``: the graph built by the Spark job
:mod:`emr_lineage.analysis.spark_graph_job` (the partitions merge as the local loader's worker does;
docs/graph.md, "The graph on Spark"), written as ``graph --format json`` writes it.

* ``--spark MASTER``: ``spark-submit`` of the job to that master (:func:`emr_lineage.spark.local.run_script`,
  this Python on the driver and the executors: the master's workers must reach the event paths);
* ``--on-emr``: the job as the one step of an ephemeral cluster (``launch``'s machinery): the package goes
  as a zip (``--py-files``), a bootstrap action installs Python 3.11 and the job's dependencies on every
  node, the graph is written under the artifacts bucket's logs prefix and downloaded.

Exit status: 0 the graph is written; 1 the cluster's step failed (or the cluster ended first);
2 bad input (the job's one ``error:`` line), a local Spark that cannot run, AWS errors; 130 interrupted
(the cluster is terminated).
"""

from __future__ import annotations

import dataclasses
import json
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import click

from emr_lineage.cli.output import fail

JOB_MODULE = "emr_lineage.analysis.spark_graph_job"


@dataclass(frozen=True)
class GraphJob:
    """What the Spark job is asked: its source, window and the graph's options."""

    events: tuple[str, ...] = ()
    archive: str | None = None
    since: str | None = None
    until: str | None = None
    level: str = "application"
    strict: bool = False
    skip_invalid: bool = False
    schema_dir: str | None = None
    with_runs: bool = False

    def arguments(self, output: str, report: str | None = None) -> list[str]:
        args = ["--events", *self.events] if self.events else ["--archive", self.archive or ""]
        for name, value in (("--since", self.since), ("--until", self.until), ("--schema-dir", self.schema_dir)):
            if value:
                args += [name, value]
        args += ["--level", self.level, "--output", output]
        args += ["--strict"] if self.strict else []
        args += ["--skip-invalid"] if self.skip_invalid else []
        args += ["--with-runs"] if self.with_runs else []
        return args + (["--report", report] if report else [])


def job_script() -> Path:
    """The job's file (run by path by ``spark-submit``)."""
    from importlib.util import find_spec

    spec = find_spec(JOB_MODULE)
    assert spec is not None and spec.origin is not None
    return Path(spec.origin)


def report_notes(report: dict[str, Any]) -> None:
    """The job's skipped events or archived bodies, on stderr as ``graph --events`` words them; its
    refusal as the command's one ``error:`` line (exit 2)."""
    if report.get("error"):
        fail(report["error"])
    if report.get("problems"):
        first = f" (first: {report['details'][0]})" if report.get("details") else ""
        what = (
            "archived body(ies) that fail the gateway's checks"
            if report.get("source") == "archive"
            else "invalid event(s)"
        )
        click.echo(f"skipped {report['problems']} {what}{first}", err=True)
    click.echo(f"{report['events']} event(s) merged in {report['parts']} Spark partition(s)", err=True)


def graph_on_spark(master: str, job: GraphJob) -> bytes:
    """The graph's JSON from the job run by ``spark-submit`` on ``master``."""
    from emr_lineage.spark.local import failure_reason, run_script

    with tempfile.TemporaryDirectory(prefix="emr-lineage-graph-") as directory:
        work = Path(directory)
        output, report, log = work / "graph.json", work / "report.json", work / "spark.log"
        properties = {"spark.master": master, "spark.app.name": "emr_lineage_graph"}
        with log.open("wb") as handle:
            status = run_script(
                job_script(), job.arguments(str(output), str(report)), properties, stdout=handle, stderr=handle
            )
        if not report.is_file():
            fail(f"the Spark job on {master} failed (exit {status}): {failure_reason(log.read_text(errors='replace'))}")
        report_notes(json.loads(report.read_text(encoding="utf-8")))
        return output.read_bytes()


def check_request(
    master: str | None, on_emr: bool, job: GraphJob, fmt: str, marquez_url: str | None, settings_given: bool
) -> None:
    """The option mixes the graph on Spark refuses (each a usage error, exit 2)."""
    if not master and not on_emr:
        fail(
            "--archive builds the graph on Spark: add --spark MASTER or --on-emr "
            "(--since and --until go with --archive or --marquez)"
        )
    if master and on_emr:
        fail("give --spark MASTER or --on-emr, not both")
    if marquez_url:
        fail("--marquez is read here; the graph on Spark reads --events or --archive")
    if fmt != "json":
        fail("the graph on Spark is written in its JSON form: --format json (render it with impact --graph or graph)")
    if bool(job.events) == bool(job.archive):
        fail("give --events PATH... or --archive s3://bucket[/prefix]" + (" (--on-emr: --archive)" if on_emr else ""))
    if "-" in job.events:
        fail("the graph on Spark reads files: standard input (-) is not one")
    if on_emr and job.events:
        fail("--on-emr reads the archive: give --archive s3://bucket[/prefix] (event files: --spark MASTER)")
    if (job.since or job.until) and not job.archive:
        fail("--since/--until select archived events by their time: they go with --archive")
    if settings_given and not on_emr:
        fail("--env and --cdk-json name the environment of --on-emr")


def spark_graph(master: str | None, on_emr: bool, job: GraphJob, env: str | None, cdk_json: Path | None) -> bytes:
    """The graph's JSON, built on ``master`` or on a new EMR cluster of ``env``."""
    if master:
        if job.events:
            from emr_lineage.lineage.events.sources import event_sources

            event_sources(job.events)  # a path that cannot be read fails here, as graph --events says it
            job = dataclasses.replace(job, events=tuple(str(Path(p).resolve()) for p in job.events))
        return graph_on_spark(master, job)
    from emr_lineage.aws.emr import DEFAULT_POLL_SECONDS
    from emr_lineage.cli.graph_emr import graph_on_emr

    return graph_on_emr(env, cdk_json, job, DEFAULT_POLL_SECONDS)
