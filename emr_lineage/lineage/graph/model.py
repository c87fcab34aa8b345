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

import json
import operator
from collections.abc import Mapping
from types import MappingProxyType
from typing import TYPE_CHECKING, Any

from emr_lineage.errors import EmrLineageError, json_type
from emr_lineage.lineage.graph.history import RunHistory
from emr_lineage.lineage.naming import dataset_node_id, job_node_id

if TYPE_CHECKING:
    import networkx as nx

LEVELS = ("application", "action")
_EMPTY: Mapping[str, Any] = {}


# How column edges are sorted (JSON form, report): by source, target, transformation.
COLUMN_EDGE_ORDER = operator.itemgetter("source", "target", "transformation")


class GraphError(EmrLineageError, ValueError):
    """Input that cannot become a graph (e.g. an unknown level or a malformed Marquez reply)."""


def check_level(level: str) -> None:
    """Raise :class:`GraphError` unless ``level`` is one of :data:`LEVELS`."""
    if level not in LEVELS:
        raise GraphError(f"unknown level {level!r} (expected one of {', '.join(LEVELS)})")


class LineageGraph:
    """A lineage graph: a :class:`networkx.DiGraph` of JOB and DATASET nodes plus column lineage.

    ``nodes`` maps node id to its attributes (``id``, ``type``, ``namespace``, ``name`` and,
    for datasets, ``aliases``/``fields``; for jobs, ``runs``/``states``/``actions``).
    ``column_edges`` holds ``{"source", "target", "transformation"}`` between
    ``datasetField:<ns>:<dataset>:<field>`` ids, in no particular order (``to_dict`` sorts).
    ``history``: the runs themselves, when the graph was built with them (``graph --with-runs``).
    """

    def __init__(self, level: str = "application", source: str = "events") -> None:
        check_level(level)
        self.level = level
        self.source = source
        self.column_edges: list[dict[str, Any]] = []
        self.history: RunHistory | None = None
        self._digraph: nx.DiGraph | None = None
        # What add_bulk added before the networkx graph is asked for: the JSON form, the contract
        # check and the job/dataset lists of a graph built from events need neither networkx's
        # import nor 100k's of node insertions (together about a tenth of `graph --events`).
        # add_bulk only keeps its lists; they are merged into node id -> attributes and the edges
        # (in the order first added) when first read.
        self._added: list[tuple[list[tuple[str, dict[str, Any]]], list[tuple[str, str]]]] = []
        self._bulk_nodes: dict[str, dict[str, Any]] = {}
        self._bulk_edges: dict[tuple[str, str], None] = {}
        self._neighbours: tuple[dict[str, list[str]], dict[str, list[str]]] | None = None

    @property
    def digraph(self) -> nx.DiGraph:
        """The networkx graph, made on first use (then the only store of nodes and edges)."""
        if self._digraph is None:
            import networkx as nx  # here, not at import: the event reader's worker process never needs it

            nodes, edges = self._bulk()
            digraph = nx.DiGraph()
            digraph.add_nodes_from(nodes.items())
            digraph.add_edges_from(edges)
            self._digraph, self._bulk_nodes, self._bulk_edges, self._neighbours = digraph, {}, {}, None
        return self._digraph

    # -- building -------------------------------------------------------------------------

    def add_bulk(self, nodes: list[tuple[str, dict[str, Any]]], edges: list[tuple[str, str]]) -> None:
        """Add nodes (id, attributes) and edges, all at once. As networkx would: a node id given
        twice is one node with the attributes of both (two namespaces can make one id, e.g.
        ``s3:b`` + ``x`` and ``s3`` + ``b:x``), an edge's ends are nodes, an edge is there once.
        The lists and attribute dicts are the graph's from then on (not copied)."""
        if self._digraph is not None:
            self._digraph.add_nodes_from(nodes)
            self._digraph.add_edges_from(edges)
        else:
            self._added.append((nodes, edges))

    def _bulk(self) -> tuple[dict[str, dict[str, Any]], dict[tuple[str, str], None]]:
        """The bulk-added nodes and edges, merged (see add_bulk)."""
        known_nodes, known_edges = self._bulk_nodes, self._bulk_edges
        for nodes, edges in self._added:
            for node_id, attributes in nodes:
                known = known_nodes.get(node_id)
                if known is None:
                    known_nodes[node_id] = attributes
                else:
                    known.update(attributes)
            for edge in edges:
                if edge not in known_edges:
                    known_edges[edge] = None
                    known_nodes.setdefault(edge[0], {})
                    known_nodes.setdefault(edge[1], {})
            self._neighbours = None
        self._added = []
        return known_nodes, known_edges

    def clear(self) -> None:
        """Drop every node and edge (their memory back at once, without waiting for the cyclic
        GC: networkx's cached views make a reference cycle with its graph)."""
        if self._digraph is not None:
            self._digraph.clear()
        self._added, self._bulk_nodes, self._bulk_edges, self._neighbours, self.column_edges = [], {}, {}, None, []
        self.history = None

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
        """Node id -> attributes: a read-only view (before networkx is made, of the nodes added
        so far; ask again after adding)."""
        return MappingProxyType(self._bulk()[0]) if self._digraph is None else self._digraph.nodes

    def jobs(self) -> list[str]:
        return sorted(n for n, a in self.nodes.items() if a["type"] == "JOB")

    def datasets(self) -> list[str]:
        return sorted(n for n, a in self.nodes.items() if a["type"] == "DATASET")

    def inputs_of(self, job_id: str) -> list[str]:
        """Dataset ids read by a job (sorted)."""
        if self._digraph is None:
            return sorted(self._adjacency()[0].get(job_id, ()))
        return sorted(self._digraph.predecessors(job_id)) if job_id in self._digraph else []

    def outputs_of(self, job_id: str) -> list[str]:
        """Dataset ids written by a job (sorted)."""
        if self._digraph is None:
            return sorted(self._adjacency()[1].get(job_id, ()))
        return sorted(self._digraph.successors(job_id)) if job_id in self._digraph else []

    def _adjacency(self) -> tuple[dict[str, list[str]], dict[str, list[str]]]:
        """(predecessors, successors) of each node of the bulk-added edges, made on first use."""
        edges = self._bulk()[1]  # first: what add_bulk added since makes them anew
        if self._neighbours is None:
            predecessors: dict[str, list[str]] = {}
            successors: dict[str, list[str]] = {}
            for source, target in edges:
                successors.setdefault(source, []).append(target)
                predecessors.setdefault(target, []).append(source)
            self._neighbours = predecessors, successors
        return self._neighbours

    def edges(self) -> list[tuple[str, str]]:
        return sorted(self._bulk()[1] if self._digraph is None else self._digraph.edges())

    def layers(self) -> list[list[str]]:
        """Nodes in left-to-right layers (topological generations; cycles share a layer).

        A node without predecessors moves right to just before its first consumer, so a
        late-read source does not draw a long edge across the page.
        """
        import networkx as nx

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

    def to_dict(self, copy: bool = True) -> dict[str, Any]:
        """The documented JSON form: sorted ``nodes``, ``edges`` and ``columnEdges`` (and ``runs`` when the
        graph has its history). ``copy=False``: the nodes are the graph's own attribute dicts (for a writer
        that only reads them)."""
        # Node attributes are copied unsorted: every JSON writer sorts the keys.
        attributes = self.nodes
        nodes = [attributes[n] for n in sorted(attributes)]
        if copy:
            nodes = [dict(node) for node in nodes]
        edges = [{"source": s, "target": t} for s, t in self.edges()]
        columns = sorted(self.column_edges, key=COLUMN_EDGE_ORDER)
        form = {"level": self.level, "nodes": nodes, "edges": edges, "columnEdges": columns}
        if self.history is not None:
            form["runs"] = self.history.to_dict()
        return form

    @classmethod
    def from_dict(cls, data: Mapping[str, Any], source: str = "file") -> LineageGraph:
        """The graph of :meth:`to_dict`'s form (what ``graph --format json`` writes): its inverse.
        Raises :class:`GraphError` for anything else."""
        nodes, edges, columns = _checked_form(data)
        graph = cls(data["level"], source)
        try:
            history = RunHistory.from_dict(data["runs"]) if "runs" in data else None
        except ValueError as exc:
            raise GraphError(f"not the JSON form of a lineage graph (docs/graph.md): {exc}") from None
        graph.add_bulk(nodes, edges)
        graph.column_edges = columns
        graph.history = history
        return graph

    def to_json(self) -> str:
        return json.dumps(self.to_dict(), indent=2, sort_keys=True)

    def __eq__(self, other: object) -> bool:
        return isinstance(other, LineageGraph) and self.to_dict() == other.to_dict()

    def __repr__(self) -> str:
        n_jobs, n_datasets = len(self.jobs()), len(self.datasets())
        n_edges = len(self._bulk()[1]) if self._digraph is None else self._digraph.number_of_edges()
        return f"LineageGraph(level={self.level!r}, jobs={n_jobs}, datasets={n_datasets}, edges={n_edges})"


