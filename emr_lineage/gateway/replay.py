"""Replay: re-post archived events to Marquez, run by run, each run's events in their order.

The archive (``raw/date=YYYY-MM-DD/hour=HH/<run>/<event time>-<hash>.json``, see
:mod:`emr_lineage.aws.archive`) is listed hour by hour, so a time window selects by the hour
the gateway received an event (inclusive); ``run_id`` selects one run (the FIFO group's run: the
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

from emr_lineage.aws.archive import ARCHIVE_ROOT, archive_prefixes, group_of
from emr_lineage.errors import EmrLineageError
from emr_lineage.gateway.ingest import check_request
from emr_lineage.gateway.verdict import Rejected

# Replay re-checks archived bodies, which the gateway accepted under its own size limit.
_NO_SIZE_LIMIT = 1 << 40


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


def _keys(s3: Any, bucket: str, prefix: str) -> Iterator[str]:
    try:
        for page in s3.get_paginator("list_objects_v2").paginate(Bucket=bucket, Prefix=prefix):
            for item in page.get("Contents", ()):
                yield item["Key"]
    except (BotoCoreError, ClientError) as exc:
        raise ReplayError(f"cannot list s3://{bucket}/{prefix}: {' '.join(str(exc).split())}") from None


def _prefixes(
    since: dt.datetime | None, until: dt.datetime | None, run_id: str | None, now: Callable[[], dt.datetime]
) -> list[str]:
    """The prefixes to list, oldest first; a window that ends before it starts is a :class:`ReplayError`."""
    if since is None:
        if until is not None:
            raise ReplayError("--until needs --since")
        return [ARCHIVE_ROOT]
    end = until or now()
    if since > end:
        what = (
            f"--until {until.isoformat()}"
            if until
            else f"now ({end.isoformat(timespec='seconds')}, the default --until)"
        )
        raise ReplayError(f"--since {since.isoformat()} is after {what}: give a window that starts before it ends")
    return archive_prefixes(since, end, run_id)


def plan_replay(
    s3: Any,
    bucket: str,
    *,
    since: dt.datetime | None = None,
    until: dt.datetime | None = None,
    run_id: str | None = None,
    now: Callable[[], dt.datetime] = lambda: dt.datetime.now(dt.UTC),
    on_prefix: Callable[[int, int], None] | None = None,
) -> ReplayPlan:
    """List the archive: every hour from ``since`` to ``until`` (default now), or all of it;
    ``on_prefix(listed, total)`` after each hour (or the whole archive) is listed."""
    prefixes = _prefixes(since, until, run_id, now)
    plan = ReplayPlan()
    for number, prefix in enumerate(prefixes, 1):  # oldest hour first: the first copy of a body is the one kept
        for key in sorted(_keys(s3, bucket, prefix)):
            run = group_of(key)
            if run_id is None or run == run_id:
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
    bucket: str,
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
                body = s3.get_object(Bucket=bucket, Key=key)["Body"].read()
            except (BotoCoreError, ClientError) as exc:
                raise ReplayError(f"cannot read s3://{bucket}/{key}: {' '.join(str(exc).split())}") from None
            checked = check_request(None, body, api_keys=None, max_bytes=_NO_SIZE_LIMIT)
            if isinstance(checked, Rejected):
                result.skipped.append(f"{key}: {checked.reason}")
            else:
                post(checked.canonical)
                result.posted += 1
            if on_event:
                on_event(key)
    return result
