"""Layout of the gateway's raw-event archive (the archive bucket): one place for every key rule.

Standard library only: the gateway's Lambda asset carries this module (``gateway/config.py``).
The ingest writes each event as it arrived, keyed by the UTC time of arrival from the gateway's
clock (never the client's eventTime), and by the AWS account whose API key sent it::

    raw/date=YYYY-MM-DD/hour=HH/<group id>/<eventTime compact>-<dedup id[:16]>-<account>.json

A time range is the list of its hour prefixes (:func:`archive_prefixes`); one run (the FIFO
group: the root or parent run, or the run itself) is ``<hour prefix><run id>/`` in each hour, and its
keys sort by eventTime, the order to replay them in. A body resent in another hour is archived
again; both copies have the same :func:`copy_id` (``<group id>/...-<dedup id[:16]>.json``, the account
left out), so a reader keeps the first. An archive copied elsewhere may sit under a prefix
(``s3://bucket/prefix/raw/...``): :class:`ArchiveLocation`.

The source account (:func:`source_account`) ends the file name, and only there, because:

* every prefix rule and reader stays as it was: hours, then the run's folder, then files in
  eventTime order, for objects archived before accounts were recorded (``...-<dedup>.json``, no
  account: :func:`source_account` is None) and after;
* the bytes stay the event as it arrived: the account is not written into it, nor around it;
* S3 metadata or tags would be invisible to Athena; the key is not: ``"$path"`` is every table's
  hidden column, and :data:`ACCOUNT_IN_KEY` reads the account from it, in Python and in Trino's SQL
  (Athena engine 3), the ``source_account`` column of the archive's queries
  (:mod:`emr_lineage.aws.archive_queries`);
* a folder of its own (``account=<id>/``) would split one run's events between folders and
  break the ``<hour>/<run id>/`` prefix of one run.
"""

from __future__ import annotations

import datetime as dt
import re
from dataclasses import dataclass

ARCHIVE_ROOT = "raw/"
# The account at the end of a key's file name: a regular expression Python's re and Trino's
# regexp_extract read alike (group 1). Twelve digits after a hyphen cannot be the end of a name
# without one: there, the hyphen comes before the 16 characters of the deduplication id.
ACCOUNT_IN_KEY = r"-([0-9]{12})\.json$"
_ACCOUNT_IN_KEY = re.compile(ACCOUNT_IN_KEY)
_ACCOUNT_ID = re.compile(r"[0-9]{12}")
# The hour of arrival follows the event time by seconds: an hour each side keeps a late or early arrival.
ARRIVAL_SLACK = dt.timedelta(hours=1)
_SCHEME = "s3://"


def is_account_id(value: str) -> bool:
    """Whether ``value`` is an AWS account id as keys record it: 12 digits."""
    return bool(_ACCOUNT_ID.fullmatch(value))


def archive_key(
    received: dt.datetime, group_id: str, event_time: dt.datetime, dedup: str, account: str | None = None
) -> str:
    """The S3 key of one raw body; ``received`` is the gateway's UTC time, ``account`` the AWS account
    (12 digits) whose key sent it (None: not known, as in a local gateway without accounts)."""
    if account is not None and not is_account_id(account):
        raise ValueError(f"{account!r} is not an AWS account id (12 digits)")
    hour = received.astimezone(dt.UTC)
    compact = event_time.astimezone(dt.UTC).strftime("%Y%m%dT%H%M%S%fZ")
    source = f"-{account}" if account else ""
    return f"{ARCHIVE_ROOT}date={hour:%Y-%m-%d}/hour={hour:%H}/{group_id}/{compact}-{dedup[:16]}{source}.json"


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


def source_account(key: str) -> str | None:
    """The AWS account whose key sent the body archived under ``key``; None for a key without one
    (archived before accounts were recorded, or by a gateway that knows none)."""
    found = _ACCOUNT_IN_KEY.search(key)
    return found.group(1) if found else None


def copy_id(key: str) -> str:
    """What two copies of one body (archived in two hours) have in common: ``<group>/<file>``, the
    file's account left out (the same body is one event, whichever key brought it, as for the queue)."""
    found = _ACCOUNT_IN_KEY.search(key)
    copy = "/".join(key.split("/")[-2:])
    return copy[: copy.rindex("-")] + ".json" if found else copy


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
