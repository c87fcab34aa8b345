"""The graph's Spark job as ``graph --spark`` and ``graph --on-emr`` both run it
(:mod:`emr_lineage.cli.graph_spark`, :mod:`emr_lineage.cli.graph_emr`): what it is asked, its script,
and its report told on stderr.
"""

from __future__ import annotations

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
