"""What the HTML report draws of a graph: a Spark ML model saved as many datasets, folded into one node,
and labels that tell the datasets apart.

**A saved model.** Spark ML's ``save`` writes a folder: ``<folder>/metadata`` (the params, JSON text),
``<folder>/data`` (the fitted values, Parquet) and, for a pipeline, ``<folder>/stages/<i>_<uid>/``
with the same two for each stage (``DefaultParamsWriter``; tree models add ``treesMetadata``). The
listener reports each of those directories as a dataset, so one ``PipelineModel.save`` is a dozen
datasets labelled ``metadata`` and ``data``. Datasets of one namespace are folded into one node named
for ``<folder>`` when they are one save in that layout: ``<folder>/metadata`` is among them, every other
one is a ``metadata``, ``data`` or ``treesMetadata`` directory under ``<folder>``, and all were written
by the same jobs. The outermost such folder wins (a stage's folder is inside its pipeline's). The node
keeps the folder's id and name (``dataset:<namespace>:<folder>``), lists its parts (their ids and paths
below the folder) and takes over their edges; column edges keep the parts' field ids.

**Labels.** A dataset is labelled with the last part of its path, and with as many parts before it as
tell it apart from every other dataset of the same last part (``raw/orders`` and ``curated/orders``;
``metadata`` or ``data`` left unfolded always with its folder); a job with its name. The whole name
stays in the node's tooltip and panel.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from emr_lineage.lineage.graph.model import LineageGraph
from emr_lineage.lineage.naming import dataset_node_id

METADATA = "metadata"
# The directories Spark ML's writers make in a saved model's folder (and in each stage's).
MODEL_DIRECTORIES = frozenset({METADATA, "data", "treesMetadata"})


@dataclass(frozen=True)
class Model:
    """A saved model's folder: its node (``dataset:<namespace>:<folder>``) and the datasets it folds."""

    namespace: str
    folder: str
    members: tuple[str, ...]  # dataset ids: the folder's own (when reported) and its parts

    @property
    def node_id(self) -> str:
        return dataset_node_id(self.namespace, self.folder)


@dataclass
class Folded:
    """The graph as drawn: ``graph`` with each saved model one node, and what each such node folds."""

    graph: LineageGraph
    into: dict[str, str] = field(default_factory=dict)  # a folded dataset's id -> its model's node id


def saved_models(graph: LineageGraph) -> list[Model]:
    """The saved models among the graph's datasets (see the module's doc)."""
    nodes = graph.nodes
    names: dict[str, dict[str, str]] = defaultdict(dict)  # namespace -> name -> id
    for node_id in graph.datasets():
        names[nodes[node_id]["namespace"]][nodes[node_id]["name"]] = node_id
    writers = graph.digraph.predecessors
    models: list[Model] = []
    folded: set[str] = set()
    for namespace, ids in sorted(names.items()):
        for folder in sorted({n[: -len(METADATA) - 1] for n in ids if n.endswith("/" + METADATA)}, key=len):
            below = sorted(name for name in ids if name.startswith(folder + "/"))
            members = ([ids[folder]] if folder in ids else []) + [ids[name] for name in below]
            if folded.intersection(members):
                continue  # a stage of a model already folded
            if not all(name.rsplit("/", 1)[-1] in MODEL_DIRECTORIES for name in below):
                continue
            if len({frozenset(writers(member)) for member in members}) != 1:
                continue  # not one save
            models.append(Model(namespace, folder, tuple(members)))
            folded.update(members)
    return models


def fold(graph: LineageGraph) -> Folded:
    """``graph`` with every saved model one node holding its ``parts`` (a new graph; ``graph`` is left as it
    is). A part is ``{"id", "name", "fields"}``, its name the path below the folder."""
    models = saved_models(graph)
    if not models:
        return Folded(graph)
    nodes = graph.nodes
    into = {member: model.node_id for model in models for member in model.members}
    drawn = {node_id: dict(attrs) for node_id, attrs in nodes.items() if node_id not in into}
    for model in models:
        own = dict(nodes.get(model.node_id, {}))  # the folder itself, when the listener reported it
        parts = [
            {"id": member, "name": nodes[member]["name"][len(model.folder) + 1 :], "fields": nodes[member]["fields"]}
            for member in model.members
            if member != model.node_id
        ]
        drawn[model.node_id] = {
            "aliases": [],
            "fields": [],
            **own,
            "id": model.node_id,
            "type": "DATASET",
            "namespace": model.namespace,
            "name": model.folder,
            "parts": parts,
        }
    edges = sorted({(into.get(source, source), into.get(target, target)) for source, target in graph.edges()})
    folded = LineageGraph(graph.level, graph.source)
    folded.add_bulk(sorted(drawn.items()), edges)
    folded.column_edges = graph.column_edges
    return Folded(folded, into)


def labels(nodes: Mapping[str, Mapping[str, Any]]) -> dict[str, str]:
    """Each node's label: a job's name; a dataset's last path part, with the parts before it that tell it
    apart from the other datasets of that last part (see the module's doc)."""
    found = {node_id: attrs["name"] for node_id, attrs in nodes.items() if attrs["type"] == "JOB"}
    paths = {
        node_id: [part for part in attrs["name"].split("/") if part] or [attrs["name"]]
        for node_id, attrs in nodes.items()
        if attrs["type"] != "JOB"
    }
    # A last part that names no dataset (a model's metadata or data directory left unfolded) shows its folder.
    depth = {node_id: 2 if parts[-1] in MODEL_DIRECTORIES and len(parts) > 1 else 1 for node_id, parts in paths.items()}
    while True:
        by_label: dict[str, list[str]] = defaultdict(list)
        for node_id, parts in paths.items():
            by_label["/".join(parts[-depth[node_id] :])].append(node_id)
        clashing = [
            node_id
            for ids in by_label.values()
            if len(ids) > 1
            for node_id in ids
            if depth[node_id] < len(paths[node_id])
        ]
        if not clashing:
            break
        for node_id in clashing:
            depth[node_id] += 1
    found.update({node_id: "/".join(parts[-depth[node_id] :]) for node_id, parts in paths.items()})
    return found
