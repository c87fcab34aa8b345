"""Read OpenLineage run events from files, directories and standard input, and check them, streamed.

Sources and formats: :mod:`emr_lineage.lineage.events.sources` (``.jsonl``, ``.ndjson``, ``.json``,
gzip of each, directories, ``-``). A key given twice in one JSON object with two values is an error
(``file:line: duplicate key 'eventType'``): which value counts would be a guess (twice with the same
value is accepted: the OpenLineage Spark listener writes that). Decoding:
:mod:`emr_lineage.lineage.events.decode` (orjson).

Checking has two modes (see ``docs/graph.md``):

* lenient (default): the event must be a JSON object with a ``job`` object that has a
  ``namespace``, and its datasets must have a name; every field that IS present must match the
  OpenLineage 2-0-2 schema and the facet schemas (types, enums, uuid format), but missing
  required fields are accepted, so the partial fragments of the OpenLineage Spark integration
  tests load;
* strict: the full schema, required fields included (what Marquez accepts).

Schema checks: a compiled validator first, ``jsonschema`` to word a problem
(:mod:`emr_lineage.lineage.schemas.checks`), both from the schema directory
(:mod:`emr_lineage.lineage.schemas.store`, no network). Without the schemas, lenient mode runs the
structural checks only (``schema_checked`` is False and ``schema_note`` says why, for the caller to
show) and strict mode raises :class:`~emr_lineage.lineage.schemas.checks.SchemasMissingError`.
Problems raise :class:`EventsError` with ``file:line`` unless ``skip_invalid=True``, which skips the
bad event and counts it.

:func:`stream_events` yields the checked events one at a time (memory: a few blocks of the
input), or merges them (:meth:`EventStream.merge`, e.g. into a graph builder: each line decoded
once, by the process that merges it); :func:`load_events` keeps them all in a list.
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from typing import IO, Any

import orjson

from emr_lineage.lineage.events.blocks import Block, is_event_line, read_blocks
from emr_lineage.lineage.events.decode import Problem
from emr_lineage.lineage.events.merging import MakeMerger, Merger, cyclic_gc_paused
from emr_lineage.lineage.events.parallel import LineChecker
from emr_lineage.lineage.events.sources import (
    STDIN_NAME,
    EventsError,
    Source,
    event_sources,
    open_source,
    read_json,
    starts_a_list,
)
from emr_lineage.lineage.schemas.checks import Schemas, check_event_with, load_schemas, require_schemas
from emr_lineage.lineage.schemas.store import missing_message, schema_dir

__all__ = ["EventStream", "EventsError", "LoadedEvents", "Skipped", "load_events", "stream_events", "to_dict"]

_MAX_SKIP_DETAILS = 20


@dataclass
class Skipped:
    """What a read skipped: how many events, and why for the first few (``skipped_details``, one line each)."""

    skipped: int = 0
    skipped_details: list[str] = field(default_factory=list)

    def skip(self, detail: str) -> None:
        """Count one skipped event; ``detail`` is kept while there are few."""
        self.skipped += 1
        if len(self.skipped_details) < _MAX_SKIP_DETAILS:
            self.skipped_details.append(detail)

    def skipped_notes(self, what: str = "invalid event(s)") -> list[str]:
        """``skipped 3 invalid event(s) (first: <detail>)`` for stderr; none when nothing was skipped."""
        if not self.skipped:
            return []
        first = f" (first: {self.skipped_details[0]})" if self.skipped_details else ""
        return [f"skipped {self.skipped} {what}{first}"]


@dataclass
class _Counts(Skipped):
    """What a read saw: the sources, the events kept, what was skipped, whether schemas checked."""

    files: list[str] = field(default_factory=list)
    schema_checked: bool = False
    schema_note: str | None = None


@dataclass
class LoadedEvents(_Counts):
    """Events read by :func:`load_events`: the dicts, the files read, what was skipped, and
    whether the schema checks ran (``schema_note`` says why not, in one line)."""

    events: list[dict[str, Any]] = field(default_factory=list)

    def __len__(self) -> int:
        return len(self.events)

    def __iter__(self) -> Iterator[dict[str, Any]]:
        return iter(self.events)


class EventStream(_Counts):
    """The checked events of some sources, one at a time (iterate once); ``count``, ``skipped``,
    ``files`` are complete once the iteration is. Built by :func:`stream_events`."""

    def __init__(
        self, sources: list[Source], skip_invalid: bool, strict: bool, schemas: Schemas | None, parallel: bool | None
    ) -> None:
        super().__init__(schema_checked=schemas is not None)
        self.sources, self.skip_invalid, self.strict, self.schemas = sources, skip_invalid, strict, schemas
        self.parallel = parallel
        self.count = 0

    def _bad(self, where: str, line: int, problem: str) -> None:
        message = f"{where}:{line}: {problem}"
        if not self.skip_invalid:
            raise EventsError(message)
        self.skip(message)

    def __iter__(self) -> Iterator[dict[str, Any]]:
        checker = self._checker()
        try:
            for source in self.sources:
                self.files.append(str(source.path) if source.path is not None else "-")
                for line, event, problem in self._checked(source, checker):
                    if problem is None:
                        self.count += 1
                        yield event
                    else:
                        self._bad(source.name, line, problem)
        except BaseException:  # an error, or the consumer stopped early: replies still due are not needed
            checker.close(finished=False)
            raise
        finally:
            checker.close()

    def merge(self, make_merger: MakeMerger) -> Merger:
        """The valid events merged into ``make_merger()`` (read once, instead of iterating): each
        line of a JSON Lines source is decoded once, by the process that merges it (a second
        process merges into a merger of its own, combined at the end)."""
        checker = self._checker(make_merger)
        try:
            with cyclic_gc_paused():
                for source in self.sources:
                    self.files.append(str(source.path) if source.path is not None else "-")
                    with open_source(source) as stream:
                        if self._is_lines(source, stream):
                            last = source is self.sources[-1]
                            for line, problem in checker.merged(source, _blocks(source, stream), last):
                                self._bad(source.name, line, problem)
                        else:
                            checker.merger.add_all(self._json_values(source, stream, checker))
                merger = checker.finish()
                self.count += checker.events_merged
                return merger
        except BaseException:
            checker.close(finished=False)
            raise
        finally:
            checker.close()

    def _checker(self, make_merger: MakeMerger | None = None) -> LineChecker:
        checker = LineChecker(self.strict, self.schemas, self.parallel, make_merger)
        checker.expect(sum(os.path.getsize(s.path) for s in self.sources if s.path is not None and s.is_lines))
        return checker

    def _json_values(self, source: Source, stream: IO[bytes], checker: LineChecker) -> Iterator[dict[str, Any]]:
        """The valid events of a ``.json`` source (problems go to ``_bad``), counted as merged."""
        for line, value, problem in self._json_checked(source, stream):
            if problem is None:
                checker.events_merged += 1
                yield value
            else:
                self._bad(source.name, line, problem)

    def _json_checked(self, source: Source, stream: IO[bytes]) -> Iterator[tuple[int, Any, str | None]]:
        """(line, event, problem or None) of each item of a ``.json`` source."""
        for line, value in read_json(source, stream):
            if type(value) is Problem:
                yield line, None, value.message
            else:
                yield line, value, check_event_with(value, self.strict, self.schemas)

    @staticmethod
    def _is_lines(source: Source, stream: IO[bytes]) -> bool:
        lines = source.is_lines
        return not starts_a_list(stream) if lines is None else lines

    def _checked(self, source: Source, checker: LineChecker) -> Iterator[tuple[int, Any, str | None]]:
        """(line, event, problem or None) of each event of ``source``."""
        with open_source(source) as stream:
            if self._is_lines(source, stream):
                yield from checker.checked(source, _blocks(source, stream))
            else:
                yield from self._json_checked(source, stream)


def _blocks(source: Source, stream: IO[bytes]) -> Iterator[Block]:
    """The blocks of a JSON Lines source; standard input without an event line is an error."""
    seen = source.path is not None
    for block in read_blocks(source, stream):
        seen = seen or any(is_event_line(line) for line in block.lines())
        yield block
    if not seen:
        raise EventsError(f"{STDIN_NAME}: no events on standard input (it is empty)")


def stream_events(
    paths: Iterable[str | os.PathLike[str]],
    skip_invalid: bool = False,
    strict: bool = False,
    schema_directory: str | os.PathLike[str] | None = None,
    parallel: bool | None = None,
) -> EventStream:
    """The checked events of ``paths`` (files, directories, ``-`` for standard input), streamed.

    The schemas and the paths are looked at now: strict mode without schemas raises
    ``SchemasMissingError`` and a path that cannot be read raises :class:`EventsError` before any
    event is read. Iterating raises :class:`EventsError` (``file:line: problem``) at the first bad
    event unless ``skip_invalid`` is true (then it is skipped and counted). Unreadable sources
    are always an error. ``parallel`` (default: with 2+ CPUs) lets a large input be checked (and,
    by :meth:`EventStream.merge`, merged) partly in a second process
    (:mod:`emr_lineage.lineage.events.parallel`).
    """
    schemas: Schemas | None = require_schemas(schema_directory) if strict else load_schemas(schema_directory)
    stream = EventStream(event_sources(paths), skip_invalid, strict, schemas, parallel)
    if schemas is None:
        stream.schema_note = f"only structural event checks ran: {missing_message(schema_dir(schema_directory))}"
    return stream


def load_events(
    paths: Iterable[str | os.PathLike[str]],
    skip_invalid: bool = False,
    strict: bool = False,
    schema_directory: str | os.PathLike[str] | None = None,
) -> LoadedEvents:
    """:func:`stream_events`, all kept in a list (``LoadedEvents.events``)."""
    stream = stream_events(paths, skip_invalid, strict, schema_directory)
    events = list(stream)
    return LoadedEvents(
        events=events,
        files=stream.files,
        skipped=stream.skipped,
        skipped_details=stream.skipped_details,
        schema_checked=stream.schema_checked,
        schema_note=stream.schema_note,
    )


def to_dict(event: Any) -> dict[str, Any]:
    """The JSON dict of an ``openlineage.client`` event object (dicts pass through)."""
    if isinstance(event, Mapping):
        return dict(event)
    from openlineage.client.serde import Serde

    return orjson.loads(Serde.to_json(event))
