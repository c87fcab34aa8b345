"""One OpenLineage event, checked as Marquez would take it: its kind, its FIFO group, its canonical form.

Standard library only. The three kinds of the OpenLineage spec 2-0-2
(https://openlineage.io/spec/2-0-2/OpenLineage.json), told apart by what they hold, as Marquez's
``POST /api/v1/lineage`` tells them apart:

* a ``RunEvent`` has ``run`` (``runId`` a UUID), ``job`` and ``eventType``;
* a ``JobEvent`` (static lineage) has ``job`` and no ``run``;
* a ``DatasetEvent`` (static lineage) has ``dataset`` and neither ``job`` nor ``run``.

Each has an ``eventTime`` with a UTC offset. Dataset namespaces (inputs, outputs, a DatasetEvent's
dataset, column-lineage input fields) are normalised by
:func:`emr_lineage.lineage.naming.canonical_namespace`, the function the graph tools use.

The FIFO group keeps what must stay in order together: a run's events, and an application's with
its actions (the root run of the parent facet, else the parent run, else the run itself); a
JobEvent's group is its job, a DatasetEvent's its dataset, each as a name-based UUID
(:func:`static_group`) so that the archive layout (one folder per group) stays the same.
"""

from __future__ import annotations

import datetime as dt
import hashlib
import json
import uuid
from dataclasses import dataclass
from typing import Any

from emr_lineage.gateway.verdict import Rejected, one_line
from emr_lineage.lineage.naming import canonical_namespace
from emr_lineage.lineage.times import NoOffset, parse_time

RUN_EVENT, JOB_EVENT, DATASET_EVENT = "RunEvent", "JobEvent", "DatasetEvent"
# Name-based (RFC 9562 version 5) group ids of static lineage: the same job or dataset, the same group.
_STATIC_GROUPS = uuid.uuid5(uuid.NAMESPACE_URL, "https://openlineage.io/spec/2-0-2/OpenLineage.json")


@dataclass(frozen=True)
class CheckedEvent:
    """An event that passed: normalised, with its canonical bytes, deduplication id and FIFO group."""

    event: dict[str, Any]  # with normalised dataset namespaces
    kind: str  # RUN_EVENT, JOB_EVENT or DATASET_EVENT
    canonical: bytes  # the event as JSON: sorted keys, compact separators, ASCII
    dedup_id: str  # sha256 hex of ``canonical``
    group_id: str  # a UUID: the root or parent run, the run, or the job's or dataset's static group
    run_id: str | None  # a RunEvent's run
    event_time: dt.datetime  # UTC


def canonical_json(event: Any) -> bytes:
    """The one byte form of an event: sorted keys, no whitespace, ASCII (every character SQS allows)."""
    return json.dumps(event, sort_keys=True, separators=(",", ":"), ensure_ascii=True).encode("ascii")


def dedup_id(canonical: bytes) -> str:
    return hashlib.sha256(canonical).hexdigest()  # 64 characters; SQS FIFO allows up to 128


def static_group(kind: str, namespace: str, name: str) -> str:
    """The FIFO group (a UUID) of a JobEvent's job or a DatasetEvent's dataset."""
    return str(uuid.uuid5(_STATIC_GROUPS, f"{kind}:{namespace}:{name}"))


def _uuid(value: Any, where: str) -> str | Rejected:
    if not isinstance(value, str):
        return Rejected(400, f"{where} is missing or not a string")
    try:
        return str(uuid.UUID(value))
    except ValueError:
        return Rejected(400, f"{where}: {one_line(value, 80)!r} is not a UUID")


def _event_time(value: Any) -> dt.datetime | Rejected:
    if not isinstance(value, str) or not value.strip():
        return Rejected(400, "eventTime is missing or not a string")
    try:
        return parse_time(value, require_offset=True)
    except NoOffset:
        return Rejected(400, f"eventTime: {one_line(value, 80)!r} has no UTC offset")
    except ValueError:
        return Rejected(400, f"eventTime: {one_line(value, 80)!r} is not an ISO 8601 date-time")


def _named(value: Any, where: str) -> Rejected | None:
    """``value`` is an object with a non-empty string ``namespace`` and ``name``."""
    if not isinstance(value, dict):
        return Rejected(400, f"{where} is missing or not an object")
    for key in ("namespace", "name"):
        if not isinstance(value.get(key), str) or not value[key]:
            return Rejected(400, f"{where}.{key} is missing or not a string")
    return None


