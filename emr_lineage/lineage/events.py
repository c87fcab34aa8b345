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
from pathlib import Path
from typing import Any

from emr_lineage.errors import EmrLineageError
from emr_lineage.lineage.schemas import check_event, spec_dir

EVENT_SUFFIXES = (".json", ".jsonl")
_MAX_SKIP_DETAILS = 20


class EventsError(EmrLineageError, ValueError):
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
