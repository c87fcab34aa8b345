"""Read the blocks of JSON Lines sources, checked, with a second process once the input is large.

Decoding and checking a line costs about as much again as merging it into the graph. So past
:data:`PARALLEL_AFTER_BYTES` (and with 2+ CPUs) a worker process
(:mod:`emr_lineage.lineage.events.worker`, over its pipes: not ``multiprocessing``, whose
``spawn`` re-imports the caller's main module and so fails in a script without a ``__main__``
guard, and whose ``fork`` copies a process that may hold threads) takes blocks of lines:

* reading events (:meth:`LineChecker.checked`): the worker checks every block and answers only
  the lines that are not plain valid events, while this process decodes the block before and
  hands its events on, in order;
* building a graph (:meth:`LineChecker.merged`): each line is decoded once, by the process that
  merges it. Blocks of a plain file go to the worker (which reads them there and merges them into
  a builder of its own, sent back at the end) while it has fewer than :data:`_IN_FLIGHT` queued;
  this process decodes, checks and merges the others. For gzip and standard input the worker
  only checks, as when reading.

Blocks are settled in order, so the first bad event is still the first reported and memory
holds a few blocks at most. Small inputs never start the worker (it costs about 0.2 s). If the
worker dies, its blocks are done here again (those it merged are read again from the file).
"""

from __future__ import annotations

import os
import pickle
import queue
import subprocess
import sys
import threading
from collections import deque
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from emr_lineage.lineage.events import worker as event_worker
from emr_lineage.lineage.events.blocks import Block, OpenFile, is_event_line
from emr_lineage.lineage.events.decode import NotUtf8, line_value
from emr_lineage.lineage.events.merging import MakeMerger, Merger
from emr_lineage.lineage.events.sources import EventsError, Source
from emr_lineage.lineage.events.worker import BUILD, CHECK, NOT_UTF8, PROBLEM, Answer, BlockWork, examine
from emr_lineage.lineage.schemas.checks import Schemas

PARALLEL_AFTER_BYTES = 32 << 20
_WARM_UP_BYTES = PARALLEL_AFTER_BYTES // 2  # the worker starts here, while this process reads on
_IN_FLIGHT = 2
_TAIL_SHARE = 0.08

Checked = tuple[int, Any, str | None]  # (line number, event, problem or None)


class _Worker:
    """The worker process: blocks go in through a writer thread (so this process never waits on
    a full pipe while the worker is busy), replies come back through a reader thread, in order."""

    def __init__(self, strict: bool, directory: str | None, make_merger: MakeMerger | None) -> None:
        command = [sys.executable, "-m", event_worker.__name__, "strict" if strict else "lenient", directory or ""]
        self.process = subprocess.Popen(
            command, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL
        )
        self.outbox: queue.SimpleQueue[bytes | None] = queue.SimpleQueue()
        self.inbox: queue.SimpleQueue[bytes | None] = queue.SimpleQueue()
        self.sent = self.received = 0
        self.input_ended = False
        self.outbox.put(pickle.dumps(make_merger, protocol=pickle.HIGHEST_PROTOCOL))  # its first message
        threading.Thread(target=self._write, name="emr-lineage-worker-in", daemon=True).start()
        threading.Thread(target=self._read, name="emr-lineage-worker-out", daemon=True).start()

    def _write(self) -> None:
        stdin = self.process.stdin
        assert stdin is not None
        try:
            while (message := self.outbox.get()) is not None:
                event_worker.send(stdin, message)
        except (OSError, ValueError):
            pass  # the process is gone; the reader finds out
        finally:
            try:
                stdin.close()
            except OSError:
                pass

    def _read(self) -> None:
        stdout = self.process.stdout
        assert stdout is not None
        try:
            while (message := event_worker.receive(stdout)) is not None:
                self.received += 1
                self.inbox.put(message)
        except (OSError, ValueError):
            pass
        finally:  # whatever ended it (even an error not caught here), reply() must not wait forever
            self.inbox.put(None)  # the end: after the merger's export, or the process died

    @property
    def queued(self) -> int:
        """Blocks sent and not yet answered."""
        return self.sent - self.received

    def submit(self, mode: str, block: Block) -> None:
        self.sent += 1
        self.outbox.put(event_worker.block_message(mode, block))

    def ready(self) -> bool:
        """Whether a reply (or the news that the process died) is there to take."""
        return self.inbox.qsize() > 0

    def reply(self) -> Any:
        """The oldest reply not yet taken (unpickled), waiting for it; None if the process died."""
        message = self.inbox.get()
        if message is None:
            self.inbox.put(None)  # stays dead
            return None
        try:
            return pickle.loads(message)
        except (pickle.UnpicklingError, EOFError):
            return None

    def end_input(self) -> None:
        """No more blocks: the worker sends what its merger merged, then ends."""
        if not self.input_ended:
            self.input_ended = True
            self.outbox.put(None)

    def exported(self) -> Any:
        """What the worker's merger merged (``Merger.export()``), once its input is closed; None
        if the process died."""
        self.end_input()
        return self.reply()

    def close(self, finished: bool) -> None:
        self.end_input()
        if not finished:
            self.process.kill()
        try:
            self.process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait()
        if self.process.stdout is not None:
            self.process.stdout.close()


