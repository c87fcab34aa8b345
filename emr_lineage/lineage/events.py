"""Read OpenLineage run events from files and directories, and check them.

Formats: ``.jsonl`` (one event per line, lines end at ``\n`` only, blank lines ignored) and
``.json`` (one event or a list of events), UTF-8 with or without a byte order mark. A directory
is read recursively (``*.json`` and ``*.jsonl``, sorted). A key given twice in one JSON object
is an error (``file:line: duplicate key 'eventType'``): which value counts would be a guess.

Checking has two modes (see ``docs/graph.md``):

* lenient (default): the event must be a JSON object with a ``job`` object that has a
  ``namespace``, and its datasets must have a name; every field that IS present must match the
  OpenLineage 2-0-2 schema and the facet schemas (types, enums, uuid format), but missing
  required fields are accepted, so the partial fragments of the OpenLineage Spark integration
  tests load;
* strict: the full schema, required fields included (what Marquez accepts).

Schema checks use ``jsonschema`` with a ``referencing`` registry of the schema directory
(:mod:`emr_lineage.lineage.schema_store`, no network). Without the schemas, lenient mode runs the
structural checks only (``LoadedEvents.schema_checked`` is False and ``schema_note`` says why, for
the caller to show) and strict mode raises :class:`~emr_lineage.lineage.schemas.SchemasMissingError`.
Problems raise :class:`EventsError` with ``file:line`` unless ``skip_invalid=True``, which skips the
bad event and counts it.
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from json.decoder import WHITESPACE, scanstring
from json.scanner import py_make_scanner
from pathlib import Path
from typing import Any

from emr_lineage.errors import EmrLineageError
from emr_lineage.lineage.schema_store import missing_message, schema_dir
from emr_lineage.lineage.schemas import Schemas, check_event_with, load_schemas, require_schemas

EVENT_SUFFIXES = (".json", ".jsonl")
_MAX_SKIP_DETAILS = 20


class EventsError(EmrLineageError, ValueError):
    """Unreadable or malformed events; the message is one line naming file and line."""


@dataclass
class LoadedEvents:
    """Events read by :func:`load_events`: the dicts, the files read, what was skipped, and
    whether the schema checks ran (``schema_note`` says why not, in one line)."""

    events: list[dict[str, Any]] = field(default_factory=list)
    files: list[str] = field(default_factory=list)
    skipped: int = 0
    skipped_details: list[str] = field(default_factory=list)
    schema_checked: bool = False
    schema_note: str | None = None

    def __len__(self) -> int:
        return len(self.events)

    def __iter__(self) -> Iterator[dict[str, Any]]:
        return iter(self.events)


def iter_event_files(paths: Iterable[str | os.PathLike[str]]) -> list[Path]:
    """The event files named by ``paths`` (directories expanded recursively, sorted).

    Raises :class:`EventsError` for an empty path (not the current directory), a path that does
    not exist or a file of another type.
    """
    files: list[Path] = []
    for raw in paths:
        if not os.fspath(raw):
            raise EventsError("empty events path (give an events file or directory)")
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


class _DuplicateKey(ValueError):
    def __init__(self, key: str, offset: int | None = None) -> None:
        super().__init__(key)
        self.key, self.offset = key, offset


def _unique_pairs(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    """``object_pairs_hook`` of the fast (C) decoder: a dict, or _DuplicateKey (no position)."""
    result = dict(pairs)
    if len(result) != len(pairs):
        seen: set[str] = set()
        for key, _ in pairs:
            if key in seen:
                raise _DuplicateKey(key)
            seen.add(key)
    return result


def _locating_object(
    s_and_end: tuple[str, int],
    strict: bool,
    scan_once: Any,
    object_hook: Any,
    object_pairs_hook: Any,
    memo: Any = None,
    _w: Any = WHITESPACE.match,
) -> tuple[dict[str, Any], int]:
    """``parse_object`` of the slow (pure Python) decoder: like json's, but a repeated key raises
    _DuplicateKey with the key's offset. Only used to locate a duplicate the fast decoder found."""
    text, end = s_and_end
    pairs: dict[str, Any] = {}
    end = _w(text, end).end()
    if text[end : end + 1] == "}":
        return pairs, end + 1
    while True:
        if text[end : end + 1] != '"':
            raise json.JSONDecodeError("Expecting property name enclosed in double quotes", text, end)
        key_at = end
        key, end = scanstring(text, end + 1, strict)
        if key in pairs:
            raise _DuplicateKey(key, key_at)
        end = _w(text, end).end()
        if text[end : end + 1] != ":":
            raise json.JSONDecodeError("Expecting ':' delimiter", text, end)
        end = _w(text, end + 1).end()
        try:
            pairs[key], end = scan_once(text, end)
        except StopIteration as exc:
            raise json.JSONDecodeError("Expecting value", text, exc.value) from None
        end = _w(text, end).end()
        char = text[end : end + 1]
        end += 1
        if char == "}":
            return pairs, end
        if char != ",":
            raise json.JSONDecodeError("Expecting ',' delimiter", text, end - 1)
        end = _w(text, end).end()


_DECODER = json.JSONDecoder(object_pairs_hook=_unique_pairs)
_LENIENT_DECODER = json.JSONDecoder()
_LOCATING_DECODER = json.JSONDecoder()
_LOCATING_DECODER.parse_object = _locating_object  # type: ignore[assignment]
_LOCATING_DECODER.scan_once = py_make_scanner(_LOCATING_DECODER)


