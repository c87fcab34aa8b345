"""Jobs, runs and job versions as a run event writes them (OpenLineageDao.buildJobFromEvent,
the jobs_view insert trigger, RunDao.upsert, JobVersionDao.upsertJobVersionOnRunTransition)."""

from __future__ import annotations

import uuid
from dataclasses import dataclass
from typing import Any

from .javasem import java_sort_key, java_uuid, name_based_uuid, name_uuid_from_bytes
from .names import check_name, check_namespace
from .store import DatasetVersion, Facet, IoMapping, Job, JobVersion, Namespace, Run, Store

DONE = ("COMPLETED", "ABORTED", "FAILED")
_STATES = {"complete": "COMPLETED", "abort": "ABORTED", "fail": "FAILED"}


def run_state(event_type: str | None) -> str:
    """OpenLineageDao.getRunState: START, RUNNING, OTHER and anything else are RUNNING."""
    return _STATES.get((event_type or "").lower(), "RUNNING")


def run_uuid(run_id: str) -> uuid.UUID:
    """A runId that is not a UUID becomes a name-based one (UUID.nameUUIDFromBytes)."""
    try:
        return java_uuid(run_id)
    except ValueError:
        return name_uuid_from_bytes(run_id.encode())


def parent_job_name(name: str) -> str:
    """Utils.parseParentJobName: up to the last '.'."""
    return name[: name.rfind(".")] if "." in name else name


def parent_run_uuid(parent: dict[str, Any]) -> uuid.UUID:
    """Utils.findParentRunUuid."""
    run_id = parent["run"]["runId"]
    try:
        return java_uuid(run_id)
    except ValueError:
        return name_based_uuid(parent["job"]["namespace"], parent_job_name(parent["job"]["name"]), run_id)


def job_type(job: dict[str, Any]) -> str:
    processing = (((job.get("facets") or {}).get("jobType") or {}).get("processingType")) or ""
    return "STREAM" if processing.lower() == "streaming" else "BATCH"


@dataclass
class JobSpec:
    """What upsertJob inserts."""

    type: str
    namespace: Namespace
    name: str  # the simple name; the trigger prefixes the parent's name
    description: str | None
    location: str | None
    inputs: list[tuple[str, str]]
    current_run: uuid.UUID | None
    parent: Job | None = None


def upsert_job(store: Store, spec: JobSpec, now: int) -> Job:
    """The jobs_view trigger: insert, or on (namespace, full name) update most columns, with
    updated_at = now() (the wall clock) and simple_name the full name when no parent is given."""
    full = f"{spec.parent.name}.{spec.name}" if spec.parent else spec.name
    job = next((j for j in store.t.jobs if j.namespace_uuid == spec.namespace.uuid and j.name == full), None)
    parent_uuid = spec.parent.uuid if spec.parent else None
    if job is None:
        job = Job(
            store.new_uuid(),
            spec.type,
            now,
            now,
            spec.namespace.uuid,
            spec.namespace.name,
            full,
            spec.name,
            parent_uuid,
            spec.description,
            spec.location,
            spec.inputs,
            spec.current_run,
        )
        store.t.jobs.append(job)
        return job
    job.updated_at = store.wall()
    job.parent_job_uuid = job.parent_job_uuid or parent_uuid
    job.simple_name = spec.name if parent_uuid else job.name
    job.type, job.description, job.location = spec.type, spec.description, spec.location
    job.current_inputs, job.current_run_uuid = spec.inputs, spec.current_run
    return job


@dataclass
class RunSpec:
    uuid: uuid.UUID
    parent_run: uuid.UUID | None
    external_id: str
    job: Job
    args: dict[str, str]
    state: str | None  # None: the upsert that leaves the state alone
    nominal: tuple[int | None, int | None] = (None, None)


def upsert_run(store: Store, spec: RunSpec, now: int) -> Run:
    run = store.t.runs.get(spec.uuid)
    if run is None:
        run = Run(
            spec.uuid,
            spec.parent_run,
            spec.external_id,
            now,
            now,
            spec.job.uuid,
            spec.args,
            spec.job.namespace_name,
            spec.job.name,
            spec.job.location,
            spec.state,
            now if spec.state else None,
            *spec.nominal,
        )
        store.t.runs[spec.uuid] = run
        return run
    run.external_id, run.updated_at, run.location = spec.external_id, now, spec.job.location
    if spec.state is not None:
        run.current_run_state, run.transitioned_at = spec.state, now
    run.nominal_start_time = spec.nominal[0] if spec.nominal[0] is not None else run.nominal_start_time
    run.nominal_end_time = spec.nominal[1] if spec.nominal[1] is not None else run.nominal_end_time
    return run


