"""Build a :class:`LineageGraph` from OpenLineage run events.

Events of one run are cumulative and partial, may repeat and arrive in any order: everything is
merged into sets and every choice is made by a deterministic rule after all events are read, so
any permutation or duplication of the events gives the same graph (OpenLineage #2104, Marquez
#2264/#2408/#2708).
"""

from __future__ import annotations

import gc
import sys
from collections import defaultdict
from collections.abc import Iterable, Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass, field
from hashlib import blake2b
from typing import Any

from orjson import JSONEncodeError, dumps

from emr_lineage.lineage.graph import _EMPTY, UNKNOWN_NAMESPACE, UNNAMED_JOB, LineageGraph, check_level
from emr_lineage.lineage.naming import job_node_id

# Order of run states, so the merged state of a run does not depend on event order.
_STATE_RANK = {"START": 1, "RUNNING": 2, "OTHER": 0, "COMPLETE": 3, "ABORT": 4, "FAIL": 5}


@dataclass(slots=True)
class _Run:
    """What the events of one run say, merged."""

    jobs: set[tuple[str, str]] = field(default_factory=set)
    parents: set[tuple[str, str]] = field(default_factory=set)
    inputs: set[tuple[str, str]] = field(default_factory=set)
    outputs: set[tuple[str, str]] = field(default_factory=set)
    states: set[str] = field(default_factory=set)
    is_application: bool = False


@dataclass(slots=True)
class _Dataset:
    aliases: set[tuple[str, str, str]] = field(default_factory=set)
    fields: dict[str, set[str]] = field(default_factory=dict)
    # A 128-bit digest of the compact JSON of the facets merged last: merging is a union, so facets
    # equal to these (a redelivered event, the same schema reported again) add nothing new. Not
    # the facets themselves: keeping a decoded event's facets alive keeps dozens of small objects
    # per dataset, scattered among the freed events (1M events held 2 GiB that way).
    last_facets: bytes | None = None


def _kept(value: Any) -> Any:
    """A string the graph keeps, interned: the same namespace, field or type name arrives in
    thousands of events, each decoded into a string of its own; one copy of each is kept, not one
    per event scattered among the freed events."""
    return sys.intern(value) if type(value) is str else value


def _pick(candidates: set[tuple[str, str]]) -> tuple[str, str]:
    # The most specific name wins: Spark may report a generic name in early events of a run.
    if len(candidates) == 1:
        for only in candidates:
            return only
    return max(candidates, key=lambda job: (len(job[1]), job))


def _field_type(types: set[Any]) -> str:
    """One field's type; a field reported with several types lists them all (``a|b``)."""
    if len(types) == 1:
        for only in types:
            return only if isinstance(only, str) else str(only)
    return "|".join(sorted(str(t) for t in types if t))


def _final_state(states: set[str]) -> str:
    if len(states) == 1:
        for only in states:
            return only
    return max(states, key=lambda state: (_STATE_RANK.get(state, 0), state))


# runs, datasets and column edges of a builder, in plain containers (GraphBuilder.export)
Exported = tuple[dict[Any, tuple[Any, ...]], dict[tuple[str, str], tuple[Any, ...]], dict[Any, set[Any]]]


