"""Datasets and their versions as Marquez reads them (DatasetDao, DatasetVersionDao, the mappers)."""

from __future__ import annotations

from typing import Any

from .jtime import format_instant
from .names import check_name, check_namespace
from .read_runs import by_event_time, merge_facets, render_run
from .store import Dataset, DatasetVersion, Facet, Store

READ_TYPES = ("DATASET", "UNKNOWN", "INPUT")


def _fields_of_version(store: Store, version_uuid: Any) -> list[dict[str, Any]]:
    """DatasetFieldDao.findByDatasetVersion: the fields mapped to a version."""
    by_uuid = {f.uuid: f for f in store.t.fields}
    return [
        {"name": by_uuid[f].name, "type": by_uuid[f].type, "tags": [], "description": by_uuid[f].description}
        for v, f in store.t.field_mapping
        if v == version_uuid
    ]


def _version_fields(dv: DatasetVersion | None) -> list[dict[str, Any]]:
    """dataset_versions.fields as written (no schema: none)."""
    if dv is None or dv.fields is None:
        return []
    return [
        {"name": f["name"], "type": f.get("type"), "tags": [], "description": f.get("description")} for f in dv.fields
    ]


def _readable(rows: list[Facet], version_uuid: Any) -> list[Facet]:
    return [f for f in rows if f.version_uuid == version_uuid and f.type in READ_TYPES]


def render_dataset(store: Store, dataset: Dataset, namespace: str, name: str, facets: dict[str, Any]) -> dict[str, Any]:
    """DatasetMapper over one datasets_view row, with the fields of its current version."""
    current = store.version(dataset.current_version_uuid)
    return {
        "id": {"namespace": check_namespace(namespace), "name": check_name(name)},
        "type": dataset.type,
        "name": name,
        "physicalName": check_name(dataset.physical_name),
        "createdAt": format_instant(dataset.created_at),
        "updatedAt": format_instant(dataset.updated_at),
        "namespace": namespace,
        "sourceName": dataset.source_name,
        "fields": _fields_of_version(store, current.uuid) if current else [],
        "tags": [],
        "lastModifiedAt": format_instant(dataset.last_modified_at),
        "lastLifecycleState": current.lifecycle_state if current else None,
        "description": dataset.description,
        "currentVersion": str(dataset.current_version_uuid) if dataset.current_version_uuid else None,
        "columnLineage": None,
        "facets": facets,
        "deleted": dataset.is_deleted,
    }


def dataset_facets(store: Store, dataset: Dataset, namespace: str, name: str) -> dict[str, Any]:
    """findDatasetByName: facets of the current version, found through the dataset's own name."""
    owner = next((d for d in store.t.datasets.values() if d.name == name and d.namespace_name == namespace), None)
    if owner is None:
        return {}
    rows = [f for f in _readable(store.t.dataset_facets, dataset.current_version_uuid) if f.owner_uuid == owner.uuid]
    return merge_facets(by_event_time(rows))


def datasets_in(store: Store, namespace: str) -> list[tuple[Dataset, str, str]]:
    """datasets_view rows of a namespace, by name."""
    rows = [row for row in store.dataset_views() if row[1] == namespace]
    return sorted(rows, key=lambda row: row[2].encode())


def _latest_facets(store: Store, dataset: Dataset) -> dict[str, Any]:
    """DatasetDao.findAll: per facet name, the row created last."""
    latest: dict[str, Facet] = {}
    for row in _readable(store.t.dataset_facets, dataset.current_version_uuid):
        if row.owner_uuid == dataset.uuid and (row.name not in latest or row.created_at >= latest[row.name].created_at):
            latest[row.name] = row
    return merge_facets(list(latest.values()))


def datasets_page(store: Store, namespace: str, limit: int, offset: int) -> tuple[list[dict[str, Any]], int]:
    """DatasetDao.findAll: only the ten datasets from ``offset`` on get facets (Marquez's query)."""
    rows = datasets_in(store, namespace)
    with_facets = {row[0].uuid for row in rows[offset : offset + 10]}
    page = []
    for dataset, ns, name in rows[offset : offset + limit]:
        facets = _latest_facets(store, dataset) if dataset.uuid in with_facets else {}
        page.append(render_dataset(store, dataset, ns, name, facets))
    return page, len(rows)


def _render_version(store: Store, dv: DatasetVersion, dataset: Dataset, namespace: str, name: str) -> dict[str, Any]:
    rows = [f for f in store.t.dataset_facets if f.version_uuid == dv.uuid and f.type in READ_TYPES]
    run = store.t.runs.get(dv.run_uuid) if dv.run_uuid else None
    return {
        "id": {"namespace": check_namespace(namespace), "name": check_name(name)},
        "type": dataset.type,
        "name": name,
        "physicalName": dataset.physical_name,
        "createdAt": format_instant(dv.created_at),
        "version": str(dv.uuid),
        "namespace": namespace,
        "sourceName": dataset.source_name,
        "fields": _version_fields(dv),
        "tags": [],
        "lifecycleState": dv.lifecycle_state,
        "description": dataset.description,
        "currentSchemaVersion": str(dv.schema_version),
        "createdByRun": render_run(store, run) if run else None,
        "facets": merge_facets(by_event_time(rows)),
    }


def versions_page(store: Store, namespace: str, name: str, limit: int, offset: int) -> dict[str, Any]:
    """DatasetVersionDao.findAll: newest first, under the dataset's primary name only."""
    aliases = {link.name for link in store.t.symlinks if not link.is_primary}
    found = []
    for dv in store.t.versions:
        if dv.namespace_name != namespace or dv.dataset_name != name:
            continue
        for dataset, ns, view_name in store.dataset_views():
            if dataset.uuid == dv.dataset_uuid and view_name not in aliases:
                found.append((dv, dataset, ns, view_name))
    found.sort(key=lambda row: row[0].created_at, reverse=True)
    page = [_render_version(store, *row) for row in found[offset : offset + limit]]
    total = sum(1 for dv in store.t.versions if dv.namespace_name == namespace and dv.dataset_name == name)
    return {"versions": page, "totalCount": total}
