"""Read the pipeline's lineage from Marquez until the contract holds or the deadline passes; where
Marquez's UI shows it.

Each read takes the raw events Marquez stored since the run began (``GET /api/v1/events/lineage``) and
keeps those of the runs this launch's parent run launched (its Spark applications and their actions),
so neither an earlier run of the same jobs nor another pipeline running meanwhile can add or hide an edge.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from datetime import datetime

from emr_lineage.launch import plan as launch_plan
from emr_lineage.lineage.contracts.check import ContractResult, resolve, validate
from emr_lineage.lineage.contracts.marquez import marquez_graph
from emr_lineage.lineage.contracts.model import Contract
from emr_lineage.lineage.graph.model import GraphError, LineageGraph
from emr_lineage.lineage.times import Window
from emr_lineage.marquez.api import API_ROOT
from emr_lineage.marquez.client import MarquezClient, MarquezError
from emr_lineage.spark.conf import ParentContext

DEFAULT_LINEAGE_TIMEOUT = 600.0
DEFAULT_LINEAGE_INTERVAL = 15.0


@dataclass(frozen=True)
class LineageAttempt:
    """One read of Marquez: the contract result, or why there is none."""

    number: int
    elapsed: float
    result: ContractResult | None
    graph: LineageGraph | None
    skipped: int = 0  # events of the window Marquez holds that fail the event checks
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
    client: MarquezClient, contract: Contract, values: Mapping[str, str], parent: ParentContext, since: datetime
) -> tuple[ContractResult, LineageGraph, int]:
    """The contract checked against the runs ``parent`` launched, from the events Marquez holds since
    ``since``; and how many events of the window failed the event checks. The reads are those of
    ``emr-lineage validate --marquez --since ... --parent-job ...``, narrowed to this parent run."""
    graph, read = marquez_graph(client, contract.level, Window(since), run_id=parent.parent_run_id, purpose=None)
    return validate(contract, graph, values), graph, read.skipped


def _first_output(contract: Contract, values: Mapping[str, str]) -> tuple[str, str] | None:
    """(namespace, name) of the contract's first output that is one dataset as Marquez names it: not a
    ``table:`` alias (the catalog's name, not Marquez's) nor a tree (a location and everything under it)."""
    for job in resolve(contract, values):
        for dataset in job.outputs:
            if dataset.namespace and dataset.name and not dataset.tree:
                return dataset.namespace, dataset.name
    return None


def graph_urls(
    marquez_web: str | None, marquez_url: str | None, contract: Contract, values: Mapping[str, str]
) -> list[str]:
    """The Marquez web page of the pipeline's graph, via SSM's web URL (``marquez_web``) and, with
    ``--marquez`` (``marquez_url``), via the same host (the ALB serves the UI at / beside /api): the lineage
    of the contract's first output Marquez names (:func:`_first_output`), a dataset, where
    Marquez's UI shows the Spark actions that hold the pipeline's edges (an application's own page shows
    none: docs/graph.md, "Marquez's own lineage view"). None when no output names one (then the CLI gives
    the ``graph`` command instead)."""
    first = _first_output(contract, values)
    if first is None:
        return []
    bases = [marquez_web] if marquez_web else []
    if marquez_url:
        override = marquez_url.rstrip("/").removesuffix(API_ROOT)
        if override not in {b.rstrip("/") for b in bases}:
            bases.append(override)
    return [launch_plan.marquez_lineage_url(base, "dataset", *first) for base in bases]


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
    on_attempt: Callable[[LineageAttempt], None] | None = None,
) -> LineageOutcome:
    """Read Marquez until the contract holds or ``timeout`` seconds have passed.

    Lineage arrives asynchronously (the listener posts while the steps run, the gateway forwards in
    order), so a missing edge or an unreachable Marquez is retried; at least one read is always made.
    """
    started = clock()
    number = 0
    while True:
        number += 1
        try:
            result, graph, skipped = read_lineage(client, contract, values, parent, since)
            attempt = LineageAttempt(number, clock() - started, result, graph, skipped)
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
    if attempt.skipped:
        text += f"; {attempt.skipped} event(s) of the window skipped: they fail the event checks"
    return text
