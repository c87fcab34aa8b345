"""GET /api/v1/lineage (LineageService.lineage and LineageDao): jobs linked through the datasets of
their CURRENT versions only (R5), each job's latestRun being the run its currentRunUuid names (R6)."""

from __future__ import annotations

import uuid
from typing import Any

from .javasem import dataset_id_hash, hash_set_order, java_sort_key, java_uuid, lombok_hash
from .jtime import format_instant
from .names import NodeId, check_name, check_namespace
from .read_datasets import _version_fields
from .read_runs import render_run
from .reply import ReplyError, dataset_not_found, job_not_found, not_found
from .store import Dataset, Job, Store


def _job_io(store: Store) -> dict[uuid.UUID, tuple[set[uuid.UUID], set[uuid.UUID]]]:
    """job_io: each job's current input and output datasets."""
    found: dict[uuid.UUID, tuple[set[uuid.UUID], set[uuid.UUID]]] = {}
    for row in store.t.io:
        if row.is_current:
            inputs, outputs = found.setdefault(row.job_uuid, (set(), set()))
            (inputs if row.io_type == "INPUT" else outputs).add(row.dataset_uuid)
    return found


def _lineage_jobs(store: Store, start: uuid.UUID, depth: int) -> dict[uuid.UUID, tuple[set, set]]:
    """The recursive query: jobs sharing a dataset with a job already found, depth times."""
    io = _job_io(store)
    found = {start: io.get(start, (set(), set()))}
    frontier, level = [start], 0
    while frontier and level < depth:
        following = []
        for job_uuid in frontier:
            datasets = found[job_uuid][0] | found[job_uuid][1]
            for other, (inputs, outputs) in io.items():
                if other not in found and datasets & (inputs | outputs):
                    found[other] = (inputs, outputs)
                    following.append(other)
        frontier, level = following, level + 1
    return {key: value for key, value in found.items() if store.job(key) is not None}


def _dataset_id(store: Store, dataset: Dataset) -> str:
    namespace, name = store.primary_view(dataset)
    return f"dataset:{namespace}:{name}"


def _dataset_data(store: Store, dataset: Dataset) -> dict[str, Any]:
    namespace, name = store.primary_view(dataset)
    namespace, name = check_namespace(namespace), check_name(name)
    current = store.version(dataset.current_version_uuid)
    return {
        "id": {"namespace": namespace, "name": name},
        "type": dataset.type,
        "name": name,
        "physicalName": dataset.physical_name,
        "createdAt": format_instant(dataset.created_at),
        "updatedAt": format_instant(dataset.updated_at),
        "namespace": namespace,
        "sourceName": dataset.source_name,
        "fields": _version_fields(current),
        "tags": [],
        "lastModifiedAt": format_instant(dataset.last_modified_at),
        "description": dataset.description,
        "lastLifecycleState": current.lifecycle_state if current else None,
    }


def _primary(store: Store, dataset_uuid: uuid.UUID) -> Dataset | None:
    """getDatasetData: only datasets under their primary name."""
    dataset = store.t.datasets.get(dataset_uuid)
    if dataset is None:
        return None
    return dataset


def _ids(store: Store, uuids: set[uuid.UUID]) -> list[dict[str, str]]:
    """buildDatasetId over a HashSet<DatasetData> (hash of its DatasetId only)."""
    pairs = [store.primary_view(d) for d in (_primary(store, u) for u in sorted(uuids)) if d is not None]
    ordered = hash_set_order(pairs, lambda p: lombok_hash(dataset_id_hash(*p)), lambda p: p)
    return [{"namespace": ns, "name": name} for ns, name in ordered]


def _job_data(store: Store, job: Job, io: tuple[set, set]) -> dict[str, Any]:
    parent = store.job(job.parent_job_uuid)
    run = store.t.runs.get(job.current_run_uuid) if job.current_run_uuid else None
    namespace = check_namespace(job.namespace_name)
    return {
        "id": {"namespace": namespace, "name": check_name(job.name)},
        "type": job.type,
        "name": job.name,
        "simpleName": job.simple_name,
        "parentJobName": parent.name if parent else None,
        "parentJobUuid": str(job.parent_job_uuid) if job.parent_job_uuid else None,
        "currentRunUuid": str(job.current_run_uuid) if job.current_run_uuid else None,
        "createdAt": format_instant(job.created_at),
        "updatedAt": format_instant(job.updated_at),
        "namespace": namespace,
        "inputs": _ids(store, io[0]),
        "outputs": _ids(store, io[1]),
        "location": job.location,
        "description": job.description,
        "latestRun": render_run(store, run) if run else None,
    }