@dataclass
class _Pending:
    """A block in flight or done, settled in order: ``answers`` None while the worker has it."""

    source: Source
    block: Block
    mode: str
    answers: list[Answer] | None = None
    lines: int = 0  # how many lines the block holds (known with its answers)


def _changed(block: Block) -> EventsError:
    source = block.source
    return (
        source.changed() if isinstance(source, OpenFile) else EventsError("the input changed while it was being read")
    )


def _not_utf8(source: Source, offset: int, reason: str, start: int) -> EventsError:
    return EventsError(f"{source.name}: not UTF-8 text ({reason} at byte {offset + start})")


class LineChecker:
    """Checks (or checks and merges) the blocks of every JSON Lines source of one read."""

    def __init__(
        self, strict: bool, schemas: Schemas | None, parallel: bool | None = None, make_merger: MakeMerger | None = None
    ) -> None:
        self.strict, self.schemas = strict, schemas
        self.directory = None if schemas is None else str(Path(schemas.directory))
        self.parallel = (os.cpu_count() or 1) > 1 if parallel is None else parallel
        self.worker: _Worker | None = None
        self.bytes_seen = 0
        self.make_merger = make_merger  # None: only checking (merged() needs one)
        self.building = BlockWork(BUILD, strict, schemas, make_merger)
        self.events_merged = 0  # events merged by merged(), here and in the worker
        self._next_line = 1  # of the next block settled in the source being read
        self._merged_there: list[Block] = []  # the blocks the worker merged (without their bytes)

    @property
    def merger(self) -> Merger:
        """What :meth:`merged` merged in this process (the worker's is added by :meth:`finish`)."""
        assert self.building.merger is not None, "merging needs a make_merger"
        return self.building.merger

    def expect(self, total_bytes: int) -> None:
        """Start the worker at once if the sources' known size makes it worth it."""
        if total_bytes >= PARALLEL_AFTER_BYTES:
            self._start()

    def _start(self) -> None:
        if self.parallel and self.worker is None:
            self.worker = _Worker(self.strict, self.directory, self.make_merger)

    def _use_worker(self, block: Block, once_started: bool = False) -> bool:
        """Whether ``block`` may go to the worker. Reading in order, only past
        :data:`PARALLEL_AFTER_BYTES`: a block sent before the worker is ready would keep this
        process waiting for it. Building (``once_started``), as soon as it is started: a block
        merged there is not waited for, and so the worker is busy from the moment it is ready."""
        self.bytes_seen += block.size
        if self.bytes_seen >= _WARM_UP_BYTES:
            self._start()
        worker = self.worker
        if worker is None or worker.input_ended:
            return False
        return once_started or self.bytes_seen >= PARALLEL_AFTER_BYTES

    def close(self, finished: bool = True) -> None:
        """Stop the worker (at once unless ``finished``: replies still due are dropped)."""
        if self.worker is not None:
            self.worker.close(finished)
            self.worker = None

    # --- reading events, in order -------------------------------------------------------------

    def checked(self, source: Source, blocks: Iterator[Block]) -> Iterator[Checked]:
        """(line number, event, problem or None) of every line, in order."""
        pending: deque[_Pending] = deque()
        self._next_line = 1
        for block in blocks:
            if not self._use_worker(block):
                while pending:  # blocks sent before the worker died come first
                    yield from self._settle(pending.popleft())
                yield from self._here(source, block)
                continue
            pending.append(self._send(_Pending(source, block, CHECK)))
            if len(pending) > _IN_FLIGHT:
                yield from self._settle(pending.popleft())
        while pending:
            yield from self._settle(pending.popleft())

    def _send(self, item: _Pending) -> _Pending:
        assert self.worker is not None
        self.worker.submit(item.mode, item.block)
        return item

    def _first_line(self, count: int) -> int:
        """The number of the first line of the next block in order, which holds ``count`` lines."""
        first = self._next_line
        self._next_line += count
        return first

    def _here(self, source: Source, block: Block) -> Iterator[Checked]:
        strict, schemas, lines = self.strict, self.schemas, block.lines()
        first = self._first_line(len(lines))
        for index, raw in enumerate(lines):
            if raw[:1] != b"{" and not is_event_line(raw):
                continue
            try:
                event, problem = examine(raw, strict, schemas)
            except NotUtf8 as exc:
                raise _not_utf8(source, block.line_offset(index), exc.reason, exc.start) from None
            yield first + index, event, problem

    def _settle(self, item: _Pending) -> Iterator[Checked]:
        """The checked lines of a block (done here if the worker died); a build-mode block: only
        its problems (its events are merged)."""
        if item.answers is None:
            reply = self.worker.reply() if self.worker is not None else None
            if reply is not None and reply[0] != item.block.size:
                raise _changed(item.block)
            if reply is None:  # the worker died: do it here
                self._give_up()
                if item.mode == CHECK:
                    yield from self._here(item.source, item.block)
                else:
                    yield from self._merge_here(item.source, item.block)
                return
            if item.mode == BUILD:
                self.events_merged += reply[2]
                self._merged_there.append(item.block)
            item.lines, item.answers = reply[1], reply[3]
        yield from self._answered(item)

    def _merge_here(self, source: Source, block: Block) -> Iterator[Checked]:
        lines = block.lines()
        merged, answers = self.building.do(lines)
        self.events_merged += merged
        yield from self._answered(_Pending(source, block, BUILD, answers, len(lines)))

    def _answered(self, item: _Pending) -> Iterator[Checked]:
        source, block, answers = item.source, item.block, item.answers
        first = self._first_line(item.lines)
        if item.mode == BUILD:
            for index, code, detail in answers or ():
                if code == NOT_UTF8:
                    raise _not_utf8(source, block.line_offset(index), *detail)
                yield first + index, None, detail
            return
        by_index = {index: (code, detail) for index, code, detail in answers or ()}
        for index, raw in enumerate(block.lines()):
            if raw[:1] != b"{" and not is_event_line(raw):
                continue
            answer = by_index.get(index)
            if answer is None:
                # The worker passed these bytes (only objects): decoded as there, they are one
                # unless the file was rewritten since.
                try:
                    event = line_value(raw)
                except NotUtf8:
                    event = None
                if type(event) is not dict:
                    raise _changed(block)
                yield first + index, event, None
            elif answer[0] == PROBLEM:
                yield first + index, None, answer[1]
            else:
                raise _not_utf8(source, block.line_offset(index), *answer[1])

    def _give_up(self) -> None:
        """The worker died (killed, out of memory): work here from now on, and merge here again
        the blocks it had merged (its builder died with it)."""
        self.parallel = False
        self.close(finished=False)
        for block in self._merged_there:  # read again by path: the source may be closed by now
            source = block.source
            assert isinstance(source, OpenFile)
            data = event_worker.read_range(source.path, block.offset, block.size, source.identity)
            if data is None:
                raise source.changed()
            self.building.do(Block.of(block.offset, data).lines())
        self._merged_there.clear()

    # --- building a graph ---------------------------------------------------------------------

    def merged(self, source: Source, blocks: Iterator[Block], last: bool = False) -> Iterator[tuple[int, str]]:
        """Merge the valid events of ``source`` into the mergers (here and the worker's); (line, problem) of the others,
        in order. ``last``: no source follows, so the worker can be done before the end (below)."""
        pending: deque[_Pending] = deque()
        self._next_line = 1
        for block in blocks:
            in_file = block.source if isinstance(block.source, OpenFile) else None
            worker = self.worker if self._use_worker(block, once_started=True) else None
            # The end of the last file is merged here while the worker exports and pickles what it
            # merged, instead of this process waiting for that once it is done. Its input ends at
            # once: it still does the blocks it has, then exports without waiting to be asked.
            if worker is not None and last and in_file and block.offset >= in_file.length * (1 - _TAIL_SHARE):
                worker.end_input()
                worker = None
            if worker is not None and worker.queued < _IN_FLIGHT:
                pending.append(self._send(_Pending(source, block, BUILD if in_file else CHECK)))
            else:
                lines = block.lines()
                merged, answers = self.building.do(lines)
                self.events_merged += merged
                if in_file is None and not any(code == NOT_UTF8 for _, code, _ in answers):
                    block = Block.of(block.offset, b"")  # its bytes are not needed again
                pending.append(_Pending(source, block, BUILD, answers, len(lines)))
            yield from self._settled(pending, wait=False)
        yield from self._settled(pending, wait=True)

    def _settled(self, pending: deque[_Pending], wait: bool) -> Iterator[tuple[int, str]]:
        """Problems of the settled blocks at the head of ``pending``; a check-mode block's events are merged."""
        while pending:
            head = pending[0]
            if head.answers is None and not wait and self.worker is not None and not self.worker.ready():
                return
            pending.popleft()
            self.merger.add_all(self._merge_events(self._settle(head), problems := []))
            yield from problems

    def _merge_events(self, checked: Iterator[Checked], problems: list[tuple[int, str]]) -> Iterator[Any]:
        """The events of ``checked``, counted (its problems go to ``problems``)."""
        for line, event, problem in checked:
            if problem is not None:
                problems.append((line, problem))
            elif event is not None:
                self.events_merged += 1
                yield event

    def finish(self) -> Merger:
        """The merger of everything :meth:`merged` merged, the worker's part included."""
        if self.worker is not None and self._merged_there:
            theirs = self.worker.exported()
            if theirs is None:
                self._give_up()
            else:
                self.merger.merge(theirs)
        self.close()
        return self.merger
