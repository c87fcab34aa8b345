"""The HTML lineage report: one self-contained file (no CDN, no network), works offline.

Python lays the graph out (layers from ``networkx.topological_generations``, left to right, and
the same turned top to bottom for narrow windows) and embeds it as JSON; the inline script
(``assets/report.js``) draws jobs (square boxes with a gear) and datasets (cylinders) as SVG,
fits the whole graph to the window, zooms (wheel, +/-), pans (drag), finds nodes by name, opens a
node's details (click, or Tab and Enter) and, on demand, its column lineage (also by link:
``report.html#node=<id>&columns=1``). The contract result, if any, is a table.
After drawing, the script sets ``data-rendered`` (nodes drawn) and what it measured (viewport,
boxes, smallest font, text that does not fit) on ``<body>``; script errors are collected in
``data-errors``, so a headless browser can check the page.
"""

from __future__ import annotations

import html
import json
import re
from collections.abc import Mapping
from importlib import resources
from pathlib import Path
from typing import TYPE_CHECKING, Any

from emr_lineage.lineage.graph.model import COLUMN_EDGE_ORDER, LineageGraph
from emr_lineage.lineage.report.folding import fold, labels

if TYPE_CHECKING:  # contracts (and YAML) are imported by the commands that read them
    from emr_lineage.lineage.contracts.check import ContractResult

NODE_WIDTH = 190
NODE_HEIGHT = 56
LAYER_GAP = 44  # between consecutive layers (columns left to right, or rows top to bottom)
ROW_GAP = 20  # between the nodes of one layer
MARGIN = 16


def _slots(graph: LineageGraph) -> dict[str, tuple[int, float]]:
    """Layer and row of each node, each layer's rows centred on the longest layer."""
    layers = graph.layers()
    longest = max((len(members) for members in layers), default=0)
    return {
        node_id: (layer, row + (longest - len(members)) / 2)
        for layer, members in enumerate(layers)
        for row, node_id in enumerate(members)
    }


def layout(graph: LineageGraph, vertical: bool = False) -> dict[str, tuple[int, int]]:
    """Top-left corner of each node: one column per topological layer (left to right), rows sorted
    by id; ``vertical`` turns it a quarter (one row per layer, top to bottom) for narrow windows."""
    across, along = (NODE_HEIGHT, NODE_WIDTH) if vertical else (NODE_WIDTH, NODE_HEIGHT)
    positions: dict[str, tuple[int, int]] = {}
    for node_id, (layer, row) in _slots(graph).items():
        first = MARGIN + layer * (across + LAYER_GAP)
        second = MARGIN + round(row * (along + ROW_GAP))
        positions[node_id] = (second, first) if vertical else (first, second)
    return positions


def _extent(positions: Mapping[str, tuple[int, int]]) -> tuple[int, int]:
    width = max((x for x, _ in positions.values()), default=MARGIN) + NODE_WIDTH + MARGIN
    height = max((y for _, y in positions.values()), default=MARGIN) + NODE_HEIGHT + MARGIN
    return width, height


def report_data(
    graph: LineageGraph, result: ContractResult | None = None, drift: Mapping[str, list[Any]] | None = None
) -> dict[str, Any]:
    """What the page's script draws: positioned nodes (``x``/``y`` left to right, ``vx``/``vy`` top
    to bottom: the script picks the one that fits its window), edges, column edges, contract result,
    and the schema changes of each dataset (dataset node id -> changes, as ``emr-lineage drift
    --format json`` lists them) when the caller had the events to work them out. A Spark ML model saved
    as many datasets is one node with its ``parts``, and no two datasets share a label without the path
    part that tells them apart (:mod:`emr_lineage.lineage.report.folding`). Labels are whole: the script
    shortens what does not fit its node (the full name stays in its tooltip and panel)."""
    folded = fold(graph)
    graph = folded.graph
    across, down = layout(graph), layout(graph, vertical=True)
    titles = labels(graph.nodes)
    nodes = []
    for node_id in sorted(graph.nodes):
        attrs = graph.nodes[node_id]
        (x, y), (vx, vy) = across[node_id], down[node_id]
        nodes.append(
            {
                **attrs,
                "x": x,
                "y": y,
                "vx": vx,
                "vy": vy,
                "label": titles[node_id] or attrs["name"],
                "sublabel": attrs["namespace"],
            }
        )
    (width, height), (vwidth, vheight) = _extent(across), _extent(down)
    return {
        "level": graph.level,
        "source": graph.source,
        "size": {
            "width": width,
            "height": height,
            "vwidth": vwidth,
            "vheight": vheight,
            "node_width": NODE_WIDTH,
            "node_height": NODE_HEIGHT,
        },
        "nodes": nodes,
        "edges": [{"source": s, "target": t} for s, t in graph.edges()],
        "columnEdges": sorted(graph.column_edges, key=COLUMN_EDGE_ORDER),
        "contract": result.as_dict() if result is not None else None,
        "drift": _folded_drift(drift, folded.into) if drift is not None else None,
    }


