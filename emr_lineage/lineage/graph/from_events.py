"""Build a :class:`LineageGraph` from OpenLineage run events.

Events of one run are cumulative and partial, may repeat and arrive in any order: everything is
merged into sets and every choice is made by a deterministic rule after all events are read, so
any permutation or duplication of the events gives the same graph (OpenLineage #2104, Marquez
#2264/#2408/#2708).
"""

from __future__ import annotations

import functools
import sys
from collections.abc import Iterable, Mapping
from hashlib import blake2b
from typing import TYPE_CHECKING, Any

from orjson import JSONEncodeError, dumps

from emr_lineage.lineage.events.merging import cyclic_gc_paused
from emr_lineage.lineage.graph.assembly import DatasetRecord, RunRecord, assemble, union_of_types
from emr_lineage.lineage.graph.history import RunEvents, RunHistory
from emr_lineage.lineage.graph.model import _EMPTY, LineageGraph, check_level
from emr_lineage.lineage.naming import UNKNOWN_NAMESPACE, UNNAMED_JOB

if TYPE_CHECKING:
    from emr_lineage.lineage.events.reader import EventStream


def _kept(value: Any) -> Any:
    """A string the graph keeps, interned: the same namespace, field or type name arrives in
    thousands of events, each decoded into a string of its own; one copy of each is kept, not one
    per event scattered among the freed events."""
    return sys.intern(value) if type(value) is str else value


# A dataset's facets are fingerprinted (to skip merging them again) only when their schema and
# column lineage list this many fields together. Serializing and hashing a few fields costs about
# what merging them again does: with 3 fields reported again in every event, 7.4-9.0 us an event
# with the fingerprint, 8.3-9.3 without; on the benchmark's events, whose facets are new each
# time, the fingerprint cost 0.4-1.4 us a line. With 50 fields reported again: 54 us with, 70 without.
_FINGERPRINT_FROM_FIELDS = 16


def _width(facet: Any) -> int:
    """How many fields a schema or column lineage facet lists (0 for a malformed one)."""
    fields = facet.get("fields") if type(facet) is dict else None
    return len(fields) if type(fields) is list or type(fields) is dict else 0


# runs, datasets and column edges of a builder, in plain containers, and its history (GraphBuilder.export)
Exported = tuple[
    dict[Any, tuple[Any, ...]],
    dict[tuple[str, str], tuple[Any, ...]],
    dict[Any, dict[str, set[Any]]],
    dict[str, RunEvents] | None,
]


