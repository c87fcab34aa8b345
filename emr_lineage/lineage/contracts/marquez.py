"""A contract's lineage as Marquez holds it: where to start reading, and the graph to check.

``emr-lineage validate --marquez`` and ``emr-lineage e2e`` read it the same way: the lineage
around every contract job and dataset, merged; unknown start nodes skipped (a job that never ran
is "missing", not an error); Marquez's ``<parent>.`` prefix undone for jobs run under a parent.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from emr_lineage.lineage.contracts.check import expected_dataset_ids, resolve
from emr_lineage.lineage.contracts.model import Contract
from emr_lineage.lineage.graph.from_marquez import (
    detach_parent_job,
    graph_from_marquez,
    merged_lineage,
    parent_prefixed_job_name,
)
from emr_lineage.lineage.graph.model import LineageGraph
from emr_lineage.lineage.naming import job_node_id
from emr_lineage.marquez.client import DEFAULT_DEPTH, MarquezClient


def contract_start_nodes(
    contract: Contract, values: Mapping[str, str], parent_job_name: str | None = None
) -> list[str]:
    """Where to read a contract's lineage from: every contract job (under its parent-prefixed
    name when the jobs ran under ``parent_job_name``) and every contract dataset, because
    Marquez's graph holds only jobs that have inputs or outputs themselves; an application
    whose Spark actions did the I/O is reached through its datasets."""
    jobs = [
        job_node_id(job.namespace, parent_prefixed_job_name(job.name, parent_job_name) if parent_job_name else job.name)
        for job in resolve(contract, values)
    ]
    return jobs + expected_dataset_ids(contract, values)


def read_contract_lineage(
    client: MarquezClient,
    contract: Contract,
    values: Mapping[str, str],
    parent_job_name: str | None = None,
    depth: int = DEFAULT_DEPTH,
) -> dict[str, Any]:
    """Marquez's ``{"graph": [...]}`` around every start node of the contract, merged."""
    return merged_lineage(client, contract_start_nodes(contract, values, parent_job_name), depth, missing_ok=True)


def contract_graph(reply: Mapping[str, Any], contract: Contract, parent_job_name: str | None = None) -> LineageGraph:
    """The graph to check ``contract`` against, from a reply of :func:`read_contract_lineage`."""
    if parent_job_name:
        reply = detach_parent_job(reply, parent_job_name)
    return graph_from_marquez(reply, level=contract.level)
