"""Where the analysis commands read OpenLineage events from: files, Marquez or the gateway's archive.

Every source ends as one list of event dicts, so impact, drift, audit and runs have one
implementation:

* files and directories, read with :func:`emr_lineage.lineage.events.reader.load_events`;
* Marquez's raw events, ``GET /api/v1/events/lineage`` (:mod:`emr_lineage.lineage.events.from_marquez`),
  which hold what Marquez's own model drops (input version facets, Marquez #2733) as long as Marquez
  keeps them;
* the gateway's archive (``s3://bucket[/prefix]``, the layout of :mod:`emr_lineage.aws.archive`):
  the raw bodies, each through the gateway's own checks again
  (:func:`~emr_lineage.lineage.door.one_event.check_archived`: namespaces normalised as Marquez
  received them); a body resent in another hour is read once; optionally only what one AWS
  account's key sent (:func:`~emr_lineage.aws.archive.source_account`).

A time window (``--since``/``--until``) keeps the events whose ``eventTime`` falls in it. The
archive is listed by the hour of arrival, which follows the event time by seconds; one hour of
slack on each side keeps a late or early arrival in the listing, and the event time decides.
"""

from __future__ import annotations

import datetime as dt
import json
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

import orjson
from botocore.exceptions import BotoCoreError, ClientError

from emr_lineage.aws.archive import ArchiveLocation, copy_id, event_time_prefixes, source_account
from emr_lineage.aws.archive import parse_archive_uri as archive_location
from emr_lineage.aws.clients import AwsError, aws_client, aws_message
from emr_lineage.errors import EmrLineageError
from emr_lineage.lineage.door.one_event import check_archived
from emr_lineage.lineage.door.verdict import Rejected
from emr_lineage.lineage.events.from_marquez import read_marquez_events
from emr_lineage.lineage.events.reader import load_events
from emr_lineage.lineage.graph.model import GraphError, LineageGraph
from emr_lineage.lineage.times import Window
from emr_lineage.marquez.client import MarquezClient

_MAX_NOTES = 5


class AnalysisError(EmrLineageError):
    """An analysis cannot run: a bad option value, an unknown dataset, an unreadable source (exit 2)."""


@dataclass
class EventSource:
    """The events of one source, what it is (``kind``: events, marquez or archive) and notes for stderr."""

    kind: str
    label: str
    events: list[dict[str, Any]] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)


def read_files(paths: Sequence[str], window: Window, skip_invalid: bool = False) -> EventSource:
    """Events of files and directories (``load_events``), kept when in ``window``."""
    loaded = load_events(paths, skip_invalid=skip_invalid)
    kept = [e for e in loaded.events if window.contains(e)]
    return EventSource("events", ", ".join(paths), kept, loaded.skipped_notes())


def read_marquez(client: MarquezClient, window: Window) -> EventSource:
    """Marquez's raw lineage events in ``window`` (Marquez holds them to it), checked as event files are
    (:func:`read_marquez_events`)."""
    read = read_marquez_events(client, window.since, window.until)
    return EventSource("marquez", client.base_url, read.events, read.notes())


def parse_archive_uri(uri: str) -> ArchiveLocation:
    """The archive an ``--archive`` value names (:func:`emr_lineage.aws.archive.parse_archive_uri`)."""
    try:
        return archive_location(uri)
    except ValueError as exc:
        raise AnalysisError(f"--archive {exc}") from None


def _list_keys(s3: Any, location: ArchiveLocation, prefix: str) -> list[str]:
    try:
        pages = s3.get_paginator("list_objects_v2").paginate(Bucket=location.bucket, Prefix=prefix)
        return [item["Key"] for page in pages for item in page.get("Contents", ())]
    except (BotoCoreError, ClientError) as exc:
        raise AnalysisError(f"cannot list s3://{location.bucket}/{prefix}: {aws_message(exc)}") from None


def _archive_prefixes(location: ArchiveLocation, window: Window, now: Callable[[], dt.datetime]) -> list[str]:
    return [location.prefix(prefix) for prefix in event_time_prefixes(window.since, window.until or now())]


def read_archive(
    s3: Any,
    location: ArchiveLocation,
    window: Window,
    now: Callable[[], dt.datetime] = lambda: dt.datetime.now(dt.UTC),
    account: str | None = None,
) -> EventSource:
    """The archived events in ``window``, each read once and checked as the gateway checks it; with
    ``account``, only those the gateway received with that AWS account's key (not read otherwise)."""
    source = EventSource("archive", location.uri + (f" (source account {account})" if account else ""))
    seen: set[str] = set()
    rejected: list[str] = []
    for prefix in _archive_prefixes(location, window, now):
        for key in sorted(_list_keys(s3, location, prefix)):
            if account and source_account(key) != account:
                continue
            copy = copy_id(key)  # the same body resent in another hour
            if copy in seen:
                continue
            seen.add(copy)
            try:
                body = s3.get_object(Bucket=location.bucket, Key=key)["Body"].read()
            except (BotoCoreError, ClientError) as exc:
                raise AnalysisError(f"cannot read s3://{location.bucket}/{key}: {aws_message(exc)}") from None
            checked = check_archived(body)
            if isinstance(checked, Rejected):
                rejected.append(f"{key}: {checked.reason}")
            elif window.contains(checked.event):
                source.events.append(checked.event)
    if rejected:
        source.notes.append(f"skipped {len(rejected)} archived body(ies) that fail the gateway's checks")
        source.notes.extend(f"skipped {line}" for line in rejected[:_MAX_NOTES])
    return source


def read_graph_file(path: str) -> LineageGraph:
    """The graph a ``graph --format json`` file holds (``--graph FILE``)."""
    try:
        with open(path, "rb") as handle:
            data = orjson.loads(handle.read())
    except OSError as exc:
        raise AnalysisError(f"--graph {path}: {exc.strerror or exc}") from None
    except orjson.JSONDecodeError as exc:
        raise AnalysisError(f"--graph {path}: not JSON ({exc})") from None
    try:
        return LineageGraph.from_dict(data)
    except GraphError as exc:
        raise AnalysisError(f"--graph {path}: {exc}") from None


def archive_s3_client() -> Any:
    """An S3 client from the environment (``AWS_REGION``/``AWS_DEFAULT_REGION``, ``AWS_ENDPOINT_URL``)."""
    try:
        return aws_client("s3")
    except AwsError as exc:
        raise AnalysisError(str(exc)) from None


def dump(value: Any) -> str:
    """The JSON form of a report: sorted keys, indented."""
    return json.dumps(value, indent=2, sort_keys=True, default=str)