class GraphBuilder:
    """Merges events per run and per dataset (order-free, so builders of parts of the events can
    be merged into one); :meth:`graph` assembles the graph. Phase 1 of :func:`build_graph`."""

    def __init__(self) -> None:
        self.runs: dict[Any, _Run] = {}
        self.datasets: dict[tuple[str, str], _Dataset] = {}
        # (out ns, out name, out field) -> {(in ns, in name, in field, transformation types)}
        self.columns: dict[tuple[str, str, str], set[tuple[str, str, str, str]]] = defaultdict(set)
        # One (namespace, name) tuple of interned strings per job and dataset, shared by every run
        # that names it: not one tuple of strings of its own per event and run.
        self.keys: dict[tuple[str, str], tuple[str, str]] = {}

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
        runs, datasets, add_facets, tolerant = self.runs, self.datasets, self._add_dataset_facets, self._add_tolerant
        new_run, new_dataset, unknown, unnamed = _Run, _Dataset, UNKNOWN_NAMESPACE, UNNAMED_JOB
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
        return runs, {key: (info.aliases, info.fields) for key, info in self.datasets.items()}, dict(self.columns)

    def merge(self, exported: Exported) -> None:
        """Add what another builder merged (its :meth:`export`, e.g. from another process)."""
        their_runs, their_datasets, their_columns = exported
        runs, datasets, columns = self.runs, self.datasets, self.columns
        for key, (jobs, parents, inputs, outputs, states, is_application) in their_runs.items():
            mine = runs.get(key)
            if mine is None:
                runs[key] = _Run(jobs, parents, inputs, outputs, states, is_application)
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
                datasets[key] = _Dataset(aliases, fields)
                continue
            info.aliases |= aliases
            for name, types in fields.items():
                known = info.fields.get(name)
                if known is None:
                    info.fields[name] = types
                else:
                    known |= types
        for out, sources in their_columns.items():
            columns[out] |= sources

    def graph(self, level: str = "application") -> LineageGraph:
        """The graph of what was merged, at ``level`` (``application`` or ``action``)."""
        check_level(level)
        return _assemble(self, level)

    def _add_tolerant(self, event: Mapping[str, Any]) -> None:
        """Merge one event that may lack any field (fragments of the Spark integration tests)."""
        job = event.get("job") or _EMPTY
        job_key = self.key(job.get("namespace") or UNKNOWN_NAMESPACE, job.get("name") or UNNAMED_JOB)
        run = event.get("run") or _EMPTY
        # A fragment without runId: all its job's id-less events form one run.
        key = run.get("runId") or job_key
        acc = self.runs.get(key)
        if acc is None:
            acc = self.runs[key] = _Run()
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
                    self._add_dataset_facets(ds_key, facets)
                elif ds_key not in datasets:
                    datasets[ds_key] = _Dataset()
        outputs = event.get("outputs")
        if outputs:
            add_output = acc.outputs.add
            for dataset in outputs:
                ds_key = self.key(dataset.get("namespace") or UNKNOWN_NAMESPACE, dataset.get("name") or "")
                add_output(ds_key)
                facets = dataset.get("facets")
                if facets:
                    self._add_dataset_facets(ds_key, facets)
                elif ds_key not in datasets:
                    datasets[ds_key] = _Dataset()

    def _add_dataset_facets(self, ds_key: tuple[str, str], facets: Mapping[str, Any]) -> None:
        info = self.datasets.get(ds_key)
        if info is None:
            info = self.datasets[ds_key] = _Dataset()
        try:
            fingerprint: bytes | None = blake2b(dumps(facets), digest_size=16).digest()
        except JSONEncodeError:  # e.g. an integer beyond 64 bits (decoded by the standard library)
            fingerprint = None
        if fingerprint is not None and fingerprint == info.last_facets:
            return  # merging is a union: the same facets again change nothing
        info.last_facets = fingerprint
        symlinks = facets.get("symlinks")
        if symlinks:
            for ident in symlinks.get("identifiers") or ():
                info.aliases.add(
                    (_kept(ident.get("namespace", "")), _kept(ident.get("name", "")), _kept(ident.get("type", "")))
                )
        schema = facets.get("schema")
        if schema:
            fields = info.fields
            for column in schema.get("fields") or ():
                name = column.get("name")
                if name:
                    kind = column.get("type") or ""
                    types = fields.get(name)
                    if types is None:
                        fields[_kept(name)] = {_kept(kind)}
                    elif kind not in types:
                        types.add(_kept(kind))
        lineage = facets.get("columnLineage")
        if lineage:
            self._add_column_lineage(ds_key, lineage)

    def _add_column_lineage(self, ds_key: tuple[str, str], lineage: Mapping[str, Any]) -> None:
        columns = self.columns
        ds_ns, ds_name = ds_key
        for out_field, spec in (lineage.get("fields") or _EMPTY).items():
            if not spec:
                continue
            sources = columns[(ds_ns, ds_name, _kept(out_field))]
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


def _application_of(
    runs: Iterable[tuple[tuple[str, str], _Run]],
) -> dict[tuple[str, str], tuple[str, str]]:
    """Map each action job to the application job it folds into.

    A job folds into its ``parent`` facet's job when that parent is itself a job of these
    events or the child's name starts with ``<parent>.`` (Spark names actions
    ``<app>.<action>``). An application's own parent (an orchestrator such as Airflow, set by
    ``spark.openlineage.parent*``) is neither, so applications are not folded into it.
    """
    known: set[tuple[str, str]] = set()
    parents: dict[tuple[str, str], set[tuple[str, str]]] = {}
    applications: set[tuple[str, str]] = set()
    for job, run in runs:
        known.add(job)
        if run.parents:
            parents.setdefault(job, set()).update(run.parents)
        if run.is_application:
            applications.add(job)

    direct: dict[tuple[str, str], tuple[str, str]] = {}
    for job, candidates in parents.items():
        if job in applications:
            continue
        eligible = [p for p in candidates if p != job and (p in known or job[1].startswith(p[1] + "."))]
        if eligible:
            direct[job] = min(eligible)

    # Follow parents up to the application (one step for Spark), guarding against cycles.
    folded: dict[tuple[str, str], tuple[str, str]] = {}
    for job, parent in direct.items():
        seen = {job}
        target = parent
        while target in direct and direct[target] not in seen and target not in seen:
            seen.add(target)
            target = direct[target]
        folded[job] = target
    return folded


