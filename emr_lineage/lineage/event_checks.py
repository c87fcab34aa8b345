"""Check the lines of JSON Lines sources in batches, in a second process once the input is large.

Checking a line (orjson decode, the duplicate-key evidence, the compiled schema check) costs
about as much as decoding it again and merging it into the graph. So past
:data:`PARALLEL_AFTER_LINES` lines (and with 2+ CPUs) batches of lines go to one checker process
(``python -m emr_lineage.lineage.event_checks`` over its pipes: a batch is where it lies in the
file, which the checker reads itself, or its lines for gzip and standard input; not
``multiprocessing``, whose ``spawn`` re-imports the caller's main module and so fails in a script
without a ``__main__`` guard, and whose ``fork`` copies a process that may hold threads), which
answers only the lines that are NOT plain valid events; meanwhile this process decodes the
previous batch and hands its events on. Batches are answered in order, so the first
bad event is still the first reported and memory holds a few batches at most. Smaller inputs never
start the process (it costs about 0.3 s). If the process dies, checking goes on here.
"""

from __future__ import annotations

import os
import pickle
import queue
import struct
import subprocess
import sys
import threading
from collections import deque
from collections.abc import Iterator
from itertools import islice
from pathlib import Path
from typing import IO, Any

import orjson

from emr_lineage.lineage.event_decode import NotUtf8, Problem, decode_line, may_repeat_a_key
from emr_lineage.lineage.event_sources import EventsError, Source, is_event_line
from emr_lineage.lineage.schemas import Schemas, check_event_with, load_schemas

BATCH_LINES = 2048
PARALLEL_AFTER_LINES = 32_768
_WARM_UP_LINES = PARALLEL_AFTER_LINES // 2  # the process starts here, while this one checks on
_IN_FLIGHT = 3
_RECENT_LINES = 8192  # answers kept for lines seen again soon (Spark redelivers START and COMPLETE)
_RECENT_ANSWERS: dict[tuple[bool, str | None], dict[bytes, tuple[str, Any] | None]] = {}

Line = tuple[int, int, bytes]  # (line number, byte offset, the line)
Checked = tuple[int, Any, str | None]  # (line number, event, problem or None)
# What the checker answers for a line that is not a plain valid event: (index in the batch, code, detail).
_PROBLEM, _SLOW, _NOT_UTF8 = "problem", "slow", "utf8"


def _schemas_in(directory: str | None) -> Schemas | None:
    return None if directory is None else load_schemas(directory)


def check_batch(lines: list[bytes], strict: bool, directory: str | None) -> list[tuple[int, str, Any]]:
    """The lines of a batch that are not plain valid events (run in the checker process):
    ``problem`` (the message), ``slow`` (valid, but only the standard library decodes it, e.g.
    ``NaN``) or ``utf8`` ((reason, byte offset in the line))."""
    schemas = _schemas_in(directory)
    answers: list[tuple[int, str, Any]] = []
    recent = _RECENT_ANSWERS.setdefault((strict, directory), {})
    for index, raw in enumerate(lines):
        if raw in recent:  # a redelivered event: the same line, the same answer
            known = recent[raw]
            if known is not None:
                answers.append((index, *known))
            continue
        if len(recent) >= _RECENT_LINES:
            recent.clear()
        answer = _answer(raw, strict, schemas)
        recent[raw] = answer
        if answer is not None:
            answers.append((index, *answer))
    return answers


def _answer(raw: bytes, strict: bool, schemas: Schemas | None) -> tuple[str, Any] | None:
    """(code, detail) of a line that is not a plain valid event, None for one that is."""
    slow = False
    try:
        value = orjson.loads(raw)
        if may_repeat_a_key(raw, value):
            value = decode_line(raw)
    except orjson.JSONDecodeError:
        slow = True
        try:
            value = decode_line(raw)
        except NotUtf8 as exc:
            return _NOT_UTF8, (exc.reason, exc.start)
    problem = value.message if type(value) is Problem else check_event_with(value, strict, schemas)
    if problem is not None:
        return _PROBLEM, problem
    return (_SLOW, None) if slow else None


_HEADER = struct.Struct("<Q")
_LINES, _IN_FILE = b"L", b"F"  # what a batch message holds: its lines, or where they are in a file


def _send(pipe: IO[bytes], payload: bytes) -> None:
    pipe.write(_HEADER.pack(len(payload)))
    pipe.write(payload)
    pipe.flush()


def _receive(pipe: IO[bytes]) -> bytes | None:
    """The next message, or None at the end of the pipe."""
    header = pipe.read(_HEADER.size)
    if len(header) < _HEADER.size:
        return None
    (size,) = _HEADER.unpack(header)
    payload = pipe.read(size)
    return payload if len(payload) == size else None


