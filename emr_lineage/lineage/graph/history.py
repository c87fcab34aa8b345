"""What the events say of each run, kept for the questions about runs (``runs``, ``audit``, ``drift``):
its job names, parents, whether it is an application, the time and type of each of its events,
the datasets it read and wrote with their versions (the ``version`` facet: an Iceberg table's snapshot
id), per dataset the schema and the statistics (``inputStatistics``, ``outputStatistics``: rows, bytes,
files) it reported last, the catalog table name of each, and the properties of its application it reported
last (read from the facets by :mod:`emr_lineage.lineage.graph.facets`).

Like the graph's own records, everything is a set or a choice by a fixed rule (the latest event
time, then the larger value), so any order or repetition of the events gives the same history, and
histories of parts of the events are combined with ``merge(other.export())``. A graph built with
``graph --with-runs`` carries its history, written into the JSON form as ``runs``
(:meth:`RunHistory.to_dict`) and read back by :meth:`RunHistory.from_dict`: ``drift``, ``audit``
and ``runs`` then answer from the graph file as from the events it was built from.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any, Protocol

from emr_lineage.lineage.graph.facets import (
    COUNTS,
    PROPERTY_FACETS,
    Counts,
    Fields,
    Property,
    add_properties,
    catalog_table,
    counts,
    flatten,
    kept,
    later,
    scanned_snapshot,
)
from emr_lineage.lineage.naming import UNKNOWN_NAMESPACE, UNNAMED_JOB
from emr_lineage.lineage.times import event_time, parse_time, placed

INPUT, OUTPUT = "input", "output"  # a dataset's role in a run
_EMPTY: Mapping[str, Any] = {}

Dataset = tuple[str, str]  # (namespace, name) as reported
Schema = tuple[dt.datetime | None, Fields]  # a reported schema and the time of its event
Moment = tuple[dt.datetime | None, str]  # (event time, eventType) of one event
Statistics = tuple[dt.datetime | None, Counts]  # reported statistics and the time of their event
STATISTICS = {INPUT: ("inputFacets", "inputStatistics"), OUTPUT: ("outputFacets", "outputStatistics")}


@dataclass(slots=True)
class RunEvents:
    """What the events of one run (one ``runId``) say, merged."""

    jobs: set[tuple[str, str]] = field(default_factory=set)
    parents: set[tuple[str, str]] = field(default_factory=set)  # (parent runId, parent job name or "")
    application: bool = False
    moments: set[Moment] = field(default_factory=set)
    inputs: dict[Dataset, set[str]] = field(default_factory=dict)  # dataset -> versions read
    outputs: dict[Dataset, set[str]] = field(default_factory=dict)  # dataset -> versions written
    schemas: dict[tuple[str, Dataset], Schema] = field(default_factory=dict)  # (role, dataset) -> latest
    statistics: dict[tuple[str, Dataset], Statistics] = field(default_factory=dict)  # (role, dataset) -> latest
    properties: dict[str, Property] = field(default_factory=dict)  # name -> latest
    tables: dict[Dataset, str] = field(default_factory=dict)  # dataset -> its catalog table name
    scans: dict[Dataset, set[float]] = field(default_factory=dict)  # input -> the Iceberg snapshots scanned

    def merge(self, other: RunEvents) -> None:
        self.jobs |= other.jobs
        self.parents |= other.parents
        self.application = self.application or other.application
        self.moments |= other.moments
        merge_datasets(self, other)


class WithDatasets(Protocol):
    """A run's datasets and properties: a :class:`RunEvents`, or a run of the analysis (``analysis.runs.RunRecord``)."""

    inputs: dict[Dataset, set[str]]
    outputs: dict[Dataset, set[str]]
    schemas: dict[tuple[str, Dataset], Schema]
    statistics: dict[tuple[str, Dataset], Statistics]
    properties: dict[str, Property]
    tables: dict[Dataset, str]
    scans: dict[Dataset, set[float]]


