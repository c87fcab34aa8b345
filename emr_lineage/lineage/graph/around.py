"""The part of a lineage graph around one node (``graph --node ID --depth N``).

Walked as Marquez walks its lineage view: along edges in either direction, so a job's inputs, outputs,
their other readers and writers, and on; ``depth`` counts the jobs away from the start (0: the start
and its neighbours: a job's datasets, or a dataset's readers and writers).
"""

from __future__ import annotations

import difflib

from emr_lineage.lineage.graph.model import GraphError, LineageGraph

DEFAULT_DEPTH = 20


def around(graph: LineageGraph, node_id: str, depth: int = DEFAULT_DEPTH) -> LineageGraph:
    """The nodes within ``depth`` jobs of ``node_id``, the edges between them and their datasets' column
    edges, and the graph's runs (``graph --with-runs``) whole: a run is kept by run id, not by job node (an
    action's run folds into its application's job by rules of the graph's assembly), so ``runs``, ``audit``
    and ``drift`` read from the part answer as from the whole. :class:`GraphError` when the graph has no
    such node (it names the nearest ids)."""
    import networkx as nx

    digraph = graph.digraph
    if node_id not in digraph:
        raise GraphError(_unknown(graph, node_id))
    reach = nx.single_source_shortest_path_length(digraph.to_undirected(as_view=True), node_id, cutoff=2 * depth + 1)
    part = LineageGraph(graph.level, graph.source)
    kept = sorted(reach)
    part.add_bulk(
        [(node, dict(digraph.nodes[node])) for node in kept],
        [(source, target) for source, target in digraph.subgraph(kept).edges()],
    )
    datasets = {node.removeprefix("dataset:") for node in kept if digraph.nodes[node]["type"] == "DATASET"}

    def inside(field_id: str) -> bool:
        return field_id.removeprefix("datasetField:").rpartition(":")[0] in datasets

    part.column_edges = [e for e in graph.column_edges if inside(e["source"]) and inside(e["target"])]
    part.history = graph.history
    return part


def _unknown(graph: LineageGraph, node_id: str) -> str:
    kind = node_id.partition(":")[0]
    if kind not in ("job", "dataset"):
        return f"--node {node_id!r}: expected job:<namespace>:<name> or dataset:<namespace>:<name>"
    near = difflib.get_close_matches(node_id, [n for n in graph.nodes if n.startswith(kind + ":")], n=3, cutoff=0.8)
    hint = f"; did you mean {', '.join(near)}?" if near else ""
    level = " (at the application level a Spark action is folded into its application: --level action)"
    return f"--node {node_id}: not in the lineage read{level if kind == 'job' else ''}{hint}"
