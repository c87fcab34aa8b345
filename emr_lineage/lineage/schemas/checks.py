"""Check OpenLineage run events against the OpenLineage 2-0-2 JSON schemas and facet schemas.

Lenient mode accepts missing required fields (the partial fragments of the OpenLineage Spark
integration tests); strict mode is the full schema (what Marquez accepts). The schemas come from
the schema directory of :mod:`emr_lineage.lineage.schemas.store` (``emr-lineage schemas fetch``).
Without them only the structural checks of :func:`check_event` run, which strict mode refuses
(:class:`SchemasMissingError`) and lenient callers must say (``LoadedEvents.schema_checked``).

Each event is first checked by a compiled validator of the same documents
(:mod:`emr_lineage.lineage.schemas.compiled`, yes or no, about 5 us); only an event it refuses goes
through the ``jsonschema`` checks here, which word the problem and have the last say.
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path
from typing import Any

import jsonschema_rs
from jsonschema import Draft202012Validator
from jsonschema.exceptions import ValidationError
from referencing import Registry, Resource

from emr_lineage.errors import json_type
from emr_lineage.lineage.event_rule import DATASET_EVENT, event_kind, event_problem
from emr_lineage.lineage.schemas.compiled import CompiledEventChecks, compile_event_checks, format_checker
from emr_lineage.lineage.schemas.store import (
    EVENT_SCHEMA,
    FETCH_COMMAND,
    PINNED_SCHEMAS,
    SPEC_VERSION,
    SchemaStoreError,
    missing_message,
    read_store,
    schema_dir,
)

_EVENT_SCHEMA_ID = EVENT_SCHEMA.schema_id
# Facets with their own schema: facet key -> schema file of the store.
_FACET_SCHEMAS = {
    "parent": "ParentRunFacet.json",
    "schema": "SchemaDatasetFacet.json",
    "columnLineage": "ColumnLineageDatasetFacet.json",
    "symlinks": "SymlinksDatasetFacet.json",
    "version": "DatasetVersionDatasetFacet.json",
}


class SchemasMissingError(SchemaStoreError):
    """Strict checks were asked for and the schemas are not there."""

    def __init__(self, directory: Path) -> None:
        super().__init__(
            f"strict checks need the OpenLineage {SPEC_VERSION} JSON schemas; {missing_message(directory)}"
        )
        self.directory = directory


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
    dataset_event: Any  # DatasetEvent, checked with its dataset's facet map emptied
    datasets: dict[str, Any]  # "inputs"/"outputs" -> InputDataset/OutputDataset validator
    base: dict[str, Any]  # base facet kind -> validator
    facets: dict[str, Any]  # facet key -> validator of its own schema
    # Checked parts by content: (strict, kind, key, JSON) -> problem or None.
    results: dict[tuple[bool, str, str, str], str | None] = field(default_factory=dict)

    def cached(self, key: tuple[bool, str, str, str], check: Any, *args: Any) -> str | None:
        """``check(*args)``, once per ``key``."""
        if key not in self.results:
            if len(self.results) >= _FACET_CACHE_SIZE:
                self.results.clear()
            self.results[key] = check(*args)
        return self.results[key]


@dataclass
class Schemas:
    """The validators of one schema directory (see :func:`load_schemas`)."""

    directory: Path
    validators: _Validators
    compiled: CompiledEventChecks  # the fast yes/no check; ``validators`` word the problems


def _store_key(directory: Path) -> tuple[tuple[str, int, int], ...] | None:
    """What identifies the store's current content: (file, mtime, size) of the present files."""
    key = []
    for pinned in PINNED_SCHEMAS:
        try:
            stat = (directory / pinned.filename).stat()
        except OSError:
            continue
        key.append((pinned.filename, stat.st_mtime_ns, stat.st_size))
    return tuple(key) or None


