"""Writing one dataset of an event (OpenLineageDao.upsertLineageDataset and the facet inserts):
namespaces, source, symlinks, dataset row, fields, dataset version, input mapping, column
lineage, in Marquez's order, so that a failure part-way leaves what Marquez leaves."""

from __future__ import annotations

import uuid
from dataclasses import dataclass
from typing import Any

from .javasem import java_sort_key, name_uuid_from_bytes
from .names import format_namespace
from .store import ColumnLineage, Dataset, DatasetVersion, Facet, Field, Namespace, Source, Store, Symlink

_DATASET_FACET_TYPES = {
    "documentation": "DATASET",
    "description": "DATASET",
    "schema": "DATASET",
    "datasource": "DATASET",
    "lifecyclestatechange": "DATASET",
    "version": "DATASET",
    "columnlineage": "DATASET",
    "ownership": "DATASET",
    "dataqualitymetrics": "INPUT",
    "dataqualityassertions": "INPUT",
    "outputstatistics": "OUTPUT",
}


class DatabaseError(RuntimeError):
    """A failed SQL statement (a 500)."""


@dataclass
class DatasetRecord:
    dataset: Dataset
    version: DatasetVersion


def upsert_namespace(store: Store, name: str, now: int) -> Namespace:
    """INSERT ... ON CONFLICT(name) DO NOTHING, then read back."""
    namespace = store.t.namespaces.get(name)
    if namespace is None:
        namespace = Namespace(store.new_uuid(), name, now, now)
        store.t.namespaces[name] = namespace
    return namespace


def _source(store: Store, facets: dict[str, Any] | None) -> Source:
    data_source = (facets or {}).get("dataSource")
    name = data_source.get("name") if data_source else "default"
    if name is None:
        raise DatabaseError("null value in column name of relation sources")
    source = store.t.sources.get(name)
    if source is None:
        source = store.t.sources[name] = Source(store.new_uuid(), name)
    return source


def _symlink(
    store: Store, dataset_uuid: uuid.UUID, name: str, namespace: Namespace, primary: bool, kind: Any
) -> Symlink:
    """INSERT ... ON CONFLICT (name, namespace_uuid) DO NOTHING, then read back."""
    for link in store.t.symlinks:
        if link.name == name and link.namespace_uuid == namespace.uuid:
            return link
    link = Symlink(dataset_uuid, name, namespace.uuid, primary, kind)
    store.t.symlinks.append(link)
    return link


def _dataset_row(
    store: Store, key: uuid.UUID, ds: dict[str, Any], namespace: Namespace, source: Source, now: int
) -> Dataset:
    facets = ds.get("facets") or {}
    description = (facets.get("documentation") or {}).get("description")
    lifecycle = (facets.get("lifecycleStateChange") or {}).get("lifecycleStateChange") or ""
    dataset = store.t.datasets.get(key)
    if dataset is None:
        dataset = Dataset(
            key,
            now,
            now,
            namespace.uuid,
            namespace.name,
            source.name,
            ds["name"],
            ds["name"],
            description,
            lifecycle.upper() == "DROP",
        )
        store.t.datasets[key] = dataset
    else:
        dataset.updated_at = now
        dataset.physical_name = ds["name"]
        dataset.description = description
        dataset.is_deleted = lifecycle.upper() == "DROP"
    return dataset


def _fields(store: Store, dataset: Dataset, schema_fields: list[dict[str, Any]] | None) -> list[Field]:
    """dataset_fields upserts: unique on (dataset, name, type); a null type never conflicts."""
    rows = []
    for spec in schema_fields or []:
        found = next(
            (
                f
                for f in store.t.fields
                if f.dataset_uuid == dataset.uuid
                and f.name == spec["name"]
                and f.type is not None
                and f.type == spec.get("type")
            ),
            None,
        )
        if found is None:
            found = Field(store.new_uuid(), dataset.uuid, spec["name"], spec.get("type"), spec.get("description"))
            store.t.fields.append(found)
        else:
            found.description = spec.get("description")
        rows.append(found)
    return rows


def _triple_key(triple: tuple[str | None, str | None, str | None]) -> tuple[Any, ...]:
    # commons-lang3 Triple.compareTo: null first, then String.compareTo
    return tuple((value is not None, java_sort_key(value or "")) for value in triple)


def _join(*parts: str | None) -> str:
    return ":".join(part for part in parts if part is not None)


def dataset_version_uuid(
    namespace: str,
    source: str,
    physical: str,
    name: str,
    lifecycle: str | None,
    fields: list[dict[str, Any]] | None,
    run: uuid.UUID | None,
) -> uuid.UUID:
    """Utils.newDatasetVersionFor: the name-based version of a dataset as one run wrote it."""
    triples = {
        (f["name"], f.get("type").upper() if f.get("type") is not None else None, f.get("description"))
        for f in fields or []
    }
    joined = ":".join(_join(*triple) for triple in sorted(triples, key=_triple_key))
    text = _join(namespace, source, name, physical, None, joined, lifecycle, str(run) if run else None)
    return name_uuid_from_bytes(text.encode())


