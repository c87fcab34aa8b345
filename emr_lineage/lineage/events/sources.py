"""Where events are read from, streamed: files, directories, gzip, standard input.

* ``.jsonl`` and ``.ndjson``: one event per line; lines end at ``\\n`` only (U+2028, U+0085...
  are valid inside JSON strings), blank lines are ignored;
* ``.json``: one event, or a list of events, decoded item by item from 1 MiB chunks;
* any of them gzip-compressed: named ``<name>.gz`` or starting with gzip's magic bytes;
* a directory: its event files, recursively, sorted by path;
* ``-``: standard input (gzip or not): a JSON list of events if it starts with ``[``, else JSON Lines.

UTF-8, with or without a byte order mark at the start. Nothing holds more than one chunk of a
source in memory. A source that cannot be read (missing, not UTF-8, broken gzip) raises
:class:`EventsError` naming it; a bad event is yielded as a :class:`Problem` with its line.
"""

from __future__ import annotations

import gzip
import io
import json
import os
import sys
import zlib
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Any

from emr_lineage.errors import EmrLineageError
from emr_lineage.lineage.event_json import TOO_DEEP, JsonRuleError, end_of_value, needs_walk, value_problem
from emr_lineage.lineage.events.decode import PLAIN_DECODER, Problem, duplicate_at, may_repeat_a_key

STDIN = "-"
STDIN_NAME = "<stdin>"
LINES_SUFFIXES = (".jsonl", ".ndjson")
EVENT_SUFFIXES = (".json", *LINES_SUFFIXES)
GZIP_SUFFIX = ".gz"
_GZIP_MAGIC = b"\x1f\x8b"
BOM = b"\xef\xbb\xbf"
_CHUNK = 1 << 20
_READ_BUFFER = 1 << 20


class EventsError(EmrLineageError, ValueError):
    """Unreadable or malformed events; the message is one line naming file and line."""


@dataclass(frozen=True)
class Source:
    """One place events come from: a file (``path``) or standard input (``path`` None)."""

    path: Path | None

    @property
    def name(self) -> str:
        return STDIN_NAME if self.path is None else str(self.path)

    @property
    def is_lines(self) -> bool | None:
        """True for JSON Lines, False for a ``.json`` file, None for stdin (decided by its content)."""
        if self.path is None:
            return None
        return self.path.name.removesuffix(GZIP_SUFFIX).endswith(LINES_SUFFIXES)


def is_event_file_name(name: str) -> bool:
    return name.removesuffix(GZIP_SUFFIX).endswith(EVENT_SUFFIXES)


_KINDS = ", ".join(EVENT_SUFFIXES)


def event_sources(paths: Iterable[str | os.PathLike[str]]) -> list[Source]:
    """The sources named by ``paths``, in argument order (directories expanded recursively, sorted, without
    their hidden files and folders, ``.name``).

    Raises :class:`EventsError` for an empty path (not the current directory), a path that does
    not exist, a file of another type, a directory without event files, or ``-`` given twice.
    """
    sources: list[Source] = []
    for raw in paths:
        if not os.fspath(raw):
            raise EventsError("empty events path (give an events file or directory)")
        if os.fspath(raw) == STDIN:
            if Source(None) in sources:
                raise EventsError("-: standard input given twice")
            sources.append(Source(None))
            continue
        path = Path(raw)
        if path.is_dir():
            found = sorted(p for p in path.rglob("*") if is_event_file_name(p.name) and p.is_file() and _shown(p, path))
            if not found:
                raise EventsError(
                    f"{path}: no event files ({_KINDS}, or .gz of them) in this directory (hidden ones are not read)"
                )
            sources.extend(Source(p) for p in found)
        elif path.is_file():
            if not is_event_file_name(path.name):
                raise EventsError(f"{path}: not an event file (expected {_KINDS}, or .gz of them)")
            sources.append(Source(path))
        elif path.exists():
            raise EventsError(f"{path}: not a file or directory")
        else:
            raise EventsError(f"{path}: no such file or directory")
    return sources


def _shown(path: Path, top: Path) -> bool:
    """Whether no part of ``path`` below ``top`` is hidden (``.name``: a tool's own state, such as the demo's)."""
    return not any(part.startswith(".") for part in path.relative_to(top).parts)