def merge_datasets(into: WithDatasets, other: WithDatasets) -> None:
    """``other``'s datasets and properties merged into ``into``'s: versions united, per (role, dataset) the later
    schema and statistics, per property the later value."""
    for mine, theirs in ((into.inputs, other.inputs), (into.outputs, other.outputs)):
        for dataset, versions in theirs.items():
            mine.setdefault(dataset, set()).update(versions)
    for latest, reported in (
        (into.schemas, other.schemas),
        (into.statistics, other.statistics),
        (into.properties, other.properties),
    ):
        for key, report in reported.items():
            latest[key] = later(latest.get(key), report)
    for dataset, scanned in other.scans.items():
        into.scans.setdefault(dataset, set()).update(scanned)
    for dataset, table in other.tables.items():
        into.tables[dataset] = max(table, into.tables.get(dataset, table))  # one name in practice; any order


class RunHistory:
    """The runs of a set of events, by run id (a run without ``runId``: ``<job namespace>:<job name>``)."""

    def __init__(self, runs: dict[str, RunEvents] | None = None) -> None:
        self.runs: dict[str, RunEvents] = runs if runs is not None else {}
        self._pairs: dict[tuple[Any, Any], tuple[str, str]] = {}

    @classmethod
    def of(cls, events: Iterable[Mapping[str, Any]]) -> RunHistory:
        history = cls()
        history.add_all(events)
        return history

    def add_all(self, events: Iterable[Mapping[str, Any]]) -> None:
        for event in events:
            self.add(event)

    def recording(self, events: Iterable[Any]) -> Iterator[Any]:
        """``events`` passed on unchanged, each added here first (to merge one stream twice)."""
        add = self.add
        for event in events:
            add(event)
            yield event

    def add(self, event: Mapping[str, Any]) -> None:
        """Merge one event. Any part may be missing (a static DatasetEvent, without job and run, adds
        nothing); of a malformed one (read without schema checks), what it holds up to the malformed part."""
        if type(event) is not dict or ("job" not in event and "run" not in event):
            return
        try:
            self._add(event)
        except (AttributeError, TypeError):
            pass

    def _pair(self, first: Any, second: Any) -> tuple[str, str]:
        """One shared tuple of two interned names (a job's, a dataset's), as the graph builder keeps its keys.
        Only names that are strings are shared: ``1``, ``1.0`` and ``True`` are equal keys but three names."""
        if type(first) is not str or type(second) is not str:
            return (kept(str(first)), kept(str(second)))
        pair = (first, second)
        shared = self._pairs.get(pair)
        if shared is None:
            shared = self._pairs[pair] = (kept(first), kept(second))
        return shared

    def _add(self, event: dict[str, Any]) -> None:
        job, run = event.get("job") or _EMPTY, event.get("run") or _EMPTY
        job_key = self._pair(job.get("namespace") or UNKNOWN_NAMESPACE, job.get("name") or UNNAMED_JOB)
        run_id = str(run.get("runId") or f"{job_key[0]}:{job_key[1]}")
        record = self.runs.get(run_id)
        if record is None:
            record = self.runs[run_id] = RunEvents()
        record.jobs.add(job_key)
        parent = (run.get("facets") or _EMPTY).get("parent") or _EMPTY
        parent_run = (parent.get("run") or _EMPTY).get("runId")
        if parent_run:
            record.parents.add((str(parent_run), str((parent.get("job") or _EMPTY).get("name") or "")))
        job_type = (job.get("facets") or _EMPTY).get("jobType") or _EMPTY
        record.application = record.application or job_type.get("jobType") == "APPLICATION"
        time = event_time(event)
        record.moments.add((time, kept(str(event.get("eventType") or "OTHER"))))
        for facets, names in ((run.get("facets"), PROPERTY_FACETS["run"]), (job.get("facets"), PROPERTY_FACETS["job"])):
            if facets and type(facets) is dict:
                add_properties(record.properties, facets, names, time)
        sides = ((INPUT, record.inputs, event.get("inputs")), (OUTPUT, record.outputs, event.get("outputs")))
        for role, side, datasets in sides:
            for dataset in datasets or ():
                if type(dataset) is dict:
                    try:
                        self._add_dataset(record, role, side, dataset, time)
                    except (AttributeError, TypeError):  # a malformed facet: the other datasets still count
                        pass

    def _add_dataset(
        self,
        record: RunEvents,
        role: str,
        side: dict[Dataset, set[str]],
        dataset: dict[str, Any],
        time: dt.datetime | None,
    ) -> None:
        key = self._pair(dataset.get("namespace") or UNKNOWN_NAMESPACE, dataset.get("name") or "")
        versions = side.get(key)
        if versions is None:
            versions = side[key] = set()
        where = (role, key)
        side_facets = dataset.get(STATISTICS[role][0])
        if side_facets and type(side_facets) is dict:
            reported = counts(side_facets.get(STATISTICS[role][1]))
            scanned = scanned_snapshot(side_facets) if role == INPUT else None
            if scanned is not None:
                record.scans.setdefault(key, set()).add(scanned)
            if reported is not None:
                record.statistics[where] = later(record.statistics.get(where), (time, reported))
        facets = dataset.get("facets")
        if not facets or type(facets) is not dict:
            return
        version = facets.get("version")
        if type(version) is dict:
            value = version.get("datasetVersion")
            if value not in (None, ""):
                versions.add(str(value))
        table = catalog_table(facets)
        if table:
            record.tables[key] = max(table, record.tables.get(key, table))
        schema = facets.get("schema")
        if type(schema) is dict:
            record.schemas[where] = later(record.schemas.get(where), (time, flatten(schema.get("fields"))))

    def export(self) -> dict[str, RunEvents]:
        return self.runs

    def merge(self, exported: dict[str, RunEvents]) -> None:
        """Add another history's runs (its :meth:`export`)."""
        for run_id, theirs in exported.items():
            mine = self.runs.get(run_id)
            if mine is None:
                self.runs[run_id] = theirs
            else:
                mine.merge(theirs)

    def to_dict(self) -> list[dict[str, Any]]:
        """The JSON form (the ``runs`` of a graph file, docs/graph.md): runs by id, every list sorted."""
        return [_run_dict(run_id, self.runs[run_id]) for run_id in sorted(self.runs)]

    @classmethod
    def from_dict(cls, runs: Any) -> RunHistory:
        """The history of :meth:`to_dict`'s form. Raises ``ValueError`` naming the first run that is not."""
        if not isinstance(runs, list):
            raise ValueError("'runs' is not a list")
        history = cls()
        for index, run in enumerate(runs):
            try:
                history.merge({str(run["runId"]): _run_of_dict(run)})  # a run given twice: both, merged
            except KeyError as exc:
                raise ValueError(f"runs[{index}] has no {exc}") from None
            except (TypeError, ValueError) as exc:
                raise ValueError(f"runs[{index}] is malformed ({exc})") from None
        return history