_NODE_TYPES = ("JOB", "DATASET")
_FORM = "not the JSON form of a lineage graph (docs/graph.md)"


def _objects(data: Mapping[str, Any], key: str, required: bool = True) -> list[Mapping[str, Any]]:
    """``data[key]``: an array of objects (``key`` absent and not ``required``: none)."""
    if key not in data and not required:
        return []
    if key not in data:
        raise GraphError(f"{_FORM}: no {key!r}")
    items = data[key]
    if not isinstance(items, list):
        raise GraphError(f"{_FORM}: {key!r} is a JSON {json_type(items)}, not an array")
    for number, item in enumerate(items, 1):
        if not isinstance(item, dict):
            raise GraphError(f"{_FORM}: {key[:-1]} {number} is a JSON {json_type(item)}, not an object")
    return items


def _checked_form(
    data: Any,
) -> tuple[list[tuple[str, dict[str, Any]]], list[tuple[str, str]], list[dict[str, Any]]]:
    """The nodes, edges and column edges of a graph's JSON form, each checked: a node has a string
    ``id``, ``namespace`` and ``name`` and a ``type`` of JOB or DATASET; an edge joins two of its nodes."""
    if not isinstance(data, dict):
        raise GraphError(f"{_FORM}: a JSON {json_type(data)}, not an object")
    if not isinstance(data.get("level"), str):
        raise GraphError(f"{_FORM}: no 'level' string ({', '.join(LEVELS)})")
    nodes = []
    for number, node in enumerate(_objects(data, "nodes"), 1):
        node_id = node.get("id")
        if not isinstance(node_id, str) or not node_id:
            raise GraphError(f"{_FORM}: node {number} has no 'id' string")
        for key in ("type", "namespace", "name"):
            if not isinstance(node.get(key), str):
                raise GraphError(f"{_FORM}: node {node_id!r} has no {key!r} string")
        if node["type"] not in _NODE_TYPES:
            raise GraphError(f"{_FORM}: node {node_id!r} has type {node['type']!r}; expected JOB or DATASET")
        nodes.append((node_id, dict(node)))
    known = {node_id for node_id, _ in nodes}
    edges = []
    for edge in _objects(data, "edges"):
        ends = (edge.get("source"), edge.get("target"))
        if not all(isinstance(end, str) for end in ends):
            raise GraphError(f"{_FORM}: an edge without a 'source' and a 'target' string: {json.dumps(edge)[:200]}")
        for end in ends:
            if end not in known:
                raise GraphError(f"edge {ends[0]} -> {ends[1]}: {end!r} is not one of its nodes (docs/graph.md)")
        edges.append((ends[0], ends[1]))
    columns = []
    for edge in _objects(data, "columnEdges", required=False):
        if not all(isinstance(edge.get(key), str) for key in ("source", "target")) or "transformation" not in edge:
            raise GraphError(f"{_FORM}: a column edge without 'source', 'target' and 'transformation'")
        columns.append(dict(edge))
    return nodes, edges, columns