def _binary(source: Source) -> IO[bytes]:
    """The bytes of ``source``, gunzipped when named ``.gz`` or starting with gzip's magic bytes."""
    if source.path is None:
        stream: Any = sys.stdin.buffer
        if not hasattr(stream, "peek"):  # e.g. a BytesIO under a test runner
            stream = io.BufferedReader(stream)  # type: ignore[arg-type]
    else:
        try:
            stream = open(source.path, "rb", buffering=_READ_BUFFER)  # noqa: SIM115 - closed by the caller
        except OSError as exc:
            raise EventsError(f"{source.name}: cannot read: {exc.strerror or exc}") from None
    if stream.peek(2)[:2] == _GZIP_MAGIC or source.name.endswith(GZIP_SUFFIX):
        return io.BufferedReader(gzip.GzipFile(fileobj=stream, mode="rb"), buffer_size=_READ_BUFFER)  # type: ignore[arg-type]
    return stream


class ReadErrors:
    """Turns the read errors of a source into one-line :class:`EventsError`s naming it."""

    def __init__(self, source: Source) -> None:
        self.source = source

    def __enter__(self) -> ReadErrors:
        return self

    def __exit__(self, kind: Any, exc: BaseException | None, traceback: Any) -> None:
        name = self.source.name
        if isinstance(exc, gzip.BadGzipFile | zlib.error):
            raise EventsError(f"{name}: not valid gzip data ({exc})") from None
        if isinstance(exc, EOFError):
            raise EventsError(f"{name}: gzip data cut short ({exc})") from None
        if isinstance(exc, UnicodeDecodeError):
            raise EventsError(f"{name}: not UTF-8 text ({exc.reason})") from None
        if isinstance(exc, OSError):
            raise EventsError(f"{name}: cannot read: {exc.strerror or exc}") from None


class _Text:
    """A sliding window over a text stream: the part not yet decoded, with its line numbers."""

    def __init__(self, stream: IO[str]) -> None:
        self.stream, self.text, self.eof = stream, "", False
        self.first_line = 1  # line number of text[0]
        self._counted_to, self._line_there = 0, 1  # lines are counted on from the last position asked

    def more(self, at_least: int = _CHUNK) -> bool:
        """Append the next chunk (at least ``at_least`` characters); False at the end."""
        if self.eof:
            return False
        chunk = self.stream.read(max(at_least, _CHUNK))
        if not chunk:
            self.eof = True
            return False
        self.text += chunk
        return True

    def skip_space(self, position: int) -> int:
        """The position of the next non-whitespace character (len(text) at the end)."""
        while True:
            text = self.text
            while position < len(text) and text[position] in " \t\r\n":
                position += 1
            if position < len(text) or not self.more():
                return position

    def line(self, position: int) -> int:
        if position < self._counted_to:
            self._counted_to, self._line_there = 0, self.first_line
        self._line_there += self.text.count("\n", self._counted_to, position)
        self._counted_to = position
        return self._line_there

    def drop_before(self, position: int) -> int:
        """Forget the text before ``position`` once a chunk of it is decoded; the new position."""
        if position < _CHUNK:
            return position
        self.first_line = self.line(position)
        self.text = self.text[position:]
        self._counted_to, self._line_there = 0, self.first_line
        return 0

    def decode(self, position: int) -> tuple[Any, int]:
        """The JSON value at ``position`` and its end, reading on while it may be cut by the window."""
        while True:
            try:
                value, end = PLAIN_DECODER.raw_decode(self.text, position)
            except RecursionError:  # deeper than the standard library's decoder goes (about 1,000 levels)
                raise _RuleBroken(TOO_DEEP, self.text, position) from None
            except JsonRuleError as exc:  # a number the rule refuses: where the item ends is not known
                raise _RuleBroken(exc.reason, self.text, position) from None
            except json.JSONDecodeError as exc:
                near_end = exc.pos >= len(self.text) - 8 or exc.msg.startswith("Unterminated string")
                if near_end and self.more(len(self.text)):
                    continue
                raise
            if end < len(self.text) or self.eof or not isinstance(value, int | float):
                return value, end
            self.more()  # a number may go on in the next chunk

    def end_of(self, position: int) -> int | None:
        """Where the value at ``position`` ends (:func:`~emr_lineage.lineage.event_json.end_of_value`),
        reading on while the window may cut it; None when the text ends first."""
        while True:
            try:
                return end_of_value(self.text, position)
            except JsonRuleError:
                if not self.more(len(self.text)):
                    return None


