"""What is done to the lines of a JSON Lines block, here or in the second process that
:mod:`emr_lineage.lineage.events.parallel` starts (``python -m emr_lineage.lineage.events.worker``).

A line is decoded (:func:`~emr_lineage.lineage.events.decode.usual_value`, which refuses a
repeated key; a line it refuses goes the careful way of :mod:`emr_lineage.lineage.events.decode`)
and checked (the compiled schema check, the worded ``jsonschema`` checks only for an event it
refuses). Then, by the read's mode:

* ``check``: the worker answers only the lines that are NOT valid events (a problem, bytes that
  are not UTF-8); the reading process decodes the others itself, the same way
  (:func:`~emr_lineage.lineage.events.decode.line_value`), and hands them on, in order;
* ``build``: valid events are merged into a :class:`~emr_lineage.lineage.events.merging.Merger`
  (the worker's own, made by the factory the reading process sends first, and exported back
  pickled when its input ends); only problems are answered. Each line is decoded once, by
  whichever process merges it.

A line seen again (Spark sends START and COMPLETE again, as they were) gets the answer it got,
and in ``build`` mode is not merged again: merging is a union, so the same event twice adds
nothing.
"""

from __future__ import annotations

import gc
import os
import pickle
import struct
import sys
from collections.abc import Iterator
from typing import IO, Any

from emr_lineage.lineage.events.blocks import Block, OpenFile, is_event_line
from emr_lineage.lineage.events.decode import NotUtf8, Problem, line_value, usual_value
from emr_lineage.lineage.events.merging import MakeMerger
from emr_lineage.lineage.schemas.checks import Schemas, check_event_with, load_schemas

CHECK, BUILD = "check", "build"
_RECENT_LINES = 8192  # answers kept for lines seen again soon
_UNSEEN = object()
# What is answered for a line that is not a plain valid event: (index in the block, code, detail).
PROBLEM, NOT_UTF8 = "problem", "utf8"
Answer = tuple[int, str, Any]


def examine(raw: bytes, strict: bool, schemas: Schemas | None) -> tuple[Any, str | None]:
    """(event or None, problem or None) of one line.

    Raises :class:`NotUtf8` for bytes that are not UTF-8.
    """
    value = line_value(raw)
    if type(value) is Problem:
        return None, value.message
    problem = check_event_with(value, strict, schemas)
    return (None if problem else value), problem


class BlockWork:
    """One process's work on blocks: answers (and, building, a merger of its own)."""

    def __init__(self, mode: str, strict: bool, schemas: Schemas | None, make_merger: MakeMerger | None = None) -> None:
        self.mode, self.strict, self.schemas = mode, strict, schemas
        self.merger = make_merger() if mode == BUILD and make_merger is not None else None
        self.recent: dict[bytes, tuple[str, Any] | None] = {}
        self.merged = 0

    def do(self, lines: list[bytes]) -> tuple[int, list[Answer]]:
        """(events merged, answers) of the lines of a block; checking, no event is merged."""
        answers: list[Answer] = []
        self.merged = 0
        valid = self._valid_events(lines, answers)
        if self.merger is not None:
            self.merger.add_all(valid)  # each event merged as soon as it is decoded, while in the CPU's cache
        else:
            for _ in valid:
                pass
        return self.merged, answers

    def _valid_events(self, lines: list[bytes], answers: list[Answer]) -> Iterator[Any]:
        """The valid events of ``lines`` not seen just before; the others' answers go to ``answers``."""
        recent, strict, schemas, building = self.recent, self.strict, self.schemas, self.merger is not None
        compiled = None if schemas is None else schemas.compiled.validator(strict)
        seen, decode = recent.get, usual_value
        for index, raw in enumerate(lines):
            if raw[:1] != b"{" and not is_event_line(raw):
                continue
            known = seen(raw, _UNSEEN)
            if known is not _UNSEEN:
                if known is not None:
                    answers.append((index, *known))
                elif building:
                    self.merged += 1  # the same event again: merging it would add nothing
                continue
            if len(recent) >= _RECENT_LINES:
                recent.clear()
            # The usual line, decided inline: an object (without a repeated key: usual_value refuses
            # those) that the compiled check passes. Anything else goes through examine().
            event = decode(raw)
            if compiled is not None and type(event) is dict and compiled(event):
                answer: tuple[str, Any] | None = None
            else:
                try:
                    event, problem = examine(raw, strict, schemas)
                except NotUtf8 as exc:
                    answer = (NOT_UTF8, (exc.reason, exc.start))
                else:
                    answer = None if problem is None else (PROBLEM, problem)
            recent[raw] = answer
            if answer is not None:
                answers.append((index, *answer))
            elif building:
                self.merged += 1
                yield event


