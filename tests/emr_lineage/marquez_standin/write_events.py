"""Storing an accepted event (OpenLineageService.createAsync and OpenLineageDao.updateMarquezModel):
the raw event first (W4), then the model, step by step, so a failure (400 for a name Marquez
rejects, 500 otherwise) leaves behind what Marquez leaves behind (W3)."""

from __future__ import annotations

import uuid
from typing import Any

from .incoming import DATASET_EVENT_TYPE, JOB_EVENT_TYPE, Incoming
from .javasem import name_based_uuid
from .jtime import db_time, parse_event_time
from .names import check_name, check_namespace, format_namespace
from .store import Job, Namespace, Store, StoredEvent
from .write_datasets import insert_dataset_facets, upsert_dataset, upsert_namespace
from .write_jobs import (
    DONE,
    JobSpec,
    RunSpec,
    insert_facets,
    job_type,
    job_version_uuid,
    link_io,
    mark_previous,
    parent_job_name,
    parent_run_uuid,
    run_state,
    run_uuid,
    run_versions,
    transition,
    upsert_job,
    upsert_job_version,
    upsert_run,
    version_of,
    version_on_transition,
)


class NullPointer(RuntimeError):
    """A Java NullPointerException in the write path (a 500)."""


def store_event(store: Store, incoming: Incoming) -> None:
    """The lineage_events row, then the model."""
    now = db_time(incoming.event_time.instant)
    store.t.events.append(StoredEvent(incoming.kind, now, incoming.event))
    if incoming.kind == DATASET_EVENT_TYPE:
        _dataset_event(store, incoming.stored, now)
    elif incoming.kind == JOB_EVENT_TYPE:
        _job_event(store, incoming.stored, now)
    else:
        _run_event(store, incoming.stored, now, incoming.event_time.instant)


def _dataset_ids(datasets: list[dict[str, Any]] | None) -> list[tuple[str, str]]:
    """OpenLineageDao.toDatasetId: the raw namespaces must pass NamespaceName."""
    return [(check_namespace(ds["namespace"]), check_name(ds["name"])) for ds in datasets or []]


def _nominal(event: dict[str, Any]) -> tuple[int | None, int | None]:
    nominal = ((event["run"].get("facets") or {}).get("nominalTime")) or {}
    start, end = nominal.get("nominalStartTime"), nominal.get("nominalEndTime")
    return (
        db_time(parse_event_time(start).instant) if isinstance(start, str) else None,
        db_time(parse_event_time(end).instant) if isinstance(end, str) else None,
    )


def _run_args(event: dict[str, Any]) -> dict[str, str]:
    facets = event["run"].get("facets") or {}
    args: dict[str, str] = {}
    if facets.get("nominalTime"):
        args["nominal_start_time"] = facets["nominalTime"]["nominalStartTime"]
        if facets["nominalTime"].get("nominalEndTime") is not None:
            args["nominal_end_time"] = facets["nominalTime"]["nominalEndTime"]
    if facets.get("parent"):
        parent = facets["parent"]
        args |= {
            "run_id": parent["run"]["runId"],
            "name": parent["job"]["name"],
            "namespace": parent["job"]["namespace"],
        }
    return args


def _parent_job(store: Store, event: dict[str, Any], namespace: Namespace, now: int) -> Job | None:
    """findParentJobRow: the job of the parent run, or a parent job and run made for it."""
    facet = (event["run"].get("facets") or {}).get("parent")
    if not facet:
        return None
    parent_run = parent_run_uuid(facet)
    name = (
        parent_job_name(facet["job"]["name"]) if facet["job"]["name"] == event["job"]["name"] else facet["job"]["name"]
    )
    run = store.t.runs.get(parent_run)
    found = store.job(run.job_uuid) if run else None
    if found is not None:
        if found.namespace_name == facet["job"]["namespace"] and found.name == name:
            return found
        # OpenLineageDao assumes a run UUID conflict: a new parent job and run, name-based
        parent_run = name_based_uuid(facet["job"]["namespace"], name, str(parent_run))
    return _make_parent(store, event, namespace, name, parent_run, facet, now)


def _make_parent(
    store: Store,
    event: dict[str, Any],
    namespace: Namespace,
    name: str,
    parent_run: uuid.UUID,
    facet: dict[str, Any],
    now: int,
) -> Job:
    """createParentJobRunRecord."""
    location = ((event["job"].get("facets") or {}).get("sourceCodeLocation") or {}).get("url")
    spec = JobSpec(job_type(event["job"]), namespace, name, None, location, [], parent_run)
    job = upsert_job(store, spec, now)
    state = run_state(event.get("eventType")) if event.get("eventType") is not None else None
    run = upsert_run(store, RunSpec(parent_run, None, facet["run"]["runId"], job, {}, state, _nominal(event)), now)
    if state is not None:
        transition(run, state, now)
    return job


def _build_job(store: Store, event: dict[str, Any], namespace: Namespace, run: uuid.UUID, now: int) -> Job:
    """buildJobFromEvent: the parent first, then the inputs' ids (which may raise), then the job."""
    spec_job = event["job"]
    facets = spec_job.get("facets") or {}
    description = (facets.get("documentation") or {}).get("description")
    location = (facets.get("sourceCodeLocation") or {}).get("url")
    parent = _parent_job(store, event, namespace, now)
    name = spec_job["name"]
    if parent is not None and name.startswith(parent.name + "."):
        name = name[len(parent.name) + 1 :]
    inputs = _dataset_ids(event.get("inputs"))
    current_run = parent.current_run_uuid if parent is not None else run
    spec = JobSpec(job_type(spec_job), namespace, name, description, location, inputs, current_run, parent)
    return upsert_job(store, spec, now)


