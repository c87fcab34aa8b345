"""Marquez's PostgreSQL tables, in memory. Each table keeps its rows in insertion order, which is
the order PostgreSQL's small-table scans (and so its unordered JSON_AGGs) return them in."""

from __future__ import annotations

import random
import uuid
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

DEFAULT_NAMESPACE_DESCRIPTION = (
    "The default global namespace for dataset, job, and run metadata not belonging to a user-specified namespace."
)


@dataclass
class Namespace:
    uuid: uuid.UUID
    name: str
    created_at: int
    updated_at: int
    description: str | None = None
    owner: str = "anonymous"
    is_hidden: bool = False


@dataclass
class Source:
    uuid: uuid.UUID
    name: str


@dataclass
class Dataset:
    uuid: uuid.UUID
    created_at: int
    updated_at: int
    namespace_uuid: uuid.UUID
    namespace_name: str
    source_name: str
    name: str
    physical_name: str
    description: str | None
    is_deleted: bool
    current_version_uuid: uuid.UUID | None = None
    last_modified_at: int | None = None
    type: str = "DB_TABLE"


@dataclass
class Symlink:
    dataset_uuid: uuid.UUID
    name: str
    namespace_uuid: uuid.UUID
    is_primary: bool
    type: str | None


@dataclass
class Field:
    uuid: uuid.UUID
    dataset_uuid: uuid.UUID
    name: str
    type: str | None
    description: str | None


@dataclass
class DatasetVersion:
    uuid: uuid.UUID
    created_at: int
    dataset_uuid: uuid.UUID
    version: uuid.UUID
    schema_version: uuid.UUID
    run_uuid: uuid.UUID | None
    fields: list[dict[str, Any]] | None
    namespace_name: str
    dataset_name: str
    lifecycle_state: str


@dataclass
class ColumnLineage:
    output_version: uuid.UUID
    output_field: uuid.UUID
    input_version: uuid.UUID
    input_field: uuid.UUID
    created_at: int
    updated_at: int


@dataclass
class Job:
    uuid: uuid.UUID
    type: str
    created_at: int
    updated_at: int
    namespace_uuid: uuid.UUID
    namespace_name: str
    name: str
    simple_name: str
    parent_job_uuid: uuid.UUID | None
    description: str | None
    location: str | None
    current_inputs: list[tuple[str, str]]
    current_run_uuid: uuid.UUID | None
    current_version_uuid: uuid.UUID | None = None


@dataclass
class JobVersion:
    uuid: uuid.UUID
    created_at: int
    updated_at: int
    job_uuid: uuid.UUID
    version: uuid.UUID
    job_name: str
    namespace_name: str
    latest_run_uuid: uuid.UUID | None = None


@dataclass
class IoMapping:
    job_version_uuid: uuid.UUID
    dataset_uuid: uuid.UUID
    io_type: str  # INPUT or OUTPUT
    job_uuid: uuid.UUID
    is_current: bool = True


@dataclass
class Run:
    uuid: uuid.UUID
    parent_run_uuid: uuid.UUID | None
    external_id: str
    created_at: int
    updated_at: int
    job_uuid: uuid.UUID
    args: dict[str, str]
    namespace_name: str
    job_name: str
    location: str | None
    current_run_state: str | None = None
    transitioned_at: int | None = None
    nominal_start_time: int | None = None
    nominal_end_time: int | None = None
    job_version_uuid: uuid.UUID | None = None
    started_at: int | None = None
    ended_at: int | None = None


@dataclass
class Facet:
    """A row of dataset_facets, run_facets or job_facets: ``facet`` is {name: value}."""

    created_at: int
    owner_uuid: uuid.UUID | None  # the dataset (dataset facets) or the job (job facets)
    version_uuid: uuid.UUID | None  # the dataset version or the job version
    run_uuid: uuid.UUID | None
    event_time: int
    event_type: str | None
    type: str
    name: str
    facet: dict[str, Any]


@dataclass
class StoredEvent:
    kind: str
    event_time: int
    event: dict[str, Any]


