"""The schema history of a dataset: per run, in event-time order, the fields added, removed and
retyped, and for each change what it reaches downstream (:mod:`emr_lineage.analysis.impact`).

The schema of a run is the last ``schema`` facet (by event time) the run reported for the dataset
as an output; a dataset no run writes in these events (a source) is followed through its schema as
an input instead. Actions fold into their application's run, as ``runs`` shows them, so a job
that writes a table in two actions gives one version. Nested fields are named ``parent.child``.
"""

from __future__ import annotations

import datetime as dt
import functools
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from emr_lineage.analysis.impact import Affected, Lineage, column_reach, dataset_reach, find_datasets
from emr_lineage.analysis.runs import RunRecord, collect_runs
from emr_lineage.lineage.graph.facets import later
from emr_lineage.lineage.graph.history import INPUT, OUTPUT, RunHistory
from emr_lineage.lineage.naming import dataset_uri


@dataclass
class SchemaVersion:
    """The schema one run reported: field name -> type."""

    run_id: str
    job: str
    time: dt.datetime | None
    role: str  # "output" | "input"
    fields: dict[str, str]

    def as_dict(self) -> dict[str, Any]:
        return {
            "runId": self.run_id,
            "job": self.job,
            "time": self.time.isoformat() if self.time else None,
            "role": self.role,
            "fields": [{"name": n, "type": t} for n, t in self.fields.items()],
        }


@dataclass
class FieldReach:
    """What a removed or retyped field reaches through column lineage."""

    field: str
    jobs: list[Affected]
    columns: list[Affected]

    def as_dict(self) -> dict[str, Any]:
        return {
            "field": self.field,
            "jobs": [a.as_dict() for a in self.jobs],
            "columns": [a.as_dict() for a in self.columns],
        }


@dataclass
class SchemaChange:
    """The difference between a version and the one before it."""

    version: SchemaVersion
    added: dict[str, str] = field(default_factory=dict)
    removed: dict[str, str] = field(default_factory=dict)
    retyped: dict[str, tuple[str, str]] = field(default_factory=dict)
    readers: list[Affected] = field(default_factory=list)  # jobs that read the dataset
    reaches: list[FieldReach] = field(default_factory=list)

    @property
    def summary(self) -> str:
        parts = [f"+{n} {t}" for n, t in self.added.items()]
        parts += [f"-{n} {t}" for n, t in self.removed.items()]
        parts += [f"~{n} {old}->{new}" for n, (old, new) in self.retyped.items()]
        return ", ".join(parts)

    def as_dict(self) -> dict[str, Any]:
        return {
            "runId": self.version.run_id,
            "job": self.version.job,
            "time": self.version.time.isoformat() if self.version.time else None,
            "added": [{"name": n, "type": t} for n, t in self.added.items()],
            "removed": [{"name": n, "type": t} for n, t in self.removed.items()],
            "retyped": [{"name": n, "from": old, "to": new} for n, (old, new) in self.retyped.items()],
            "readers": [a.as_dict() for a in self.readers],
            "reaches": [r.as_dict() for r in self.reaches],
        }


@dataclass
class Drift:
    dataset: str
    matched: list[str]
    versions: list[SchemaVersion] = field(default_factory=list)
    changes: list[SchemaChange] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)

    def as_dict(self) -> dict[str, Any]:
        return {
            "dataset": self.dataset,
            "matched": self.matched,
            "versions": [v.as_dict() for v in self.versions],
            "changes": [c.as_dict() for c in self.changes],
            "notes": list(self.notes),
        }


def schema_history(runs: Iterable[RunRecord], keys: set[tuple[str, str]], role: str) -> list[SchemaVersion]:
    """The schema versions of the datasets ``keys`` as ``role`` (``output``/``input``), one per run:
    the schema the run reported last (:func:`~emr_lineage.lineage.graph.history.later`), by time."""
    versions = []
    for run in runs:
        reported = [run.schemas[(role, key)] for key in keys if (role, key) in run.schemas]
        if reported:
            time, fields = functools.reduce(later, reported)
            versions.append(SchemaVersion(run.run_id, run.job, time, role, dict(fields)))
    far = dt.datetime.max.replace(tzinfo=dt.UTC)
    return sorted(versions, key=lambda v: (v.time or far, v.run_id))


def field_changes(
    before: Mapping[str, str], after: Mapping[str, str]
) -> tuple[dict[str, str], dict[str, str], dict[str, tuple[str, str]]]:
    """The fields (name -> type) ``after`` added, removed and retyped (name -> (old, new)) against ``before``."""
    added = {n: t for n, t in after.items() if n not in before}
    removed = {n: t for n, t in before.items() if n not in after}
    retyped = {n: (before[n], t) for n, t in after.items() if n in before and before[n] != t}
    return added, removed, retyped


def _diff(before: SchemaVersion, after: SchemaVersion) -> SchemaChange:
    change = SchemaChange(after)
    change.added, change.removed, change.retyped = field_changes(before.fields, after.fields)
    return change


def drift(runs: Sequence[RunRecord], lineage: Lineage, dataset: str) -> Drift:
    """The schema history of ``dataset`` and what each change reaches downstream (``runs``: at the
    application level, :func:`~emr_lineage.analysis.runs.collect_runs`)."""
    matched = find_datasets(lineage.graph, dataset)
    nodes = [lineage.graph.nodes[n] for n in matched]
    keys = {(n["namespace"], n["name"]) for n in nodes}
    report = Drift(dataset, sorted(dataset_uri(n["namespace"], n["name"]) for n in nodes))
    report.versions = schema_history(runs, keys, OUTPUT)
    if not report.versions:
        report.versions = schema_history(runs, keys, INPUT)
        if report.versions:
            report.notes.append("no run writes this dataset here: its history is the schema its readers saw")
    if not report.versions:
        report.notes.append("no schema facet reports this dataset")
        return report
    readers, _ = dataset_reach(lineage, matched, "downstream", 1)
    for before, after in zip(report.versions, report.versions[1:], strict=False):
        change = _diff(before, after)
        if not (change.added or change.removed or change.retyped):
            continue
        change.readers = readers
        for name in [*change.removed, *change.retyped]:
            jobs, _, columns = column_reach(lineage, [(*key, name) for key in keys], "downstream", None)
            change.reaches.append(FieldReach(name, jobs, columns))
        report.changes.append(change)
    return report


def schema_changes(events: Iterable[Mapping[str, Any]]) -> dict[str, list[dict[str, Any]]]:
    """The schema changes of every dataset of the events that has any, by dataset node id (what
    the HTML report shows for a selected dataset); one graph and one history for all of them."""
    events = list(events)
    lineage = Lineage.of(events)
    runs = collect_runs(RunHistory.of(events))
    changes: dict[str, list[dict[str, Any]]] = {}
    for node_id, node in lineage.graph.nodes.items():
        if node.get("type") != "DATASET":
            continue
        report = drift(runs, lineage, dataset_uri(node["namespace"], node["name"]))
        if report.changes:
            changes[node_id] = [change.as_dict() for change in report.changes]
    return changes
