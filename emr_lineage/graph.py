"""The lineage graph model, built from OpenLineage run events or from Marquez.

One graph for both sources, so ``graph``, ``validate``, the renderers and the HTML report
never care where lineage came from. Nodes carry Marquez's ids (``dataset:<ns>:<name>``,
``job:<ns>:<name>``); edges go ``dataset -> job`` (input) and ``job -> dataset`` (output).

Building from events (OpenLineage #2104, Marquez #2264/#2408/#2708):

* the events of one run are cumulative and partial, so a run's inputs, outputs and dataset
  facets are the union over all its events;
* events may repeat and arrive in any order: everything is merged into sets and every choice
  (a run's job name, a field type) is made by a deterministic rule after all events are
  read, so any permutation or duplication of the events gives the same graph;
* ``level="application"`` folds each Spark action's job into its parent application job
  (``parent`` run facet), ``level="action"`` keeps one job per action.
"""

from __future__ import annotations

import gc
import json
from collections import defaultdict
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any

import networkx as nx

from emr_lineage.naming import dataset_node_id, job_node_id

LEVELS = ("application", "action")
UNNAMED_JOB = "(unnamed)"
UNKNOWN_NAMESPACE = "(unknown)"
_EMPTY: Mapping[str, Any] = {}
# Order of run states, so the merged state of a run does not depend on event order.
_STATE_RANK = {"START": 1, "RUNNING": 2, "OTHER": 0, "COMPLETE": 3, "ABORT": 4, "FAIL": 5}


class GraphError(ValueError):
    """Input that cannot become a graph (e.g. an unknown level or a malformed Marquez reply)."""


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
    # The facets merged last, whole and one by one: merging is a union, so facets equal to
    # these (a redelivered event, the same schema reported again) add nothing new.
    last_facets: Any = None
    last_symlinks: Any = None
    last_schema: Any = None
    last_lineage: Any = None


class LineageGraph:
    """A lineage graph: a :class:`networkx.DiGraph` of JOB and DATASET nodes plus column lineage.

    ``nodes`` maps node id to its attributes (``id``, ``type``, ``namespace``, ``name`` and,
    for datasets, ``aliases``/``fields``; for jobs, ``runs``/``states``/``actions``).
    ``column_edges`` holds ``{"source", "target", "transformation"}`` between
    ``datasetField:<ns>:<dataset>:<field>`` ids, in no particular order (``to_dict`` sorts).
    """

    def __init__(self, level: str = "application", source: str = "events") -> None:
        if level not in LEVELS:
            raise GraphError(f"unknown level {level!r} (expected one of {', '.join(LEVELS)})")
        self.level = level
        self.source = source
        self.digraph: nx.DiGraph = nx.DiGraph()
        self.column_edges: list[dict[str, Any]] = []

    # -- building -------------------------------------------------------------------------

    def add_dataset(self, namespace: str, name: str, **attrs: Any) -> str:
        node_id = dataset_node_id(namespace, name)
        if node_id not in self.digraph:
            self.digraph.add_node(
                node_id, id=node_id, type="DATASET", namespace=namespace, name=name, aliases=[], fields=[]
            )
        self.digraph.nodes[node_id].update(attrs)
        return node_id

    def add_job(self, namespace: str, name: str, **attrs: Any) -> str:
        node_id = job_node_id(namespace, name)
        if node_id not in self.digraph:
            self.digraph.add_node(
                node_id, id=node_id, type="JOB", namespace=namespace, name=name, runs=0, states=[], actions=[]
            )
        self.digraph.nodes[node_id].update(attrs)
        return node_id

    def add_edge(self, source: str, target: str) -> None:
        self.digraph.add_edge(source, target)

    # -- reading --------------------------------------------------------------------------

    @property
    def nodes(self) -> Mapping[str, dict[str, Any]]:
        return self.digraph.nodes

    def jobs(self) -> list[str]:
        return sorted(n for n, a in self.digraph.nodes(data=True) if a["type"] == "JOB")

    def datasets(self) -> list[str]:
        return sorted(n for n, a in self.digraph.nodes(data=True) if a["type"] == "DATASET")

    def inputs_of(self, job_id: str) -> list[str]:
        """Dataset ids read by a job (sorted)."""
        return sorted(self.digraph.predecessors(job_id)) if job_id in self.digraph else []

    def outputs_of(self, job_id: str) -> list[str]:
        """Dataset ids written by a job (sorted)."""
        return sorted(self.digraph.successors(job_id)) if job_id in self.digraph else []

    def edges(self) -> list[tuple[str, str]]:
        return sorted(self.digraph.edges())

    def layers(self) -> list[list[str]]:
        """Nodes in left-to-right layers (topological generations; cycles share a layer).

        A node without predecessors moves right to just before its first consumer, so a
        late-read source does not draw a long edge across the page.
        """
        condensed = nx.condensation(self.digraph)
        column: dict[Any, int] = {}
        for index, generation in enumerate(nx.topological_generations(condensed)):
            for component in generation:
                column[component] = index
        for component in condensed.nodes:
            successors = [column[s] for s in condensed.successors(component)]
            if condensed.in_degree(component) == 0 and successors:
                column[component] = min(successors) - 1
        layers: list[list[str]] = [[] for _ in range(max(column.values(), default=-1) + 1)]
        for component, index in column.items():
            layers[index].extend(condensed.nodes[component]["members"])
        return [sorted(layer) for layer in layers if layer]

    def to_dict(self) -> dict[str, Any]:
        """The documented JSON form: sorted ``nodes``, ``edges`` and ``columnEdges``."""
        nodes = [dict(sorted(self.digraph.nodes[n].items())) for n in sorted(self.digraph.nodes)]
        edges = [{"source": s, "target": t} for s, t in self.edges()]
        columns = sorted(self.column_edges, key=lambda e: (e["source"], e["target"], e["transformation"]))
        return {"level": self.level, "nodes": nodes, "edges": edges, "columnEdges": columns}

    def to_json(self) -> str:
        return json.dumps(self.to_dict(), indent=2, sort_keys=True)

    def __eq__(self, other: object) -> bool:
        return isinstance(other, LineageGraph) and self.to_dict() == other.to_dict()

    def __repr__(self) -> str:
        n_jobs, n_datasets = len(self.jobs()), len(self.datasets())
        return f"LineageGraph(level={self.level!r}, jobs={n_jobs}, datasets={n_datasets}, edges={self.digraph.number_of_edges()})"


