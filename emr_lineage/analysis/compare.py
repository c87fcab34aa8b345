"""What differs between two runs of one job: the version of each input it read (and what changed in the
table between them), the versions of its outputs, its input and output schemas, and the properties its
application reported (Spark's and the listener's versions, captured Spark properties, application details).

An input whose versions differ is "read different data": ``runs compare --fail-on-change`` gates on it. What
changed in the table between the two versions comes from the events (the runs of these events that wrote
it in between, with the rows they reported) and, for a table on the local file system or on S3, from the
table's own Iceberg metadata (:mod:`emr_lineage.analysis.table_history`).
"""

from __future__ import annotations

import difflib
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from emr_lineage.analysis.drift import field_changes
from emr_lineage.analysis.runs import RunRecord, collect_runs
from emr_lineage.analysis.sources import AnalysisError
from emr_lineage.analysis.table_history import Snapshot, TableSnapshots, snapshots_between
from emr_lineage.lineage.graph.history import INPUT, OUTPUT, Dataset, RunHistory
from emr_lineage.lineage.naming import dataset_uri
from emr_lineage.lineage.times import placed

# Properties every run has its own value of: never a difference worth printing.
PER_RUN_PROPERTIES = ("spark_applicationDetails.applicationId",)
PER_RUN_SUFFIXES = ("Url",)  # the application's web UI, proxy and history server addresses


@dataclass
class DatasetDiff:
    """One dataset as each run read (inputs) or wrote (outputs) it."""

    role: str
    dataset: Dataset
    versions: tuple[tuple[str, ...], tuple[str, ...]]
    counts: tuple[dict[str, int | None] | None, dict[str, int | None] | None]
    present: tuple[bool, bool]
    writes: list[dict[str, Any]] = field(default_factory=list)  # runs of the events that wrote it in between
    snapshots: list[Snapshot] | None = None  # the table's own snapshots in between, when it could be read

    @property
    def uri(self) -> str:
        return dataset_uri(*self.dataset)

    @property
    def changed(self) -> bool | None:
        """True: read by one run only, or other versions; False: the same versions; None: no version to tell by."""
        if self.present != (True, True):
            return True
        if not self.versions[0] or not self.versions[1]:
            return None
        return self.versions[0] != self.versions[1]

    def as_dict(self) -> dict[str, Any]:
        sides = zip(self.versions, self.counts, strict=True)
        first, second = ({"versions": list(versions), "statistics": counts} for versions, counts in sides)
        return {
            "dataset": self.uri,
            "namespace": self.dataset[0],
            "name": self.dataset[1],
            "runA": first if self.present[0] else None,
            "runB": second if self.present[1] else None,
            "changed": self.changed,
            "writesBetween": self.writes,
            "snapshotsBetween": None if self.snapshots is None else [s.as_dict() for s in self.snapshots],
        }


@dataclass
class Comparison:
    runs: tuple[RunRecord, RunRecord]
    source: str
    inputs: list[DatasetDiff]
    outputs: list[DatasetDiff]
    schemas: list[dict[str, Any]]
    properties: list[dict[str, Any]]

    @property
    def inputs_changed(self) -> list[DatasetDiff]:
        return [d for d in self.inputs if d.changed]

    def as_dict(self) -> dict[str, Any]:
        first, second = (
            {key: whole[key] for key in ("runId", "namespace", "job", "state", "start", "end")}
            for whole in (run.as_dict() for run in self.runs)
        )
        return {
            "source": self.source,
            "runA": first,
            "runB": second,
            "inputsChanged": bool(self.inputs_changed),
            "inputs": [d.as_dict() for d in self.inputs],
            "outputs": [d.as_dict() for d in self.outputs],
            "schemas": self.schemas,
            "properties": self.properties,
        }


def find_run(runs: list[RunRecord], history: RunHistory, run_id: str, where: str) -> RunRecord:
    """The run ``run_id`` of ``runs``; an :class:`AnalysisError` naming the closest ids, or the application
    run a Spark action's run folds into, when it is not one of them."""
    for run in runs:
        if run.run_id == run_id:
            return run
    folded = history.runs.get(run_id)
    if folded is not None and folded.parents:
        parent = max(folded.parents)[0]
        raise AnalysisError(
            f"run {run_id}: a Spark action's run, folded into its application's run {parent}; give the "
            "application's run id (or --level action to compare actions)"
        )
    close = difflib.get_close_matches(run_id.strip(), [r.run_id for r in runs], n=2, cutoff=0.6)
    hint = f"did you mean {' or '.join(close)}?" if close else "list them with: emr-lineage runs"
    raise AnalysisError(f"run {run_id}: no run with this id in {where} ({hint})")


