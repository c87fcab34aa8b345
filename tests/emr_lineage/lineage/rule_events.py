"""Events that meet the event rule (emr_lineage.lineage.event_rule), for the lineage tests that are about
something else: the envelope every event needs, facets with their ``_producer`` and ``_schemaURL``, and the
OpenLineage Spark integration's fragments completed with what the rule demands and they leave out."""

from __future__ import annotations

import copy
import gzip
import json
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

PRODUCER = "https://github.com/OpenLineage/OpenLineage/tree/1.40.0/integration/spark"
SPEC = "https://openlineage.io/spec/2-0-2/OpenLineage.json"
RUN_EVENT_URL = f"{SPEC}#/$defs/RunEvent"
EVENT_TIME = "2026-11-21T12:00:00Z"
RUN_ID = "3f5e83fa-3480-44ff-99c5-ff943904e5e8"
# The envelope of a RunEvent but its eventType and run: what the Spark integration's fragments lack.
ENVELOPE = {"eventTime": EVENT_TIME, "producer": PRODUCER, "schemaURL": RUN_EVENT_URL}


def facet(schema: str = f"{SPEC}#/$defs/RunFacet", **fields: Any) -> dict[str, Any]:
    """A facet with the two fields every facet has (``schema``: a facet file name, or a whole URL)."""
    url = schema if "://" in schema else f"https://openlineage.io/spec/facets/{schema}"
    return {"_producer": PRODUCER, "_schemaURL": url, **fields}


def run_event(namespace: str = "ns", name: str = "j", *, run_id: str = RUN_ID, **fields: Any) -> dict[str, Any]:
    """The smallest RunEvent the rule takes (a START of job ``namespace``/``name``), with ``fields`` added."""
    base = {
        **ENVELOPE,
        "eventType": "START",
        "job": {"namespace": namespace, "name": name},
        "run": {"runId": run_id},
    }
    return {**base, **fields}


def job_event(**changes: Any) -> dict[str, Any]:
    """A JobEvent (static lineage: a job with its inputs and outputs, no run), with ``changes``."""
    base = {
        "eventTime": EVENT_TIME,
        "producer": "https://example.com/catalog-sync",
        "schemaURL": f"{SPEC}#/$defs/JobEvent",
        "job": {"namespace": "airflow", "name": "nightly.load"},
        "inputs": [{"namespace": "s3a://lake", "name": "raw/orders"}],
        "outputs": [{"namespace": "s3://lake", "name": "clean/orders"}],
    }
    return {**base, **changes}


def dataset_event(**changes: Any) -> dict[str, Any]:
    """A DatasetEvent (static lineage: one dataset), with ``changes``."""
    base = {
        "eventTime": EVENT_TIME,
        "producer": "https://example.com/catalog-sync",
        "schemaURL": f"{SPEC}#/$defs/DatasetEvent",
        "dataset": {"namespace": "s3n://lake", "name": "clean/orders", "facets": {}},
    }
    return {**base, **changes}


def with_envelope(fragment: dict[str, Any], run_id: str | None = None) -> dict[str, Any]:
    """A copy of ``fragment`` with the envelope: eventTime, producer, schemaURL, eventType and run.runId
    where it has none (each fragment a run of its own, unless ``run_id`` is given)."""
    event = {**ENVELOPE, **copy.deepcopy(fragment)}
    event.setdefault("eventType", "COMPLETE")
    run = event.setdefault("run", {})
    run.setdefault("runId", run_id or str(uuid.uuid5(uuid.NAMESPACE_URL, repr(sorted(fragment.items())))))
    return event


def _complete_facets(facets: Any) -> None:
    for key, value in (facets or {}).items():
        if isinstance(value, dict):
            value.setdefault("_producer", PRODUCER)
            value.setdefault("_schemaURL", f"https://openlineage.io/spec/facets/{key}.json")


def completed(fragment: dict[str, Any], namespace: str = "file") -> dict[str, Any]:
    """``fragment`` with the envelope and the rest of what the rule demands that the Spark integration's
    fragments leave out: a job name, dataset (and column-lineage input) namespaces, facets'
    ``_producer``/``_schemaURL`` and the parent run's runId. Whatever the fragment has stays as it is."""
    event = with_envelope(fragment)
    job = event["job"]
    job.setdefault("name", f"{job['namespace']}.job")
    _complete_facets(job.get("facets"))
    _complete_facets(event["run"].get("facets"))
    parent = event["run"].get("facets", {}).get("parent")
    if parent is not None:
        parent.setdefault("run", {}).setdefault("runId", RUN_ID)
    for dataset in event.get("inputs", []) + event.get("outputs", []):
        dataset.setdefault("namespace", namespace)
        for key in ("facets", "inputFacets", "outputFacets"):
            _complete_facets(dataset.get(key))
        column = dataset.get("facets", {}).get("columnLineage", {})
        for spec in column.get("fields", {}).values():
            for source in spec.get("inputFields", []):
                source.setdefault("namespace", namespace)
    return event


LISTENER_EVENTS = Path(__file__).resolve().parents[1] / "fixtures" / "marquez-0.51" / "events.jsonl.gz"


def listener_events() -> list[dict[str, Any]]:
    """The 117 RunEvents the OpenLineage Spark listener 1.53 sent for the sample pipeline, as a real Marquez
    0.51.1 took them (the committed fixture of the Marquez stand-in)."""
    with gzip.open(LISTENER_EVENTS, "rt", encoding="utf-8") as lines:
        return [json.loads(line) for line in lines]


def value_paths(node: Any, path: tuple[Any, ...] = ()) -> Iterator[tuple[Any, ...]]:
    """The path (keys and indexes) of every value in ``node``, ``node`` itself first (``()``)."""
    yield path
    if isinstance(node, dict):
        for key, value in node.items():
            yield from value_paths(value, (*path, key))
    elif isinstance(node, list):
        for index, value in enumerate(node):
            yield from value_paths(value, (*path, index))


def mutated_copy(event: dict[str, Any], path: tuple[Any, ...], value: Any, delete: bool = False) -> dict[str, Any]:
    """A copy of ``event`` with the value at ``path`` replaced by ``value`` (or deleted: ``delete``, in an object)."""
    copied = copy.deepcopy(event)
    holder = copied
    for step in path[:-1]:
        holder = holder[step]
    if delete and isinstance(holder, dict):
        del holder[path[-1]]
    else:
        holder[path[-1]] = copy.deepcopy(value)
    return copied