def _iso(time: dt.datetime | None) -> str | None:
    return time.isoformat() if time else None


def _parsed(value: Any) -> dt.datetime | None:
    if value is None:
        return None
    if not isinstance(value, str):
        raise ValueError(f"time {value!r} is not a string")
    return parse_time(value)


def moment_order(moment: Moment) -> tuple[dt.datetime, str]:
    """How a run's (time, eventType) pairs are ordered: by :func:`~emr_lineage.lineage.times.placed` time."""
    return placed(moment[0]), moment[1]


def _statistics_dict(reported: Statistics) -> dict[str, Any]:
    return {**dict(zip(COUNTS, reported[1], strict=True)), "eventTime": _iso(reported[0])}


def _run_dict(run_id: str, run: RunEvents) -> dict[str, Any]:
    def datasets(role: str, side: dict[Dataset, set[str]]) -> list[dict[str, Any]]:
        listed = []
        for ns, n in sorted(side):
            entry: dict[str, Any] = {"namespace": ns, "name": n, "versions": sorted(side[(ns, n)])}
            if (ns, n) in run.tables:
                entry["table"] = run.tables[(ns, n)]
            if role == INPUT and (ns, n) in run.scans:
                entry["scannedSnapshots"] = sorted(run.scans[(ns, n)])
            reported = run.statistics.get((role, (ns, n)))
            if reported is not None:
                entry["statistics"] = _statistics_dict(reported)
            listed.append(entry)
        return listed

    return {
        "runId": run_id,
        "jobs": [{"namespace": ns, "name": name} for ns, name in sorted(run.jobs)],
        "parents": [{"runId": parent, "job": job} for parent, job in sorted(run.parents)],
        "application": run.application,
        "events": [
            {"eventTime": _iso(time), "eventType": kind} for time, kind in sorted(run.moments, key=moment_order)
        ],
        "inputs": datasets(INPUT, run.inputs),
        "outputs": datasets(OUTPUT, run.outputs),
        "schemas": [
            {
                "role": role,
                "namespace": ns,
                "name": name,
                "eventTime": _iso(time),
                "fields": [{"name": f, "type": t} for f, t in fields],
            }
            for (role, (ns, name)), (time, fields) in sorted(run.schemas.items())
        ],
        "properties": [
            {"name": name, "value": value, "eventTime": _iso(time)}
            for name, (time, value) in sorted(run.properties.items())
        ],
    }


