"""Build a :class:`LineageGraph` from Marquez lineage replies (``GET /api/v1/lineage``), and the
reply transformations a contract check needs (several start nodes merged, parent prefixes undone).
"""

from __future__ import annotations

import copy
from collections.abc import Mapping
from typing import Any

from emr_lineage.lineage.graph.model import GraphError, LineageGraph, check_level
from emr_lineage.lineage.naming import dataset_node_id, job_node_id
from emr_lineage.marquez.client import DEFAULT_DEPTH, MarquezClient, MarquezError


def _split_node_id(node_id: str) -> tuple[str, str, str]:
    """Best-effort ``(type, namespace, name)`` of a Marquez node id whose node is not given.

    Namespaces may contain ``:`` (``s3://b``, ``arn:aws:glue:r:a``); the name is what follows.
    """
    kind, _, rest = node_id.partition(":")
    if rest.startswith("arn:"):
        parts = rest.split(":", 6)
        return kind, ":".join(parts[:6]), parts[6] if len(parts) > 6 else ""
    if "://" in rest:
        scheme, _, tail = rest.partition("://")
        authority, _, name = tail.partition(":")
        return kind, f"{scheme}://{authority}", name
    namespace, _, name = rest.partition(":")
    return kind, namespace, name


def graph_from_marquez(
    response: Mapping[str, Any], level: str = "application", column_lineage: Mapping[str, Any] | None = None
) -> LineageGraph:
    """Build the graph from Marquez's ``GET /api/v1/lineage`` reply (``{"graph": [...]}``).

    At the application level a job whose ``parentJobName`` is set is folded into its parent,
    as for events. ``column_lineage`` is an optional ``GET /api/v1/column-lineage`` reply.
    Raises :class:`GraphError` when the reply does not have Marquez's shape.
    """
    check_level(level)
    nodes = response.get("graph") if isinstance(response, Mapping) else None
    if not isinstance(nodes, list):
        raise GraphError("Marquez lineage reply has no 'graph' list")
    graph = LineageGraph(level=level, source="marquez")
    rename: dict[str, str] = {}
    by_id: dict[str, Mapping[str, Any]] = {}
    for node in nodes:
        if not isinstance(node, Mapping) or not isinstance(node.get("id"), str):
            raise GraphError("Marquez lineage node without an 'id'")
        by_id[node["id"]] = node

    for node_id, node in by_id.items():
        data = node.get("data") or {}
        kind, id_ns, id_name = _split_node_id(node_id)
        namespace = data.get("namespace") or (data.get("id") or {}).get("namespace") or id_ns
        name = data.get("name") or (data.get("id") or {}).get("name") or id_name
        if node.get("type") == "JOB":
            parent = data.get("parentJobName")
            if level == "application" and parent:
                target = graph.add_job(namespace, parent)
                graph.nodes[target]["actions"] = sorted({*graph.nodes[target]["actions"], name})
                rename[node_id] = target
                continue
            latest = data.get("latestRun") or {}
            graph.add_job(
                namespace, name, runs=1 if latest else 0, states=[latest["state"]] if latest.get("state") else []
            )
            rename[node_id] = job_node_id(namespace, name)
        elif node.get("type") == "DATASET":
            facets = data.get("facets") or {}
            identifiers = (facets.get("symlinks") or {}).get("identifiers") or []
            graph.add_dataset(
                namespace,
                name,
                aliases=sorted(
                    (
                        {"namespace": i.get("namespace", ""), "name": i.get("name", ""), "type": i.get("type", "")}
                        for i in identifiers
                    ),
                    key=lambda a: (a["namespace"], a["name"], a["type"]),
                ),
                fields=sorted(
                    ({"name": f.get("name", ""), "type": f.get("type") or ""} for f in data.get("fields") or ()),
                    key=lambda f: f["name"],
                ),
            )
            rename[node_id] = dataset_node_id(namespace, name)

    def resolve(node_id: str) -> str | None:
        if node_id in rename:
            return rename[node_id]
        kind, namespace, name = _split_node_id(node_id)
        if kind == "job":
            return graph.add_job(namespace, name)
        if kind == "dataset":
            return graph.add_dataset(namespace, name)
        return None

    for node in by_id.values():
        for edge in list(node.get("inEdges") or ()) + list(node.get("outEdges") or ()):
            if not isinstance(edge, Mapping):
                raise GraphError(f"Marquez lineage node {node['id']}: malformed edge")
            source, target = resolve(str(edge.get("origin"))), resolve(str(edge.get("destination")))
            if source and target and source != target:
                graph.add_edge(source, target)
    if column_lineage is not None:
        graph.column_edges = column_edges_from_marquez(column_lineage)
    return graph


