"""One OpenLineage event, checked as every door checks it: its kind, its FIFO group, its canonical form.

What an event must be is the one event rule (:mod:`emr_lineage.lineage.event_rule`: the OpenLineage spec
2-0-2's requirements and what Marquez can store and list back) and what the readers check besides, the
OpenLineage schemas (:func:`emr_lineage.lineage.schemas.checks.door_problem`). Its kind is what
Marquez reads it as (its ``schemaURL``): a ``RunEvent`` (``run``, ``job``, ``eventType``), a ``JobEvent``
(static lineage: ``job``) or a ``DatasetEvent`` (static lineage: ``dataset``). Dataset namespaces (inputs,
outputs, a DatasetEvent's dataset, column-lineage input fields) are normalised by
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

from emr_lineage.lineage.door.verdict import Rejected
from emr_lineage.lineage.event_rule import DATASET_EVENT, JOB_EVENT, RUN_EVENT, event_kind
from emr_lineage.lineage.naming import canonical_namespace
from emr_lineage.lineage.schemas.checks import Schemas, door_problem
from emr_lineage.lineage.times import parse_time

__all__ = ["DATASET_EVENT", "JOB_EVENT", "RUN_EVENT", "CheckedEvent", "check_event", "static_group"]
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


def _normalise_datasets(event: dict[str, Any]) -> None:
    """Normalise the namespaces of inputs and outputs, in place (the rule made them lists of datasets)."""
    for side in ("inputs", "outputs"):
        for dataset in event.get(side) or ():
            _normalise_dataset(dataset)


def _group_run(run: dict[str, Any], run_id: str) -> str:
    """The FIFO group of a run: the root run of the parent facet (ParentRunFacet 1-1-0 ``root``), else
    the parent run, else the run. The Spark listener gives an application and each of its actions the
    same root (the orchestrator's or ``emr-lineage launch``'s run), so they all stay in one order;
    with only ``parent`` the actions group under the application, the application under its own parent.
    https://openlineage.io/spec/facets/1-1-0/ParentRunFacet.json"""
    parent = (run.get("facets") or {}).get("parent")
    if parent is None:
        return run_id
    return str(uuid.UUID((parent.get("root") or parent)["run"]["runId"]))


def _kind_and_group(event: dict[str, Any]) -> tuple[str, str, str | None]:
    """(kind, FIFO group, run id) of an event that passed the rule."""
    kind = event_kind(event)
    if kind == RUN_EVENT:
        run_id = str(uuid.UUID(event["run"]["runId"]))
        return RUN_EVENT, _group_run(event["run"], run_id), run_id
    if kind == JOB_EVENT:
        return JOB_EVENT, static_group(JOB_EVENT, event["job"]["namespace"], event["job"]["name"]), None
    _normalise_dataset(event["dataset"])
    dataset = event["dataset"]
    return DATASET_EVENT, static_group(DATASET_EVENT, dataset["namespace"], dataset["name"]), None


def check_event(event: Any, *, max_bytes: int, schemas: Schemas | None = None) -> CheckedEvent | Rejected:
    """Check one parsed event as the readers do, with ``schemas`` (None: the event rule only);
    ``max_bytes`` bounds its canonical form, what SQS gets. Normalises it in place."""
    problem = door_problem(event, schemas)
    if problem is not None:
        return Rejected(400, problem)
    kind, group, run_id = _kind_and_group(event)
    _normalise_datasets(event)
    canonical = canonical_json(event)
    if len(canonical) > max_bytes:
        return Rejected(413, f"the event is {len(canonical)} bytes once normalised; the limit is {max_bytes}")
    return CheckedEvent(
        event=event,
        kind=kind,
        canonical=canonical,
        dedup_id=dedup_id(canonical),
        group_id=group,
        run_id=run_id,
        event_time=parse_time(event["eventTime"]),
    )