class GraphBuilder:
    """Merges events per run and per dataset (order-free, so builders of parts of the events can
    be merged into one); :meth:`graph` assembles the graph. Phase 1 of :func:`build_graph`."""

    def __init__(self, column_lineage: bool = True, runs: bool = False) -> None:
        # column_lineage=False: columnLineage facets are not read (for a graph whose column edges
        # nobody asks for, e.g. a contract check): about 0.5 us an event less, and less to assemble.
        self.column_lineage = column_lineage
        # runs=True: each run's history is kept too (RunHistory, for drift, audit and runs from the
        # graph file), at a cost per event; off, the loop below is as it was.
        self.history = RunHistory() if runs else None
        self.runs: dict[Any, RunRecord] = {}
        self.datasets: dict[tuple[str, str], DatasetRecord] = {}
        # (out ns, out name) -> out field -> {(in ns, in name, in field, transformation types)}: per
        # dataset, then per field (not one (ns, name, field) key per field: a tuple less to make
        # and hash for each field of each columnLineage facet)
        self.columns: dict[tuple[str, str], dict[str, set[tuple[str, str, str, str]]]] = {}
        # One (namespace, name) tuple of interned strings per job and dataset, shared by every run
        # that names it: not one tuple of strings of its own per event and run.
        self.keys: dict[tuple[str, str], tuple[str, str]] = {}
        self.assembled = False

    def key(self, namespace: str, name: str) -> tuple[str, str]:
        """The shared (namespace, name) tuple."""
        pair = (namespace, name)
        shared = self.keys.get(pair)
        if shared is None:
            shared = self.keys[pair] = (_kept(namespace), _kept(name))
        return shared

    def add_all(self, events: Iterable[Mapping[str, Any]]) -> None:
        """Merge events. The hot loop of build_graph (1M events in the benchmark): a fast path
        of plain subscripts and local names for complete events; any missing piece sends the
        event to the tolerant path. Both only add to sets, so a fast path cut short is harmless.
        """
        if self.history is not None:
            events = self.history.recording(events)
        runs, datasets, add_facets, tolerant = self.runs, self.datasets, self._add_dataset_facets, self._add_tolerant
        new_run, new_dataset, unknown, unnamed = RunRecord, DatasetRecord, UNKNOWN_NAMESPACE, UNNAMED_JOB
        keys, shared_key = self.keys, self.key
        for event in events:
            try:
                job = event["job"]
                job_key = (job["namespace"] or unknown, job["name"] or unnamed)
                job_key = keys.get(job_key) or shared_key(*job_key)
                run = event["run"]
                key = run["runId"] or job_key
                acc = runs.get(key)
                if acc is None:
                    acc = runs[key] = new_run()
                acc.jobs.add(job_key)
                event_type = event["eventType"]
                if event_type:
                    acc.states.add(event_type)
                run_facets = run["facets"]
                if "parent" in run_facets:
                    parent_job = run_facets["parent"]["job"]
                    if parent_job["name"]:
                        acc.parents.add((parent_job["namespace"] or job_key[0], parent_job["name"]))
                job_facets = job["facets"]
                if "jobType" in job_facets and job_facets["jobType"]["jobType"] == "APPLICATION":
                    acc.is_application = True
                inputs = event["inputs"]
                if inputs:
                    add_input = acc.inputs.add
                    for dataset in inputs:
                        ds_key = (dataset["namespace"] or unknown, dataset["name"])
                        ds_key = keys.get(ds_key) or shared_key(*ds_key)
                        add_input(ds_key)
                        facets = dataset["facets"]
                        if facets:
                            add_facets(ds_key, facets)
                        elif ds_key not in datasets:
                            datasets[ds_key] = new_dataset()
                outputs = event["outputs"]
                if outputs:
                    add_output = acc.outputs.add
                    for dataset in outputs:
                        ds_key = (dataset["namespace"] or unknown, dataset["name"])
                        ds_key = keys.get(ds_key) or shared_key(*ds_key)
                        add_output(ds_key)
                        facets = dataset["facets"]
                        if facets:
                            add_facets(ds_key, facets)
                        elif ds_key not in datasets:
                            datasets[ds_key] = new_dataset()
            except (KeyError, TypeError, AttributeError):
                tolerant(event)

    def export(self) -> Exported:
        """What was merged, in plain containers (quick to pickle), for :meth:`merge` elsewhere."""
        runs = {
            key: (run.jobs, run.parents, run.inputs, run.outputs, run.states, run.is_application)
            for key, run in self.runs.items()
        }
        datasets = {key: (info.aliases, info.fields) for key, info in self.datasets.items()}
        return runs, datasets, self.columns, None if self.history is None else self.history.export()

    def merge(self, exported: Exported) -> None:
        """Add what another builder merged (its :meth:`export`, e.g. from another process)."""
        their_runs, their_datasets, their_columns, their_history = exported
        if (their_history is None) != (self.history is None):
            raise ValueError("builders with and without runs cannot be merged (make both with the same runs=)")
        if self.history is not None:
            self.history.merge(their_history)
        runs, datasets, columns = self.runs, self.datasets, self.columns
        for key, (jobs, parents, inputs, outputs, states, is_application) in their_runs.items():
            mine = runs.get(key)
            if mine is None:
                runs[key] = RunRecord(jobs, parents, inputs, outputs, states, is_application)
                continue
            mine.jobs |= jobs
            mine.parents |= parents
            mine.inputs |= inputs
            mine.outputs |= outputs
            mine.states |= states
            mine.is_application = mine.is_application or is_application
        for key, (aliases, fields) in their_datasets.items():
            info = datasets.get(key)
            if info is None:
                datasets[key] = DatasetRecord(aliases, fields)
                continue
            info.aliases |= aliases
            for name, types in fields.items():
                known = info.fields.get(name)
                info.fields[name] = types if known is None else union_of_types(known, types)
        for ds_key, their_fields in their_columns.items():
            mine = columns.get(ds_key)
            if mine is None:
                columns[ds_key] = their_fields  # theirs, as it is: most datasets are in one builder only
                continue
            for out_field, sources in their_fields.items():
                known = mine.get(out_field)
                if known is None:
                    mine[out_field] = sources
                else:
                    known |= sources

    def graph(self, level: str = "application", source: str = "events") -> LineageGraph:
        """The graph of what was merged, at ``level`` (``application`` or ``action``), from ``source``
        (``events`` or ``marquez``). The builder is emptied (its memory goes to the graph): call it once."""
        check_level(level)
        if self.assembled:
            raise RuntimeError("a GraphBuilder assembles its graph once (its records went into it)")
        self.assembled = True
        graph = assemble(self.runs, self.datasets, self.columns, level, source)
        graph.history, self.history = self.history, None
        return graph

    def _add_tolerant(self, event: Mapping[str, Any]) -> None:
        """Merge one event that may lack any field (fragments of the Spark integration tests).

        A DatasetEvent (static lineage: a ``dataset``, no job and no run) adds its dataset and
        facets only, not a run of an unnamed job."""
        static = event.get("dataset")
        if isinstance(static, dict) and "job" not in event and "run" not in event:
            ds_key = self.key(static.get("namespace") or UNKNOWN_NAMESPACE, static.get("name") or "")
            self.datasets.setdefault(ds_key, DatasetRecord())
            if static.get("facets"):
                self._add_facets_tolerantly(ds_key, static["facets"])
            return
        job = event.get("job") or _EMPTY
        job_key = self.key(job.get("namespace") or UNKNOWN_NAMESPACE, job.get("name") or UNNAMED_JOB)
        run = event.get("run") or _EMPTY
        # A fragment without runId: all its job's id-less events form one run.
        key = run.get("runId") or job_key
        acc = self.runs.get(key)
        if acc is None:
            acc = self.runs[key] = RunRecord()
        acc.jobs.add(job_key)
        event_type = event.get("eventType")
        if event_type:
            acc.states.add(event_type)
        run_facets = run.get("facets")
        if run_facets:
            parent = run_facets.get("parent")
            if parent:
                parent_job = parent.get("job") or _EMPTY
                parent_name = parent_job.get("name")
                if parent_name:
                    acc.parents.add((parent_job.get("namespace") or job_key[0], parent_name))
        job_facets = job.get("facets")
        if job_facets:
            job_type = job_facets.get("jobType")
            if job_type and job_type.get("jobType") == "APPLICATION":
                acc.is_application = True
        datasets = self.datasets
        inputs = event.get("inputs")
        if inputs:
            add_input = acc.inputs.add
            for dataset in inputs:
                ds_key = self.key(dataset.get("namespace") or UNKNOWN_NAMESPACE, dataset.get("name") or "")
                add_input(ds_key)
                facets = dataset.get("facets")
                if facets:
                    self._add_facets_tolerantly(ds_key, facets)
                elif ds_key not in datasets:
                    datasets[ds_key] = DatasetRecord()
        outputs = event.get("outputs")
        if outputs:
            add_output = acc.outputs.add
            for dataset in outputs:
                ds_key = self.key(dataset.get("namespace") or UNKNOWN_NAMESPACE, dataset.get("name") or "")
                add_output(ds_key)
                facets = dataset.get("facets")
                if facets:
                    self._add_facets_tolerantly(ds_key, facets)
                elif ds_key not in datasets:
                    datasets[ds_key] = DatasetRecord()

    def _add_facets_tolerantly(self, ds_key: tuple[str, str], facets: Any) -> None:
        """Merge a facet map that may be malformed (an event read without schema checks): what it
        holds up to its first malformed part; the rest is skipped, as the fast path's error was."""
        try:
            self._add_dataset_facets(ds_key, facets)
        except (KeyError, TypeError, AttributeError):
            pass

    def _add_dataset_facets(self, ds_key: tuple[str, str], facets: Mapping[str, Any]) -> None:
        info = self.datasets.get(ds_key)
        if info is None:
            info = self.datasets[ds_key] = DatasetRecord()
        schema, lineage = facets.get("schema"), facets.get("columnLineage")
        width = _width(schema) + _width(lineage)
        fingerprint: bytes | None = None
        if width >= _FINGERPRINT_FROM_FIELDS:  # see DatasetRecord.last_facets
            try:
                fingerprint = blake2b(dumps(facets), digest_size=16).digest()
            except JSONEncodeError:  # e.g. an integer beyond 64 bits (decoded by the standard library)
                fingerprint = None
            if fingerprint is not None and fingerprint == info.last_facets:
                return  # merging is a union: facets merged before change nothing
        symlinks = facets.get("symlinks")
        if symlinks:
            for ident in symlinks.get("identifiers") or ():
                info.aliases.add(
                    (_kept(ident.get("namespace", "")), _kept(ident.get("name", "")), _kept(ident.get("type", "")))
                )
        if schema:
            fields = info.fields
            for column in schema.get("fields") or ():
                name = column.get("name")
                if name:
                    kind = column.get("type") or ""
                    known = fields.get(name)
                    if known is None:
                        fields[_kept(name)] = _kept(kind) if type(kind) is str else {kind}
                    elif known != kind:
                        if type(known) is str:
                            fields[name] = {known, _kept(kind)}
                        elif kind not in known:
                            known.add(_kept(kind))
        if lineage and self.column_lineage:
            self._add_column_lineage(ds_key, lineage)
        if fingerprint is not None:
            info.last_facets = fingerprint  # only once all of them are merged

    def _add_column_lineage(self, ds_key: tuple[str, str], lineage: Mapping[str, Any]) -> None:
        ds_ns, by_field = ds_key[0], None
        for out_field, spec in (lineage.get("fields") or _EMPTY).items():
            if not spec:
                continue
            if by_field is None:
                by_field = self.columns.get(ds_key)
                if by_field is None:
                    by_field = self.columns[ds_key] = {}
            sources = by_field.get(out_field)
            if sources is None:  # the field's name interned once, when first seen
                sources = by_field[_kept(out_field)] = set()
            for source in spec.get("inputFields") or ():
                transformations = source.get("transformations")
                if transformations:
                    if len(transformations) == 1:
                        kinds = transformations[0].get("type") or ""
                    else:
                        kinds = ",".join(sorted({t.get("type") for t in transformations if t.get("type")}))
                else:
                    kinds = spec.get("transformationType") or ""
                edge = (source.get("namespace") or ds_ns, source.get("name") or "", source.get("field") or "", kinds)
                if edge not in sources:  # interned once, when first seen
                    sources.add((_kept(edge[0]), _kept(edge[1]), _kept(edge[2]), _kept(edge[3])))