class _RuleBroken(json.JSONDecodeError):
    """An item the JSON rule refuses while decoding it, worded as the rule words it: an item of a list is
    stepped over to the next (as the gateway's batches are, :func:`~emr_lineage.lineage.event_json.decode_batch`),
    a single value ends the file."""


def _checked_item(window: _Text, position: int, value: Any, end: int) -> tuple[int, Any]:
    """(line, value) of a decoded item, or (line of the repeated key, Problem), or (line, Problem) of what
    else the JSON rule of every door refuses (:mod:`emr_lineage.lineage.event_json`)."""
    raw = window.text[position:end].encode("utf-8")
    if may_repeat_a_key(raw, value):
        located = duplicate_at(window.text, position)
        if located is not None:
            return window.line(located[1]), Problem(f"duplicate key {located[0]!r}")
    problem = value_problem(value) if needs_walk(window.text, position, end) else None
    return window.line(position), value if problem is None else Problem(problem)


def _error(window: _Text, message: str, position: int) -> tuple[int, Problem]:
    return window.line(position), Problem(f"invalid JSON: {message}")


def _failed(window: _Text, exc: json.JSONDecodeError) -> tuple[int, Problem]:
    if isinstance(exc, _RuleBroken):
        return window.line(exc.pos), Problem(exc.msg)
    return _error(window, exc.msg, exc.pos)


def read_json(source: Source, stream: IO[bytes]) -> Iterator[tuple[int, Any]]:
    """(line, value or Problem) of each item of a JSON list, or of the single value.

    A JSON syntax error ends the source (yielded as its last Problem); an item of a list that breaks the
    JSON rule while it is decoded (a number too long, nesting too deep) is a Problem, and the items after
    it are read on.
    """
    with ReadErrors(source):
        window = _Text(io.TextIOWrapper(stream, encoding="utf-8-sig"))
        position = window.skip_space(0)
        if position >= len(window.text):
            yield 1, Problem("empty file (expected an event or a list of events)")
            return
        yield from _json_values(window, position)


def _json_values(window: _Text, position: int) -> Iterator[tuple[int, Any]]:
    if window.text[position] != "[":
        try:
            value, end = window.decode(position)
        except json.JSONDecodeError as exc:
            yield _failed(window, exc)
            return
        item = _checked_item(window, position, value, end)
        rest = window.skip_space(end)
        if rest < len(window.text):
            yield _error(window, "extra data after the event", rest)
            return
        yield item
        return
    position, expect_item, count = position + 1, True, 0
    while True:
        position = window.skip_space(window.drop_before(position))
        if position >= len(window.text):
            yield _error(window, "unterminated list of events", position)
            return
        char = window.text[position]
        if char == "]":
            if expect_item and count:
                yield _error(window, "trailing comma in the list of events", position)
                return
            rest = window.skip_space(position + 1)
            if rest < len(window.text):
                yield _error(window, "extra data after the list of events", rest)
            return
        if not expect_item:
            if char != ",":
                yield _error(window, "expected ',' or ']' between events", position)
                return
            position, expect_item = position + 1, True
            continue
        try:
            value, end = window.decode(position)
        except _RuleBroken as exc:
            skipped_to = window.end_of(position)
            yield _failed(window, exc)
            if skipped_to is None:  # the file ends inside it: no item after it to read
                return
            position, expect_item, count = skipped_to, False, count + 1
            continue
        except json.JSONDecodeError as exc:
            yield _failed(window, exc)
            return
        yield _checked_item(window, position, value, end)
        position, expect_item, count = end, False, count + 1


def starts_a_list(stream: IO[bytes]) -> bool:
    """True if the buffered start of ``stream`` (after a BOM and whitespace) is ``[``."""
    head = stream.peek(_CHUNK)[: 1 << 16]  # type: ignore[attr-defined]
    return head.removeprefix(BOM).lstrip(b" \t\r\n")[:1] == b"["


@contextmanager
def open_source(source: Source) -> Iterator[IO[bytes]]:
    """The (gunzipped) bytes of ``source``, closed after (standard input is left open); read errors
    as :class:`EventsError`."""
    with ReadErrors(source):
        stream = _binary(source)
    try:
        yield stream
    finally:
        if source.path is not None:
            stream.close()
