"""A copy of the state moto's backends hold, to put back into a new mock: a prepared account is made by
AWS calls once (tests/emr_lineage/operations/prepared_account.py) and then restored, as the calls left it.

The copy is a pickle of each backend of every account and region in use. What is no state of an account
stays shared: moto's registries of backends, functions and modules; a lock is made anew. Dictionaries of
moto's own classes are copied entry by entry, as stored: some take other arguments when made, or keep
more than one value per key (an S3 bucket's versions).
"""

from __future__ import annotations

import io
import pickle
import threading
import types
from collections import OrderedDict, defaultdict
from typing import Any

from moto.backends import get_backend
from moto.core.base_backend import AccountSpecificBackend, BackendDict

_LOCKS = (type(threading.Lock()), type(threading.RLock()))
_SHARED = (BackendDict, AccountSpecificBackend, types.FunctionType, types.ModuleType)
# Dictionary classes whose own pickling copies them exactly.
_PLAIN_DICTS = (dict, OrderedDict, defaultdict)


def untouched() -> bool:
    """Whether no backend holds state yet: the mock started (and reset them) and no call has been made.
    :func:`restore` replaces whole backends, so it is only for such a mock."""
    return not BackendDict._instances


def take() -> bytes:
    """The state of every backend in use, by service name, account and region."""
    state = {
        registry.service_name: {account: dict(regions) for account, regions in registry.items()}
        for registry in BackendDict._instances
    }
    buffer = io.BytesIO()
    _Pickler(buffer).dump(state)
    return buffer.getvalue()


def restore(snapshot: bytes) -> None:
    """Put a new copy of :func:`take`'s state into the current mock, in place of its backends."""
    state = _Unpickler(io.BytesIO(snapshot)).load()
    for service, accounts in state.items():
        registry = get_backend(service)
        for account, regions in accounts.items():
            backends = registry[account]  # puts the service among those in use: the mock's stop resets them
            for region, backend in regions.items():
                dict.__setitem__(backends, region, backend)


class _Pickler(pickle.Pickler):
    def __init__(self, file: io.BytesIO) -> None:
        super().__init__(file, protocol=pickle.HIGHEST_PROTOCOL)

    def persistent_id(self, obj: Any) -> Any:
        if isinstance(obj, _LOCKS):
            return ("lock", (id(obj), isinstance(obj, _LOCKS[1])))
        if isinstance(obj, _SHARED):
            _SHARED_OBJECTS.setdefault(id(obj), obj)
            return ("shared", id(obj))
        return None

    def reducer_override(self, obj: Any) -> Any:
        if not isinstance(obj, dict) or type(obj) in _PLAIN_DICTS:
            return NotImplemented
        factory = obj.default_factory if isinstance(obj, defaultdict) else None
        state = (getattr(obj, "__dict__", None), list(dict.items(obj)))
        return _new_dict, (type(obj), factory), state, None, None, _fill_dict


class _Unpickler(pickle.Unpickler):
    def __init__(self, file: io.BytesIO) -> None:
        super().__init__(file)
        self.locks: dict[int, Any] = {}  # one new lock per lock copied: a Condition refers to its lock's methods too

    def persistent_load(self, pid: Any) -> Any:
        kind, value = pid
        if kind == "lock":
            original, reentrant = value
            if original not in self.locks:
                self.locks[original] = threading.RLock() if reentrant else threading.Lock()
            return self.locks[original]
        return _SHARED_OBJECTS[value]


# What snapshots refer to rather than copy, by id; kept alive here so that an id is never reused.
_SHARED_OBJECTS: dict[int, Any] = {}


def _new_dict(cls: type, factory: Any) -> Any:
    made = cls.__new__(cls)
    if factory is not None:
        made.default_factory = factory
    return made


def _fill_dict(made: Any, state: tuple[dict[str, Any] | None, list[tuple[Any, Any]]]) -> None:
    attributes, items = state
    if attributes:
        made.__dict__.update(attributes)
    # An OrderedDict keeps its order in links of its own; a plain dict's slot is what the rest store into.
    store = OrderedDict.__setitem__ if isinstance(made, OrderedDict) else dict.__setitem__
    for key, value in items:
        store(made, key, value)