def transition(run: Run, state: str, now: int) -> None:
    """A run_states row: the end of a done run, the start of any other."""
    run.updated_at = now
    if state in DONE:
        run.ended_at = now
    else:
        run.started_at = now


def insert_facets(
    store: Store,
    table: list[Facet],
    facets: dict[str, Any],
    owner: uuid.UUID | None,
    run: uuid.UUID | None,
    event_type: str | None,
    now: int,
) -> None:
    created = store.wall()
    for name, value in facets.items():
        if value is None or name.lower() == "spark_unknown":
            continue
        if name.lower() == "spark.logicalplan" and any(f.run_uuid == run and f.name == name for f in table):
            continue
        table.append(Facet(created, owner, None, run, now, event_type, "", name, {name: value}))


def run_versions(store: Store, run: uuid.UUID) -> tuple[list[DatasetVersion], list[DatasetVersion]]:
    """The dataset versions a run read (runs_input_mapping) and wrote (dataset_versions.run_uuid)."""
    inputs = [store.version(v) for r, v in store.t.run_inputs if r == run]
    outputs = [dv for dv in store.t.versions if dv.run_uuid == run]
    return [dv for dv in inputs if dv is not None], outputs


def version_of(store: Store, job: Job, inputs: list[DatasetVersion], outputs: list[DatasetVersion]) -> uuid.UUID:
    """Utils.newJobVersionFor: name-based on the job's names, sorted datasets and location. The
    NamespaceName and JobName checks here are where a bad name fails a write (400)."""
    parent = store.job(job.parent_job_uuid)
    name = check_name(f"{parent.name}.{job.simple_name}" if parent else job.name)

    def ids(versions: list[DatasetVersion]) -> str:
        pairs = {(check_namespace(dv.namespace_name), dv.dataset_name) for dv in versions}
        ordered = sorted(pairs, key=lambda p: (java_sort_key(p[0]), java_sort_key(p[1])))
        return ":".join(part for pair in ordered for part in pair)

    parts = [check_namespace(job.namespace_name), name, ids(inputs), ids(outputs), job.location]
    return name_uuid_from_bytes(":".join(p for p in parts if p is not None).encode())


def job_version_uuid(store: Store, job: Job, run: uuid.UUID) -> uuid.UUID:
    """The version of a job as one run read and wrote its datasets."""
    return version_of(store, job, *run_versions(store, run))


def link_io(store: Store, jv: JobVersion, job: Job, dataset_uuid: uuid.UUID, io_type: str) -> None:
    """upsertInputDatasetFor / upsertOutputDatasetFor: the job's other versions stop being current."""
    for row in store.t.io:
        if row.job_uuid == job.uuid and row.job_version_uuid != jv.uuid and row.io_type == io_type:
            row.is_current = False
    for row in store.t.io:
        if (row.job_version_uuid, row.dataset_uuid, row.io_type, row.job_uuid) == (
            jv.uuid,
            dataset_uuid,
            io_type,
            job.uuid,
        ):
            row.is_current = True
            return
    store.t.io.append(IoMapping(jv.uuid, dataset_uuid, io_type, job.uuid))


def upsert_job_version(store: Store, job: Job, version: uuid.UUID, at: int) -> JobVersion:
    jv = next((row for row in store.t.job_versions if row.version == version), None)
    if jv is None:
        jv = JobVersion(store.new_uuid(), at, at, job.uuid, version, job.name, job.namespace_name)
        store.t.job_versions.append(jv)
    jv.updated_at = at
    return jv


def version_on_transition(store: Store, job: Job, run: Run, at: int, version: uuid.UUID) -> JobVersion:
    """A job version for a run that ended (or any event of a streaming job), made current."""
    inputs, outputs = run_versions(store, run.uuid)
    jv = upsert_job_version(store, job, version, at)
    for dv in inputs:
        link_io(store, jv, job, dv.dataset_uuid, "INPUT")
    for dv in outputs:
        link_io(store, jv, job, dv.dataset_uuid, "OUTPUT")
    run.job_version_uuid = jv.uuid
    jv.latest_run_uuid = run.uuid
    for row in store.t.job_facets:
        if row.run_uuid == run.uuid:
            row.version_uuid = jv.uuid
    job.updated_at, job.current_version_uuid = at, jv.uuid
    return jv


def mark_previous(store: Store, job: Job, io_type: str) -> None:
    """An event without inputs (or outputs) ends the job's current ones."""
    for row in store.t.io:
        if row.job_uuid == job.uuid and row.io_type == io_type:
            row.is_current = False
