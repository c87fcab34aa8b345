"""Read the pipeline's lineage from Marquez until the contract holds or the deadline passes.

Marquez keeps earlier runs' jobs: those whose latest run started before this run are dropped.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Any

from emr_lineage.lineage.contracts.check import ContractResult, validate
from emr_lineage.lineage.contracts.marquez import contract_graph, read_contract_lineage
from emr_lineage.lineage.contracts.model import Contract
from emr_lineage.lineage.graph.model import GraphError, LineageGraph
from emr_lineage.lineage.times import parse_time
from emr_lineage.marquez.client import DEFAULT_DEPTH, MarquezClient, MarquezError
from emr_lineage.spark.conf import ParentContext

DEFAULT_LINEAGE_TIMEOUT = 600.0
DEFAULT_LINEAGE_INTERVAL = 15.0
# Marquez stamps runs with its own clock. A cluster needs minutes to provision and bootstrap
# before its first step, so accepting runs from a little before our start only absorbs clock
# skew between this machine and Marquez; it cannot let a previous run's lineage in.
CLOCK_SKEW_TOLERANCE = timedelta(minutes=2)


def _instant(value: Any) -> datetime | None:
    """A Marquez timestamp: ISO-8601 text (API) or epoch seconds (some test fixtures)."""
    if isinstance(value, (int, float)):
        return datetime.fromtimestamp(value, UTC)
    if isinstance(value, str) and value:
        try:
            return parse_time(value)
        except ValueError:
            return None
    return None


def latest_run_time(node: Mapping[str, Any]) -> datetime | None:
    run = (node.get("data") or {}).get("latestRun") or {}
    times = [t for t in (_instant(run.get(k)) for k in ("createdAt", "updatedAt", "startedAt", "endedAt")) if t]
    return max(times) if times else None


def drop_stale_jobs(reply: Mapping[str, Any], since: datetime) -> tuple[dict[str, Any], list[str]]:
    """Remove JOB nodes whose latest run began before ``since`` (and edges touching them)."""
    stale = sorted(
        node["id"]
        for node in reply.get("graph", ())
        if node.get("type") == "JOB" and ((t := latest_run_time(node)) is None or t < since)
    )
    if not stale:
        return dict(reply), []
    gone = set(stale)
    nodes = []
    for node in reply["graph"]:
        if node["id"] in gone:
            continue
        node = dict(node)
        for key in ("inEdges", "outEdges"):
            node[key] = [
                e for e in node.get(key) or () if e.get("origin") not in gone and e.get("destination") not in gone
            ]
        nodes.append(node)
    return {"graph": nodes}, stale


@dataclass(frozen=True)
class LineageAttempt:
    """One read of Marquez: the contract result, or why there is none."""

    number: int
    elapsed: float
    result: ContractResult | None
    graph: LineageGraph | None
    stale_jobs: tuple[str, ...] = ()
    error: str | None = None

    @property
    def ok(self) -> bool:
        return self.result is not None and self.result.ok


@dataclass(frozen=True)
class LineageOutcome:
    ok: bool
    attempts: int
    last: LineageAttempt
    message: str


def read_lineage(
    client: MarquezClient,
    contract: Contract,
    values: Mapping[str, str],
    parent: ParentContext,
    since: datetime,
    depth: int = DEFAULT_DEPTH,
) -> tuple[ContractResult, LineageGraph, list[str]]:
    """Marquez's lineage around the contract, limited to this run, checked against the contract.

    The reads are those of ``emr-lineage validate --marquez`` (``merged_lineage`` with
    unknown nodes skipped, ``graph_from_marquez``, ``validate``).
    """
    reply = read_contract_lineage(client, contract, values, parent.parent_job_name, depth)
    fresh, stale = drop_stale_jobs(reply, since)
    graph = contract_graph(fresh, contract, parent.parent_job_name)
    return validate(contract, graph, values), graph, stale


def pause(seconds: float) -> None:
    """The wait between two reads of Marquez (tests replace it to let lineage "arrive")."""
    time.sleep(seconds)


# The deadline's clock (tests replace it together with ``pause``).
clock = time.monotonic


def wait_for_lineage(
    client: MarquezClient,
    contract: Contract,
    values: Mapping[str, str],
    parent: ParentContext,
    since: datetime,
    *,
    timeout: float = DEFAULT_LINEAGE_TIMEOUT,
    interval: float = DEFAULT_LINEAGE_INTERVAL,
    depth: int = DEFAULT_DEPTH,
    on_attempt: Callable[[LineageAttempt], None] | None = None,
) -> LineageOutcome:
    """Read Marquez until the contract holds or ``timeout`` seconds have passed.

    Lineage arrives asynchronously (the listener posts while the steps run, Marquez versions
    a job on COMPLETE), so a missing edge, an unknown node or an unreachable Marquez is
    retried; at least one read is always made.
    """
    started = clock()
    number = 0
    while True:
        number += 1
        try:
            result, graph, stale = read_lineage(client, contract, values, parent, since, depth)
            attempt = LineageAttempt(number, clock() - started, result, graph, tuple(stale))
        except (MarquezError, GraphError) as exc:
            attempt = LineageAttempt(number, clock() - started, None, None, error=str(exc))
        if on_attempt is not None:
            on_attempt(attempt)
        if attempt.ok:
            return LineageOutcome(
                True, number, attempt, f"lineage matches the contract ({len(attempt.result.matched)} edges)"
            )
        remaining = timeout - (clock() - started)
        if remaining <= 0:
            return LineageOutcome(False, number, attempt, _deadline_message(attempt, timeout, number))
        pause(min(interval, remaining))


def _deadline_message(attempt: LineageAttempt, timeout: float, attempts: int) -> str:
    base = f"lineage in Marquez did not match the contract within {timeout:g}s ({attempts} reads)"
    if attempt.result is None:
        return f"{base}; last read failed: {attempt.error}"
    result = attempt.result
    text = f"{base}: {len(result.missing)} missing, {len(result.unexpected)} unexpected edge(s)"
    if attempt.stale_jobs:
        text += f"; {len(attempt.stale_jobs)} job(s) in Marquez only from runs before this cluster"
    return text
