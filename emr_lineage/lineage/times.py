"""Event times: the one parser of an ``eventTime`` (or a time option), the one order by it, and the window
of ``--since``/``--until`` on them.

Standard library only (and :mod:`emr_lineage.errors`, which is too): the gateway's Lambda asset carries
this module (``gateway/config.py``).
OpenLineage's ``eventTime`` is an ISO 8601 date-time with an offset (the spec's ``date-time``
format, https://openlineage.io/spec/2-0-2/OpenLineage.json); Python 3.11's
``datetime.fromisoformat`` reads that, ``Z`` included. A time without an offset is taken as UTC
where a reader must be lenient (files, options) and refused where it must be strict (the gateway:
Marquez refuses it).
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from typing import Any, TypeVar

from emr_lineage.errors import EmrLineageError

T = TypeVar("T")
_LAST = dt.datetime.max.replace(tzinfo=dt.UTC)
_FIRST = dt.datetime.min.replace(tzinfo=dt.UTC)


class NoOffset(ValueError):
    """An ISO 8601 date-time without a UTC offset, where one is required."""


def parse_time(value: str, *, require_offset: bool = False) -> dt.datetime:
    """``value`` (ISO 8601, e.g. ``2026-11-23``, ``2026-11-23T10:00Z``, ``t`` and ``z`` too) as an aware UTC datetime.

    Without an offset it is UTC, unless ``require_offset`` (then :class:`NoOffset`). Raises
    ``ValueError`` for text that is not an ISO 8601 date or date-time.
    """
    text = value.strip()
    try:
        moment = dt.datetime.fromisoformat(text)
    except ValueError as unread:
        try:  # RFC 3339 allows t and z; fromisoformat does not
            moment = dt.datetime.fromisoformat(text.upper())
        except ValueError:
            raise unread from None
    if moment.tzinfo is None:
        if require_offset:
            raise NoOffset(f"{value!r} has no UTC offset")
        moment = moment.replace(tzinfo=dt.UTC)
    return moment.astimezone(dt.UTC)


def event_time(event: Mapping[str, Any]) -> dt.datetime | None:
    """The event's ``eventTime`` (UTC), or None when it is missing or not a time."""
    value = event.get("eventTime")
    if not isinstance(value, str):
        return None
    try:
        return parse_time(value)
    except (ValueError, OverflowError):  # OverflowError: 0001-01-01T00:00+01:00 is before datetime.min in UTC
        return None


def placed(moment: dt.datetime | None) -> dt.datetime:
    """``moment`` to compare which came later, an unknown time counting as the earliest: an event that
    cannot be placed never overrides one that can (a run's state, the schema it reported last)."""
    return _FIRST if moment is None else moment


def by_event_time(items: Iterable[T], event_of: Callable[[T], Mapping[str, Any]] = lambda item: item) -> list[T]:
    """``items`` ordered by their event's time; stable (equal times keep their order), timeless ones last."""
    return sorted(items, key=lambda item: event_time(event_of(item)) or _LAST)


class TimeOptionError(EmrLineageError):
    """A time option that is not an ISO 8601 time, or a window that ends before it starts (exit 2)."""


def parse_instant(value: str, option: str) -> dt.datetime:
    """An ISO 8601 time of an option (``2026-11-23``, ``2026-11-23T10:00Z``); UTC when it has no offset."""
    try:
        return parse_time(value)
    except ValueError:
        raise TimeOptionError(f"{option} {value!r}: expected an ISO 8601 time, e.g. 2026-11-23T10:00Z") from None


@dataclass(frozen=True)
class Window:
    """A time window on event times; an open end is None. Both ends are inclusive."""

    since: dt.datetime | None = None
    until: dt.datetime | None = None

    @classmethod
    def of(cls, since: str | None, until: str | None) -> Window:
        """The window of ``--since``/``--until`` (ISO 8601 text, either may be None)."""
        return cls(
            parse_instant(since, "--since") if since is not None else None,
            parse_instant(until, "--until") if until is not None else None,
        )

    def __post_init__(self) -> None:
        if self.since and self.until and self.since > self.until:
            raise TimeOptionError(f"--since {self.since.isoformat()} is after --until {self.until.isoformat()}")

    @property
    def is_open(self) -> bool:
        return self.since is None and self.until is None

    def contains(self, event: Mapping[str, Any]) -> bool:
        if self.is_open:
            return True
        moment = event_time(event)
        if moment is None:
            return False  # an event without a time cannot be placed in a window
        return (self.since is None or moment >= self.since) and (self.until is None or moment <= self.until)