def build_graph(events: Iterable[Mapping[str, Any]], level: str = "application") -> LineageGraph:
    """Build the lineage graph of OpenLineage run events (dicts in the JSON shape).

    ``level`` is ``"application"`` (default: action jobs folded into their application job)
    or ``"action"``. Accepts events in any order, with duplicates and partial fragments;
    events of the ``openlineage.client`` classes can be passed through
    :func:`emr_lineage.lineage.events.to_dict` first. Raises :class:`GraphError` for a bad level.
    """
    check_level(level)
    builder = GraphBuilder()
    with cyclic_gc_paused():
        builder.add_all(events)
        return builder.graph(level)


@contextmanager
def cyclic_gc_paused() -> Iterator[None]:
    """Merging creates millions of small sets and tuples but no reference cycles; pausing the
    cyclic GC keeps it from re-scanning every event in memory again and again."""
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was_enabled:
            gc.enable()


def _assemble(acc: GraphBuilder, level: str) -> LineageGraph:
    """The graph of what ``acc`` merged. Empties ``acc`` as it goes: the memory of its runs and
    datasets is reused for the graph's nodes instead of adding to the peak (1M events: ~150 MiB)."""
    graph = LineageGraph(level=level, source="events")
    runs = [(_pick(run.jobs), run) for run in acc.runs.values()]
    acc.runs.clear()
    folded = _application_of(runs) if level == "application" else {}
    job_runs: dict[tuple[str, str], int] = defaultdict(int)
    job_states: dict[tuple[str, str], set[str]] = defaultdict(set)
    job_actions: dict[tuple[str, str], set[str]] = defaultdict(set)
    job_inputs: dict[tuple[str, str], set[tuple[str, str]]] = defaultdict(set)
    job_outputs: dict[tuple[str, str], set[tuple[str, str]]] = defaultdict(set)
    for own, run in runs:
        job = folded.get(own, own)
        if job == own:
            job_runs[job] += 1
        else:
            job_actions[job].add(own[1])
        if run.states:
            job_states[job].add(_final_state(run.states))
        job_inputs[job] |= run.inputs
        job_outputs[job] |= run.outputs
        job_runs.setdefault(job, 0)
    del runs
    # Fold targets that never sent events of their own still become job nodes.
    for job in set(folded.values()):
        job_runs.setdefault(job, 0)

    # Bulk insertion: one add_nodes_from/add_edges_from instead of 100k's of single calls, from
    # generators, as networkx copies each node's attributes into a dict of its own.
    dataset_ids = {key: f"dataset:{key[0]}:{key[1]}" for key in acc.datasets}
    graph.digraph.add_nodes_from(_dataset_nodes(acc.datasets, dataset_ids))
    edges: list[tuple[str, str]] = []
    jobs: list[tuple[str, dict[str, Any]]] = []
    for job in sorted(job_runs):
        job_id = job_node_id(job[0], job[1])
        jobs.append(
            (
                job_id,
                {
                    "id": job_id,
                    "type": "JOB",
                    "namespace": job[0],
                    "name": job[1],
                    "runs": job_runs[job],
                    "states": sorted(job_states.get(job, ())),
                    "actions": sorted(job_actions.get(job, ())),
                },
            )
        )
        edges.extend((dataset_ids[ds_key], job_id) for ds_key in job_inputs.get(job, ()))
        edges.extend((job_id, dataset_ids[ds_key]) for ds_key in job_outputs.get(job, ()))
    graph.digraph.add_nodes_from(jobs)
    graph.digraph.add_edges_from(edges)
    del edges, dataset_ids
    graph.column_edges = _column_edges(acc.columns)  # unsorted here: to_dict() and the renderers sort
    return graph


def _dataset_nodes(
    datasets: dict[tuple[str, str], _Dataset], ids: dict[tuple[str, str], str]
) -> Iterator[tuple[str, dict[str, Any]]]:
    """Each dataset's node, its record dropped once it is made."""
    for key in list(datasets):
        info = datasets.pop(key)
        namespace, name = key
        yield (
            ids[key],
            {
                "id": ids[key],
                "type": "DATASET",
                "namespace": namespace,
                "name": name,
                "aliases": [{"namespace": a[0], "name": a[1], "type": a[2]} for a in sorted(info.aliases)]
                if info.aliases
                else [],
                "fields": [{"name": n, "type": _field_type(t)} for n, t in sorted(info.fields.items())]
                if info.fields
                else [],
            },
        )


def _column_edges(columns: dict[tuple[str, str, str], set[tuple[str, str, str, str]]]) -> list[dict[str, Any]]:
    """The column edges (``columns`` is emptied)."""
    edges = [
        {
            "source": f"datasetField:{src[0]}:{src[1]}:{src[2]}",
            "target": f"datasetField:{out[0]}:{out[1]}:{out[2]}",
            "transformation": src[3],
        }
        for out, sources in columns.items()
        for src in sources
    ]
    columns.clear()
    return edges
