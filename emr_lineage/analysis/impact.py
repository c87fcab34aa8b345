"""What a change to a dataset (or one of its columns) reaches: the jobs, datasets and columns
downstream of it (or upstream with ``direction="upstream"``), each with its distance.

The dataset graph is :func:`emr_lineage.lineage.graph.from_events.build_graph`'s (application level:
Spark actions folded into their application), the column graph the ``columnLineage`` facets of
the outputs (input field -> output field). Distance counts jobs: a job that reads the dataset
is 1 away, so are the datasets it writes; the jobs reading those are 2 away. A column 1 away is
an output field computed from the column by one job. Traversal is networkx's
``multi_source_dijkstra_path_length`` (a table alias may name several datasets).

A dataset is named as contracts name it (docs/contracts.md): a storage URI or local path
(:func:`emr_lineage.lineage.naming.dataset_identity`) or ``table:<name>``/``table:<db>.<name>``.
"""

from __future__ import annotations

import difflib
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

import networkx as nx

from emr_lineage.analysis.sources import AnalysisError
from emr_lineage.lineage.contracts.check import DatasetMatcher, parse_table_name, resolve_dataset
from emr_lineage.lineage.contracts.model import DatasetSpec
from emr_lineage.lineage.graph.from_events import build_graph
from emr_lineage.lineage.graph.model import LineageGraph
from emr_lineage.lineage.naming import (
    UNKNOWN_NAMESPACE,
    NamingError,
    canonical_dataset,
    dataset_identity,
    dataset_node_id,
    dataset_uri,
)

DIRECTIONS = ("downstream", "upstream")
TABLE_PREFIX = "table:"

Column = tuple[str, str, str]  # (dataset namespace, dataset name, field)


@dataclass
class Lineage:
    """The dataset graph and the column graph of a set of events."""

    graph: LineageGraph
    columns: nx.DiGraph

    @classmethod
    def of(cls, events: Iterable[Mapping[str, Any]]) -> Lineage:
        events = list(events)
        return cls(build_graph(events, level="application"), column_graph(events))

    @classmethod
    def of_graph(cls, graph: LineageGraph) -> Lineage:
        """The lineage a graph file holds (``graph --format json``): its dataset graph, and its column
        edges read back into (namespace, name, field) with the ids of the graph's own datasets."""
        datasets = {
            f"{node['namespace']}:{node['name']}": (node["namespace"], node["name"])
            for node in graph.nodes.values()
            if node.get("type") == "DATASET"
        }
        columns = nx.DiGraph()
        for edge in graph.column_edges:
            source, target = _column(edge["source"], datasets), _column(edge["target"], datasets)
            if source[2] and target[2]:
                columns.add_edge(source, target)
        return cls(graph, columns)


def _column(node_id: str, datasets: Mapping[str, tuple[str, str]]) -> Column:
    """(namespace, name, field) of a ``datasetField:<namespace>:<name>:<field>`` id: the longest
    known dataset before a colon; else the namespace ends at the first colon after its scheme."""
    body = node_id.removeprefix("datasetField:")
    end = len(body)
    while (end := body.rfind(":", 0, end)) > 0:
        if body[:end] in datasets:
            return (*datasets[body[:end]], body[end + 1 :])
    rest, _, field = body.rpartition(":")
    start = rest.find("://") + 3 if "://" in rest else 0
    split = rest.find(":", start)
    return (rest[:split], rest[split + 1 :], field) if split > 0 else (UNKNOWN_NAMESPACE, rest, field)


def column_graph(events: Iterable[Mapping[str, Any]]) -> nx.DiGraph:
    """Input field -> output field, from the ``columnLineage`` facets of the events' outputs."""
    graph = nx.DiGraph()
    for event in events:
        for output in event.get("outputs") or ():
            facets = output.get("facets") or {}
            lineage = facets.get("columnLineage") if isinstance(facets, Mapping) else None
            fields = lineage.get("fields") if isinstance(lineage, Mapping) else None
            if not isinstance(fields, Mapping):
                continue
            out_ns, out_name = output.get("namespace") or UNKNOWN_NAMESPACE, output.get("name") or ""
            for out_field, spec in fields.items():
                for source in (spec or {}).get("inputFields") or ():
                    if source.get("field"):
                        origin = (source.get("namespace") or out_ns, source.get("name") or "", source["field"])
                        graph.add_edge(origin, (out_ns, out_name, out_field))
    return graph