def _node(node_id: str, kind: str, data: dict[str, Any], ins: list[str], outs: list[str]) -> dict[str, Any]:
    return {
        "id": node_id,
        "type": kind,
        "data": data,
        "inEdges": [{"origin": o, "destination": node_id} for o in sorted(ins, key=java_sort_key)],
        "outEdges": [{"origin": node_id, "destination": d} for d in sorted(outs, key=java_sort_key)],
    }


def _orphan(store: Store, node: NodeId) -> dict[str, Any]:
    namespace, name = node.dataset()
    dataset = store.dataset_view(namespace, name)
    if dataset is None:
        raise ReplyError(dataset_not_found(name))
    return {"graph": [_node(_dataset_id(store, dataset), "DATASET", _dataset_data(store, dataset), [], [])]}


def _start_job(store: Store, node: NodeId) -> uuid.UUID | None:
    if node.kind == "job":
        namespace, name = node.job()
        job = store.job_named(namespace, name)
        return job.uuid if job else None
    namespace, name = node.dataset()
    dataset = store.dataset_view(namespace, name)
    candidates = []
    for row in store.t.io:
        jv = store.job_version(row.job_version_uuid)
        if dataset is not None and jv is not None and row.dataset_uuid == dataset.uuid:
            candidates.append((row.io_type == "OUTPUT", jv.created_at, jv.job_uuid))
    return max(candidates, key=lambda c: (c[0], c[1]))[2] if candidates else None


def check_node(store: Store, node: NodeId) -> None:
    """BaseResource.throwIfNotExists for a node id."""
    if node.has_version():
        return
    if node.kind == "dataset":
        namespace, name = node.dataset()
        if store.dataset_view(namespace, name) is None:
            raise ReplyError(dataset_not_found(name))
    elif node.kind == "job":
        namespace, name = node.job()
        if store.job_named(namespace, name) is None:
            raise ReplyError(job_not_found(name))
    elif node.kind == "datasetField":
        namespace, name, field = node.dataset_field()
        dataset = store.dataset_view(namespace, name)
        if dataset is None or not any(f.dataset_uuid == dataset.uuid and f.name == field for f in store.t.fields):
            raise ReplyError(not_found(f"Field '{field}' not found for dataset '{name}'."))
    elif node.kind == "run":
        run = java_uuid(node.parts(2)[1])  # not a UUID: an IllegalArgumentException, a 500
        if run not in store.t.runs:
            raise ReplyError(not_found(f"Run '{run}' not found."))


def lineage(store: Store, node: NodeId, depth: int) -> dict[str, Any]:
    if node.kind not in ("dataset", "job"):
        raise ReplyError(not_found(f"Node '{node.value}' must be of type dataset or job!"))
    start = _start_job(store, node)
    if start is None:
        return _orphan(store, node)
    jobs = _lineage_jobs(store, start, depth)
    dataset_uuids = {d for inputs, outputs in jobs.values() for d in inputs | outputs}
    if node.kind == "dataset":
        dataset = store.dataset_view(*node.dataset())
        if dataset is None or dataset.uuid not in dataset_uuids:
            return _orphan(store, node)
    nodes, consumers, producers = [], {}, {}
    for job_uuid, (inputs, outputs) in jobs.items():
        job = store.job(job_uuid)
        job_id = f"job:{job.namespace_name}:{job.name}"
        for d in inputs:
            consumers.setdefault(d, []).append(job_id)
        for d in outputs:
            producers.setdefault(d, []).append(job_id)
        ins = [_dataset_id(store, d) for d in (_primary(store, u) for u in inputs) if d]
        outs = [_dataset_id(store, d) for d in (_primary(store, u) for u in outputs) if d]
        nodes.append(_node(job_id, "JOB", _job_data(store, job, (inputs, outputs)), ins, outs))
    for dataset_uuid in dataset_uuids:
        dataset = _primary(store, dataset_uuid)
        if dataset is not None:
            data = _dataset_data(store, dataset)
            edges = producers.get(dataset_uuid, []), consumers.get(dataset_uuid, [])
            nodes.append(_node(_dataset_id(store, dataset), "DATASET", data, *edges))
    return {"graph": sorted(nodes, key=lambda n: java_sort_key(n["id"]))}
