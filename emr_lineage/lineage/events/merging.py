"""What a read merges its events into: the reader knows this protocol, not what implements it.

The graph builder (:class:`~emr_lineage.lineage.graph.from_events.GraphBuilder`) is one. A large
input is merged partly in a second process, which makes a merger of its own from the same
factory (sent to it pickled, so a class or a ``functools.partial`` of one) and exports it back.
"""

from __future__ import annotations

import gc
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager
from typing import Any, Protocol


class Merger(Protocol):
    """Merges events; what two processes merged is combined by ``merge(other.export())``."""

    def add_all(self, events: Iterable[Any]) -> None: ...

    def export(self) -> Any: ...

    def merge(self, exported: Any) -> None: ...


MakeMerger = Callable[[], Merger]


@contextmanager
def cyclic_gc_paused() -> Iterator[None]:
    """Merging creates millions of small sets and tuples but no reference cycles; pausing the
    cyclic GC keeps it from re-scanning every event in memory again and again."""
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was_enabled:
            gc.enable()
