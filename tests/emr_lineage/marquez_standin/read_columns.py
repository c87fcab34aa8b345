"""GET /api/v1/column-lineage (ColumnLineageService, ColumnLineageDao.getLineage) and the
columnLineage of datasets (ColumnLineageService.enrichWithColumnLineage)."""

from __future__ import annotations

import uuid
from typing import Any

from .javasem import java_sort_key
from .names import NodeId
from .reply import ReplyError, not_found
from .store import ColumnLineage, Dataset, Store


def latest_rows(store: Store, until: int | None) -> list[ColumnLineage]:
    """column_lineage_latest: per (output field, input field) the row updated last."""
    latest: dict[tuple[uuid.UUID, uuid.UUID], ColumnLineage] = {}
    for row in store.t.column_lineage:
        if until is not None and row.created_at > until:
            continue
        key = (row.output_field, row.input_field)
        if key not in latest or row.updated_at >= latest[key].updated_at:
            latest[key] = row
    return list(latest.values())


def _reachable(rows: list[ColumnLineage], start: set[uuid.UUID], depth: int, downstream: bool) -> list[ColumnLineage]:
    """The recursive CTE: rows reachable from the start fields, one edge per level, up to depth."""
    frontier = [row for row in rows if row.output_field in start]
    seen = {id(row) for row in frontier}
    level = 0
    while frontier and level < depth - 1:
        following = []
        for node in frontier:
            for row in rows:
                upstream = row.output_field == node.input_field
                down = downstream and row.input_field == node.output_field
                if (upstream or down) and id(row) not in seen:
                    seen.add(id(row))
                    following.append(row)
        frontier, level = following, level + 1
    return [row for row in rows if id(row) in seen]


def _primary_field_names(store: Store) -> dict[uuid.UUID, tuple[str, str, str, str | None]]:
    """dataset_fields_view joined to the dataset's primary symlink: field -> (ns, dataset, name, type)."""
    names = {}
    for field in store.t.fields:
        dataset = store.t.datasets.get(field.dataset_uuid)
        if dataset is None:
            continue
        for link in store.t.symlinks:
            if link.dataset_uuid == dataset.uuid and link.is_primary:
                namespace = store.namespace_by_uuid(link.namespace_uuid).name
                names[field.uuid] = (namespace, link.name, field.name, field.type)
    return names


def _node_rows(store: Store, rows: list[ColumnLineage], with_version: bool) -> list[dict[str, Any]]:
    """GROUP BY output field (and version): its distinct input fields, sorted as PostgreSQL sorts arrays."""
    names = _primary_field_names(store)
    groups: dict[tuple[Any, ...], set[tuple[str, ...]]] = {}
    for row in rows:
        out, inp = names.get(row.output_field), names.get(row.input_field)
        if out is None or inp is None:
            continue
        key = (*out, row.output_version if with_version else None)
        groups.setdefault(key, set()).add((inp[0], inp[1], str(row.input_version), inp[2]))
    nodes = []
    for (ns, dataset, field, kind, version), inputs in groups.items():
        ordered = sorted(inputs, key=lambda item: tuple(part.encode() for part in item))
        nodes.append(
            {
                "namespace": ns,
                "dataset": dataset,
                "datasetVersion": str(version) if version else None,
                "field": field,
                "fieldType": kind,
                "inputFields": [
                    {
                        "namespace": i[0],
                        "dataset": i[1],
                        "datasetVersion": i[2],
                        "field": i[3],
                        "transformationDescription": None,
                        "transformationType": None,
                    }
                    for i in ordered
                ],
            }
        )
    return nodes


def _field_id(data: dict[str, Any]) -> str:
    return f"datasetField:{data['namespace']}:{data['dataset']}:{data['field']}"


def _graph(nodes: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """ColumnLineageService.toLineage: nodes by id, inEdges to inputs, outEdges to consumers."""
    graph: dict[str, dict[str, Any]] = {}
    edges_in: dict[str, set[str]] = {}
    edges_out: dict[str, set[str]] = {}
    for data in nodes:
        node = _field_id(data)
        graph[node] = dict(data, transformationDescription=None, transformationType=None)
        for item in data["inputFields"]:
            source = _field_id(item)
            graph.setdefault(source, {**item, "fieldType": "", "inputFields": []})
            edges_out.setdefault(source, set()).add(node)
            edges_in.setdefault(node, set()).add(source)
    result = []
    for node in sorted(graph, key=java_sort_key):
        ins = sorted(edges_in.get(node, ()), key=java_sort_key)
        outs = sorted(edges_out.get(node, ()), key=java_sort_key)
        result.append(
            {
                "id": node,
                "type": "DATASET_FIELD",
                "data": graph[node],
                "inEdges": [{"origin": node, "destination": other} for other in ins],
                "outEdges": [{"origin": node, "destination": other} for other in outs],
            }
        )
    return result


def _start_fields(store: Store, node: NodeId) -> list[uuid.UUID]:
    if node.kind == "dataset":
        namespace, name = node.dataset()
        dataset = store.dataset_view(namespace, name)
        mapped = {f for _, f in store.t.field_mapping}
        return [f.uuid for f in store.t.fields if dataset and f.dataset_uuid == dataset.uuid and f.uuid in mapped]
    if node.kind == "datasetField":
        namespace, name, field = node.dataset_field()
        dataset = store.dataset_view(namespace, name)
        return [f.uuid for f in store.t.fields if dataset and f.dataset_uuid == dataset.uuid and f.name == field][:1]
    if node.kind == "job":
        namespace, name = node.job()
        runs = [r for r in store.t.runs.values() if r.namespace_name == namespace and r.job_name == name]
        if not runs:
            return []
        latest = max(runs, key=lambda r: r.created_at)
        written = {dv.dataset_uuid for dv in store.t.versions if dv.run_uuid == latest.uuid}
        return [f.uuid for f in store.t.fields if f.dataset_uuid in written]
    return []


def column_lineage(store: Store, node: NodeId, depth: int, downstream: bool) -> dict[str, Any]:
    start = _start_fields(store, node)
    if not start:
        raise ReplyError(not_found("Could not find node"))
    rows = _reachable(latest_rows(store, store.wall()), set(start), depth, downstream)
    return {"graph": _graph(_node_rows(store, rows, with_version=True))}


def dataset_column_lineage(store: Store, dataset: Dataset, namespace: str, name: str) -> list[dict[str, Any]] | None:
    """enrichWithColumnLineage for one datasets_view row (None when it has none). Marquez returns
    these in a java HashSet of objects without hashCode: the order is random in every answer."""
    namespace_uuid = store.t.namespaces[namespace].uuid if namespace in store.t.namespaces else None
    names = _primary_field_names(store)
    own = {f.uuid for f in store.t.fields if f.dataset_uuid == dataset.uuid}
    rows = [row for row in latest_rows(store, None) if row.output_field in own]
    rows = [
        row
        for row in rows
        if names.get(row.output_field)
        and any(
            link.is_primary and link.namespace_uuid == namespace_uuid and link.dataset_uuid == dataset.uuid
            for link in store.t.symlinks
        )
    ]
    if not rows:
        return None
    lineage = []
    for data in _node_rows(store, rows, with_version=False):
        inputs = [
            {
                "namespace": i["namespace"],
                "dataset": i["dataset"],
                "field": i["field"],
                "transformationDescription": None,
                "transformationType": None,
            }
            for i in data["inputFields"]
        ]
        lineage.append(
            {
                "name": data["field"],
                "inputFields": inputs,
                "transformationDescription": None,
                "transformationType": None,
            }
        )
    return lineage