def dataset_matcher(text: str) -> DatasetMatcher:
    """The dataset an option names, in the forms contracts use (see the module docstring)."""
    text = text.strip()
    if "${" in text:
        raise AnalysisError(f"--dataset {text!r}: placeholders belong in contracts; give the dataset itself")
    if text.startswith(TABLE_PREFIX):
        reference = text[len(TABLE_PREFIX) :].strip()
        if not reference or len(reference.split(".")) > 2 or not all(reference.split(".")):
            raise AnalysisError(f"--dataset {text!r}: a table is table:<name> or table:<db>.<name>")
        return resolve_dataset(DatasetSpec(text, 0), {}, "--dataset")
    try:
        namespace, name = dataset_identity(text)
    except NamingError as exc:
        raise AnalysisError(f"--dataset {text!r}: {exc}") from None
    return DatasetMatcher(label=dataset_uri(namespace, name), line=0, namespace=namespace, name=name)


def _names_of(node: Mapping[str, Any]) -> list[str]:
    """How a person may name a dataset node: its URI and the tables it is known as."""
    names = [dataset_uri(node["namespace"], node["name"])]
    for namespace, name in [(node["namespace"], node["name"])] + [
        (alias["namespace"], alias["name"]) for alias in node.get("aliases", ())
    ]:
        table = parse_table_name(namespace, name)
        if table:
            names.append(f"{TABLE_PREFIX}{table[1]}")
            if table[0]:
                names.append(f"{TABLE_PREFIX}{table[0]}.{table[1]}")
    return names


def find_datasets(graph: LineageGraph, text: str) -> list[str]:
    """The dataset node ids ``text`` names; an unknown dataset is an :class:`AnalysisError`
    with the closest known names."""
    matcher = dataset_matcher(text)
    found = []
    for node_id in graph.datasets():
        node = graph.nodes[node_id]
        if matcher.matches(node) or (
            not matcher.is_table
            and canonical_dataset(node["namespace"], node["name"]) == (matcher.namespace, matcher.name)
        ):
            found.append(node_id)
    if found:
        return found
    known = sorted({name for node_id in graph.datasets() for name in _names_of(graph.nodes[node_id])})
    close = difflib.get_close_matches(matcher.label, known, n=3, cutoff=0.5) or difflib.get_close_matches(
        text.strip(), known, n=3, cutoff=0.5
    )
    hint = f"did you mean {' or '.join(repr(c) for c in close)}?" if close else f"{len(known)} dataset name(s) known"
    raise AnalysisError(f"--dataset {text!r}: no such dataset in the lineage ({hint})")


@dataclass(frozen=True)
class Affected:
    """One job, dataset or column reached, ``distance`` jobs away."""

    kind: str  # "job" | "dataset" | "column"
    namespace: str
    name: str
    distance: int
    field: str | None = None

    @property
    def label(self) -> str:
        return self.name if self.kind == "job" else dataset_uri(self.namespace, self.name)

    def as_dict(self) -> dict[str, Any]:
        row = {"kind": self.kind, "namespace": self.namespace, "name": self.name, "distance": self.distance}
        if self.kind != "job":
            row["dataset"] = dataset_uri(self.namespace, self.name)
        if self.field is not None:
            row["field"] = self.field
        return row


@dataclass
class Impact:
    """What :func:`impact` found: ``jobs``, ``datasets`` and ``columns`` by distance, then name."""

    dataset: str
    matched: list[str]
    direction: str
    depth: int | None
    column: str | None = None
    jobs: list[Affected] = field(default_factory=list)
    datasets: list[Affected] = field(default_factory=list)
    columns: list[Affected] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)

    @property
    def reached(self) -> list[Affected]:
        return self.jobs + self.datasets + self.columns

    def as_dict(self) -> dict[str, Any]:
        return {
            "dataset": self.dataset,
            "matched": self.matched,
            "column": self.column,
            "direction": self.direction,
            "depth": self.depth,
            "jobs": [a.as_dict() for a in self.jobs],
            "datasets": [a.as_dict() for a in self.datasets],
            "columns": [a.as_dict() for a in self.columns],
            "notes": list(self.notes),
        }


def _ordered(items: Iterable[Affected]) -> list[Affected]:
    return sorted(items, key=lambda a: (a.distance, a.kind, a.namespace, a.name, a.field or ""))


def _oriented(graph: nx.DiGraph, direction: str) -> nx.DiGraph:
    if direction not in DIRECTIONS:
        raise AnalysisError(f"unknown direction {direction!r} (expected {' or '.join(DIRECTIONS)})")
    return graph if direction == "downstream" else graph.reverse(copy=False)


