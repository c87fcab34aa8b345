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
from pathlib import Path

from emr_lineage.cli.graph_job import GraphJob, job_script, report_notes
from emr_lineage.cli.output import fail


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


def check_request(master: str | None, on_emr: bool, job: GraphJob, fmt: str, marquez_url: str | None) -> None:
    """The option mixes the graph on Spark refuses (each a usage error, exit 2)."""
    if (job.since or job.until) and not job.archive and not master and not on_emr:
        fail("--since/--until select events by time from --marquez or --archive: event files are read whole")
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


def spark_graph(master: str | None, on_emr: bool, job: GraphJob, env: str | None, cdk_json: Path | None) -> bytes:
    """The graph's JSON, built on ``master`` or on a new EMR cluster of ``env``."""
    if master:
        if job.events:
            from emr_lineage.lineage.events.sources import event_sources

            event_sources(job.events)  # a path that cannot be read fails here, as graph --events says it
            job = dataclasses.replace(job, events=tuple(str(Path(p).resolve()) for p in job.events))
        return graph_on_spark(master, job)
    # Here: boto3 and launch's machinery load for --on-emr only, not with every `graph`.
    from emr_lineage.aws.emr import DEFAULT_POLL_SECONDS
    from emr_lineage.cli.graph_emr import graph_on_emr

    return graph_on_emr(env, cdk_json, job, DEFAULT_POLL_SECONDS)
