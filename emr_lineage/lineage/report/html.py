"""The HTML lineage report: one self-contained file (no CDN, no network), works offline.

Python lays the graph out (left-to-right layers from ``networkx.topological_generations``)
and embeds it as JSON; a little inline JavaScript draws the nodes and edges as SVG, shows a
node's details and, on demand, its column lineage (also by link: ``report.html#node=<id>&columns=1``).
The contract result, if any, is a table.
After drawing, the script sets ``data-rendered`` (nodes drawn) on ``<body>``; script errors
are collected in ``data-errors``, so a headless browser can check the page.
"""

from __future__ import annotations

import html
import json
from collections.abc import Mapping
from importlib import resources
from pathlib import Path
from typing import TYPE_CHECKING, Any

from emr_lineage.lineage.graph.model import COLUMN_EDGE_ORDER, LineageGraph

if TYPE_CHECKING:  # contracts (and YAML) are imported by the commands that read them
    from emr_lineage.lineage.contracts.check import ContractResult

NODE_WIDTH = 210
NODE_HEIGHT = 46
COLUMN_GAP = 80
ROW_GAP = 26
MARGIN = 20


def layout(graph: LineageGraph) -> dict[str, tuple[int, int]]:
    """Top-left corner of each node: one column per topological layer, rows sorted by id."""
    positions: dict[str, tuple[int, int]] = {}
    for column, members in enumerate(graph.layers()):
        for row, node_id in enumerate(members):
            positions[node_id] = (
                MARGIN + column * (NODE_WIDTH + COLUMN_GAP),
                MARGIN + row * (NODE_HEIGHT + ROW_GAP),
            )
    return positions


def _short(text: str, limit: int = 34) -> str:
    return text if len(text) <= limit else "\u2026" + text[-(limit - 1) :]


def report_data(
    graph: LineageGraph, result: ContractResult | None = None, drift: Mapping[str, list[Any]] | None = None
) -> dict[str, Any]:
    """What the page's script draws: positioned nodes, edges, column edges, contract result, and
    the schema changes of each dataset (dataset node id -> changes, as ``emr-lineage drift
    --format json`` lists them) when the caller had the events to work them out."""
    positions = layout(graph)
    nodes = []
    for node_id in sorted(graph.nodes):
        attrs = graph.nodes[node_id]
        x, y = positions[node_id]
        title = attrs["name"] if attrs["type"] == "JOB" else attrs["name"].rstrip("/").rsplit("/", 1)[-1]
        nodes.append(
            {
                **attrs,
                "x": x,
                "y": y,
                "label": _short(title or attrs["name"]),
                "sublabel": _short(attrs["namespace"]),
            }
        )
    width = max((x for x, _ in positions.values()), default=0) + NODE_WIDTH + MARGIN
    height = max((y for _, y in positions.values()), default=0) + NODE_HEIGHT + MARGIN
    return {
        "level": graph.level,
        "source": graph.source,
        "size": {"width": width, "height": height, "node_width": NODE_WIDTH, "node_height": NODE_HEIGHT},
        "nodes": nodes,
        "edges": [{"source": s, "target": t} for s, t in graph.edges()],
        "columnEdges": sorted(graph.column_edges, key=COLUMN_EDGE_ORDER),
        "contract": result.as_dict() if result is not None else None,
        "drift": dict(drift) if drift is not None else None,
    }


def _contract_html(result: ContractResult | None) -> str:
    if result is None:
        return '<p class="muted">No contract was checked.</p>'
    status = "matches" if result.ok else f"{len(result.differences)} difference(s)"
    css = "ok" if result.ok else "bad"
    rows = []
    for row in result.missing + result.unexpected + result.optional_missing:
        cells = "".join(
            f"<td>{html.escape(v)}</td>" for v in (row.status, row.job, row.direction, row.dataset, row.hint)
        )
        rows.append(f"<tr class='{html.escape(row.status)}'>{cells}</tr>")
    table = (
        "<table id='contract-table'><thead><tr><th>status</th><th>job</th><th>direction</th>"
        "<th>dataset</th><th>hint</th></tr></thead><tbody>" + "".join(rows) + "</tbody></table>"
        if rows
        else ""
    )
    hints = "".join(f"<li>{html.escape(h)}</li>" for h in result.hints)
    return (
        f"<p id='contract-status' class='{css}'>Contract <code>{html.escape(result.contract)}</code>: "
        f"<strong>{status}</strong> ({len(result.matched)} edge(s) matched)</p>"
        + table
        + (f"<ul class='hints'>{hints}</ul>" if hints else "")
    )


# The page's style and script are plain files beside this module (package data), inlined into
# every report so that it fetches nothing.
_ASSETS = resources.files("emr_lineage.lineage.report") / "assets"
_STYLE = (_ASSETS / "report.css").read_text(encoding="utf-8")
_SCRIPT = (_ASSETS / "report.js").read_text(encoding="utf-8")


def render_html(
    graph: LineageGraph,
    result: ContractResult | None = None,
    title: str = "Lineage report",
    drift: Mapping[str, list[Any]] | None = None,
) -> str:
    """The report as one HTML string (inline CSS, JS and data; nothing fetched)."""
    payload = json.dumps(report_data(graph, result, drift), sort_keys=True)
    # Keep the JSON inside its <script> element whatever the dataset names contain.
    payload = payload.replace("<", "\\u003c").replace(">", "\\u003e").replace("&", "\\u0026")
    return (
        "<!DOCTYPE html>\n<html lang='en'><head><meta charset='utf-8'>"
        "<meta http-equiv='Content-Security-Policy' content=\"default-src 'none'; "
        "style-src 'unsafe-inline'; script-src 'unsafe-inline'; img-src data:\">"
        f"<title>{html.escape(title)}</title><style>{_STYLE}</style></head>\n"
        f"<body><header><h1>{html.escape(title)}</h1><p id='summary'></p></header>\n"
        "<main><div id='canvas'></div><aside id='details'><p class='muted'>Click a job or dataset "
        "for its details, column lineage, impact and schema changes.</p></aside></main>\n"
        f"<section><h2>Contract</h2>{_contract_html(result)}</section>\n"
        f"<script type='application/json' id='lineage-data'>{payload}</script>\n"
        f"<script>{_SCRIPT}</script>\n</body></html>\n"
    )


def write_html(
    path: str | Path,
    graph: LineageGraph,
    result: ContractResult | None = None,
    title: str = "Lineage report",
    drift: Mapping[str, list[Any]] | None = None,
) -> Path:
    """Write the self-contained HTML report to ``path`` (parent directories created)."""
    target = Path(path)
    target.parent.mkdir(parents=True, exist_ok=True)
    target.write_text(render_html(graph, result, title, drift), encoding="utf-8")
    return target