class _CheckerProcess:
    """The checker process: batches go in through a writer thread (so this process never waits
    on a full pipe while the checker is busy), answers come back in order. A batch travels as its
    lines, each ending with ``\\n`` (a line holds no other); answers are pickled."""

    def __init__(self, strict: bool, directory: str | None) -> None:
        command = [sys.executable, "-m", __name__, "strict" if strict else "lenient", directory or ""]
        self.process = subprocess.Popen(
            command, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL
        )
        self.outbox: queue.SimpleQueue[bytes | None] = queue.SimpleQueue()
        self.writer = threading.Thread(target=self._write, name="emr-lineage-event-checks", daemon=True)
        self.writer.start()

    def _write(self) -> None:
        stdin = self.process.stdin
        assert stdin is not None
        try:
            while (batch := self.outbox.get()) is not None:
                _send(stdin, batch)
        except (OSError, ValueError):
            pass  # the process is gone; the reader finds out
        finally:
            try:
                stdin.close()
            except OSError:
                pass

    def submit(self, batch: list[Line], path: str | None) -> None:
        """Send a batch: where it lies in ``path`` (the checker reads it there, sparing this process
        the copy), or its lines when they are not a file's own bytes (gzip, standard input)."""
        if path is not None:
            start, end = batch[0][1], batch[-1][1] + len(batch[-1][2])
            self.outbox.put(_IN_FILE + pickle.dumps((path, start, end)))
            return
        lines = b"".join([raw for _, _, raw in batch])
        self.outbox.put(_LINES + (lines if lines.endswith(b"\n") else lines + b"\n"))

    def answer(self) -> tuple[int, list[tuple[int, str, Any]]] | None:
        """(lines checked, answers) of the oldest batch not yet answered; None if the process died."""
        assert self.process.stdout is not None
        try:
            reply = _receive(self.process.stdout)
            return None if reply is None else pickle.loads(reply)
        except (OSError, pickle.UnpicklingError, EOFError):
            return None

    def close(self, finished: bool) -> None:
        self.outbox.put(None)
        if not finished:
            self.process.kill()
        try:
            self.process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait()
        if self.process.stdout is not None:
            self.process.stdout.close()


def _serve(strict: bool, directory: str | None) -> None:
    """The checker process's loop: a batch in, its answers out, until the input ends."""
    _schemas_in(directory)  # compiled before the first batch arrives
    requests, replies = sys.stdin.buffer, sys.stdout.buffer
    while (message := _receive(requests)) is not None:
        if message[:1] == _IN_FILE:
            path, start, end = pickle.loads(message[1:])
            with open(path, "rb") as events:
                events.seek(start)
                lines = [line for line in events.read(end - start).split(b"\n") if is_event_line(line)]
        else:
            lines = message[1:].split(b"\n")[:-1]
        answers = check_batch(lines, strict, directory)
        _send(replies, pickle.dumps((len(lines), answers), protocol=pickle.HIGHEST_PROTOCOL))


def _not_utf8(source: Source, offset: int, reason: str, start: int) -> EventsError:
    return EventsError(f"{source.name}: not UTF-8 text ({reason} at byte {offset + start})")


class LineChecker:
    """Checks the lines of every JSON Lines source of one read (see the module docstring)."""

    def __init__(self, strict: bool, schemas: Schemas | None, parallel: bool | None = None) -> None:
        self.strict, self.schemas = strict, schemas
        self.directory = None if schemas is None else str(Path(schemas.directory))
        self.parallel = (os.cpu_count() or 1) > 1 if parallel is None else parallel
        self.checker: _CheckerProcess | None = None
        self.lines_seen = 0

    def close(self, finished: bool = True) -> None:
        """Stop the checker process (at once unless ``finished``: answers still due are dropped)."""
        if self.checker is not None:
            self.checker.close(finished)
            self.checker = None

    def checked(self, source: Source, lines: Iterator[Line], path: str | None = None) -> Iterator[Checked]:
        """(line number, event, problem or None) of every line, in order; ``path``: the file whose
        own bytes the lines are (their offsets are its offsets), None for gzip or standard input."""
        pending: deque[list[Line]] = deque()
        while batch := list(islice(lines, BATCH_LINES)):
            self.lines_seen += len(batch)
            if self.parallel and self.checker is None and self.lines_seen >= _WARM_UP_LINES:
                self.checker = _CheckerProcess(self.strict, self.directory)
            if self.checker is None or self.lines_seen < PARALLEL_AFTER_LINES:
                while pending:  # batches sent before the checker process died come first
                    yield from self._answered(source, pending.popleft())
                yield from self._here(source, batch)
                continue
            self.checker.submit(batch, path)
            pending.append(batch)
            if len(pending) >= _IN_FLIGHT:
                yield from self._answered(source, pending.popleft())
        while pending:
            yield from self._answered(source, pending.popleft())

    def _give_up(self) -> None:
        """The checker process died (killed, out of memory): check here from now on."""
        self.parallel = False
        self.close(finished=False)

    def _here(self, source: Source, batch: list[Line]) -> Iterator[Checked]:
        strict, schemas = self.strict, self.schemas
        for number, offset, raw in batch:
            try:
                value = decode_line(raw)
            except NotUtf8 as exc:
                raise _not_utf8(source, offset, exc.reason, exc.start) from None
            if type(value) is Problem:
                yield number, None, value.message
            else:
                yield number, value, check_event_with(value, strict, schemas)

    def _answered(self, source: Source, batch: list[Line]) -> Iterator[Checked]:
        reply = None if self.checker is None else self.checker.answer()
        # None: the process died; another line count: the file changed under us. Check here then.
        answered = None if reply is None or reply[0] != len(batch) else reply[1]
        if answered is None:
            self._give_up()
            yield from self._here(source, batch)
            return
        loads = orjson.loads
        if not answered:
            for number, _, raw in batch:
                yield number, loads(raw), None
            return
        answers = {index: (code, detail) for index, code, detail in answered}
        for index, (number, offset, raw) in enumerate(batch):
            answer = answers.get(index)
            if answer is None:
                yield number, loads(raw), None
            elif answer[0] == _PROBLEM:
                yield number, None, answer[1]
            elif answer[0] == _SLOW:
                yield number, decode_line(raw), None
            else:
                raise _not_utf8(source, offset, *answer[1])


if __name__ == "__main__":
    _serve(sys.argv[1] == "strict", sys.argv[2] or None)