def _counts_of_dict(statistics: Any) -> Counts:
    found = tuple(statistics.get(name) for name in COUNTS)
    if any(v is not None and (type(v) is not int or v < 0) for v in found):
        raise ValueError(f"statistics {statistics!r} hold a count that is not a whole number")
    return found  # type: ignore[return-value]


def _run_of_dict(run: Mapping[str, Any]) -> RunEvents:
    statistics: dict[tuple[str, Dataset], Statistics] = {}
    tables: dict[Dataset, str] = {}
    scans: dict[Dataset, set[float]] = {}

    def datasets(role: str, side: Any) -> dict[Dataset, set[str]]:
        found: dict[Dataset, set[str]] = {}
        for d in side:
            key = (str(d["namespace"]), str(d["name"]))
            found[key] = {str(v) for v in d["versions"]}
            if d.get("table") is not None:
                tables[key] = str(d["table"])
            if d.get("scannedSnapshots"):
                scans[key] = {float(v) for v in d["scannedSnapshots"]}
            if d.get("statistics") is not None:  # graph files written before statistics have none
                statistics[(role, key)] = (_parsed(d["statistics"].get("eventTime")), _counts_of_dict(d["statistics"]))
        return found

    schemas: dict[tuple[str, Dataset], Schema] = {}
    for schema in run["schemas"]:
        if schema["role"] not in (INPUT, OUTPUT):
            raise ValueError(f"schema role {schema['role']!r} (expected {INPUT} or {OUTPUT})")
        fields = tuple((str(f["name"]), str(f["type"])) for f in schema["fields"])
        schemas[(schema["role"], (str(schema["namespace"]), str(schema["name"])))] = (
            _parsed(schema["eventTime"]),
            fields,
        )
    return RunEvents(
        jobs={(str(j["namespace"]), str(j["name"])) for j in run["jobs"]},
        parents={(str(p["runId"]), str(p["job"])) for p in run["parents"]},
        application=bool(run["application"]),
        moments={(_parsed(e["eventTime"]), str(e["eventType"])) for e in run["events"]},
        inputs=datasets(INPUT, run["inputs"]),
        outputs=datasets(OUTPUT, run["outputs"]),
        schemas=schemas,
        statistics=statistics,
        tables=tables,
        scans=scans,
        properties={str(p["name"]): (_parsed(p["eventTime"]), str(p["value"])) for p in run.get("properties", ())},
    )
