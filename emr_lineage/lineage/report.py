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
from pathlib import Path
from typing import Any

from emr_lineage.lineage.contract_check import ContractResult
from emr_lineage.lineage.graph import LineageGraph

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


def report_data(graph: LineageGraph, result: ContractResult | None = None) -> dict[str, Any]:
    """What the page's script draws: positioned nodes, edges, column edges, contract result."""
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
        "columnEdges": sorted(graph.column_edges, key=lambda e: (e["source"], e["target"], e["transformation"])),
        "contract": result.as_dict() if result is not None else None,
    }


def _contract_html(result: ContractResult | None) -> str:
    if result is None:
        return '<p class="muted">No contract was checked.</p>'
    status = "matches" if result.ok else f"{len(result.differences)} difference(s)"
    css = "ok" if result.ok else "bad"
    rows = []
    for row in result.missing + result.unexpected + result.optional_missing:
        rows.append(
            f"<tr class='{html.escape(row.status)}'><td>{html.escape(row.status)}</td><td>{html.escape(row.job)}</td><td>{html.escape(row.direction)}</td><td>{html.escape(row.dataset)}</td><td>{html.escape(row.hint)}</td></tr>"
        )
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


_STYLE = """
body{font-family:system-ui,-apple-system,Segoe UI,Helvetica,Arial,sans-serif;margin:0;color:#1f2937;background:#f8fafc}
header{padding:12px 20px;background:#0f172a;color:#f8fafc}header h1{font-size:18px;margin:0}
header p{margin:4px 0 0;font-size:12px;color:#cbd5e1}
main{display:flex;gap:12px;padding:12px 20px;align-items:flex-start}
#canvas{flex:1;overflow:auto;background:#fff;border:1px solid #e2e8f0;border-radius:6px;max-height:75vh}
#details{width:320px;background:#fff;border:1px solid #e2e8f0;border-radius:6px;padding:10px;font-size:12px;word-break:break-all}
.node rect{stroke-width:1.5;rx:8;ry:8;cursor:pointer}.node.job rect{fill:#dbeafe;stroke:#1d4ed8}
.node.dataset rect{fill:#dcfce7;stroke:#15803d}.node.selected rect{stroke-width:3;stroke:#b91c1c}
.node text{font-size:11px;pointer-events:none}.node text.sub{fill:#64748b;font-size:9px}
.edge{fill:none;stroke:#94a3b8;stroke-width:1.4}.edge.hot{stroke:#b91c1c;stroke-width:2.2}
section{padding:0 20px 16px}table{border-collapse:collapse;font-size:12px;background:#fff}
td,th{border:1px solid #e2e8f0;padding:4px 8px;text-align:left;vertical-align:top}
tr.missing td:first-child{color:#b91c1c;font-weight:600}tr.unexpected td:first-child{color:#b45309;font-weight:600}
.ok{color:#15803d}.bad{color:#b91c1c}.muted{color:#64748b}button{font-size:12px;margin:4px 0}
"""