@dataclass
class Tables:
    """All of Marquez's state."""

    namespaces: dict[str, Namespace] = field(default_factory=dict)
    sources: dict[str, Source] = field(default_factory=dict)
    datasets: dict[uuid.UUID, Dataset] = field(default_factory=dict)
    symlinks: list[Symlink] = field(default_factory=list)
    fields: list[Field] = field(default_factory=list)
    versions: list[DatasetVersion] = field(default_factory=list)
    field_mapping: list[tuple[uuid.UUID, uuid.UUID]] = field(default_factory=list)  # (version, field)
    column_lineage: list[ColumnLineage] = field(default_factory=list)
    jobs: list[Job] = field(default_factory=list)
    job_versions: list[JobVersion] = field(default_factory=list)
    io: list[IoMapping] = field(default_factory=list)
    runs: dict[uuid.UUID, Run] = field(default_factory=dict)
    run_inputs: list[tuple[uuid.UUID, uuid.UUID]] = field(default_factory=list)  # (run, dataset version)
    dataset_facets: list[Facet] = field(default_factory=list)
    run_facets: list[Facet] = field(default_factory=list)
    job_facets: list[Facet] = field(default_factory=list)
    events: list[StoredEvent] = field(default_factory=list)


class Store:
    """The tables, the clock that stands for PostgreSQL's now() and Java's Instant.now(), and the
    source of the random UUIDs Marquez makes."""

    def __init__(self, wall: Callable[[], int], seed: int = 0) -> None:
        self.wall = wall
        self.rng = random.Random(seed)
        self.t = Tables()
        now = wall()
        self.t.namespaces["default"] = Namespace(self.new_uuid(), "default", now, now, DEFAULT_NAMESPACE_DESCRIPTION)

    def new_uuid(self) -> uuid.UUID:
        return uuid.UUID(int=self.rng.getrandbits(128), version=4)

    # -- look-ups -----------------------------------------------------------------------

    def namespace_by_uuid(self, key: uuid.UUID) -> Namespace:
        return next(ns for ns in self.t.namespaces.values() if ns.uuid == key)

    def job(self, key: uuid.UUID | None) -> Job | None:
        return next((job for job in self.t.jobs if job.uuid == key), None)

    def job_named(self, namespace: str, name: str) -> Job | None:
        return next((job for job in self.t.jobs if job.namespace_name == namespace and job.name == name), None)

    def job_version(self, key: uuid.UUID | None) -> JobVersion | None:
        return next((jv for jv in self.t.job_versions if jv.uuid == key), None)

    def version(self, key: uuid.UUID | None) -> DatasetVersion | None:
        return next((dv for dv in self.t.versions if dv.uuid == key), None)

    def dataset_views(self) -> list[tuple[Dataset, str, str]]:
        """datasets_view: one row per (dataset, symlink), named as the symlink names it."""
        rows = []
        for link in self.t.symlinks:
            dataset = self.t.datasets.get(link.dataset_uuid)
            if dataset is None:
                continue
            rows.append((dataset, self.namespace_by_uuid(link.namespace_uuid).name, link.name))
        return rows

    def dataset_view(self, namespace: str, name: str) -> Dataset | None:
        return next((ds for ds, ns, nm in self.dataset_views() if ns == namespace and nm == name), None)

    def primary_view(self, dataset: Dataset) -> tuple[str, str]:
        """The (namespace, name) datasets_view gives a dataset's primary symlink: the namespace as
        the event wrote it, before formatNamespaceName."""
        link = next(link for link in self.t.symlinks if link.dataset_uuid == dataset.uuid and link.is_primary)
        return self.namespace_by_uuid(link.namespace_uuid).name, link.name

    def touch_dataset_version(self, dataset_uuid: uuid.UUID, updated_at: int, version: uuid.UUID) -> None:
        dataset = self.t.datasets[dataset_uuid]
        dataset.updated_at = updated_at
        dataset.current_version_uuid = version
