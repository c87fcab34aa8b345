"""The GET resources of Marquez's API the project uses, with Jersey's parameter handling: a path
or query parameter that cannot be converted (a NamespaceName, JobName, DatasetName, RunId, NodeId
or int that its rule rejects) is a 404 "HTTP 404 Not Found"."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from .javasem import java_uuid
from .names import NodeId, blank, node_id, valid_namespace
from .read_columns import column_lineage, dataset_column_lineage
from .read_datasets import dataset_facets, datasets_page, render_dataset, versions_page
from .read_events import lineage_events
from .read_jobs import jobs_page, namespaces_page, render_job
from .read_lineage import check_node, lineage
from .read_runs import job_runs, render_run
from .reply import (
    Reply,
    ReplyError,
    dataset_not_found,
    invalid,
    jersey_page,
    job_not_found,
    namespace_not_found,
    not_found,
    ok,
    run_not_found,
)
from .store import Store


class BadParam(Exception):
    """A parameter Jersey cannot convert: 404."""


def int_param(query: Mapping[str, str], name: str, default: int) -> int:
    text = query.get(name)
    if text is None:
        return default
    digits = text.lstrip("+-")
    if not digits.isascii() or not digits.isdigit():
        raise BadParam(name)
    return int(text)


def page(query: Mapping[str, str]) -> tuple[int, int]:
    """limit (default 100) and offset (default 0), both @Min(0)."""
    limit, offset = int_param(query, "limit", 100), int_param(query, "offset", 0)
    problems = [
        f"query param {name} must be greater than or equal to 0"
        for name, value in (("limit", limit), ("offset", offset))
        if value < 0
    ]
    if problems:
        raise ReplyError(invalid(*problems, status=400))
    return limit, offset


def get(store: Store, rest: list[str], query: Mapping[str, str]) -> Reply:
    """GET /api/v1/<rest...>."""
    if rest == ["lineage"]:
        node = _node(query)
        check_node(store, node)
        return ok(lineage(store, node, int_param(query, "depth", 20)))
    if rest == ["column-lineage"]:
        return _column_lineage(store, query)
    if rest == ["events", "lineage"]:
        return lineage_events(store, query, int_param(query, "limit", 100), int_param(query, "offset", 0))
    if rest == ["namespaces"]:
        limit, offset = page(query)
        return ok({"namespaces": namespaces_page(store, limit, offset)})
    if len(rest) == 3 and rest[:2] == ["jobs", "runs"]:
        return _run(store, rest[2])
    if len(rest) >= 2 and rest[0] == "namespaces":
        return _namespaced(store, rest[1], rest[2:], query)
    return not_found()


def known(rest: list[str]) -> bool:
    """A path of a GET resource (another method gets Jersey's 405)."""
    if rest in (["lineage"], ["column-lineage"], ["events", "lineage"], ["namespaces"]):
        return True
    if len(rest) == 3 and rest[:2] == ["jobs", "runs"]:
        return True
    shapes = ([], ["jobs"], ["datasets"], ["jobs", "*"], ["datasets", "*"], ["jobs", "*", "runs"])
    tail = ["*" if index == 1 else part for index, part in enumerate(rest[2:])]
    return len(rest) >= 2 and rest[0] == "namespaces" and (tail in shapes or tail == ["datasets", "*", "versions"])


def _node(query: Mapping[str, str]) -> NodeId:
    if query.get("nodeId") is None:
        raise ReplyError(invalid("query param nodeId must not be null", status=400))
    node = node_id(query["nodeId"])
    if node is None:
        raise BadParam("nodeId")
    return node


def _column_lineage(store: Store, query: Mapping[str, str]) -> Reply:
    node = _node(query)
    depth = int_param(query, "depth", 20)
    downstream = query.get("withDownstream", "false").lower() == "true"
    if node.has_version() and downstream:
        message = "Node version cannot be specified when withDownstream is true"
        return jersey_page(400, "/api/v1/column-lineage", message)
    return ok(column_lineage(store, node, depth, downstream))


def _run(store: Store, text: str) -> Reply:
    try:
        key = java_uuid(text)
    except ValueError:
        raise BadParam("id") from None
    run = store.t.runs.get(key)
    return ok(render_run(store, run)) if run else run_not_found(str(key))


def _namespace_exists(store: Store, namespace: str) -> None:
    if namespace not in store.t.namespaces:
        raise ReplyError(namespace_not_found(namespace))


def _namespaced(store: Store, namespace: str, rest: list[str], query: Mapping[str, str]) -> Reply:
    if not valid_namespace(namespace) or (len(rest) > 1 and blank(rest[1])):
        raise BadParam("namespace")
    if rest == []:
        _namespace_exists(store, namespace)
        everything = namespaces_page(store, len(store.t.namespaces), 0)
        return ok(next(item for item in everything if item["name"] == namespace))
    if rest == ["jobs"]:
        limit, offset = page(query)
        return ok(jobs_page(store, namespace, limit, offset))
    if rest == ["datasets"]:
        limit, offset = page(query)
        _namespace_exists(store, namespace)
        datasets, total = datasets_page(store, namespace, limit, offset)
        for item in datasets:
            _with_column_lineage(store, item)
        return ok({"totalCount": total, "datasets": datasets})
    if len(rest) in (2, 3) and rest[0] == "jobs" and rest[2:] in ([], ["runs"]):
        return _job(store, namespace, rest[1], len(rest) == 3, query)
    if len(rest) in (2, 3) and rest[0] == "datasets" and rest[2:] in ([], ["versions"]):
        return _dataset(store, namespace, rest[1], rest[2:] == ["versions"], query)
    return not_found()


def _with_column_lineage(store: Store, item: dict[str, Any]) -> None:
    dataset = store.dataset_view(item["namespace"], item["name"])
    if dataset is not None:
        item["columnLineage"] = dataset_column_lineage(store, dataset, item["namespace"], item["name"])


def _job(store: Store, namespace: str, name: str, runs: bool, query: Mapping[str, str]) -> Reply:
    _namespace_exists(store, namespace)
    job = store.job_named(namespace, name)
    if job is None:
        return job_not_found(name)
    if not runs:
        return ok(render_job(store, job, single=True))
    limit, offset = page(query)
    listed = [render_run(store, run) for run in job_runs(store, job.uuid)[offset : offset + limit]]
    total = sum(1 for run in store.t.runs.values() if (run.namespace_name, run.job_name) == (namespace, name))
    return ok({"runs": listed, "totalCount": total})


def _dataset(store: Store, namespace: str, name: str, versions: bool, query: Mapping[str, str]) -> Reply:
    _namespace_exists(store, namespace)
    dataset = store.dataset_view(namespace, name)
    if dataset is None:
        return dataset_not_found(name)
    if versions:
        limit, offset = int_param(query, "limit", 100), int_param(query, "offset", 0)
        return ok(versions_page(store, namespace, name, limit, offset))
    body = render_dataset(store, dataset, namespace, name, dataset_facets(store, dataset, namespace, name))
    body["columnLineage"] = dataset_column_lineage(store, dataset, namespace, name)
    return ok(body)