def column_edges_from_marquez(response: Mapping[str, Any]) -> list[dict[str, Any]]:
    """Column edges of a ``GET /api/v1/column-lineage`` reply (DATASET_FIELD nodes)."""
    edges = set()
    for node in response.get("graph") or ():
        if node.get("type") != "DATASET_FIELD":
            continue
        transformation = (node.get("data") or {}).get("transformationType") or ""
        for edge in node.get("inEdges") or ():
            edges.add((edge["origin"], edge["destination"], transformation))
        for edge in node.get("outEdges") or ():
            edges.add((edge["origin"], edge["destination"], ""))
    return [{"source": s, "target": t, "transformation": x} for s, t, x in sorted(edges)]


def merged_lineage(
    client: MarquezClient, node_ids: list[str], depth: int = DEFAULT_DEPTH, missing_ok: bool = False
) -> dict[str, Any]:
    """One ``{"graph": [...]}`` reply for several start nodes (nodes de-duplicated by id).

    With ``missing_ok``, a start node Marquez does not know (HTTP 404) is skipped, so a
    contract job that never ran shows up as missing rather than as an error. The server is
    probed first (:meth:`MarquezClient.probe`): one that is not Marquez, where every node
    would be "unknown", raises :class:`~emr_lineage.marquez.client.NotMarquezError` instead.
    """
    client.probe()
    nodes: dict[str, Any] = {}
    for node_id in node_ids:
        try:
            reply = client.lineage(node_id, depth)
        except MarquezError as exc:
            if missing_ok and exc.status == 404:
                continue
            raise
        for node in reply["graph"]:
            if isinstance(node, Mapping) and "id" in node:
                nodes.setdefault(node["id"], node)
    return {"graph": [nodes[key] for key in sorted(nodes)]}


def parent_prefixed_job_name(job_name: str, parent_job_name: str) -> str:
    """The name Marquez stores for a job whose run has a parent facet: ``<parent job>.<job>``
    (OpenLineageDao), unless the name already starts with it. :func:`detach_parent_job` undoes it."""
    prefix = parent_job_name + "."
    return job_name if job_name.startswith(prefix) else prefix + job_name


def detach_parent_job(reply: Mapping[str, Any], parent_job_name: str) -> dict[str, Any]:
    """Undo Marquez's ``<parent>.`` prefix on the jobs run under ``parent_job_name``.

    Marquez stores a job whose run has a parent facet as ``<parent job>.<job>``
    (OpenLineageDao). Renaming ids, edges, names and ``parentJobName`` back gives the
    applications the names a contract uses, and their Spark actions still fold into them.
    """
    prefix = parent_job_name + "."

    def name(value: Any) -> Any:
        return value[len(prefix) :] if isinstance(value, str) and value.startswith(prefix) else value

    def node_id(value: Any) -> Any:
        if not isinstance(value, str) or not value.startswith("job:"):
            return value
        marker = value.find(":" + prefix, len("job"))
        return value if marker < 0 else value[: marker + 1] + value[marker + 1 + len(prefix) :]

    nodes = []
    for node in reply.get("graph", ()):
        node = copy.deepcopy(node)
        node["id"] = node_id(node["id"])
        for key in ("inEdges", "outEdges"):
            node[key] = [
                {**edge, "origin": node_id(edge.get("origin")), "destination": node_id(edge.get("destination"))}
                for edge in node.get(key) or ()
            ]
        data = node.get("data")
        if node.get("type") == "JOB" and isinstance(data, dict):
            data["name"] = name(data.get("name"))
            if isinstance(data.get("id"), dict):
                data["id"]["name"] = name(data["id"].get("name"))
            if data.get("parentJobName") == parent_job_name:
                data.pop("parentJobName")
                data.pop("parentJobUuid", None)
            else:
                data["parentJobName"] = name(data.get("parentJobName"))
        nodes.append(node)
    return {"graph": nodes}
