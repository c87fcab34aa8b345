"""Runs as the events tell them: job, state, start and end, inputs and outputs, and the dataset
versions each run read or wrote (the ``version`` dataset facet, ``facets.version.datasetVersion``,
which the Spark listener sends for Iceberg and Delta tables).

At the application level (the default, as ``graph``'s) the runs of Spark actions fold into their
application's run: a run whose ``parent`` facet names a run of these events, or a job whose name
starts with ``<parent job>.`` (Spark names actions ``<app>.<action>``). An application's own
parent (an orchestrator) is not a fold target. The state is the ``eventType`` of the run's latest
event (its own events first: a folded action's state is not its application's); the end is the
time of that event when the state is final.
"""

from __future__ import annotations

import datetime as dt
import difflib
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from emr_lineage.analysis.sources import AnalysisError
from emr_lineage.lineage.graph.assembly import STATE_RANK, pick_job
from emr_lineage.lineage.graph.facets import COUNTS, Property
from emr_lineage.lineage.graph.history import (
    INPUT,
    OUTPUT,
    Dataset,
    RunHistory,
    Schema,
    Statistics,
    merge_datasets,
    moment_order,
)
from emr_lineage.lineage.graph.model import LEVELS, check_level
from emr_lineage.lineage.naming import UNKNOWN_NAMESPACE, UNNAMED_JOB, dataset_uri
from emr_lineage.lineage.times import placed

FINAL_STATES = frozenset({"COMPLETE", "FAIL", "ABORT"})
_NO_JOB = (UNKNOWN_NAMESPACE, UNNAMED_JOB)


@dataclass
class RunRecord:
    """One run (an application's run with its actions folded in, at the application level)."""

    run_id: str
    namespace: str
    job: str
    parent_run: str | None = None
    parent_job: str | None = None
    is_application: bool = False
    # (time, eventType) of the run's own events and of the runs folded into it
    own_events: list[tuple[dt.datetime | None, str]] = field(default_factory=list)
    folded_events: list[tuple[dt.datetime | None, str]] = field(default_factory=list)
    actions: set[str] = field(default_factory=set)  # job names of the folded action runs
    inputs: dict[Dataset, set[str]] = field(default_factory=dict)  # dataset -> versions read
    outputs: dict[Dataset, set[str]] = field(default_factory=dict)  # dataset -> versions written
    # (role, dataset) -> the schema reported last (its event's time, its fields): the run's and its actions'
    schemas: dict[tuple[str, Dataset], Schema] = field(default_factory=dict)
    # (role, dataset) -> the statistics reported last; property name -> the value reported last
    statistics: dict[tuple[str, Dataset], Statistics] = field(default_factory=dict)
    properties: dict[str, Property] = field(default_factory=dict)
    tables: dict[Dataset, str] = field(default_factory=dict)  # dataset -> its catalog table name
    scans: dict[Dataset, set[float]] = field(default_factory=dict)  # input -> the Iceberg snapshots scanned

    @property
    def _latest(self) -> tuple[dt.datetime | None, str] | None:
        events = self.own_events or self.folded_events
        if not events:
            return None
        return max(events, key=lambda e: (placed(e[0]), STATE_RANK.get(e[1], 0), e[1]))

    @property
    def state(self) -> str:
        latest = self._latest
        return latest[1] if latest else "UNKNOWN"

    @property
    def start(self) -> dt.datetime | None:
        times = [t for t, _ in self.own_events + self.folded_events if t]
        return min(times) if times else None

    @property
    def end(self) -> dt.datetime | None:
        latest = self._latest
        return latest[0] if latest and latest[1] in FINAL_STATES else None

    @property
    def duration(self) -> dt.timedelta | None:
        return self.end - self.start if self.end and self.start else None

    def counts(self, role: str, dataset: Dataset) -> dict[str, int | None] | None:
        """The statistics reported last for ``dataset`` in ``role`` (rowCount, size, fileCount), None without any."""
        reported = self.statistics.get((role, dataset))
        return dict(zip(COUNTS, reported[1], strict=True)) if reported else None

    def as_dict(self) -> dict[str, Any]:
        def datasets(role: str, side: dict[Dataset, set[str]]) -> list[dict[str, Any]]:
            return [
                {
                    "dataset": dataset_uri(ns, name),
                    "namespace": ns,
                    "name": name,
                    "versions": sorted(versions),
                    "table": self.tables.get((ns, name)),
                    "statistics": self.counts(role, (ns, name)),
                }
                for (ns, name), versions in sorted(side.items())
            ]

        return {
            "runId": self.run_id,
            "namespace": self.namespace,
            "job": self.job,
            "parentRunId": self.parent_run,
            "parentJob": self.parent_job,
            "state": self.state,
            "start": self.start.isoformat() if self.start else None,
            "end": self.end.isoformat() if self.end else None,
            "durationSeconds": self.duration.total_seconds() if self.duration else None,
            "actions": sorted(self.actions),
            "inputs": datasets(INPUT, self.inputs),
            "outputs": datasets(OUTPUT, self.outputs),
            "properties": {name: value for name, (_, value) in sorted(self.properties.items())},
        }


