"""Namespaces and jobs as Marquez reads them (NamespaceDao, JobDao, JobMapper)."""

from __future__ import annotations

from typing import Any

from .javasem import dataset_id_set
from .jtime import format_instant
from .names import check_name, check_namespace
from .read_runs import by_event_time, latest_runs, merge_facets, render_run, run_inputs, run_outputs
from .store import Job, Store


def namespaces_page(store: Store, limit: int, offset: int) -> list[dict[str, Any]]:
    """NamespaceDao.findAll: by name; a row NamespaceName rejects breaks its page (W3)."""
    rows = sorted(store.t.namespaces.values(), key=lambda ns: ns.name.encode())[offset : offset + limit]
    return [
        {
            "name": check_namespace(ns.name),
            "createdAt": format_instant(ns.created_at),
            "updatedAt": format_instant(ns.updated_at),
            "ownerName": ns.owner,
            "description": ns.description,
            "isHidden": ns.is_hidden,
        }
        for ns in rows
    ]


def _ids(pairs: list[tuple[str, str]]) -> list[dict[str, str]]:
    """A HashSet<DatasetId> as Jackson writes it (NamespaceName checked)."""
    return [{"namespace": check_namespace(ns), "name": check_name(name)} for ns, name in dataset_id_set(pairs)]


def _labels(facets: dict[str, Any]) -> list[str]:
    job_type = facets.get("jobType")
    if not isinstance(job_type, dict):
        return []
    return [str(job_type[key]) for key in ("jobType", "integration") if job_type.get(key) is not None]


def _version_facets(store: Store, job: Job) -> dict[str, Any]:
    """findJobByName: the facets linked to the job's current version."""
    if job.current_version_uuid is None:
        return {}
    return merge_facets([f for f in store.t.job_facets if f.version_uuid == job.current_version_uuid])


def _latest_run_facets(store: Store, job: Job) -> dict[str, Any]:
    """JobDao.findAll: the facets of the current version's latest run."""
    jv = store.job_version(job.current_version_uuid)
    if jv is None or jv.latest_run_uuid is None:
        return {}
    return merge_facets(by_event_time([f for f in store.t.job_facets if f.run_uuid == jv.latest_run_uuid]))


def _current_io(store: Store, job: Job) -> tuple[list[tuple[str, str]], list[tuple[str, str]]]:
    """JobVersionDao.findCurrentInputOutputDatasetsFor: the current version's datasets under every
    name datasets_view gives them (symlinks too)."""
    inputs, outputs = [], []
    for row in store.t.io:
        if job.current_version_uuid is None or row.job_version_uuid != job.current_version_uuid:
            continue
        for dataset, ns, name in store.dataset_views():
            if dataset.uuid == row.dataset_uuid:
                (inputs if row.io_type == "INPUT" else outputs).append((ns, name))
    return inputs, outputs


def render_job(store: Store, job: Job, single: bool) -> dict[str, Any]:
    """Job as GET /jobs/{job} (``single``) or the jobs list writes it."""
    parent = store.job(job.parent_job_uuid)
    facets = _version_facets(store, job) if single else _latest_run_facets(store, job)
    runs = latest_runs(store, job.uuid)
    inputs, outputs = list(job.current_inputs), []
    if runs:
        inputs = [(dv.namespace_name, dv.dataset_name) for dv in run_inputs(store, runs[0].uuid)]
        outputs = [(dv.namespace_name, dv.dataset_name) for dv in run_outputs(store, runs[0].uuid)]
    if single:
        current_in, current_out = _current_io(store, job)
        inputs, outputs = current_in or inputs, current_out or outputs
    rendered_runs = [render_run(store, run) for run in runs]
    return {
        "id": {"namespace": check_namespace(job.namespace_name), "name": check_name(job.name)},
        "type": job.type,
        "name": job.name,
        "simpleName": job.simple_name,
        "parentJobName": parent.name if parent else None,
        "parentJobUuid": str(job.parent_job_uuid) if job.parent_job_uuid else None,
        "createdAt": format_instant(job.created_at),
        "updatedAt": format_instant(job.updated_at),
        "namespace": job.namespace_name,
        "inputs": _ids(inputs),
        "outputs": _ids(outputs),
        "location": job.location,
        "description": job.description,
        "latestRun": rendered_runs[0] if rendered_runs else None,
        "latestRuns": rendered_runs or None,
        "facets": facets,
        "currentVersion": str(job.current_version_uuid) if job.current_version_uuid else None,
        "labels": _labels(facets),
        "tags": [],
    }


def visible_jobs(store: Store, namespace: str) -> list[Job]:
    return [job for job in store.t.jobs if job.namespace_name == namespace]


def jobs_page(store: Store, namespace: str, limit: int, offset: int) -> dict[str, Any]:
    """JobDao.findAll: jobs whose current run has a state (or none), newest updated_at first."""
    jobs = visible_jobs(store, namespace)
    listed = []
    for job in jobs:
        run = store.t.runs.get(job.current_run_uuid) if job.current_run_uuid else None
        if run is None or run.current_run_state is not None:
            listed.append(job)
    listed.sort(key=lambda job: -job.updated_at)
    page = listed[offset : offset + limit]
    return {"totalCount": len(jobs), "jobs": [render_job(store, job, single=False) for job in page]}
