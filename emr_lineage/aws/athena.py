"""Athena queries of the archive: start one in the archive's workgroup, wait for it under a deadline,
read its rows, stop it.

The shape of :mod:`emr_lineage.aws.emr_serverless`: an ``on_poll`` callback sees every poll
(progress), :func:`pause` and :data:`clock` are the module's so tests move on without sleeping, and
a KeyboardInterrupt (Ctrl-C, or SIGTERM through the CLI group) propagates: the caller stops the
query. The workgroup enforces where results go and how they are encrypted, so no
ResultConfiguration is sent. States
(https://docs.aws.amazon.com/athena/latest/APIReference/API_QueryExecutionStatus.html): QUEUED,
RUNNING, then SUCCEEDED, FAILED or CANCELLED.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any

from botocore.exceptions import BotoCoreError, ClientError

from emr_lineage.aws.clients import AwsError, aws_message
from emr_lineage.aws.polling import poll_until

SUCCEEDED = "SUCCEEDED"
ENDED = frozenset({SUCCEEDED, "FAILED", "CANCELLED"})
POLL_SECONDS = 1.0
DEADLINE_SECONDS = 900.0  # a query of the archive that runs longer is stopped (and reported)


@dataclass(frozen=True)
class QuerySnapshot:
    """One poll: the query's state, Athena's reason when it ended otherwise, bytes scanned, seconds."""

    query_id: str
    state: str
    reason: str | None
    scanned_bytes: int
    elapsed: float

    @property
    def finished(self) -> bool:
        return self.state in ENDED


@dataclass(frozen=True)
class QueryResult:
    """The rows of a query that succeeded: its column names, and each row's values (None for NULL)."""

    columns: tuple[str, ...]
    rows: tuple[tuple[str | None, ...], ...]


def start_query(client: Any, sql: str, *, workgroup: str, database: str) -> str:
    """Start ``sql`` in ``workgroup`` with ``database`` as the default; its query execution id."""
    try:
        reply = client.start_query_execution(
            QueryString=sql, WorkGroup=workgroup, QueryExecutionContext={"Database": database}
        )
    except (ClientError, BotoCoreError) as exc:
        raise AwsError(f"Athena refused the query in workgroup {workgroup} ({aws_message(exc)})") from None
    return reply["QueryExecutionId"]


def stop_query(client: Any, query_id: str) -> None:
    try:
        client.stop_query_execution(QueryExecutionId=query_id)
    except (ClientError, BotoCoreError) as exc:
        raise AwsError(f"could not stop the Athena query {query_id} ({aws_message(exc)})") from None


def poll(client: Any, query_id: str, elapsed: float) -> QuerySnapshot:
    try:
        execution = client.get_query_execution(QueryExecutionId=query_id)["QueryExecution"]
    except (ClientError, BotoCoreError) as exc:
        raise AwsError(f"cannot read the state of the Athena query {query_id} ({aws_message(exc)})") from None
    status = execution.get("Status", {})
    error = status.get("AthenaError", {}).get("ErrorMessage")
    return QuerySnapshot(
        query_id=query_id,
        state=status.get("State", "UNKNOWN"),
        reason=status.get("StateChangeReason") or error or None,
        scanned_bytes=execution.get("Statistics", {}).get("DataScannedInBytes", 0),
        elapsed=elapsed,
    )


def pause(seconds: float) -> None:
    """The wait between polls (tests replace it)."""
    time.sleep(seconds)


clock: Callable[[], float] = time.monotonic  # tests replace it to pass a deadline without waiting


def wait_for_query(
    client: Any,
    query_id: str,
    *,
    poll_interval: float = POLL_SECONDS,
    deadline_seconds: float = DEADLINE_SECONDS,
    on_poll: Callable[[QuerySnapshot], None] | None = None,
) -> QuerySnapshot:
    """Poll until the query ends; past ``deadline_seconds`` the last snapshot, not finished (the caller
    stops the query, as it does on a KeyboardInterrupt)."""
    snapshot, _ = poll_until(
        lambda elapsed: poll(client, query_id, elapsed),
        lambda snapshot: snapshot.finished,
        poll_interval=poll_interval,
        pause=pause,
        clock=clock,
        deadline_seconds=deadline_seconds,
        on_poll=on_poll,
    )
    return snapshot


def _pages(client: Any, query_id: str) -> Iterator[dict[str, Any]]:
    """The result pages, through boto3's paginator (it follows NextToken)."""
    try:
        yield from client.get_paginator("get_query_results").paginate(QueryExecutionId=query_id)
    except (ClientError, BotoCoreError) as exc:
        raise AwsError(f"cannot read the results of the Athena query {query_id} ({aws_message(exc)})") from None


def query_results(client: Any, query_id: str) -> QueryResult:
    """Every row of a succeeded query, page by page; the first row of a SELECT's results is its header."""
    columns: tuple[str, ...] = ()
    rows: list[tuple[str | None, ...]] = []
    for page in _pages(client, query_id):
        if not columns:
            info = page.get("ResultSet", {}).get("ResultSetMetadata", {}).get("ColumnInfo", [])
            columns = tuple(c.get("Name", "") for c in info)
        for row in page.get("ResultSet", {}).get("Rows", []):
            rows.append(tuple(cell.get("VarCharValue") for cell in row.get("Data", [])))
    # Athena repeats the column names as the first row (in the first page only).
    if rows and (not columns or rows[0] == columns):
        columns, rows = tuple(v or "" for v in rows[0]), rows[1:]
    return QueryResult(columns, tuple(rows))