def dataset_reach(lineage: Lineage, sources: list[str], direction: str, depth: int | None) -> tuple[list, list]:
    """(jobs, datasets) reached from the dataset nodes ``sources``, ``depth`` jobs at most."""
    graph = _oriented(lineage.graph.digraph, direction)
    # Edges alternate dataset -> job -> dataset: N jobs away is at most 2N edges.
    hops = nx.multi_source_dijkstra_path_length(graph, set(sources), cutoff=None if depth is None else 2 * depth)
    jobs, datasets = [], []
    for node_id, edges in hops.items():
        if edges == 0:
            continue
        node = lineage.graph.nodes[node_id]
        affected = Affected(node["type"].lower(), node["namespace"], node["name"], (edges + 1) // 2)
        (jobs if node["type"] == "JOB" else datasets).append(affected)
    return _ordered(jobs), _ordered(datasets)


def _jobs_between(lineage: Lineage, origin: Column, target: Column) -> set[str]:
    """The jobs that read ``origin``'s dataset and write ``target``'s: those computing the column."""
    digraph = lineage.graph.digraph
    source, sink = dataset_node_id(origin[0], origin[1]), dataset_node_id(target[0], target[1])
    if source not in digraph or sink not in digraph:
        return set()
    return set(digraph.successors(source)) & set(digraph.predecessors(sink))


def column_reach(
    lineage: Lineage, sources: Iterable[Column], direction: str, depth: int | None
) -> tuple[list[Affected], list[Affected], list[Affected]]:
    """(jobs, datasets, columns) reached from the columns ``sources`` through column lineage."""
    starts = {column for column in sources if column in lineage.columns}
    if not starts:
        return [], [], []
    graph = _oriented(lineage.columns, direction)
    hops = nx.multi_source_dijkstra_path_length(graph, starts, cutoff=depth)
    columns = [Affected("column", c[0], c[1], d, field=c[2]) for c, d in hops.items() if d > 0]
    datasets: dict[tuple[str, str], int] = {}
    jobs: dict[str, int] = {}
    for column, distance in hops.items():
        if distance == 0:
            continue
        key = (column[0], column[1])
        datasets[key] = min(datasets.get(key, distance), distance)
        for previous in graph.predecessors(column):
            if hops.get(previous) == distance - 1:
                pair = (previous, column) if direction == "downstream" else (column, previous)
                for job_id in _jobs_between(lineage, *pair):
                    jobs[job_id] = min(jobs.get(job_id, distance), distance)
    job_rows = [
        Affected("job", lineage.graph.nodes[j]["namespace"], lineage.graph.nodes[j]["name"], d) for j, d in jobs.items()
    ]
    dataset_rows = [Affected("dataset", ns, name, d) for (ns, name), d in datasets.items()]
    return _ordered(job_rows), _ordered(dataset_rows), _ordered(columns)


def known_fields(lineage: Lineage, dataset_ids: Iterable[str]) -> set[str]:
    """The fields of the datasets: their schema facets and their columns in column lineage."""
    fields: set[str] = set()
    for node_id in dataset_ids:
        node = lineage.graph.nodes[node_id]
        fields.update(f["name"] for f in node.get("fields", ()))
        fields.update(c[2] for c in lineage.columns if (c[0], c[1]) == (node["namespace"], node["name"]))
    return fields


def impact(
    lineage: Lineage,
    dataset: str,
    *,
    column: str | None = None,
    direction: str = "downstream",
    depth: int | None = None,
) -> Impact:
    """What a change to ``dataset`` (or its ``column``) reaches in ``direction``, ``depth`` jobs at most."""
    matched = find_datasets(lineage.graph, dataset)
    nodes = [lineage.graph.nodes[n] for n in matched]
    report = Impact(
        dataset=dataset,
        matched=[dataset_uri(n["namespace"], n["name"]) for n in nodes],
        direction=direction,
        depth=depth,
        column=column,
    )
    if column is None:
        report.jobs, report.datasets = dataset_reach(lineage, matched, direction, depth)
        return report
    fields = known_fields(lineage, matched)
    if column not in fields:
        close = difflib.get_close_matches(column, sorted(fields), n=3, cutoff=0.5)
        hint = f"did you mean {' or '.join(repr(c) for c in close)}?" if close else f"{len(fields)} field(s) known"
        raise AnalysisError(f"--column {column!r}: no such field of {', '.join(report.matched)} ({hint})")
    sources = [(n["namespace"], n["name"], column) for n in nodes]
    report.jobs, report.datasets, report.columns = column_reach(lineage, sources, direction, depth)
    if not report.columns:
        report.notes.append(
            f"no column lineage {'from' if direction == 'downstream' else 'into'} {column!r}: "
            "no columnLineage facet of the events uses it"
        )
    return report