@lru_cache(maxsize=4)
def _build(directory: str, key: tuple[tuple[str, int, int], ...]) -> Schemas | None:
    documents = read_store(Path(directory))
    if documents is None:
        return None
    registry = Registry().with_resources(
        (document["$id"], Resource.from_contents(document)) for document in documents.values()
    )
    checker = format_checker()

    def validator(ref: str) -> Any:
        return Draft202012Validator({"$ref": ref}, registry=registry, format_checker=checker)

    return Schemas(
        directory=Path(directory),
        compiled=_compiled(directory, documents),
        validators=_Validators(
            envelope=validator(_EVENT_SCHEMA_ID + "#/$defs/RunEvent"),
            dataset_event=validator(_EVENT_SCHEMA_ID + "#/$defs/DatasetEvent"),
            datasets={
                "inputs": validator(f"{_EVENT_SCHEMA_ID}#/$defs/InputDataset"),
                "outputs": validator(f"{_EVENT_SCHEMA_ID}#/$defs/OutputDataset"),
            },
            base={
                kind: validator(f"{_EVENT_SCHEMA_ID}#/$defs/{kind}")
                for kind in {*_FACET_MAPS.values(), *_DATASET_FACET_MAPS.values()}
            },
            facets={key: validator(documents[filename]["$id"]) for key, filename in _FACET_SCHEMAS.items()},
        ),
    )


def _compiled(directory: str, documents: dict[str, dict[str, Any]]) -> CompiledEventChecks:
    try:
        return compile_event_checks(documents, EVENT_SCHEMA.filename, list(_FACET_SCHEMAS.values()))
    except (jsonschema_rs.ValidationError, ValueError) as exc:  # e.g. a pattern only Python's re reads
        message = getattr(exc, "message", None) or str(exc).splitlines()[0]
        raise SchemaStoreError(
            f"{directory}: the schemas do not compile: {message} (run `{FETCH_COMMAND}` again)"
        ) from None


def load_schemas(directory: str | os.PathLike[str] | None = None) -> Schemas | None:
    """The schema checks of ``directory`` (default: ``$EMR_LINEAGE_SCHEMA_DIR``, else the user cache).

    None when the directory holds no schema; raises :class:`SchemaStoreError` for an incomplete
    directory or a file that is not the pinned schema. Built once per directory content.
    """
    path = schema_dir(directory)
    key = _store_key(path)
    return None if key is None else _build(str(path), key)


def require_schemas(directory: str | os.PathLike[str] | None = None) -> Schemas:
    """:func:`load_schemas`, or :class:`SchemasMissingError` naming `emr-lineage schemas fetch`."""
    schemas = load_schemas(directory)
    if schemas is None:
        raise SchemasMissingError(schema_dir(directory))
    return schemas


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


def _check_dataset(validator: Any, dataset: Mapping[str, Any], strict: bool) -> str | None:
    """The first problem of one dataset without its facets, relative to it: ``.<path>: <message>``."""
    error = _first_error(validator, dataset, strict)
    return None if error is None else _describe("", error)


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


def _structural_problem(event: Any) -> str | None:
    """What every event must have, schemas or not: a job with a namespace, dataset lists of
    objects, and datasets with a name (the graph has no node for a nameless dataset)."""
    if not isinstance(event, Mapping):
        return f"an event is a JSON object, got a JSON {json_type(event)}"
    job = event.get("job")
    if not isinstance(job, Mapping):
        return "event has no 'job' object (only run events are read)"
    if not isinstance(job.get("namespace"), str) or not job["namespace"]:
        return "event.job has no 'namespace'"
    for direction in ("inputs", "outputs"):
        datasets = event.get(direction)
        if datasets is None:
            continue
        if not isinstance(datasets, list) or not all(isinstance(d, Mapping) for d in datasets):
            return f"event.{direction} must be a list of dataset objects"
        for index, dataset in enumerate(datasets):
            name = dataset.get("name")
            if name is None:
                return f"event.{direction}[{index}] has no 'name' (a dataset needs a name)"
            if not isinstance(name, str):
                return f"event.{direction}[{index}].name: {name!r} is not of type 'string'"
            if not name.strip():
                return f"event.{direction}[{index}].name is empty (a dataset needs a name)"
    return None


