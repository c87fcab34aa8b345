"""Who read or wrote a dataset, when, and which versions of their inputs they read.

A run is in the window when one of its events is (the source keeps only those events). The
versions are the ``version`` dataset facet of the events (``inputs[].facets.version.datasetVersion``,
sent by the Spark listener on START events for Iceberg and Delta tables). Marquez's own model
drops input version facets (Marquez issue #2733): event files and the gateway's archive are the
record of what was read; Marquez's raw events say it only while Marquez keeps them.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from emr_lineage.analysis.impact import Lineage, find_datasets
from emr_lineage.analysis.runs import RunRecord
from emr_lineage.lineage.naming import dataset_uri

MARQUEZ_VERSIONS_NOTE = (
    "Marquez's model ignores input version facets (Marquez issue #2733); these versions come from the raw events "
    "Marquez returns (GET /api/v1/events/lineage) and last only as long as Marquez keeps them: event files and the "
    "gateway archive (--events, --archive) are the record of which versions were read"
)


@dataclass(frozen=True)
class Access:
    """One run that read and/or wrote the audited dataset."""

    run: RunRecord
    read: bool
    wrote: bool
    versions_read: tuple[str, ...]  # of the audited dataset
    versions_written: tuple[str, ...]

    @property
    def access(self) -> str:
        return "+".join(kind for kind, done in (("read", self.read), ("write", self.wrote)) if done)

    def as_dict(self) -> dict[str, Any]:
        return {
            **self.run.as_dict(),
            "access": self.access,
            "versionsRead": list(self.versions_read),
            "versionsWritten": list(self.versions_written),
        }


@dataclass
class Audit:
    dataset: str
    matched: list[str]
    source: str
    since: str | None
    until: str | None
    accesses: list[Access] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)

    def as_dict(self) -> dict[str, Any]:
        return {
            "dataset": self.dataset,
            "matched": self.matched,
            "source": self.source,
            "since": self.since,
            "until": self.until,
            "runs": [a.as_dict() for a in self.accesses],
            "notes": list(self.notes),
        }


def _versions(side: Mapping[tuple[str, str], set[str]], keys: set[tuple[str, str]]) -> tuple[str, ...]:
    return tuple(sorted({v for key in keys & side.keys() for v in side[key]}))


def audit(
    runs: Iterable[RunRecord],
    lineage: Lineage,
    dataset: str,
    *,
    source: str,
    since: str | None = None,
    until: str | None = None,
) -> Audit:
    """The runs (:func:`~emr_lineage.analysis.runs.collect_runs`, oldest first) that read or wrote
    ``dataset``; ``source`` is where they were read (events, marquez, archive or graph)."""
    matched = find_datasets(lineage.graph, dataset)
    keys = {(lineage.graph.nodes[n]["namespace"], lineage.graph.nodes[n]["name"]) for n in matched}
    report = Audit(
        dataset=dataset,
        matched=sorted({_uri(lineage, n) for n in matched}),
        source=source,
        since=since,
        until=until,
    )
    for run in runs:
        read, wrote = bool(keys & run.inputs.keys()), bool(keys & run.outputs.keys())
        if read or wrote:
            report.accesses.append(Access(run, read, wrote, _versions(run.inputs, keys), _versions(run.outputs, keys)))
    if source == "marquez":
        report.notes.append(MARQUEZ_VERSIONS_NOTE)
    if report.accesses and not any(
        v for a in report.accesses for v in (*a.run.inputs.values(), *a.run.outputs.values())
    ):
        report.notes.append("no run carries a version facet (the listener sends them for Iceberg and Delta tables)")
    return report


def _uri(lineage: Lineage, node_id: str) -> str:
    node = lineage.graph.nodes[node_id]
    return dataset_uri(node["namespace"], node["name"])
