"""Replay: re-post archived events to Marquez, run by run, each run's events in their order.

The archive (``raw/date=YYYY-MM-DD/hour=HH/<run>/<event time>-<hash>.json``, see
:mod:`emr_lineage.aws.archive`; at the root of a bucket or under a prefix, an
:class:`~emr_lineage.aws.archive.ArchiveLocation`) is listed hour by hour of arrival. A window on
event time (``since``/``until``, inclusive) lists the hours of arrival from an hour before it to an
hour after it (``ARRIVAL_SLACK``) and keeps the keys whose event time, the start of their file
name, is in it: no body is read to choose. A window on the hour of arrival (``arrived_since``/
``arrived_until``) lists those hours only. ``run_id`` selects one run (the FIFO group's run: the
root or parent run when there is one). Within a run, events are replayed by event time, the order
the run reported, across the hours they arrived in; a body resent in another hour is archived
twice under the same ``-<hash>.json`` ending and replayed once (``ReplayPlan.duplicates`` counts the
copies left out). Each body goes through the ingest checks again (the same normalisation, the same
canonical form) before it is posted; a body that no longer passes is skipped and reported.
Re-posting an event Marquez already has is harmless: it stores raw events under the primary key
(event time, event), and the canonical form is the same bytes each time
(https://github.com/MarquezProject/marquez/blob/main/api/src/main/resources/marquez/db/migration/V17.2__open_lineage.sql).
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import Any

from botocore.exceptions import BotoCoreError, ClientError

from emr_lineage.aws.archive import ArchiveLocation, archive_prefixes, event_time_prefixes, group_of
from emr_lineage.aws.clients import aws_message
from emr_lineage.errors import EmrLineageError
from emr_lineage.lineage.door.one_event import check_archived
from emr_lineage.lineage.door.verdict import Rejected
from emr_lineage.lineage.times import parse_time


class ReplayError(EmrLineageError):
    """The archive cannot be read (missing bucket, no access): exit 2."""


@dataclass
class ReplayPlan:
    """The archived events to replay: run id -> keys, in order."""

    runs: dict[str, list[str]] = field(default_factory=dict)
    duplicates: int = 0  # copies of a body archived again in a later hour, left out

    @property
    def events(self) -> int:
        return sum(len(keys) for keys in self.runs.values())


@dataclass
class ReplayResult:
    posted: int = 0
    skipped: list[str] = field(default_factory=list)  # "key: reason"


def _event_time_and_hash(key: str) -> tuple[str, str]:
    # <file> is <eventTime compact>-<dedup id[:16]>.json: the compact time sorts as the time does
    time, _, rest = key.rsplit("/", 1)[-1].partition("-")
    return time, rest


def _keys(s3: Any, location: ArchiveLocation, prefix: str) -> Iterator[str]:
    try:
        for page in s3.get_paginator("list_objects_v2").paginate(Bucket=location.bucket, Prefix=prefix):
            for item in page.get("Contents", ()):
                yield item["Key"]
    except (BotoCoreError, ClientError) as exc:
        raise ReplayError(f"cannot list s3://{location.bucket}/{prefix}: {aws_message(exc)}") from None


@dataclass(frozen=True)
class ReplayWindow:
    """What to replay: event time from ``since`` to ``until``, arrival from ``arrived_since`` to
    ``arrived_until`` (each inclusive, each end open when None), ``run_id`` only."""

    since: dt.datetime | None = None
    until: dt.datetime | None = None
    arrived_since: dt.datetime | None = None
    arrived_until: dt.datetime | None = None
    run_id: str | None = None

    def holds(self, key: str) -> bool:
        """Whether the archived ``key``'s event time (its file name's start) is in the window."""
        if self.since is None and self.until is None:
            return True
        try:
            moment = parse_time(_event_time_and_hash(key)[0])
        except ValueError:
            return False  # an event without a time cannot be placed in a window
        return (self.since is None or moment >= self.since) and (self.until is None or moment <= self.until)


def _check_order(first: str, start: dt.datetime | None, last: str, end: dt.datetime | None, now: dt.datetime) -> None:
    """A window that ends before it starts is a :class:`ReplayError`."""
    if start is not None and start > (end or now):
        what = f"{last} {end.isoformat()}" if end else f"now ({now.isoformat(timespec='seconds')}, the default {last})"
        raise ReplayError(f"{first} {start.isoformat()} is after {what}: give a window that starts before it ends")


def _prefixes(window: ReplayWindow, now: dt.datetime) -> list[str]:
    """The archive prefixes to list, oldest first."""
    if window.arrived_until is not None and window.arrived_since is None:
        raise ReplayError("--arrived-until needs --arrived-since")
    _check_order("--since", window.since, "--until", window.until, now)
    _check_order("--arrived-since", window.arrived_since, "--arrived-until", window.arrived_until, now)
    if window.arrived_since is not None:
        return archive_prefixes(window.arrived_since, window.arrived_until or now, window.run_id)
    return event_time_prefixes(window.since, window.until or now, window.run_id)


def plan_replay(
    s3: Any,
    location: ArchiveLocation,
    window: ReplayWindow = ReplayWindow(),
    *,
    now: Callable[[], dt.datetime] = lambda: dt.datetime.now(dt.UTC),
    on_prefix: Callable[[int, int], None] | None = None,
) -> ReplayPlan:
    """List the archive: the hours of arrival the window needs, or all of it; ``on_prefix(listed,
    total)`` after each hour (or the whole archive) is listed."""
    prefixes = [location.prefix(prefix) for prefix in _prefixes(window, now())]
    plan = ReplayPlan()
    for number, prefix in enumerate(prefixes, 1):  # oldest hour first: the first copy of a body is the one kept
        for key in sorted(_keys(s3, location, prefix)):
            run = group_of(key)
            if (window.run_id is None or run == window.run_id) and window.holds(key):
                plan.runs.setdefault(run, []).append(key)
        if on_prefix:
            on_prefix(number, len(prefixes))
    for run, keys in plan.runs.items():
        unique = {_event_time_and_hash(key): key for key in reversed(keys)}
        plan.duplicates += len(keys) - len(unique)
        plan.runs[run] = [unique[name] for name in sorted(unique)]
    return plan


def replay(
    s3: Any,
    location: ArchiveLocation,
    plan: ReplayPlan,
    post: Callable[[bytes], Any],
    *,
    on_event: Callable[[str], None] | None = None,
) -> ReplayResult:
    """Post every planned event with ``post`` (which raises when Marquez refuses), run by run."""
    result = ReplayResult()
    for keys in plan.runs.values():
        for key in keys:
            try:
                body = s3.get_object(Bucket=location.bucket, Key=key)["Body"].read()
            except (BotoCoreError, ClientError) as exc:
                raise ReplayError(f"cannot read s3://{location.bucket}/{key}: {aws_message(exc)}") from None
            checked = check_archived(body)
            if isinstance(checked, Rejected):
                result.skipped.append(f"{key}: {checked.reason}")
            else:
                post(checked.canonical)
                result.posted += 1
            if on_event:
                on_event(key)
    return result