def build_graph(
    events: Iterable[Mapping[str, Any]], level: str = "application", runs: bool = False, source: str = "events"
) -> LineageGraph:
    """Build the lineage graph of OpenLineage run events (dicts in the JSON shape).

    ``level`` is ``"application"`` (default: action jobs folded into their application job)
    or ``"action"``. Accepts events in any order, with duplicates and partial fragments;
    events of the ``openlineage.client`` classes can be passed through
    :func:`emr_lineage.lineage.events.reader.to_dict` first. ``runs``: with the runs' history
    (:mod:`emr_lineage.lineage.graph.history`); ``source``: where the events came from (``events``,
    ``marquez``: the graph's ``source``). Raises :class:`GraphError` for a bad level.
    """
    check_level(level)
    builder = GraphBuilder(runs=runs)
    with cyclic_gc_paused():
        builder.add_all(events)
        return builder.graph(level, source)


def build_graph_streamed(
    events: EventStream, level: str = "application", column_lineage: bool = True, runs: bool = False
) -> LineageGraph:
    """:func:`build_graph` of a stream of events (read once, instead of iterating it): each line of
    a JSON Lines source is decoded once, by the process that merges it. ``column_lineage=False``:
    without column edges (their facets are not read; see :class:`GraphBuilder`); ``runs``: with the
    runs' history (:mod:`emr_lineage.lineage.graph.history`)."""
    check_level(level)
    builder = events.merge(functools.partial(GraphBuilder, column_lineage, runs))
    assert isinstance(builder, GraphBuilder)
    return builder.graph(level)
