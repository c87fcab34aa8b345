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
    showImpact(node, details);
    showDrift(node, details);
  }
  // Impact: what a change to this dataset reaches downstream (jobs and datasets, by distance).
  var downstream = {};
  data.edges.forEach(function (e) { (downstream[e.source] = downstream[e.source] || []).push(e.target); });
  function showImpact(node, parent) {
    var distance = {}, queue = [node.id], reached = [];
    distance[node.id] = 0;
    while (queue.length) {
      var id = queue.shift();
      (downstream[id] || []).forEach(function (next) {
        if (!(next in distance)) { distance[next] = distance[id] + 1; queue.push(next); reached.push(next); }
      });
    }
    var section = document.createElement("div");
    section.className = "impact";
    parent.appendChild(section);
    text("h4", "Impact downstream", section);
    if (!reached.length) { text("p", "Nothing reads this dataset in this graph.", section); return; }
    var ul = document.createElement("ul");
    reached.forEach(function (id) {
      var n = byId[id];
      text("li", distance[id] + " \u00b7 " + (n.type === "JOB" ? "job " : "dataset ") + n.namespace + ":" + n.name, ul);
    });
    section.appendChild(ul);
  }
  // Schema drift: the changes between the schema versions runs reported (from the events).
  function showDrift(node, parent) {
    var section = document.createElement("div");
    section.className = "drift";
    parent.appendChild(section);
    text("h4", "Schema changes", section);
    if (!data.drift) { text("p", "Not in this report (made without its events).", section); return; }
    var changes = data.drift[node.id] || [];
    if (!changes.length) { text("p", "No schema change in these events.", section); return; }
    var ul = document.createElement("ul");
    changes.forEach(function (c) {
      var parts = c.added.map(function (f) { return "+" + f.name + " " + f.type; })
        .concat(c.removed.map(function (f) { return "-" + f.name + " " + f.type; }))
        .concat(c.retyped.map(function (f) { return "~" + f.name + " " + f.from + "\u2192" + f.to; }));
      text("li", (c.time || "?") + " " + c.job + ": " + parts.join(", "), ul);
    });
    section.appendChild(ul);
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
