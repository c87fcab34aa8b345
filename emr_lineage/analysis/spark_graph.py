"""The lineage graph on Spark: what each partition does, and how the driver merges the parts.

No second implementation of the graph's rules. Each partition does what the local loader's second
process does with a block (:class:`~emr_lineage.lineage.events.worker.BlockWork` in ``build`` mode,
merging into the builder ``build_graph_streamed`` makes: ``functools.partial(GraphBuilder,
column_lineage)``) and hands back ``GraphBuilder.export()``; the driver merges the parts with
``GraphBuilder.merge`` in partition order, as the loader merges its worker's part, and assembles the
graph once (``GraphBuilder.graph``). Merging is a union and every choice is made after it, so any
split of the events gives the graph ``emr-lineage graph --events`` gives.

* JSON Lines files (``.jsonl``/``.ndjson``, gzipped or not): Spark splits them into lines (bytes),
  decoded and checked by ``BlockWork`` as the loader checks them;
* ``.json`` files (an array or one event): a partition reads whole files with the loader itself
  (:func:`~emr_lineage.lineage.events.reader.stream_events`, then ``merge``);
* the gateway's archive: one event per object, possibly pretty-printed: its text with CR and LF
  turned into spaces goes through the gateway's checks
  (:func:`~emr_lineage.lineage.door.one_event.check_archived`: namespaces normalised as
  ``read_archive`` normalises them), then the window on the event time, then ``BlockWork``
  (structural checks only, as the analysis commands read the archive).

pyspark-free: the Spark job itself is :mod:`emr_lineage.analysis.spark_graph_job`.
"""

from __future__ import annotations

import datetime as dt
import functools
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from itertools import islice
from typing import Any

from emr_lineage.aws.archive import ARCHIVE_ROOT, event_time_prefixes
from emr_lineage.lineage.door.one_event import check_archived, one_line_json
from emr_lineage.lineage.door.verdict import Rejected
from emr_lineage.lineage.events.merging import MakeMerger, cyclic_gc_paused
from emr_lineage.lineage.events.reader import stream_events
from emr_lineage.lineage.events.sources import BOM
from emr_lineage.lineage.events.worker import BUILD, NOT_UTF8, BlockWork
from emr_lineage.lineage.graph.from_events import Exported, GraphBuilder
from emr_lineage.lineage.graph.model import LineageGraph, check_level
from emr_lineage.lineage.schemas.checks import Schemas, load_schemas, require_schemas
from emr_lineage.lineage.times import Window

BLOCK_LINES = 4096  # lines handed to BlockWork at a time (the loader's blocks are 1-4 MiB)
MAX_DETAILS = 20  # problems worded per part (all are counted)


@dataclass(frozen=True)
class BuildOptions:
    """How the events are read and the graph assembled (``graph --events``'s options)."""

    level: str = "application"
    column_lineage: bool = True
    strict: bool = False
    schema_dir: str | None = None
    runs: bool = False  # with the runs' history (graph --with-runs)

    def __post_init__(self) -> None:
        check_level(self.level)

    @property
    def make_merger(self) -> MakeMerger:
        """The factory ``build_graph_streamed`` merges with (the same for every part)."""
        return functools.partial(GraphBuilder, self.column_lineage, self.runs)

    def schemas(self) -> Schemas | None:
        return require_schemas(self.schema_dir) if self.strict else load_schemas(self.schema_dir)


@dataclass
class Part:
    """What one partition merged: the builder's export, its events and its problems."""

    index: int
    exported: Exported | None = None
    events: int = 0
    problems: int = 0
    details: list[str] = field(default_factory=list)

    def problem(self, detail: str) -> None:
        self.problems += 1
        if len(self.details) < MAX_DETAILS:
            self.details.append(detail)