def _duplicate_offset(text: str, start: int) -> _DuplicateKey | None:
    """The first repeated key (in text order) of the JSON value at ``start``, with its offset."""
    try:
        _LOCATING_DECODER.raw_decode(text, start)
    except _DuplicateKey as exc:
        return exc
    except ValueError:
        return None
    return None


@dataclass
class _Problem:
    """A value of a ``.json`` file that is not usable, and why (its line is yielded with it)."""

    message: str


def _decode_at(text: str, start: int) -> tuple[int, Any, int]:
    """(line, value or _Problem, end) of the JSON value at ``start``.

    A duplicate key is a problem of that value only (reported at the key's own line); other
    errors raise json.JSONDecodeError.
    """
    try:
        value, end = _DECODER.raw_decode(text, start)
        return _line_of(text, start), value, end
    except _DuplicateKey as exc:
        located = _duplicate_offset(text, start) or exc
        _, end = _LENIENT_DECODER.raw_decode(text, start)
        where = located.offset if located.offset is not None else start
        return _line_of(text, where), _Problem(f"duplicate key {located.key!r}"), end


def _json_items(text: str) -> Iterator[tuple[int, Any]]:
    """(line, value or _Problem) of each element of a top-level JSON list, or of the single object.

    Decodes element by element so a bad element can be reported by its line.
    Raises json.JSONDecodeError for text that is not JSON.
    """
    start = len(text) - len(text.lstrip())
    if not text.startswith("[", start):
        line, value, end = _decode_at(text, start)
        if text[end:].strip():
            raise json.JSONDecodeError("extra data after the event", text, len(text) - len(text[end:].lstrip()))
        yield line, value
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
        line, value, end = _decode_at(text, position)
        yield line, value
        position, expect_item, count = end, False, count + 1


def _jsonl_lines(text: str) -> Iterator[tuple[int, str]]:
    """(number, line) of the non-blank lines. Lines end at ``\\n`` only: U+2028, U+0085 and the
    other line breaks of ``str.splitlines`` are valid inside JSON strings."""
    for number, line in enumerate(text.split("\n"), start=1):
        if line.strip(" \t\r"):
            yield number, line


def _decode_line(line: str) -> Any:
    """The JSON value of one JSONL line, or a _Problem for a duplicate key (with its column)."""
    try:
        return _DECODER.decode(line)
    except _DuplicateKey as exc:
        located = _duplicate_offset(line, len(line) - len(line.lstrip(" \t\r"))) or exc
        column = f" (column {located.offset + 1})" if located.offset is not None else ""
        return _Problem(f"duplicate key {located.key!r}{column}")


def _read_text(path: Path) -> str:
    """The text of ``path``; a UTF-8 byte order mark at the start is dropped."""
    try:
        return path.read_text(encoding="utf-8-sig")
    except UnicodeDecodeError as exc:
        raise EventsError(f"{path}: not UTF-8 text ({exc.reason} at byte {exc.start})") from None
    except OSError as exc:
        raise EventsError(f"{path}: cannot read: {exc.strerror or exc}") from None


def load_events(
    paths: Iterable[str | os.PathLike[str]],
    skip_invalid: bool = False,
    strict: bool = False,
    schema_directory: str | os.PathLike[str] | None = None,
) -> LoadedEvents:
    """Read and check the events in ``paths`` (files or directories).

    The schemas are read from ``schema_directory`` (default: ``$EMR_LINEAGE_SCHEMA_DIR``, else the
    user cache). Without them, strict mode raises ``SchemasMissingError`` (before reading any
    event) and lenient mode runs the structural checks, with ``schema_checked`` False and
    ``schema_note`` saying so.

    Raises :class:`EventsError` (one line: ``file:line: problem``) at the first bad event,
    unless ``skip_invalid`` is true: then bad lines/elements are skipped and counted in
    ``LoadedEvents.skipped``. Unreadable paths are always an error.
    """
    schemas: Schemas | None = require_schemas(schema_directory) if strict else load_schemas(schema_directory)
    loaded = LoadedEvents(schema_checked=schemas is not None)
    if schemas is None:
        loaded.schema_note = f"only structural event checks ran: {missing_message(schema_dir(schema_directory))}"

    def bad(path: Path, line: int, problem: str) -> None:
        message = f"{path}:{line}: {problem}"
        if not skip_invalid:
            raise EventsError(message)
        loaded.skipped += 1
        if len(loaded.skipped_details) < _MAX_SKIP_DETAILS:
            loaded.skipped_details.append(message)

    def take(path: Path, line: int, event: Any) -> None:
        problem = event.message if isinstance(event, _Problem) else check_event_with(event, strict, schemas)
        if problem:
            bad(path, line, problem)
        else:
            loaded.events.append(event)

    for path in iter_event_files(paths):
        loaded.files.append(str(path))
        text = _read_text(path)
        if path.suffix == ".jsonl":
            for number, line in _jsonl_lines(text):
                try:
                    event = _decode_line(line)
                except json.JSONDecodeError as exc:
                    bad(path, number, f"invalid JSON: {exc.msg} (column {exc.colno})")
                    continue
                take(path, number, event)
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
            take(path, number, event)
    return loaded


def to_dict(event: Any) -> dict[str, Any]:
    """The JSON dict of an ``openlineage.client`` event object (dicts pass through)."""
    if isinstance(event, Mapping):
        return dict(event)
    from openlineage.client.serde import Serde

    return json.loads(Serde.to_json(event))