def _version_row(
    store: Store,
    dataset: Dataset,
    ds: dict[str, Any],
    raw_ns: Namespace,
    source: Source,
    fields: list[Field],
    run: uuid.UUID | None,
    is_input: bool,
    now: int,
) -> DatasetVersion:
    if is_input and dataset.current_version_uuid is not None:
        current = store.version(dataset.current_version_uuid)
        if current is not None:
            return current
    facets = ds.get("facets") or {}
    lifecycle = (facets.get("lifecycleStateChange") or {}).get("lifecycleStateChange") or ""
    schema_fields = (facets.get("schema") or {}).get("fields")
    version = dataset_version_uuid(
        raw_ns.name, source.name, dataset.physical_name, ds["name"], lifecycle, schema_fields, run
    )
    existing = next((dv for dv in store.t.versions if dv.version == version), None)
    if existing is not None:  # ON CONFLICT (version) DO UPDATE SET run_uuid
        existing.run_uuid = None if is_input else run
        return existing
    pairs = sorted({(f.name, f.type) for f in fields}, key=lambda p: _triple_key((p[0], p[1], None)))
    schema = name_uuid_from_bytes(
        _join(dataset.namespace_name, dataset.name, ":".join(_join(*p) for p in pairs)).encode()
    )
    field_json = (
        None
        if schema_fields is None
        else [
            {"name": f["name"], "type": f.get("type"), "tags": [], "description": f.get("description")}
            for f in schema_fields
        ]
    )
    row = DatasetVersion(
        store.new_uuid(),
        now,
        dataset.uuid,
        version,
        schema,
        None if is_input else run,
        field_json,
        raw_ns.name,
        ds["name"],
        lifecycle,
    )
    store.t.versions.append(row)
    return row


def upsert_dataset(store: Store, ds: dict[str, Any], now: int, run: uuid.UUID | None, is_input: bool) -> DatasetRecord:
    """OpenLineageDao.upsertLineageDataset."""
    raw_ns = upsert_namespace(store, ds["namespace"], now)
    source = _source(store, ds.get("facets"))
    namespace = upsert_namespace(store, format_namespace(ds["namespace"]), now)
    link = _symlink(store, store.new_uuid(), ds["name"], raw_ns, True, None)
    for ident in ((ds.get("facets") or {}).get("symlinks") or {}).get("identifiers") or []:
        alias_ns = upsert_namespace(store, ident["namespace"], now)  # written as sent: not formatted
        _symlink(store, link.dataset_uuid, ident["name"], alias_ns, False, ident.get("type"))
    dataset = _dataset_row(store, link.dataset_uuid, ds, namespace, source, now)
    fields = _fields(store, dataset, ((ds.get("facets") or {}).get("schema") or {}).get("fields"))
    had_version = dataset.current_version_uuid is not None
    version = _version_row(store, dataset, ds, raw_ns, source, fields, run, is_input, now)
    for f in fields:
        if (version.uuid, f.uuid) not in store.t.field_mapping:
            store.t.field_mapping.append((version.uuid, f.uuid))
    if is_input and run is not None:
        if (run, version.uuid) not in store.t.run_inputs:
            store.t.run_inputs.append((run, version.uuid))
        if not had_version:
            store.touch_dataset_version(dataset.uuid, now, version.uuid)
    if not is_input:
        _column_lineage(store, run, ds, now, fields, version)
    return DatasetRecord(dataset, version)


def _run_input_fields(store: Store, run: uuid.UUID | None) -> list[tuple[str, str, str, uuid.UUID, uuid.UUID]]:
    """findInputFieldsDataAssociatedWithRun: (namespace, dataset, field, version, field uuid)."""
    found = []
    versions = [version for run_uuid, version in store.t.run_inputs if run_uuid == run]
    by_uuid = {f.uuid: f for f in store.t.fields}
    for version_uuid, field_uuid in store.t.field_mapping:
        if version_uuid not in versions:
            continue
        dv = store.version(version_uuid)
        for dataset, ns, name in store.dataset_views():
            if dv is not None and dataset.uuid == dv.dataset_uuid:
                found.append((ns, name, by_uuid[field_uuid].name, version_uuid, field_uuid))
    return found


def _column_lineage(
    store: Store, run: uuid.UUID | None, ds: dict[str, Any], now: int, fields: list[Field], version: DatasetVersion
) -> None:
    columns = (((ds.get("facets") or {}).get("columnLineage") or {}).get("fields")) or {}
    run_fields = _run_input_fields(store, run)
    for column, spec in columns.items():
        output = next((f for f in fields if f.name == column), None)
        if output is None or not isinstance(spec, dict):
            continue
        wanted = {(i.get("namespace"), i.get("name"), i.get("field")) for i in spec.get("inputFields") or []}
        for ns, name, field_name, in_version, in_field in run_fields:
            if (ns, name, field_name) not in wanted:
                continue
            row = next(
                (
                    c
                    for c in store.t.column_lineage
                    if (c.output_version, c.output_field, c.input_version, c.input_field)
                    == (version.uuid, output.uuid, in_version, in_field)
                ),
                None,
            )
            if row is None:
                store.t.column_lineage.append(ColumnLineage(version.uuid, output.uuid, in_version, in_field, now, now))
            else:
                row.updated_at = now


def insert_dataset_facets(
    store: Store,
    ds: dict[str, Any],
    record: DatasetRecord,
    run: uuid.UUID | None,
    event_type: str | None,
    now: int,
    is_input: bool,
) -> None:
    """The dataset's facets, then its input (or output) facets, one row per non-null facet."""
    groups = (("facets", None), ("inputFacets", "INPUT") if is_input else ("outputFacets", "OUTPUT"))
    for key, fixed_type in groups:
        facets = ds.get(key)
        if not isinstance(facets, dict):
            continue
        created = store.wall()
        for name, value in facets.items():
            if value is None:
                continue
            kind = fixed_type or _DATASET_FACET_TYPES.get(name.lower(), "UNKNOWN")
            store.t.dataset_facets.append(
                Facet(
                    created, record.dataset.uuid, record.version.uuid, run, now, event_type, kind, name, {name: value}
                )
            )