def _records(history: RunHistory) -> dict[str, RunRecord]:
    """One record per run of the history (a copy: folding changes the records, never the history)."""
    runs: dict[str, RunRecord] = {}
    for run_id, run in history.runs.items():
        # The most specific job name: early events may carry a generic one.
        namespace, name = pick_job(run.jobs) if run.jobs else _NO_JOB  # the graph's choice
        parent_run, parent_job = max(run.parents, default=(None, None))
        runs[run_id] = RunRecord(
            run_id,
            namespace,
            name,
            parent_run=parent_run,
            parent_job=parent_job or None,
            is_application=run.application,
            own_events=sorted(run.moments, key=moment_order),
            inputs={dataset: set(versions) for dataset, versions in run.inputs.items()},
            outputs={dataset: set(versions) for dataset, versions in run.outputs.items()},
            schemas=dict(run.schemas),
            statistics=dict(run.statistics),
            properties=dict(run.properties),
            tables=dict(run.tables),
            scans={dataset: set(scanned) for dataset, scanned in run.scans.items()},
        )
    return runs


def _folds_into(record: RunRecord, runs: Mapping[str, RunRecord]) -> bool:
    if record.is_application or not record.parent_run or record.parent_run == record.run_id:
        return False
    parent_known = record.parent_run in runs
    return parent_known or bool(record.parent_job and record.job.startswith(record.parent_job + "."))


def _as_double(version: str) -> float | None:
    try:
        return float(version)
    except ValueError:
        return None


def read_versions(record: RunRecord, known: Mapping[Dataset, set[str]]) -> None:
    """Each Iceberg input's versions are the snapshots its scans read, not the ``version`` facet: the listener's
    facet names the table's current snapshot even when the job read an older one (time travel, ``snapshot-id``).
    A scan's id arrives as a double; it is the version (of this run, else of any run of these events: the
    writer's) whose double it is, and unknown when none or several are."""
    for dataset, scanned in record.scans.items():
        resolved: set[str] = set()
        for snapshot in scanned:
            for candidates in (record.inputs.get(dataset, set()), known.get(dataset, set())):
                matches = {v for v in candidates if _as_double(v) == snapshot}
                if matches:
                    break
            if len(matches) == 1:
                resolved |= matches
        record.inputs[dataset] = resolved


def collect_runs(history: RunHistory, level: str = "application") -> list[RunRecord]:
    """The runs of ``history`` at ``level`` (``application`` or ``action``), by start time then id."""
    check_level(level)
    runs = _records(history)
    known: dict[Dataset, set[str]] = {}
    for record in runs.values():
        for side in (record.inputs, record.outputs):
            for dataset, versions in side.items():
                known.setdefault(dataset, set()).update(versions)
    if level == LEVELS[0]:
        for record in [r for r in runs.values() if _folds_into(r, runs)]:
            parent = runs.get(record.parent_run or "")
            if parent is None:
                namespace = record.namespace
                parent = runs[record.parent_run or ""] = RunRecord(
                    record.parent_run or "", namespace, record.parent_job or UNNAMED_JOB
                )
            parent.folded_events.extend(record.own_events + record.folded_events)
            parent.actions.add(record.job)
            merge_datasets(parent, record)
            del runs[record.run_id]
    for record in runs.values():
        read_versions(record, known)
    far = dt.datetime.max.replace(tzinfo=dt.UTC)
    return sorted(runs.values(), key=lambda r: (r.start or far, r.run_id))


def select_runs(runs: Iterable[RunRecord], job: str | None = None, where: str = "the events") -> list[RunRecord]:
    """The runs of job ``job``: its name, or the application of its actions (``<app>.<action>``);
    a job no run has is an :class:`AnalysisError` (as an unknown dataset is) with the closest known names."""
    runs = list(runs)
    if job is None:
        return runs
    selected = [r for r in runs if r.job == job or r.parent_job == job or job in r.actions]
    if selected:
        return selected
    known = sorted({name for r in runs for name in (r.job, r.parent_job, *r.actions) if name})
    close = difflib.get_close_matches(job.strip(), known, n=3, cutoff=0.5)
    hint = f"did you mean {' or '.join(repr(c) for c in close)}?" if close else f"{len(known)} job name(s) known"
    raise AnalysisError(f"--job {job!r}: no run of this job in {where} ({hint})")


def dataset_lines(run: RunRecord, role: str) -> list[str]:
    """One line per dataset the run read (``role`` input) or wrote (output): ``<uri>@<version>`` (versions joined
    by commas; the URI alone without one), then the rows (else bytes) reported: ``s3://b/t@82 (97 rows)``."""
    side = run.inputs if role == INPUT else run.outputs
    lines = []
    for ns, name in sorted(side):
        versions = ",".join(sorted(side[(ns, name)]))
        line = dataset_uri(ns, name) + (f"@{versions}" if versions else "")
        lines.append(line + counts_suffix(run.counts(role, (ns, name))))
    return lines


def counts_suffix(counts: dict[str, int | None] | None) -> str:
    """`` (97 rows)`` of reported statistics, else `` (5,016 bytes)``, else nothing."""
    counts = counts or {}
    if counts.get("rowCount") is not None:
        return f" ({counts['rowCount']:,} rows)"
    if counts.get("size") is not None:
        return f" ({counts['size']:,} bytes)"
    return ""


def format_time(moment: dt.datetime | None) -> str:
    """A run's start or end as the tables show it (ISO 8601 to the second), empty when unknown."""
    return moment.isoformat(timespec="seconds") if moment else ""


def format_duration(duration: dt.timedelta | None) -> str:
    if duration is None:
        return ""
    seconds = duration.total_seconds()
    return f"{seconds:.1f}s" if seconds < 120 else f"{int(seconds // 60)}m{int(seconds % 60):02d}s"
