"""Check OpenLineage run events against the OpenLineage 2-0-2 JSON schemas and facet schemas.

Lenient mode accepts missing required fields (the partial fragments of the OpenLineage Spark
integration tests); strict mode is the full schema (what Marquez accepts).
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path
from typing import Any

from jsonschema import Draft202012Validator, FormatChecker
from jsonschema.exceptions import ValidationError
from referencing import Registry, Resource

SPEC_ENV_VAR = "EMR_LINEAGE_OPENLINEAGE_SPEC"
_CHECKOUT_SPEC_DIR = Path(__file__).resolve().parent.parent.parent / "shared" / "reference" / "openlineage" / "spec"
_EVENT_SCHEMA_ID = "https://openlineage.io/spec/2-0-2/OpenLineage.json"
# Facets with a local schema: facet key -> schema file.
_FACET_SCHEMAS = {
    "parent": "ParentRunFacet.json",
    "schema": "SchemaDatasetFacet.json",
    "columnLineage": "ColumnLineageDatasetFacet.json",
    "symlinks": "SymlinksDatasetFacet.json",
    "version": "DatasetVersionDatasetFacet.json",
}


def spec_dir() -> Path | None:
    """Where the OpenLineage JSON schemas are: ``$EMR_LINEAGE_OPENLINEAGE_SPEC`` or the
    reference copy beside the checkout; None if neither exists (schema checks are then off)."""
    configured = os.environ.get(SPEC_ENV_VAR)
    candidate = Path(configured) if configured else _CHECKOUT_SPEC_DIR
    return candidate if (candidate / "OpenLineage.json").is_file() else None


# Facet maps of a run event: where they sit and the OpenLineage base facet they extend.
_FACET_MAPS = {"run": "RunFacet", "job": "JobFacet"}
_DATASET_FACET_MAPS = {
    "facets": "DatasetFacet",
    "inputFacets": "InputDatasetFacet",
    "outputFacets": "OutputDatasetFacet",
}


_FACET_CACHE_SIZE = 20_000


@dataclass
class _Validators:
    envelope: Any  # RunEvent, checked without datasets and with facet maps emptied
    datasets: dict[str, Any]  # "inputs"/"outputs" -> InputDataset/OutputDataset validator
    base: dict[str, Any]  # base facet kind -> validator
    facets: dict[str, Any]  # facet key -> validator of its own schema
    # Checked parts by content: (strict, kind, key, JSON) -> problem or None.
    results: dict[tuple[bool, str, str, str], str | None] = field(default_factory=dict)

    def cached(self, key: tuple[bool, str, str, str], check: Any) -> str | None:
        if key not in self.results:
            if len(self.results) >= _FACET_CACHE_SIZE:
                self.results.clear()
            self.results[key] = check()
        return self.results[key]


@lru_cache(maxsize=4)
def _validators(directory: str | None) -> _Validators | None:
    if directory is None:
        return None
    resources = []
    ids = {}
    for path in sorted(Path(directory).glob("*.json")):
        contents = json.loads(path.read_text(encoding="utf-8"))
        resources.append((contents["$id"], Resource.from_contents(contents)))
        ids[path.name] = contents["$id"]
    registry = Registry().with_resources(resources)
    checker = FormatChecker()

    def validator(ref: str) -> Any:
        return Draft202012Validator({"$ref": ref}, registry=registry, format_checker=checker)

    return _Validators(
        envelope=validator(_EVENT_SCHEMA_ID + "#/$defs/RunEvent"),
        datasets={
            "inputs": validator(f"{_EVENT_SCHEMA_ID}#/$defs/InputDataset"),
            "outputs": validator(f"{_EVENT_SCHEMA_ID}#/$defs/OutputDataset"),
        },
        base={
            kind: validator(f"{_EVENT_SCHEMA_ID}#/$defs/{kind}")
            for kind in {*_FACET_MAPS.values(), *_DATASET_FACET_MAPS.values()}
        },
        facets={key: validator(ids[filename]) for key, filename in _FACET_SCHEMAS.items() if filename in ids},
    )


def _only_missing(error: ValidationError) -> bool:
    """True if the error is only about absent required fields (accepted in lenient mode)."""
    if error.validator == "required":
        return True
    if error.validator in ("anyOf", "oneOf", "allOf") and error.context:
        return all(_only_missing(sub) for sub in error.context)
    return False


def _first_error(validator: Any, instance: Any, strict: bool) -> ValidationError | None:
    def order(error: ValidationError) -> list[tuple[int, Any]]:
        return [(0, p) if isinstance(p, int) else (1, str(p)) for p in error.absolute_path]

    for error in sorted(validator.iter_errors(instance), key=order):
        if strict or not _only_missing(error):
            return error
    return None


def _describe(where: str, error: ValidationError) -> str:
    path = error.json_path[1:]  # "$.a[0].b" -> ".a[0].b"
    message = error.message if len(error.message) <= 160 else error.message[:157] + "..."
    return f"{where}{path}: {message}"


def _facet_maps(event: Mapping[str, Any]) -> Iterator[tuple[str, str, Mapping[str, Any]]]:
    """(where, base facet kind, facet map) of every facet map in the event."""
    for holder, kind in _FACET_MAPS.items():
        owner = event.get(holder)
        if isinstance(owner, Mapping) and isinstance(owner.get("facets"), Mapping):
            yield f"event.{holder}.facets", kind, owner["facets"]
    for direction in ("inputs", "outputs"):
        for index, dataset in enumerate(event.get(direction) or ()):
            for key, kind in _DATASET_FACET_MAPS.items():
                if isinstance(dataset.get(key), Mapping):
                    yield f"event.{direction}[{index}].{key}", kind, dataset[key]


def _envelope(event: Mapping[str, Any]) -> dict[str, Any]:
    """A shallow copy of the event without datasets and with run/job facet maps emptied
    (datasets and facets are checked apart)."""
    copy = {k: v for k, v in event.items() if k not in ("inputs", "outputs")}
    for holder in _FACET_MAPS:
        owner = event.get(holder)
        if isinstance(owner, Mapping) and isinstance(owner.get("facets"), Mapping):
            copy[holder] = {**owner, "facets": {}}
    return copy


def _bare_dataset(dataset: Mapping[str, Any]) -> dict[str, Any]:
    return {**dataset, **{k: {} for k in _DATASET_FACET_MAPS if isinstance(dataset.get(k), Mapping)}}


def _check_facet(validators: _Validators, kind: str, key: str, facet: Any, strict: bool) -> str | None:
    """The first problem of one facet (base facet schema, then its own schema), as text
    relative to its facet map: ``.<key>.<path>: <message>``."""
    error = _first_error(validators.base[kind], facet, strict)
    if error is not None:
        return _describe(f".{key}", error)
    own = validators.facets.get(key)
    if own is not None:
        error = _first_error(own, {key: facet}, strict)
        if error is not None:
            return _describe("", error)
    return None


def check_event(event: Any, strict: bool = False) -> str | None:
    """Return why ``event`` is not a usable OpenLineage run event, or None if it is.

    Facets repeat from event to event (the same parent, job type, schema...), so each distinct
    facet content is checked once; the rest of the event is checked every time.
    """
    if not isinstance(event, Mapping):
        return f"an event is a JSON object, got {type(event).__name__}"
    job = event.get("job")
    if not isinstance(job, Mapping):
        return "event has no 'job' object (only run events are read)"
    if not isinstance(job.get("namespace"), str) or not job["namespace"]:
        return "event.job has no 'namespace'"
    for direction in ("inputs", "outputs"):
        datasets = event.get(direction)
        if datasets is not None and (
            not isinstance(datasets, list) or not all(isinstance(d, Mapping) for d in datasets)
        ):
            return f"event.{direction} must be a list of dataset objects"
    directory = spec_dir()
    validators = _validators(str(directory) if directory else None)
    if validators is None:
        return None
    error = _first_error(validators.envelope, _envelope(event), strict)
    if error is not None:
        return _describe("event", error)
    for direction in ("inputs", "outputs"):
        for index, dataset in enumerate(event.get(direction) or ()):
            bare = _bare_dataset(dataset)
            problem = validators.cached(
                (strict, direction, "", json.dumps(bare, sort_keys=True)),
                lambda: _describe("", e) if (e := _first_error(validators.datasets[direction], bare, strict)) else None,
            )
            if problem is not None:
                return f"event.{direction}[{index}]{problem}"
    for where, kind, facets in _facet_maps(event):
        for key, facet in facets.items():
            problem = validators.cached(
                (strict, kind, key, json.dumps(facet, sort_keys=True)),
                lambda: _check_facet(validators, kind, key, facet, strict),
            )
            if problem is not None:
                return where + problem
    return None
