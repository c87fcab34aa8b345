"""Layout of the gateway's raw-event archive (the archive bucket): one place for every key rule.

Standard library only: the gateway's Lambda asset carries this module (``gateway/config.py``).
The ingest writes each event as it arrived, keyed by the UTC time of arrival from the gateway's
clock (never the client's eventTime)::

    raw/date=YYYY-MM-DD/hour=HH/<group id>/<eventTime compact>-<dedup id[:16]>.json

A time range is the list of its hour prefixes (:func:`archive_prefixes`); one run (the FIFO
group: the root or parent run, or the run itself) is ``<hour prefix><run id>/`` in each hour, and its
keys sort by eventTime, the order to replay them in. A body resent in another hour is archived
again; both copies end in the same ``<group id>/...-<dedup id[:16]>.json`` (:func:`copy_id`), so a
reader keeps the first. An archive copied elsewhere may sit under a prefix
(``s3://bucket/prefix/raw/...``): :class:`ArchiveLocation`.
"""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass

ARCHIVE_ROOT = "raw/"
# The hour of arrival follows the event time by seconds: an hour each side keeps a late or early arrival.
ARRIVAL_SLACK = dt.timedelta(hours=1)
_SCHEME = "s3://"


def archive_key(received: dt.datetime, group_id: str, event_time: dt.datetime, dedup: str) -> str:
    """The S3 key of one raw body; ``received`` is the gateway's UTC time."""
    hour = received.astimezone(dt.UTC)
    compact = event_time.astimezone(dt.UTC).strftime("%Y%m%dT%H%M%S%fZ")
    return f"{ARCHIVE_ROOT}date={hour:%Y-%m-%d}/hour={hour:%H}/{group_id}/{compact}-{dedup[:16]}.json"


def archive_prefixes(start: dt.datetime, end: dt.datetime, run_id: str | None = None) -> list[str]:
    """The archive prefixes holding what arrived between ``start`` and ``end`` (inclusive, by hour),
    optionally of one run (the FIFO group's run id), oldest first."""
    hour = start.astimezone(dt.UTC).replace(minute=0, second=0, microsecond=0)
    last = end.astimezone(dt.UTC)
    prefixes = []
    while hour <= last:
        prefix = f"{ARCHIVE_ROOT}date={hour:%Y-%m-%d}/hour={hour:%H}/"
        prefixes.append(prefix + (f"{run_id}/" if run_id else ""))
        hour += dt.timedelta(hours=1)
    return prefixes


def event_time_prefixes(since: dt.datetime | None, until: dt.datetime, run_id: str | None = None) -> list[str]:
    """The prefixes that may hold events whose eventTime lies between ``since`` and ``until``: their
    arrival hours, :data:`ARRIVAL_SLACK` either side; without ``since``, the whole archive."""
    if since is None:
        return [ARCHIVE_ROOT]
    return archive_prefixes(since - ARRIVAL_SLACK, until + ARRIVAL_SLACK, run_id)


def group_of(key: str) -> str:
    """The FIFO group (run id, or a static event's job or dataset id) an archive key is filed under."""
    return key.split("/")[-2]


def copy_id(key: str) -> str:
    """What two copies of one body (archived in two hours) have in common: ``<group>/<file>``."""
    return "/".join(key.split("/")[-2:])


@dataclass(frozen=True)
class ArchiveLocation:
    """An archive: its bucket and the key prefix its ``raw/`` layout starts under ('' at the root)."""

    bucket: str
    root: str = ""

    @property
    def uri(self) -> str:
        return f"{_SCHEME}{self.bucket}/{self.root}"

    def prefix(self, archive_prefix: str) -> str:
        """``archive_prefix`` (from :func:`archive_prefixes`, or :data:`ARCHIVE_ROOT`) in this archive."""
        return self.root + archive_prefix


def parse_archive_uri(uri: str) -> ArchiveLocation:
    """``s3://bucket``, ``s3://bucket/prefix`` (the archive's ``raw/`` under ``prefix/``) or
    ``s3://bucket/prefix/raw`` (the same archive). Raises ``ValueError`` for anything else."""
    if not uri.startswith(_SCHEME) or not uri[len(_SCHEME) :].split("/", 1)[0]:
        raise ValueError(f"{uri!r}: expected s3://bucket or s3://bucket/prefix")
    bucket, _, prefix = uri[len(_SCHEME) :].partition("/")
    prefix = prefix.strip("/")
    root = ARCHIVE_ROOT.strip("/")
    if prefix == root or prefix.endswith("/" + root):
        prefix = prefix[: -len(root)].rstrip("/")
    return ArchiveLocation(bucket, f"{prefix}/" if prefix else "")