# The pipes carry messages: an 8-byte length, then the message. A block message is the mode
# (``c``heck or ``b``uild, per block), then where the block lies in a file (F) or its bytes (L).
_HEADER = struct.Struct("<Q")
_MODES = {CHECK: b"c", BUILD: b"b"}
_IN_FILE, _BYTES = b"F", b"L"


def send(pipe: IO[bytes], payload: bytes) -> None:
    _write_all(pipe, _HEADER.pack(len(payload)))
    _write_all(pipe, payload)
    pipe.flush()


def _write_all(pipe: IO[bytes], data: bytes) -> None:
    """Write all of ``data``. A write a signal interrupts after some bytes went out returns their
    count (write(2), https://man7.org/linux/man-pages/man2/write.2.html), and a buffered writer
    passes that on: stopping and resuming a process (Ctrl-Z, fg) lost the rest of a message."""
    view = memoryview(data)
    while view:
        written = pipe.write(view)
        if not written:  # a blocking pipe never takes nothing; a non-blocking one would spin here
            raise OSError("the pipe took no bytes")
        view = view[written:]


def _read_exactly(pipe: IO[bytes], size: int) -> bytes | None:
    """``size`` bytes of ``pipe``; None if it ends first (a read a signal cuts short returns fewer
    bytes without the pipe having ended: read on)."""
    data = pipe.read(size) or b""  # (None: a non-blocking pipe with nothing yet; ours block)
    while len(data) < size:
        more = pipe.read(size - len(data))
        if not more:
            return None
        data += more
    return data


def receive(pipe: IO[bytes]) -> bytes | None:
    """The next message, or None at the end of the pipe."""
    header = _read_exactly(pipe, _HEADER.size)
    if header is None:
        return None
    (size,) = _HEADER.unpack(header)
    return _read_exactly(pipe, size)


def block_message(mode: str, block: Block) -> bytes:
    """Work on ``block``: where it lies in its file (the worker reads it there, sparing a copy), or its bytes."""
    source = block.source
    if isinstance(source, OpenFile):
        return _MODES[mode] + _IN_FILE + pickle.dumps((source.path, block.offset, block.size, source.identity))
    return _MODES[mode] + _BYTES + block.data


def read_range(path: str, start: int, size: int, identity: tuple[int, int]) -> bytes | None:
    """``size`` bytes at ``start`` of the file at ``path``; None if that is no longer the file
    being read (replaced, deleted: another device and inode) or it is shorter now."""
    try:
        with open(path, "rb", buffering=0) as events:
            status = os.fstat(events.fileno())
            if (status.st_dev, status.st_ino) != tuple(identity):
                return None
            data = os.pread(events.fileno(), size, start)
    except OSError:
        return None
    return data if len(data) == size else None


def _block_data(message: bytes) -> bytes | None:
    return read_range(*pickle.loads(message[2:])) if message[1:2] == _IN_FILE else message[2:]


def _serve(strict: bool, directory: str | None) -> None:
    """The worker's loop: first the pickled merger factory (or None: only checking), then a block
    in, (bytes, lines, events merged, answers) out (bytes -1: the file changed); at the end of its
    input, what its merger merged (pickled ``Merger.export()``, None without one)."""
    gc.disable()  # decoded events and a merger's sets hold no reference cycles
    schemas = None if directory is None else load_schemas(directory)
    requests, replies = sys.stdin.buffer, sys.stdout.buffer
    factory = receive(requests)
    make_merger = None if factory is None else pickle.loads(factory)
    work = {code: BlockWork(mode, strict, schemas, make_merger) for mode, code in _MODES.items()}
    while (message := receive(requests)) is not None:
        data = _block_data(message)
        if data is None:
            send(replies, pickle.dumps((-1, 0, 0, []), protocol=pickle.HIGHEST_PROTOCOL))
            continue
        lines = Block.of(0, data).lines()
        merged, answers = work[message[:1]].do(lines)
        send(replies, pickle.dumps((len(data), len(lines), merged, answers), protocol=pickle.HIGHEST_PROTOCOL))
    merger = work[_MODES[BUILD]].merger
    send(replies, pickle.dumps(None if merger is None else merger.export(), protocol=pickle.HIGHEST_PROTOCOL))


if __name__ == "__main__":
    _serve(sys.argv[1] == "strict", sys.argv[2] or None)