# --- from OpenLineage events -------------------------------------------------------------


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


class _Accumulator:
    """Phase 1 of :func:`build_graph`: merge events per run and per dataset (order-free)."""

    def __init__(self) -> None:
        self.runs: dict[Any, _Run] = {}
        self.datasets: dict[tuple[str, str], _Dataset] = {}
        # (out ns, out name, out field) -> {(in ns, in name, in field, transformation types)}
        self.columns: dict[tuple[str, str, str], set[tuple[str, str, str, str]]] = defaultdict(set)

    def add_all(self, events: Iterable[Mapping[str, Any]]) -> None:
        """Merge events. The hot loop of build_graph (1M events in the benchmark): a fast path
        of plain subscripts and local names for complete events; any missing piece sends the
        event to the tolerant path. Both only add to sets, so a fast path cut short is harmless.
        """
        runs, datasets, add_facets, tolerant = self.runs, self.datasets, self._add_dataset_facets, self._add_tolerant
        new_run, new_dataset, unknown, unnamed = _Run, _Dataset, UNKNOWN_NAMESPACE, UNNAMED_JOB
        for event in events:
            try:
                job = event["job"]
                job_key = (job["namespace"] or unknown, job["name"] or unnamed)
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
                        add_output(ds_key)
                        facets = dataset["facets"]
                        if facets:
                            add_facets(ds_key, facets)
                        elif ds_key not in datasets:
                            datasets[ds_key] = new_dataset()
            except (KeyError, TypeError, AttributeError):
                tolerant(event)

    def _add_tolerant(self, event: Mapping[str, Any]) -> None:
        """Merge one event that may lack any field (fragments of the Spark integration tests)."""
        job = event.get("job") or _EMPTY
        job_key = (job.get("namespace") or UNKNOWN_NAMESPACE, job.get("name") or UNNAMED_JOB)
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
                ds_key = (dataset.get("namespace") or UNKNOWN_NAMESPACE, dataset.get("name") or "")
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
                ds_key = (dataset.get("namespace") or UNKNOWN_NAMESPACE, dataset.get("name") or "")
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
        last = info.last_facets
        if last is not None and (last is facets or last == facets):
            return  # merging is a union: the same facets again change nothing
        info.last_facets = facets
        symlinks = facets.get("symlinks")
        if symlinks and symlinks != info.last_symlinks:
            info.last_symlinks = symlinks
            for ident in symlinks.get("identifiers") or ():
                info.aliases.add((ident.get("namespace", ""), ident.get("name", ""), ident.get("type", "")))
        schema = facets.get("schema")
        if schema and schema != info.last_schema:
            info.last_schema = schema
            fields = info.fields
            for column in schema.get("fields") or ():
                name = column.get("name")
                if name:
                    types = fields.get(name)
                    if types is None:
                        types = fields[name] = set()
                    types.add(column.get("type") or "")
        lineage = facets.get("columnLineage")
        if lineage and lineage != info.last_lineage:
            info.last_lineage = lineage
            columns = self.columns
            ds_ns, ds_name = ds_key
            for out_field, spec in (lineage.get("fields") or _EMPTY).items():
                if not spec:
                    continue
                sources = columns[(ds_ns, ds_name, out_field)]
                for source in spec.get("inputFields") or ():
                    transformations = source.get("transformations")
                    if transformations:
                        if len(transformations) == 1:
                            kinds = transformations[0].get("type") or ""
                        else:
                            kinds = ",".join(sorted({t.get("type") for t in transformations if t.get("type")}))
                    else:
                        kinds = spec.get("transformationType") or ""
                    sources.add(
                        (source.get("namespace") or ds_ns, source.get("name") or "", source.get("field") or "", kinds)
                    )


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
    :func:`emr_lineage.events.to_dict` first. Raises :class:`GraphError` for a bad level.
    """
    if level not in LEVELS:
        raise GraphError(f"unknown level {level!r} (expected one of {', '.join(LEVELS)})")
    acc = _Accumulator()
    # Merging creates millions of small sets and tuples but no reference cycles; pausing the
    # cyclic GC keeps it from re-scanning every event in memory again and again.
    gc_was_enabled = gc.isenabled()
    gc.disable()
    try:
        acc.add_all(events)
        return _assemble(acc, level)
    finally:
        if gc_was_enabled:
            gc.enable()


def _assemble(acc: _Accumulator, level: str) -> LineageGraph:
    graph = LineageGraph(level=level, source="events")
    runs = [(_pick(run.jobs), run) for run in acc.runs.values()]
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
    # Fold targets that never sent events of their own still become job nodes.
    for job in set(folded.values()):
        job_runs.setdefault(job, 0)

    # Bulk insertion: one add_nodes_from/add_edges_from instead of 100k's of single calls.
    dataset_ids: dict[tuple[str, str], str] = {}
    nodes: list[tuple[str, dict[str, Any]]] = []
    for (namespace, name), info in acc.datasets.items():
        node_id = dataset_ids[(namespace, name)] = f"dataset:{namespace}:{name}"
        aliases = (
            [{"namespace": a[0], "name": a[1], "type": a[2]} for a in sorted(info.aliases)] if info.aliases else []
        )
        fields = [{"name": n, "type": _field_type(t)} for n, t in sorted(info.fields.items())] if info.fields else []
        nodes.append(
            (
                node_id,
                {
                    "id": node_id,
                    "type": "DATASET",
                    "namespace": namespace,
                    "name": name,
                    "aliases": aliases,
                    "fields": fields,
                },
            )
        )
    edges: list[tuple[str, str]] = []
    for job in sorted(job_runs):
        job_id = job_node_id(job[0], job[1])
        nodes.append(
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
    graph.digraph.add_nodes_from(nodes)
    graph.digraph.add_edges_from(edges)
    # Unsorted here: to_dict() and the renderers sort.
    graph.column_edges = [
        {
            "source": f"datasetField:{src[0]}:{src[1]}:{src[2]}",
            "target": f"datasetField:{out[0]}:{out[1]}:{out[2]}",
            "transformation": src[3],
        }
        for out, sources in acc.columns.items()
        for src in sources
    ]
    return graph


# --- from Marquez --------------------------------------------------------------------------


def _split_node_id(node_id: str) -> tuple[str, str, str]:
    """Best-effort ``(type, namespace, name)`` of a Marquez node id whose node is not given.

    Namespaces may contain ``:`` (``s3://b``, ``arn:aws:glue:r:a``); the name is what follows.
    """
    kind, _, rest = node_id.partition(":")
    if rest.startswith("arn:"):
        parts = rest.split(":", 6)
        return kind, ":".join(parts[:6]), parts[6] if len(parts) > 6 else ""
    if "://" in rest:
        scheme, _, tail = rest.partition("://")
        authority, _, name = tail.partition(":")
        return kind, f"{scheme}://{authority}", name
    namespace, _, name = rest.partition(":")
    return kind, namespace, name


def graph_from_marquez(
    response: Mapping[str, Any], level: str = "application", column_lineage: Mapping[str, Any] | None = None
) -> LineageGraph:
    """Build the graph from Marquez's ``GET /api/v1/lineage`` reply (``{"graph": [...]}``).

    At the application level a job whose ``parentJobName`` is set is folded into its parent,
    as for events. ``column_lineage`` is an optional ``GET /api/v1/column-lineage`` reply.
    Raises :class:`GraphError` when the reply does not have Marquez's shape.
    """
    if level not in LEVELS:
        raise GraphError(f"unknown level {level!r} (expected one of {', '.join(LEVELS)})")
    nodes = response.get("graph") if isinstance(response, Mapping) else None
    if not isinstance(nodes, list):
        raise GraphError("Marquez lineage reply has no 'graph' list")
    graph = LineageGraph(level=level, source="marquez")
    rename: dict[str, str] = {}
    by_id: dict[str, Mapping[str, Any]] = {}
    for node in nodes:
        if not isinstance(node, Mapping) or not isinstance(node.get("id"), str):
            raise GraphError("Marquez lineage node without an 'id'")
        by_id[node["id"]] = node

    for node_id, node in by_id.items():
        data = node.get("data") or {}
        kind, id_ns, id_name = _split_node_id(node_id)
        namespace = data.get("namespace") or (data.get("id") or {}).get("namespace") or id_ns
        name = data.get("name") or (data.get("id") or {}).get("name") or id_name
        if node.get("type") == "JOB":
            parent = data.get("parentJobName")
            if level == "application" and parent:
                target = graph.add_job(namespace, parent)
                graph.nodes[target]["actions"] = sorted({*graph.nodes[target]["actions"], name})
                rename[node_id] = target
                continue
            latest = data.get("latestRun") or {}
            graph.add_job(
                namespace, name, runs=1 if latest else 0, states=[latest["state"]] if latest.get("state") else []
            )
            rename[node_id] = job_node_id(namespace, name)
        elif node.get("type") == "DATASET":
            facets = data.get("facets") or {}
            identifiers = (facets.get("symlinks") or {}).get("identifiers") or []
            graph.add_dataset(
                namespace,
                name,
                aliases=sorted(
                    (
                        {"namespace": i.get("namespace", ""), "name": i.get("name", ""), "type": i.get("type", "")}
                        for i in identifiers
                    ),
                    key=lambda a: (a["namespace"], a["name"], a["type"]),
                ),
                fields=sorted(
                    ({"name": f.get("name", ""), "type": f.get("type") or ""} for f in data.get("fields") or ()),
                    key=lambda f: f["name"],
                ),
            )
            rename[node_id] = dataset_node_id(namespace, name)

    def resolve(node_id: str) -> str | None:
        if node_id in rename:
            return rename[node_id]
        kind, namespace, name = _split_node_id(node_id)
        if kind == "job":
            return graph.add_job(namespace, name)
        if kind == "dataset":
            return graph.add_dataset(namespace, name)
        return None

    for node in by_id.values():
        for edge in list(node.get("inEdges") or ()) + list(node.get("outEdges") or ()):
            if not isinstance(edge, Mapping):
                raise GraphError(f"Marquez lineage node {node['id']}: malformed edge")
            source, target = resolve(str(edge.get("origin"))), resolve(str(edge.get("destination")))
            if source and target and source != target:
                graph.add_edge(source, target)
    if column_lineage is not None:
        graph.column_edges = column_edges_from_marquez(column_lineage)
    return graph


def column_edges_from_marquez(response: Mapping[str, Any]) -> list[dict[str, Any]]:
    """Column edges of a ``GET /api/v1/column-lineage`` reply (DATASET_FIELD nodes)."""
    edges = set()
    for node in response.get("graph") or ():
        if node.get("type") != "DATASET_FIELD":
            continue
        transformation = (node.get("data") or {}).get("transformationType") or ""
        for edge in node.get("inEdges") or ():
            edges.add((edge["origin"], edge["destination"], transformation))
        for edge in node.get("outEdges") or ():
            edges.add((edge["origin"], edge["destination"], ""))
    return [{"source": s, "target": t, "transformation": x} for s, t, x in sorted(edges)]


def iter_column_edges_of(graph: LineageGraph, dataset_id: str) -> Iterator[dict[str, Any]]:
    """Column edges whose target column belongs to ``dataset_id``."""
    prefix = "datasetField:" + dataset_id[len("dataset:") :] + ":"
    for edge in graph.column_edges:
        if edge["target"].startswith(prefix):
            yield edge