def _folded_drift(drift: Mapping[str, list[Any]], into: Mapping[str, str]) -> dict[str, list[Any]]:
    """The schema changes by node as drawn: a saved model's are its parts', in time order."""
    changes: dict[str, list[Any]] = {}
    for node_id, found in drift.items():
        changes.setdefault(into.get(node_id, node_id), []).extend(found)
    models = set(into.values())
    return {
        node_id: sorted(found, key=lambda change: str(change.get("time") or "")) if node_id in models else found
        for node_id, found in changes.items()
    }


_BREAK_AFTER = re.compile(r"([/._:\-,=])(?=\S)")


def _wrappable(text: str) -> str:
    """Escaped ``text`` with a line-break opportunity (``<wbr>``) after each separator, so that a long
    URI wraps at ``/``, ``.``, ``_``, ... rather than mid-word or not at all."""
    return _BREAK_AFTER.sub(r"\1<wbr>", html.escape(text))


def _contract_html(result: ContractResult | None) -> str:
    if result is None:
        return '<p class="muted">No contract was checked.</p>'
    status = "matches" if result.ok else f"{len(result.differences)} difference(s)"
    css = "ok" if result.ok else "bad"
    rows = []
    for row in result.missing + result.unexpected + result.optional_missing:
        cells = "".join(
            f"<td>{_wrappable(v)}</td>" for v in (row.status, row.job, row.direction, row.dataset, row.hint)
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


# Search, zoom and the legend: the job and dataset shapes are the ones the script draws (report.js).
_TOOLBAR = (
    "<div class='toolbar'><input type='search' id='search' placeholder='Find a job or dataset (/)' "
    "aria-label='Find a job or dataset by name; Enter shows the first match' autocomplete='off'>"
    "<span id='search-count' class='muted' aria-live='polite'></span>"
    "<button type='button' id='zoom-out' title='Zoom out (-)' aria-label='Zoom out'>\u2212</button>"
    "<button type='button' id='zoom-in' title='Zoom in (+)' aria-label='Zoom in'>+</button>"
    "<button type='button' id='zoom-fit' title='Fit the whole graph (0)'>Fit</button>"
    "<span class='legend' aria-label='Legend'>"
    "<span><svg width='26' height='18' aria-hidden='true'><rect class='shape job' x='1' y='2' width='24' height='14'/>"
    "</svg>job</span>"
    "<span><svg width='26' height='18' aria-hidden='true'><path class='shape dataset' "
    "d='M1,5 A12,3 0 0 1 25,5 V13 A12,3 0 0 1 1,13 Z M1,5 A12,3 0 0 0 25,5'/></svg>dataset</span>"
    "<span><svg width='26' height='18' aria-hidden='true'><path class='edge' d='M2,9 H24'/></svg>reads/writes</span>"
    "</span></div>"
)


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
        f"<body><header><div class='heading'><h1>{html.escape(title)}</h1><p id='summary'></p></div>\n"
        f"{_TOOLBAR}</header>\n"
        "<main><div id='canvas' aria-label='Lineage graph: Tab moves between jobs and datasets, Enter opens one; "
        "drag to pan, wheel or + and - to zoom, 0 to fit'></div>"
        "<aside id='details' aria-live='polite'><p class='muted'>Click a job or dataset (or Tab to it and press "
        "Enter) for its details, column lineage, impact and schema changes.</p></aside></main>\n"
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
