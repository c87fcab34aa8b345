"""Runs as Marquez reads them (RunDao's queries and RunMapper)."""

from __future__ import annotations

import uuid
from typing import Any

from .jtime import format_instant
from .names import check_name, check_namespace
from .store import DatasetVersion, Facet, Run, Store


def merge_facets(rows: list[Facet]) -> dict[str, Any]:
    """MapperUtils.toFacetsOrNull: an array of {name: facet}, later ones replacing earlier ones."""
    merged: dict[str, Any] = {}
    for row in rows:
        merged.update(row.facet)
    return merged


def by_event_time(rows: list[Facet]) -> list[Facet]:
    return sorted(rows, key=lambda row: row.event_time)


def _version_id(dv: DatasetVersion) -> dict[str, Any]:
    return {
        "namespace": check_namespace(dv.namespace_name),
        "name": check_name(dv.dataset_name),
        "version": str(dv.version),
    }


def _dataset_versions(store: Store, run: Run, versions: list[DatasetVersion], kind: str) -> list[dict[str, Any]]:
    """Each version with the run's input (or output) facets of it; duplicates: the later wins."""
    rows = sorted(
        (f for f in store.t.dataset_facets if f.run_uuid == run.uuid and f.type == kind),
        key=lambda f: f.created_at,
    )
    out = []
    for dv in versions:
        facets = merge_facets([f for f in rows if f.version_uuid == dv.uuid])
        out.append({"datasetVersionId": _version_id(dv), "facets": facets})
    return out


def run_inputs(store: Store, run: uuid.UUID) -> list[DatasetVersion]:
    found = [store.version(v) for r, v in store.t.run_inputs if r == run]
    return [dv for dv in found if dv is not None]


def run_outputs(store: Store, run: uuid.UUID) -> list[DatasetVersion]:
    return [dv for dv in store.t.versions if dv.run_uuid == run]


def render_run(store: Store, run: Run) -> dict[str, Any]:
    """RunMapper over BASE_FIND_RUN_SQL."""
    job = store.job(run.job_uuid)
    namespace, job_name = (job.namespace_name, job.name) if job else (run.namespace_name, run.job_name)
    jv = store.job_version(run.job_version_uuid)
    duration = None
    if run.started_at is not None and run.ended_at is not None:  # Instant.until(MILLIS): truncated
        elapsed = run.ended_at - run.started_at
        duration = elapsed // 1_000_000 if elapsed >= 0 else -(-elapsed // 1_000_000)
    job_version = None
    if jv is not None:
        job_version = {
            "namespace": check_namespace(namespace),
            "name": check_name(job_name),
            "version": str(jv.version),
        }
    facets = merge_facets(by_event_time([f for f in store.t.run_facets if f.run_uuid == run.uuid]))
    return {
        "id": str(run.uuid),
        "createdAt": format_instant(run.created_at),
        "updatedAt": format_instant(run.updated_at),
        "nominalStartTime": format_instant(run.nominal_start_time),
        "nominalEndTime": format_instant(run.nominal_end_time),
        "state": run.current_run_state or "NEW",
        "startedAt": format_instant(run.started_at),
        "endedAt": format_instant(run.ended_at),
        "durationMs": duration,
        "args": dict(run.args),
        "jobVersion": job_version,
        "inputDatasetVersions": _dataset_versions(store, run, run_inputs(store, run.uuid), "INPUT"),
        "outputDatasetVersions": _dataset_versions(store, run, run_outputs(store, run.uuid), "OUTPUT"),
        "facets": facets,
    }


def _desc(value: int | None) -> tuple[int, int]:
    """ORDER BY x DESC: NULLs first, then newest."""
    return (0, 0) if value is None else (1, -value)


def latest_runs(store: Store, job_uuid: uuid.UUID, limit: int = 10) -> list[Run]:
    """RunDao.findByLatestJob: ORDER BY transitioned_at DESC, started_at DESC."""
    runs = [run for run in store.t.runs.values() if run.job_uuid == job_uuid]
    runs.sort(key=lambda run: (_desc(run.transitioned_at), _desc(run.started_at)))
    return runs[:limit]


def job_runs(store: Store, job_uuid: uuid.UUID) -> list[Run]:
    """RunDao.findAll: ORDER BY started_at DESC NULLS LAST."""
    runs = [run for run in store.t.runs.values() if run.job_uuid == job_uuid]
    return sorted(runs, key=lambda run: (run.started_at is None, -(run.started_at or 0)))