_SCRIPT = r"""
(function () {
  "use strict";
  var errors = [];
  window.addEventListener("error", function (e) {
    errors.push(String(e.message));
    document.body.setAttribute("data-errors", errors.join(" | "));
  });
  var data = JSON.parse(document.getElementById("lineage-data").textContent);
  var NS = "http://www.w3.org/2000/svg";
  var W = data.size.node_width, H = data.size.node_height;
  var byId = {};
  data.nodes.forEach(function (n) { byId[n.id] = n; });
  function el(name, attrs, parent) {
    var e = document.createElementNS(NS, name);
    Object.keys(attrs).forEach(function (k) { e.setAttribute(k, attrs[k]); });
    if (parent) { parent.appendChild(e); }
    return e;
  }
  var svg = el("svg", {width: data.size.width, height: data.size.height, id: "graph",
                       viewBox: "0 0 " + data.size.width + " " + data.size.height});
  el("path", {d: "M0,0 L8,4 L0,8 z", fill: "#94a3b8"},
     el("marker", {id: "arrow", markerWidth: 8, markerHeight: 8, refX: 8, refY: 4, orient: "auto"},
        el("defs", {}, svg)));
  var edgeEls = [];
  data.edges.forEach(function (edge) {
    var s = byId[edge.source], t = byId[edge.target];
    var x1 = s.x + W, y1 = s.y + H / 2, x2 = t.x, y2 = t.y + H / 2, dx = Math.max(40, (x2 - x1) / 2);
    var p = el("path", {"class": "edge", "marker-end": "url(#arrow)",
                        d: "M" + x1 + "," + y1 + " C" + (x1 + dx) + "," + y1 + " " + (x2 - dx) + "," + y2 + " " + x2 + "," + y2,
                        "data-source": edge.source, "data-target": edge.target}, svg);
    edgeEls.push(p);
  });
  var details = document.getElementById("details");
  function text(tag, content, parent) {
    var e = document.createElement(tag);
    e.textContent = content;
    parent.appendChild(e);
    return e;
  }
  function fieldPrefix(node) { return "datasetField:" + node.namespace + ":" + node.name + ":"; }
  function showColumns(node, box) {
    var prefix = fieldPrefix(node);
    var rows = data.columnEdges.filter(function (c) {
      return c.target.indexOf(prefix) === 0 || c.source.indexOf(prefix) === 0;
    });
    box.textContent = "";
    if (!rows.length) { text("p", "No column lineage for this dataset.", box); return; }
    var ul = document.createElement("ul");
    ul.className = "columns";
    rows.forEach(function (c) {
      text("li", c.source.slice("datasetField:".length) + " \u2192 " + c.target.slice("datasetField:".length) +
           (c.transformation ? " (" + c.transformation + ")" : ""), ul);
    });
    box.appendChild(ul);
  }
  function select(node) {
    Array.prototype.forEach.call(document.querySelectorAll(".node"), function (g) {
      g.classList.toggle("selected", g.getAttribute("data-node-id") === node.id);
    });
    edgeEls.forEach(function (p) {
      var hot = p.getAttribute("data-source") === node.id || p.getAttribute("data-target") === node.id;
      p.classList.toggle("hot", hot);
    });
    var g = document.querySelector('.node[data-node-id="' + CSS.escape(node.id) + '"]');
    if (g && g.scrollIntoView) { g.scrollIntoView({block: "nearest", inline: "center"}); }
    details.textContent = "";
    text("h3", node.type + ": " + node.name, details);
    text("p", "id: " + node.id, details);
    if (node.type === "JOB") {
      if (node.actions && node.actions.length) {
        text("p", "Spark actions folded in (" + node.actions.length + "):", details);
        var ul = document.createElement("ul");
        node.actions.forEach(function (a) { text("li", a, ul); });
        details.appendChild(ul);
      }
      if (node.states && node.states.length) { text("p", "run states: " + node.states.join(", "), details); }
      return;
    }
    (node.aliases || []).forEach(function (a) { text("p", "alias: " + a.namespace + " / " + a.name + " (" + a.type + ")", details); });
    if (node.fields && node.fields.length) {
      text("p", "fields: " + node.fields.map(function (f) { return f.name + (f.type ? ":" + f.type : ""); }).join(", "), details);
    }
    var button = text("button", "Show column lineage", details);
    button.id = "show-columns";
    var box = document.createElement("div");
    details.appendChild(box);
    button.addEventListener("click", function () { showColumns(node, box); });
  }
  var drawn = 0;
  data.nodes.forEach(function (n) {
    var g = el("g", {"class": "node " + n.type.toLowerCase(), "data-node-id": n.id,
                     transform: "translate(" + n.x + "," + n.y + ")"}, svg);
    el("title", {}, g).textContent = n.id;
    el("rect", {width: W, height: H}, g);
    el("text", {x: 10, y: 19}, g).textContent = n.label;
    el("text", {x: 10, y: 35, "class": "sub"}, g).textContent = (n.type === "JOB" ? "job \u00b7 " : "dataset \u00b7 ") + n.sublabel;
    g.addEventListener("click", function () { select(n); });
    drawn += 1;
  });
  var canvas = document.getElementById("canvas");
  canvas.appendChild(svg);
  // Wide graphs shrink to the panel (down to 60%), beyond that the panel scrolls.
  var room = canvas.clientWidth - 4;
  if (room > 0 && data.size.width > room) {
    var width = Math.max(room, data.size.width * 0.6);
    svg.setAttribute("width", width);
    svg.setAttribute("height", data.size.height * width / data.size.width);
  }
  document.getElementById("summary").textContent =
    data.nodes.filter(function (n) { return n.type === "JOB"; }).length + " jobs, " +
    data.nodes.filter(function (n) { return n.type === "DATASET"; }).length + " datasets, " +
    data.edges.length + " edges, " + data.columnEdges.length + " column edges (" + data.level + " level, from " + data.source + ")";
  // Deep link: report.html#node=<id>&columns=1 selects a node (and shows its column lineage).
  var params = new URLSearchParams(window.location.hash.slice(1));
  if (params.get("node") && byId[params.get("node")]) {
    select(byId[params.get("node")]);
    var button = document.getElementById("show-columns");
    if (params.get("columns") === "1" && button) { button.click(); }
  }
  document.body.setAttribute("data-rendered", String(drawn));
})();
"""


def render_html(graph: LineageGraph, result: ContractResult | None = None, title: str = "Lineage report") -> str:
    """The report as one HTML string (inline CSS, JS and data; nothing fetched)."""
    payload = json.dumps(report_data(graph, result), sort_keys=True)
    # Keep the JSON inside its <script> element whatever the dataset names contain.
    payload = payload.replace("<", "\\u003c").replace(">", "\\u003e").replace("&", "\\u0026")
    return (
        "<!DOCTYPE html>\n<html lang='en'><head><meta charset='utf-8'>"
        "<meta http-equiv='Content-Security-Policy' content=\"default-src 'none'; "
        "style-src 'unsafe-inline'; script-src 'unsafe-inline'; img-src data:\">"
        f"<title>{html.escape(title)}</title><style>{_STYLE}</style></head>\n"
        f"<body><header><h1>{html.escape(title)}</h1><p id='summary'></p></header>\n"
        "<main><div id='canvas'></div><aside id='details'><p class='muted'>Click a job or dataset "
        "for its details and column lineage.</p></aside></main>\n"
        f"<section><h2>Contract</h2>{_contract_html(result)}</section>\n"
        f"<script type='application/json' id='lineage-data'>{payload}</script>\n"
        f"<script>{_SCRIPT}</script>\n</body></html>\n"
    )


def write_html(
    path: str | Path, graph: LineageGraph, result: ContractResult | None = None, title: str = "Lineage report"
) -> Path:
    """Write the self-contained HTML report to ``path`` (parent directories created)."""
    target = Path(path)
    target.parent.mkdir(parents=True, exist_ok=True)
    target.write_text(render_html(graph, result, title), encoding="utf-8")
    return target
