"""The shape Marquez binds an OpenLineage event to (service/models/LineageEvent and friends): the
properties it models (written back as null when an event lacks them, R13), those it requires
(@NotNull: a 422 naming the property path), and the objects and lists it descends into."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any


@dataclass(frozen=True)
class Shape:
    """One modelled class: its properties, which are required, and the shape of nested ones
    (a Shape, or ("list", Shape), or ("map", Shape) for a map of objects)."""

    props: tuple[str, ...]
    required: tuple[str, ...] = ()
    nested: dict[str, Any] = field(default_factory=dict)


def facet(*props: str, required: tuple[str, ...] = (), nested: dict[str, Any] | None = None) -> Shape:
    """A facet: _producer and _schemaURL are always required."""
    return Shape(("_producer", "_schemaURL", *props), ("_producer", "_schemaURL", *required), nested or {})


LINK_RUN = Shape(("runId",), ("runId",))
LINK_JOB = Shape(("namespace", "name"), ("namespace", "name"))
RUN_FACETS = Shape(
    ("nominalTime", "parent"),
    nested={
        "nominalTime": facet("nominalStartTime", "nominalEndTime", required=("nominalStartTime",)),
        "parent": facet("run", "job", required=("run", "job"), nested={"run": LINK_RUN, "job": LINK_JOB}),
    },
)
RUN = Shape(("runId", "facets"), ("runId",), {"facets": RUN_FACETS})
JOB_FACETS = Shape(
    ("documentation", "sourceCodeLocation", "sql", "jobType"),
    nested={
        "documentation": facet("description", required=("description",)),
        "sourceCodeLocation": facet("type", "url"),
        "sql": facet("query", required=("query",)),
        "jobType": facet(
            "processingType", "integration", "jobType", required=("processingType", "integration", "jobType")
        ),
    },
)
JOB = Shape(("namespace", "name", "facets"), ("namespace", "name"), {"facets": JOB_FACETS})
SCHEMA_FIELD = Shape(("name", "type", "description"), ("name",))
INPUT_FIELD = Shape(("namespace", "name", "field"), ("namespace", "name", "field"))
OUTPUT_COLUMN = Shape(
    ("inputFields", "transformationDescription", "transformationType"),
    nested={"inputFields": ("list", INPUT_FIELD)},
)
DATASET_FACETS = Shape(
    ("documentation", "schema", "dataSource", "description", "lifecycleStateChange", "columnLineage", "symlinks"),
    nested={
        "documentation": facet("description", required=("description",)),
        "schema": facet("fields", nested={"fields": ("list", SCHEMA_FIELD)}),
        "dataSource": facet("name", "uri"),
        "lifecycleStateChange": facet("lifecycleStateChange"),
        # the output columns are not validated (the map is not @Valid), only re-serialised
        "columnLineage": facet("fields", nested={"fields": ("map", OUTPUT_COLUMN)}),
        "symlinks": facet(
            "identifiers",
            nested={"identifiers": ("list", Shape(("namespace", "name", "type"), ("namespace", "name")))},
        ),
    },
)
DATASET = Shape(
    ("namespace", "name", "facets", "inputFacets", "outputFacets"),
    ("namespace", "name"),
    {"facets": DATASET_FACETS},
)
RUN_EVENT = Shape(
    ("eventType", "eventTime", "run", "job", "inputs", "outputs", "producer", "schemaURL"),
    ("eventTime", "run", "job", "producer"),
    {"run": RUN, "job": JOB, "inputs": ("list", DATASET), "outputs": ("list", DATASET)},
)
DATASET_EVENT = Shape(
    ("eventTime", "dataset", "producer", "schemaURL"),
    ("eventTime", "producer", "schemaURL"),
    {"dataset": DATASET},
)
JOB_EVENT = Shape(
    ("eventTime", "job", "inputs", "outputs", "producer", "schemaURL"),
    ("eventTime", "job", "producer", "schemaURL"),
    {"job": JOB, "inputs": ("list", DATASET), "outputs": ("list", DATASET)},
)


def violations(value: Any, shape: Shape, path: str = "") -> list[str]:
    """Bean validation of a bound object: "<path> must not be null" for each missing property."""
    found = [f"{path}{name} must not be null" for name in shape.required if value.get(name) is None]
    for name, inner in shape.nested.items():
        child = value.get(name)
        if child is None:
            continue
        if isinstance(inner, Shape):
            if isinstance(child, dict):
                found += violations(child, inner, f"{path}{name}.")
        elif inner[0] == "list" and isinstance(child, list):
            for index, item in enumerate(child):
                if isinstance(item, dict):
                    found += violations(item, inner[1], f"{path}{name}[{index}].")
    return found


def canonical(value: Any, shape: Shape, nulls: bool = True) -> Any:
    """The event as Marquez writes it back (``nulls``: modelled properties present, null when
    absent; the rest as sent), or as it stores facets (NON_NULL: without modelled nulls)."""
    out: dict[str, Any] = {name: None for name in shape.props} if nulls else {}
    for name, child in value.items():
        inner = shape.nested.get(name)
        if child is None and not nulls and name in shape.props:
            continue
        if isinstance(inner, Shape) and isinstance(child, dict):
            child = canonical(child, inner, nulls)
        elif isinstance(inner, tuple) and inner[0] == "list" and isinstance(child, list):
            child = [canonical(item, inner[1], nulls) if isinstance(item, dict) else item for item in child]
        elif isinstance(inner, tuple) and inner[0] == "map" and isinstance(child, dict):
            child = {
                key: canonical(item, inner[1], nulls) if isinstance(item, dict) else item for key, item in child.items()
            }
        out[name] = child
    return out