def _normalise_dataset(dataset: dict[str, Any]) -> None:
    """Normalise a dataset's namespace and its column-lineage input fields' namespaces, in place."""
    dataset["namespace"] = canonical_namespace(dataset["namespace"])
    facets = dataset.get("facets")
    column = facets.get("columnLineage") if isinstance(facets, dict) else None
    fields = column.get("fields") if isinstance(column, dict) else None
    for spec in fields.values() if isinstance(fields, dict) else ():
        for source in spec.get("inputFields", ()) if isinstance(spec, dict) else ():
            if isinstance(source, dict) and isinstance(source.get("namespace"), str):
                source["namespace"] = canonical_namespace(source["namespace"])


def _normalise_datasets(event: dict[str, Any]) -> Rejected | None:
    """Normalise the namespaces of inputs and outputs, in place."""
    for side in ("inputs", "outputs"):
        datasets = event.get(side)
        if datasets is None:
            continue
        if not isinstance(datasets, list):
            return Rejected(400, f"{side} is not a list")
        for index, dataset in enumerate(datasets):
            problem = _named(dataset, f"{side}[{index}]")
            if problem:
                return problem
            _normalise_dataset(dataset)
    return None


def _group_run(run: dict[str, Any], run_id: str) -> str | Rejected:
    """The FIFO group of a run: the root run of the parent facet (ParentRunFacet 1-1-0 ``root``), else
    the parent run, else the run. The Spark listener gives an application and each of its actions the
    same root (the orchestrator's or ``emr-lineage launch``'s run), so they all stay in one order;
    with only ``parent`` the actions group under the application, the application under its own parent.
    https://openlineage.io/spec/facets/1-1-0/ParentRunFacet.json"""
    facets = run.get("facets")
    parent = facets.get("parent") if isinstance(facets, dict) else None
    if parent is None:
        return run_id
    root = parent.get("root") if isinstance(parent, dict) else None
    if root is not None:
        root_run = root.get("run") if isinstance(root, dict) else None
        return _uuid(root_run.get("runId") if isinstance(root_run, dict) else None, "run.facets.parent.root.run.runId")
    parent_run = parent.get("run") if isinstance(parent, dict) else None
    return _uuid(parent_run.get("runId") if isinstance(parent_run, dict) else None, "run.facets.parent.run.runId")


def _kind_and_group(event: dict[str, Any]) -> tuple[str, str, str | None] | Rejected:
    """(kind, FIFO group, run id) of an event, checking what its kind requires."""
    if "run" in event:
        if not isinstance(event.get("eventType"), str) or not event["eventType"]:
            return Rejected(400, "eventType is missing or not a string")
        run = event["run"]
        if not isinstance(run, dict):
            return Rejected(400, "run is not an object")
        run_id = _uuid(run.get("runId"), "run.runId")
        if isinstance(run_id, Rejected):
            return run_id
        problem = _named(event.get("job"), "job")
        if problem:
            return problem
        group = _group_run(run, run_id)
        return group if isinstance(group, Rejected) else (RUN_EVENT, group, run_id)
    if "job" in event:
        problem = _named(event["job"], "job")
        if problem:
            return problem
        return JOB_EVENT, static_group(JOB_EVENT, event["job"]["namespace"], event["job"]["name"]), None
    if "dataset" in event:
        problem = _named(event["dataset"], "dataset")
        if problem:
            return problem
        _normalise_dataset(event["dataset"])
        dataset = event["dataset"]
        return DATASET_EVENT, static_group(DATASET_EVENT, dataset["namespace"], dataset["name"]), None
    return Rejected(400, "the event has no run, job or dataset (a RunEvent, JobEvent or DatasetEvent has one)")


def check_event(event: Any, *, max_bytes: int) -> CheckedEvent | Rejected:
    """Check one parsed event (``max_bytes`` bounds its canonical form, what SQS gets); normalises it in place."""
    if not isinstance(event, dict):
        return Rejected(400, f"the event is a JSON {type(event).__name__}, not an object")
    event_time = _event_time(event.get("eventTime"))
    if isinstance(event_time, Rejected):
        return event_time
    kind = _kind_and_group(event)
    if isinstance(kind, Rejected):
        return kind
    problem = _normalise_datasets(event)
    if problem:
        return problem
    canonical = canonical_json(event)
    if len(canonical) > max_bytes:
        return Rejected(413, f"the event is {len(canonical)} bytes once normalised; the limit is {max_bytes}")
    return CheckedEvent(
        event=event,
        kind=kind[0],
        canonical=canonical,
        dedup_id=dedup_id(canonical),
        group_id=kind[1],
        run_id=kind[2],
        event_time=event_time,
    )