def lines_part(
    options: BuildOptions, index: int, lines: Iterable[bytes], structural: bool = False, part: Part | None = None
) -> Iterator[Part]:
    """A partition of JSON Lines (bytes, one event a line): merged by ``BlockWork`` block by block.
    ``structural``: the structural checks only (the archive's events, checked by the gateway's rules)."""
    part = part or Part(index)
    schemas = None if structural else options.schemas()
    strict = options.strict and not structural
    work = BlockWork(BUILD, strict, schemas, options.make_merger)
    with cyclic_gc_paused():
        lines = iter(lines)
        while block := [raw[len(BOM) :] if raw[:3] == BOM else raw for raw in islice(lines, BLOCK_LINES)]:
            merged, answers = work.do(block)
            part.events += merged
            for _, code, detail in answers:
                part.problem(f"not UTF-8 text ({detail[0]})" if code == NOT_UTF8 else str(detail))
        assert work.merger is not None
        part.exported = work.merger.export()
    yield part


def json_files_part(options: BuildOptions, index: int, paths: Iterable[str]) -> Iterator[Part]:
    """A partition of ``.json`` files, read and merged by the local loader itself."""
    part = Part(index)
    paths = list(paths)
    if paths:
        stream = stream_events(
            paths, skip_invalid=True, strict=options.strict, schema_directory=options.schema_dir, parallel=False
        )  # the partition is the unit of parallelism: no second process
        merger = stream.merge(options.make_merger)
        part.exported, part.events = merger.export(), stream.count
        part.problems, part.details = stream.skipped, stream.skipped_details[:MAX_DETAILS]
    yield part


def archive_line(body: bytes) -> tuple[dict[str, Any] | None, bytes | str]:
    """(event, its canonical JSON line) of one archived object, or (None, why the gateway refuses it).
    The object's text is one event; a pretty-printed one is put on one line first."""
    line = one_line_json(body)
    checked = check_archived(line)
    if isinstance(checked, Rejected):
        return None, checked.reason
    return checked.event, checked.canonical


def archive_part(
    options: BuildOptions, window: Window, index: int, objects: Iterable[tuple[str, bytes]]
) -> Iterator[Part]:
    """A partition of archived objects ((path, body)): each checked as the gateway checks it, kept
    when its event time is in ``window``, then merged as a JSON line."""
    part = Part(index)

    def lines() -> Iterator[bytes]:
        for path, body in objects:
            event, line = archive_line(bytes(body))
            if event is None:
                part.problem(f"{path}: {line}")
            elif window.contains(event):
                assert isinstance(line, bytes)
                yield line

    return lines_part(options, index, lines(), structural=True, part=part)


def archive_globs(root: str, window: Window, now: dt.datetime | None = None) -> list[str]:
    """Hadoop globs of the archive objects under ``root`` (``s3://bucket[/prefix]`` or a directory
    in the archive's layout) that may hold events of ``window``: the hours ``read_archive`` lists."""
    base = root.rstrip("/") + "/"
    prefixes = event_time_prefixes(window.since, window.until or now or dt.datetime.now(dt.UTC))
    return [
        base + (f"{ARCHIVE_ROOT}date=*/hour=*/" if prefix == ARCHIVE_ROOT else prefix) + "*/*.json"
        for prefix in prefixes
    ]


@dataclass
class Summary:
    """What the job read: events merged, parts, the problems (counted; the first ones worded)."""

    events: int = 0
    parts: int = 0
    problems: int = 0
    details: list[str] = field(default_factory=list)

    def as_dict(self) -> dict[str, Any]:
        return {"events": self.events, "parts": self.parts, "problems": self.problems, "details": self.details}


def merge_parts(parts: Iterable[Part], options: BuildOptions) -> tuple[LineageGraph, Summary]:
    """The graph of the parts: merged in partition order into one builder (``GraphBuilder.merge``,
    as the loader merges its worker's part), assembled once."""
    builder = options.make_merger()
    assert isinstance(builder, GraphBuilder)
    summary = Summary()
    with cyclic_gc_paused():
        for part in sorted(parts, key=lambda p: p.index):
            summary.parts += 1
            summary.events += part.events
            summary.problems += part.problems
            summary.details.extend(part.details[: MAX_DETAILS - len(summary.details)])
            if part.exported is not None:
                builder.merge(part.exported)
                part.exported = None  # its memory is the builder's now
        return builder.graph(options.level), summary