Snapshots = Callable[[str, str], dict[str, Snapshot] | None]  # (namespace, name) -> the table's snapshots by id


def compare(
    history: RunHistory,
    first_id: str,
    second_id: str,
    *,
    where: str,
    source: str,
    level: str = "application",
    table_snapshots: Snapshots | None = None,
) -> Comparison:
    """Compare run ``first_id`` (A) with ``second_id`` (B) of ``history``; two runs of different jobs, or a
    run not there, is an :class:`AnalysisError`."""
    runs = collect_runs(history, level)
    first, second = (find_run(runs, history, run_id, where) for run_id in (first_id, second_id))
    if (first.namespace, first.job) != (second.namespace, second.job):
        raise AnalysisError(
            f"run {first.run_id} is of job {first.job}, run {second.run_id} of job {second.job}: compare two runs "
            "of one job (list a job's runs with: emr-lineage runs --job NAME)"
        )
    pair = (first, second)
    inputs = [_dataset_diff(pair, INPUT, key) for key in sorted(first.inputs.keys() | second.inputs.keys())]
    read = table_snapshots or TableSnapshots()
    for diff in inputs:
        if diff.changed:
            diff.writes = _writes_between(runs, pair, diff.dataset)
            diff.snapshots = _table_snapshots(diff, read)
    outputs = [_dataset_diff(pair, OUTPUT, key) for key in sorted(first.outputs.keys() | second.outputs.keys())]
    return Comparison(pair, source, inputs, outputs, _schema_diffs(pair), _property_diffs(pair))


def _dataset_diff(pair: tuple[RunRecord, RunRecord], role: str, key: Dataset) -> DatasetDiff:
    sides = [run.inputs if role == INPUT else run.outputs for run in pair]
    return DatasetDiff(
        role,
        key,
        versions=tuple(tuple(sorted(side.get(key, ()))) for side in sides),  # type: ignore[arg-type]
        counts=tuple(run.counts(role, key) for run in pair),  # type: ignore[arg-type]
        present=tuple(key in side for side in sides),  # type: ignore[arg-type]
    )


def _writes_between(runs: list[RunRecord], pair: tuple[RunRecord, RunRecord], key: Dataset) -> list[dict[str, Any]]:
    """The runs (not A or B) that wrote ``key`` after the earlier of the two started and before the later did."""
    earlier, later_run = sorted(pair, key=lambda r: placed(r.start))
    low, high = placed(earlier.start), placed(later_run.start)
    return [
        {
            "runId": run.run_id,
            "job": run.job,
            "start": run.start.isoformat() if run.start else None,
            "versions": sorted(run.outputs[key]),
            "statistics": run.counts(OUTPUT, key),
        }
        for run in runs
        if key in run.outputs and run not in pair and low <= placed(run.start) <= high
    ]


def _table_snapshots(diff: DatasetDiff, read: Snapshots) -> list[Snapshot] | None:
    if not all(len(v) == 1 for v in diff.versions):
        return None
    snapshots = read(*diff.dataset)
    if not snapshots:
        return None
    (first,), (second,) = diff.versions
    between = snapshots_between(snapshots, first, second)
    return between if between is not None else snapshots_between(snapshots, second, first)


def _schema_diffs(pair: tuple[RunRecord, RunRecord]) -> list[dict[str, Any]]:
    diffs = []
    for role, key in sorted(pair[0].schemas.keys() | pair[1].schemas.keys()):
        fields = [dict(run.schemas[(role, key)][1]) if (role, key) in run.schemas else None for run in pair]
        if fields[0] is None or fields[1] is None or fields[0] == fields[1]:
            continue  # reported by one run only: the dataset lists say so
        added, removed, retyped = field_changes(fields[0], fields[1])
        diffs.append(
            {
                "role": role,
                "dataset": dataset_uri(*key),
                "added": [{"name": n, "type": t} for n, t in added.items()],
                "removed": [{"name": n, "type": t} for n, t in removed.items()],
                "retyped": [{"name": n, "from": old, "to": new} for n, (old, new) in retyped.items()],
            }
        )
    return diffs


def _property_diffs(pair: tuple[RunRecord, RunRecord]) -> list[dict[str, Any]]:
    diffs = []
    for name in sorted(pair[0].properties.keys() | pair[1].properties.keys()):
        if name in PER_RUN_PROPERTIES or name.endswith(PER_RUN_SUFFIXES):
            continue
        values = [run.properties[name][1] if name in run.properties else None for run in pair]
        if values[0] != values[1]:
            diffs.append({"name": name, "runA": values[0], "runB": values[1]})
    return diffs