def check_event(event: Any, strict: bool = False, schemas: Schemas | None = None) -> str | None:
    """Return why ``event`` is not a usable OpenLineage run event, or None if it is.

    ``schemas`` defaults to :func:`load_schemas` (the schema directory). When there are none,
    lenient mode runs the structural checks only and strict mode raises
    :class:`SchemasMissingError`.

    Facets repeat from event to event (the same parent, job type, schema...), so each distinct
    facet content is checked once; the rest of the event is checked every time.
    """
    if schemas is None:
        schemas = require_schemas() if strict else load_schemas()
    return check_event_with(event, strict, schemas)


def check_event_with(event: Any, strict: bool, schemas: Schemas | None) -> str | None:
    """:func:`check_event` with exactly these schemas: None runs the structural checks only
    (lenient mode; strict mode raises :class:`SchemasMissingError`)."""
    if schemas is None and strict:
        raise SchemasMissingError(schema_dir())
    if schemas is not None and schemas.compiled.is_valid(event, strict):
        return None  # the compiled check includes the structural rules and the event rule
    return _worded_problem(event, strict, schemas) or event_problem(event)


def _worded_problem(event: Any, strict: bool, schemas: Schemas | None) -> str | None:
    """The structural problem, else the schema problem by the worded checks (with ``schemas``)."""
    problem = _structural_problem(event)
    if problem is None and schemas is not None:
        problem = detailed_problem(event, strict, schemas)
    return problem


def door_problem(event: Any, schemas: Schemas | None) -> str | None:
    """Why the gateway refuses ``event``, or None: what the readers refuse (:func:`check_event_with`,
    lenient), with the event rule's reason first where it has one (it names what Marquez needs); a
    dataset event, which the readers do not read, against ``DatasetEvent`` and its facets' schemas."""
    if schemas is not None and schemas.compiled.is_valid(event, False):
        return None  # a run event the readers take (the compiled check refuses the static kinds)
    problem = event_problem(event)
    if problem is not None:
        return problem
    if event_kind(event) == DATASET_EVENT:
        return None if schemas is None else _dataset_event_problem(event, schemas.validators)
    return _worded_problem(event, False, schemas)


def _dataset_event_problem(event: Mapping[str, Any], validators: _Validators) -> str | None:
    facets = event["dataset"].get("facets") or {}  # the event rule took it: a dataset object, facets an object
    bare = {**event, "dataset": {**event["dataset"], "facets": {}}} if facets else event
    error = _first_error(validators.dataset_event, bare, False)
    if error is not None and error.validator == "not":  # DatasetEvent's "not": {"required": ["job", "run"]}
        return "event: a dataset event holds no 'job' and 'run' (those make it a run event)"
    if error is not None:
        return _describe("event", error)
    return _facet_map_problem(validators, "event.dataset.facets", "DatasetFacet", facets, False)


def detailed_problem(event: Mapping[str, Any], strict: bool, schemas: Schemas) -> str | None:
    """The schema problem of a structurally sound event by the ``jsonschema`` checks, worded (the
    compiled check only says yes or no, and may refuse more: these have the last say)."""
    validators = schemas.validators
    error = _first_error(validators.envelope, _envelope(event), strict)
    if error is not None:
        return _describe("event", error)
    for direction in ("inputs", "outputs"):
        for index, dataset in enumerate(event.get(direction) or ()):
            bare = _bare_dataset(dataset)
            problem = validators.cached(
                (strict, direction, "", json.dumps(bare, sort_keys=True)),
                _check_dataset,
                validators.datasets[direction],
                bare,
                strict,
            )
            if problem is not None:
                return f"event.{direction}[{index}]{problem}"
    for where, kind, facets in _facet_maps(event):
        problem = _facet_map_problem(validators, where, kind, facets, strict)
        if problem is not None:
            return problem
    return None


def _facet_map_problem(
    validators: _Validators, where: str, kind: str, facets: Mapping[str, Any], strict: bool
) -> str | None:
    """The first problem of a facet map at ``where`` whose facets extend ``kind``, each content checked once."""
    for key, facet in facets.items():
        cache_key = (strict, kind, key, json.dumps(facet, sort_keys=True))
        problem = validators.cached(cache_key, _check_facet, validators, kind, key, facet, strict)
        if problem is not None:
            return where + problem
    return None
