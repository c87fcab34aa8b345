"""Read OpenLineage run events from files and directories, and check them.

Formats: ``.jsonl`` (one event per line, blank lines ignored) and ``.json`` (one event or a
list of events). A directory is read recursively (``*.json`` and ``*.jsonl``, sorted).

Checking has two modes (see ``docs/graph.md``):

* lenient (default): the event must be a JSON object with a ``job`` object that has a
  ``namespace``; every field that IS present must match the OpenLineage 2-0-2 schema and the
  facet schemas (types, enums, uuid format), but missing required fields are accepted, so
  the partial fragments of the OpenLineage Spark integration tests load;
* strict: the full schema, required fields included (what Marquez accepts).

Schema checks use ``jsonschema`` with a ``referencing`` registry of the local schema copies
(no network). Problems raise :class:`EventsError` with ``file:line`` unless
``skip_invalid=True``, which skips the bad event and counts it.
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterable, Iterator, Mapping
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
EVENT_SUFFIXES = (".json", ".jsonl")
_MAX_SKIP_DETAILS = 20


class EventsError(ValueError):
    """Unreadable or malformed events; the message is one line naming file and line."""


@dataclass
class LoadedEvents:
    """Events read by :func:`load_events`: the dicts, the files read, what was skipped."""

    events: list[dict[str, Any]] = field(default_factory=list)
    files: list[str] = field(default_factory=list)
    skipped: int = 0
    skipped_details: list[str] = field(default_factory=list)
    schema_checked: bool = False

    def __len__(self) -> int:
        return len(self.events)

    def __iter__(self) -> Iterator[dict[str, Any]]:
        return iter(self.events)


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


def iter_event_files(paths: Iterable[str | os.PathLike[str]]) -> list[Path]:
    """The event files named by ``paths`` (directories expanded recursively, sorted).

    Raises :class:`EventsError` for a path that does not exist or a file of another type.
    """
    files: list[Path] = []
    for raw in paths:
        path = Path(raw)
        if path.is_dir():
            found = sorted(p for p in path.rglob("*") if p.is_file() and p.suffix in EVENT_SUFFIXES)
            if not found:
                raise EventsError(f"{path}: no .json or .jsonl event files in this directory")
            files.extend(found)
        elif path.is_file():
            if path.suffix not in EVENT_SUFFIXES:
                raise EventsError(f"{path}: not an event file (expected .json or .jsonl)")
            files.append(path)
        elif path.exists():
            raise EventsError(f"{path}: not a file or directory")
        else:
            raise EventsError(f"{path}: no such file or directory")
    return files


def _line_of(text: str, offset: int) -> int:
    return text.count("\n", 0, offset) + 1


def _json_items(text: str) -> Iterator[tuple[int, Any]]:
    """(line, value) of each element of a top-level JSON list, or of the single object.

    Decodes element by element so a bad element can be reported by its line.
    Raises json.JSONDecodeError for text that is not JSON.
    """
    decoder = json.JSONDecoder()
    start = len(text) - len(text.lstrip())
    if not text.startswith("[", start):
        value, end = decoder.raw_decode(text, start)
        if text[end:].strip():
            raise json.JSONDecodeError("extra data after the event", text, len(text) - len(text[end:].lstrip()))
        yield _line_of(text, start), value
        return
    position = start + 1
    expect_item, count = True, 0
    while True:
        while position < len(text) and text[position].isspace():
            position += 1
        if position >= len(text):
            raise json.JSONDecodeError("unterminated list of events", text, position)
        char = text[position]
        if char == "]":
            if expect_item and count:
                raise json.JSONDecodeError("trailing comma in the list of events", text, position)
            rest = text[position + 1 :]
            if rest.strip():
                raise json.JSONDecodeError("extra data after the list of events", text, len(text) - len(rest.lstrip()))
            return
        if not expect_item:
            if char != ",":
                raise json.JSONDecodeError("expected ',' or ']' between events", text, position)
            position += 1
            expect_item = True
            continue
        value, end = decoder.raw_decode(text, position)
        yield _line_of(text, position), value
        position, expect_item, count = end, False, count + 1


def _read_text(path: Path) -> str:
    try:
        return path.read_text(encoding="utf-8")
    except UnicodeDecodeError as exc:
        raise EventsError(f"{path}: not UTF-8 text ({exc.reason} at byte {exc.start})") from None
    except OSError as exc:
        raise EventsError(f"{path}: cannot read: {exc.strerror or exc}") from None


def load_events(
    paths: Iterable[str | os.PathLike[str]], skip_invalid: bool = False, strict: bool = False
) -> LoadedEvents:
    """Read and check the events in ``paths`` (files or directories).

    Raises :class:`EventsError` (one line: ``file:line: problem``) at the first bad event,
    unless ``skip_invalid`` is true: then bad lines/elements are skipped and counted in
    ``LoadedEvents.skipped``. Unreadable paths are always an error.
    """
    loaded = LoadedEvents(schema_checked=spec_dir() is not None)

    def bad(path: Path, line: int, problem: str) -> None:
        message = f"{path}:{line}: {problem}"
        if not skip_invalid:
            raise EventsError(message)
        loaded.skipped += 1
        if len(loaded.skipped_details) < _MAX_SKIP_DETAILS:
            loaded.skipped_details.append(message)

    for path in iter_event_files(paths):
        loaded.files.append(str(path))
        text = _read_text(path)
        if path.suffix == ".jsonl":
            for number, line in enumerate(text.splitlines(), start=1):
                if not line.strip():
                    continue
                try:
                    event = json.loads(line)
                except json.JSONDecodeError as exc:
                    bad(path, number, f"invalid JSON: {exc.msg} (column {exc.colno})")
                    continue
                problem = check_event(event, strict)
                if problem:
                    bad(path, number, problem)
                else:
                    loaded.events.append(event)
            continue
        if not text.strip():
            bad(path, 1, "empty file (expected an event or a list of events)")
            continue
        try:
            items = list(_json_items(text))
        except json.JSONDecodeError as exc:
            bad(path, _line_of(text, exc.pos), f"invalid JSON: {exc.msg}")
            continue
        for number, event in items:
            problem = check_event(event, strict)
            if problem:
                bad(path, number, problem)
            else:
                loaded.events.append(event)
    return loaded


def to_dict(event: Any) -> dict[str, Any]:
    """The JSON dict of an ``openlineage.client`` event object (dicts pass through)."""
    if isinstance(event, Mapping):
        return dict(event)
    from openlineage.client.serde import Serde

    return json.loads(Serde.to_json(event))