def _write_datasets(store: Store, event: dict[str, Any], job: Job, run: uuid.UUID | None, now: int) -> None:
    event_type = event.get("eventType")
    terminal_stream = _terminal_stream_without_datasets(event)
    for key, is_input in (("inputs", True), ("outputs", False)):
        datasets = event.get(key) or []
        for ds in datasets:
            record = upsert_dataset(store, ds, now, run, is_input)
            insert_dataset_facets(store, ds, record, run, event_type, now, is_input)
        if not datasets and not terminal_stream:
            mark_previous(store, job, "INPUT" if is_input else "OUTPUT")


def _terminal_stream_without_datasets(event: dict[str, Any]) -> bool:
    terminal = (event.get("eventType") or "").lower() in ("complete", "fail")
    return terminal and job_type(event["job"]) == "STREAM" and not event.get("inputs") and not event.get("outputs")


def _run_event(store: Store, event: dict[str, Any], now: int, instant: int) -> None:
    namespace = upsert_namespace(store, format_namespace(event["job"]["namespace"]), now)
    this_run = run_uuid(event["run"]["runId"])
    job = _build_job(store, event, namespace, this_run, now)
    facet = (event["run"].get("facets") or {}).get("parent")
    event_type = event.get("eventType")
    state = run_state(event_type) if event_type is not None else None
    spec = RunSpec(
        this_run, parent_run_uuid(facet) if facet else None, event["run"]["runId"], job, _run_args(event), state
    )
    run = upsert_run(store, spec, now)
    if event["run"].get("facets") is not None:
        if event_type is None:
            raise NullPointer("lineageEventType is marked non-null but is null")
        insert_facets(store, store.t.run_facets, event["run"]["facets"], None, this_run, event_type, now)
    if state is not None:
        transition(run, state, now)
    if event["job"].get("facets") is not None:
        insert_facets(store, store.t.job_facets, event["job"]["facets"], job.uuid, this_run, event_type, now)
    _write_datasets(store, event, job, this_run, now)
    _update_version(store, event, job, run, db_time(instant))


def _update_version(store: Store, event: dict[str, Any], job: Job, run: Any, at: int) -> None:
    """updateMarquezModel's version step, then the outputs' current versions (buildJobOutputUpdate)."""
    event_type = event.get("eventType")
    streaming = job_type(event["job"]) == "STREAM"
    if streaming:
        version = job_version_uuid(store, job, run.uuid)
        if not _terminal_stream_without_datasets(event) and not any(
            jv.version == version for jv in store.t.job_versions
        ):
            version_on_transition(store, job, run, at, version)
    elif event_type is not None and run_state(event_type) in DONE:
        version_on_transition(store, job, run, at, job_version_uuid(store, job, run.uuid))
    if event_type is not None and (event_type.lower() == "complete" or streaming):
        for dv in run_versions(store, run.uuid)[1]:
            store.touch_dataset_version(dv.dataset_uuid, store.wall(), dv.uuid)


def _dataset_event(store: Store, event: dict[str, Any], now: int) -> None:
    ds = event.get("dataset")
    if ds is None:
        raise NullPointer("dataset")
    upsert_namespace(store, format_namespace(ds["namespace"]), now)
    record = upsert_dataset(store, ds, now, None, False)
    insert_dataset_facets(store, ds, record, None, None, now, False)
    store.touch_dataset_version(record.dataset.uuid, store.wall(), record.version.uuid)


def _job_event(store: Store, event: dict[str, Any], now: int) -> None:
    namespace = upsert_namespace(store, format_namespace(event["job"]["namespace"]), now)
    facets = event["job"].get("facets") or {}
    spec = JobSpec(
        job_type(event["job"]),
        namespace,
        event["job"]["name"],
        (facets.get("documentation") or {}).get("description"),
        (facets.get("sourceCodeLocation") or {}).get("url"),
        [],
        None,
    )
    job = upsert_job(store, spec, now)
    records = {}
    for key, is_input in (("inputs", True), ("outputs", False)):
        records[key] = []
        for ds in event.get(key) or []:
            record = upsert_dataset(store, ds, now, None, is_input)
            insert_dataset_facets(store, ds, record, None, None, now, is_input)
            records[key].append(record)
    _runless_version(store, job, records["inputs"], records["outputs"])
    if event["job"].get("facets") is not None:  # linked to the version, not to a run
        insert_facets(store, store.t.job_facets, event["job"]["facets"], job.uuid, None, None, now)
        for row in store.t.job_facets:
            if row.owner_uuid == job.uuid and row.run_uuid is None and row.version_uuid is None:
                row.version_uuid = job.current_version_uuid


def _runless_version(store: Store, job: Job, inputs: list[Any], outputs: list[Any]) -> None:
    """JobVersionDao.upsertRunlessJobVersion: the version of a JobEvent's datasets, made current."""
    version = version_of(store, job, [r.version for r in inputs], [r.version for r in outputs])
    jv = upsert_job_version(store, job, version, job.created_at)
    for record in inputs:
        link_io(store, jv, job, record.version.dataset_uuid, "INPUT")
    for record in outputs:
        link_io(store, jv, job, record.version.dataset_uuid, "OUTPUT")
    job.updated_at, job.current_version_uuid = job.created_at, jv.uuid
