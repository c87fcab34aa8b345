(function () {
  "use strict";
  // Script errors are collected in the body's data-errors attribute, so a headless browser can check the page.
  var errors = [];
  window.addEventListener("error", function (e) {
    errors.push(String(e.message));
    document.body.setAttribute("data-errors", errors.join(" | "));
  });
  var data = JSON.parse(document.getElementById("lineage-data").textContent);
  var NS = "http://www.w3.org/2000/svg";
  var W = data.size.node_width, H = data.size.node_height;
  var READABLE = 12;              // px: the fit turns the graph top to bottom rather than draw smaller text
  var MAX_FIT = 1.25, MIN_ZOOM = 0.05, MAX_ZOOM = 4;
  var NARROW = window.matchMedia("(max-width: 899px)");
  var byId = {};
  data.nodes.forEach(function (n) { byId[n.id] = n; });
  // Tab order and search results follow the drawing: layer by layer, top to bottom.
  var ordered = data.nodes.slice().sort(function (a, b) { return a.x - b.x || a.y - b.y; });

  // ---- DOM helpers ----
  function el(name, attrs, parent) {
    var e = document.createElementNS(NS, name);
    Object.keys(attrs).forEach(function (k) { e.setAttribute(k, attrs[k]); });
    if (parent) { parent.appendChild(e); }
    return e;
  }
  // Text that wraps at separators: a <wbr> after each / . _ : - , = (long URIs break there, not mid-word).
  function wrappable(parent, content) {
    String(content).split(/(?<=[\/._:\-,=])(?=\S)/).forEach(function (part, i) {
      if (i) { parent.appendChild(document.createElement("wbr")); }
      parent.appendChild(document.createTextNode(part));
    });
    return parent;
  }
  function text(tag, content, parent) {
    var e = wrappable(document.createElement(tag), content);
    parent.appendChild(e);
    return e;
  }

  // ---- Drawing: edges under nodes, all in one <g id="scene"> that zoom and pan transform ----
  var header = document.querySelector("header");
  var canvas = document.getElementById("canvas");
  var details = document.getElementById("details");
  var svg = el("svg", {id: "graph"});
  var defs = el("defs", {}, svg);
  [["arrow", "#94a3b8"], ["arrow-hot", "#b91c1c"]].forEach(function (m) {
    el("path", {d: "M0,0 L10,5 L0,10 z", fill: m[1]},
       el("marker", {id: m[0], markerWidth: 10, markerHeight: 10, refX: 10, refY: 5, orient: "auto",
                     markerUnits: "userSpaceOnUse"}, defs));
  });
  var scene = el("g", {id: "scene"}, svg);
  var edgeLayer = el("g", {}, scene), nodeLayer = el("g", {}, scene);
  canvas.appendChild(svg);
  var edgeEls = data.edges.map(function (edge) {
    return el("path", {"class": "edge", "marker-end": "url(#arrow)",
                       "data-source": edge.source, "data-target": edge.target}, edgeLayer);
  });
  var nodeEls = {};

  // A job is a square-cornered box with a gear, a dataset a cylinder (the legend shows both).
  function shape(n, g) {
    if (n.type === "JOB") {
      el("rect", {"class": "shape", width: W, height: H}, g);
      el("circle", {"class": "gear", cx: W - 17, cy: 17, r: 7}, g);
      el("circle", {"class": "hub", cx: W - 17, cy: 17, r: 3}, g);
      return;
    }
    var rx = W / 2, ry = 6;
    el("path", {"class": "shape", d: "M0," + ry + " A" + rx + "," + ry + " 0 0 1 " + W + "," + ry + " V" + (H - ry) +
                " A" + rx + "," + ry + " 0 0 1 0," + (H - ry) + " Z"}, g);
    el("path", {"class": "lid", d: "M0," + ry + " A" + rx + "," + ry + " 0 0 0 " + W + "," + ry}, g);
  }
  // Shortens a label to `room` (user units) with an ellipsis; the full name is in the tooltip and panel.
  function fitText(t, full, room) {
    t.textContent = full;
    if (t.getComputedTextLength() <= room) { return; }
    var lo = 0, hi = full.length;
    while (lo < hi) {
      var mid = (lo + hi + 1) >> 1;
      t.textContent = full.slice(0, mid) + "\u2026";
      if (t.getComputedTextLength() <= room) { lo = mid; } else { hi = mid - 1; }
    }
    t.textContent = full.slice(0, lo) + "\u2026";
  }
  function drawNode(n) {
    var kind = n.type === "JOB" ? "job" : "dataset";
    var g = el("g", {"class": "node " + kind, "data-node-id": n.id, tabindex: 0, role: "button",
                     "aria-label": kind + " " + n.namespace + " " + n.name}, nodeLayer);
    el("title", {}, g).textContent = kind + " " + n.namespace + ":" + n.name + "\n" + n.id;
    shape(n, g);
    el("rect", {"class": "ring", x: -5, y: -5, width: W + 10, height: H + 10}, g);
    fitText(el("text", {x: 12, y: 27}, g), n.label, W - (kind === "job" ? 44 : 24));
    fitText(el("text", {x: 12, y: 46, "class": "sub"}, g), kind + " \u00b7 " + n.sublabel, W - 24);
    g.addEventListener("click", function () { openNode(n); });
    g.addEventListener("keydown", function (e) {
      if (e.key === "Enter" || e.key === " ") { e.preventDefault(); openNode(n); }
    });
    g.addEventListener("focus", function () { reveal(n, false); });
    nodeEls[n.id] = g;
  }

  // ---- Layout: left to right (x, y), or top to bottom (vx, vy) when that is what keeps text readable ----
  var vertical = false;
  function pos(n) { return vertical ? {x: n.vx, y: n.vy} : {x: n.x, y: n.y}; }
  function extent(down) {
    return down ? {w: data.size.vwidth, h: data.size.vheight} : {w: data.size.width, h: data.size.height};
  }
  function place() {
    data.nodes.forEach(function (n) {
      var p = pos(n);
      nodeEls[n.id].setAttribute("transform", "translate(" + p.x + "," + p.y + ")");
    });
    data.edges.forEach(function (edge, i) {
      var s = pos(byId[edge.source]), t = pos(byId[edge.target]), d;
      if (vertical) {
        var x1 = s.x + W / 2, y1 = s.y + H, x2 = t.x + W / 2, y2 = t.y, c = Math.max(30, (y2 - y1) / 2);
        d = "M" + x1 + "," + y1 + " C" + x1 + "," + (y1 + c) + " " + x2 + "," + (y2 - c) + " " + x2 + "," + y2;
      } else {
        var a1 = s.x + W, b1 = s.y + H / 2, a2 = t.x, b2 = t.y + H / 2, dx = Math.max(40, (a2 - a1) / 2);
        d = "M" + a1 + "," + b1 + " C" + (a1 + dx) + "," + b1 + " " + (a2 - dx) + "," + b2 + " " + a2 + "," + b2;
      }
      edgeEls[i].setAttribute("d", d);
    });
  }

  // ---- View: zoom k and offset (x, y) in canvas pixels ----
  var view = {k: 1, x: 0, y: 0}, fitted = true, smallestFont = 14;
  function apply() {
    scene.setAttribute("transform", "translate(" + view.x + "," + view.y + ") scale(" + view.k + ")");
  }
  function room() { return {w: canvas.clientWidth, h: canvas.clientHeight}; }
  function scaleFor(size, r) { return Math.min(r.w / size.w, r.h / size.h, MAX_FIT); }
  // Fit: the whole graph, centred, as large as fits (at most MAX_FIT).
  function fitView() {
    var r = room();
    if (r.w <= 0 || r.h <= 0) { return; }
    var across = scaleFor(extent(false), r), down = scaleFor(extent(true), r);
    // Top to bottom only where left to right is too small to read and that makes it readable (or far larger).
    var turn = across * smallestFont < READABLE && (down * smallestFont >= READABLE || down > 2 * across);
    if (turn !== vertical) { vertical = turn; place(); }
    var size = extent(vertical), k = vertical ? down : across;
    view = {k: k, x: (r.w - size.w * k) / 2, y: (r.h - size.h * k) / 2};
    fitted = true;
    apply();
  }
  // Zooms by `factor` keeping the canvas point (px, py) where it is.
  function zoomAt(factor, px, py) {
    var k = Math.min(MAX_ZOOM, Math.max(MIN_ZOOM, view.k * factor)), f = k / view.k;
    view = {k: k, x: px - (px - view.x) * f, y: py - (py - view.y) * f};
    fitted = false;
    apply();
  }
  function zoomCentre(factor) { var r = room(); zoomAt(factor, r.w / 2, r.h / 2); }
  // Pans so that a node is inside the canvas (`centre`: in its middle, zooming in if it is tiny).
  function reveal(n, centre) {
    var r = room(), p = pos(n), k = view.k;
    var left = view.x + p.x * k, top = view.y + p.y * k;
    if (!centre && left >= 0 && top >= 0 && left + W * k <= r.w && top + H * k <= r.h) { return; }
    if (centre && k * smallestFont < READABLE) { k = Math.min(MAX_ZOOM, READABLE / smallestFont); }
    view = {k: k, x: r.w / 2 - (p.x + W / 2) * k, y: r.h / 2 - (p.y + H / 2) * k};
    fitted = false;
    apply();
  }

  // ---- Mouse and keys: wheel zooms, drag pans, + - 0 zoom and fit, / finds ----
  function controls() {
    svg.addEventListener("wheel", function (e) {
      e.preventDefault();
      var b = svg.getBoundingClientRect();
      zoomAt(Math.exp(-e.deltaY * 0.0015), e.clientX - b.left, e.clientY - b.top);
    }, {passive: false});
    var drag = null, dragged = false;
    svg.addEventListener("pointerdown", function (e) {
      dragged = false;
      if (e.button === 0) { drag = {id: e.pointerId, x: e.clientX, y: e.clientY, vx: view.x, vy: view.y, moving: false}; }
    });
    svg.addEventListener("pointermove", function (e) {
      if (!drag || e.pointerId !== drag.id) { return; }
      var dx = e.clientX - drag.x, dy = e.clientY - drag.y;
      if (!drag.moving && Math.abs(dx) + Math.abs(dy) < 4) { return; }
      if (!drag.moving) {
        drag.moving = true;
        svg.classList.add("dragging");
        try { svg.setPointerCapture(e.pointerId); } catch (ignored) { /* a pointer the browser does not track */ }
      }
      view = {k: view.k, x: drag.vx + dx, y: drag.vy + dy};
      fitted = false;
      apply();
    });
    function endDrag() { if (drag) { dragged = drag.moving; drag = null; svg.classList.remove("dragging"); } }
    svg.addEventListener("pointerup", endDrag);
    svg.addEventListener("pointercancel", endDrag);
    // A drag that ends on a node does not open it.
    svg.addEventListener("click", function (e) { if (dragged) { e.stopPropagation(); dragged = false; } }, true);
    document.getElementById("zoom-in").addEventListener("click", function () { zoomCentre(1.25); });
    document.getElementById("zoom-out").addEventListener("click", function () { zoomCentre(0.8); });
    document.getElementById("zoom-fit").addEventListener("click", fitView);
    document.addEventListener("keydown", function (e) {
      var tag = (e.target.tagName || "").toLowerCase();
      if (tag === "input" || tag === "textarea" || e.ctrlKey || e.metaKey || e.altKey) { return; }
      if (e.key === "+" || e.key === "=") { zoomCentre(1.25); }
      else if (e.key === "-" || e.key === "_") { zoomCentre(0.8); }
      else if (e.key === "0") { fitView(); }
      else if (e.key === "/") { search.focus(); }
      else { return; }
      e.preventDefault();
    });
  }

  // ---- Search: matching nodes highlighted (the rest faded); Enter centres and opens the first ----
  var search = document.getElementById("search"), searchCount = document.getElementById("search-count");
  var matches = [];
  function runSearch() {
    var q = search.value.trim().toLowerCase();
    matches = !q ? [] : ordered.filter(function (n) {
      return (n.namespace + ":" + n.name + " " + n.label).toLowerCase().indexOf(q) >= 0;
    });
    svg.classList.toggle("searching", q !== "");
    data.nodes.forEach(function (n) { nodeEls[n.id].classList.toggle("match", matches.indexOf(n) >= 0); });
    searchCount.textContent = q ? matches.length + (matches.length === 1 ? " match" : " matches") : "";
  }
  search.addEventListener("input", runSearch);
  search.addEventListener("keydown", function (e) {
    if (e.key === "Enter") {
      e.preventDefault();
      runSearch();
      if (matches.length) {
        reveal(matches[0], true);
        select(matches[0]);
        nodeEls[matches[0].id].focus({preventScroll: true});
      }
    } else if (e.key === "Escape") { search.value = ""; runSearch(); }
  });

  // ---- Details panel ----
  function fieldPrefix(node, name) { return "datasetField:" + node.namespace + ":" + name + ":"; }
  // A saved model's column edges are its parts' (their field ids name the part).
  function fieldPrefixes(node) {
    return [fieldPrefix(node, node.name)].concat((node.parts || []).map(function (p) {
      return fieldPrefix(node, node.name + "/" + p.name);
    }));
  }
  function showColumns(node, box) {
    var prefixes = fieldPrefixes(node);
    function mine(id) { return prefixes.some(function (prefix) { return id.indexOf(prefix) === 0; }); }
    var rows = data.columnEdges.filter(function (c) { return mine(c.target) || mine(c.source); });
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
  // A click or Enter on a node: select it and, below a narrow graph, bring the panel into view.
  function openNode(node) {
    select(node);
    if (NARROW.matches && details.scrollIntoView) { details.scrollIntoView({block: "nearest"}); }
  }
  function select(node) {
    data.nodes.forEach(function (n) { nodeEls[n.id].classList.toggle("selected", n.id === node.id); });
    edgeEls.forEach(function (p) {
      var hot = p.getAttribute("data-source") === node.id || p.getAttribute("data-target") === node.id;
      p.classList.toggle("hot", hot);
    });
    reveal(node, false);
    details.textContent = "";
    text("h3", node.type + ": " + node.name, details);
    text("p", "namespace: " + node.namespace, details);
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
    if (node.parts && node.parts.length) {
      text("p", "Spark ML model saved in " + node.parts.length + " parts (one node here):", details);
      var parts = document.createElement("ul");
      parts.className = "parts";
      node.parts.forEach(function (p) { text("li", p.name, parts); });
      details.appendChild(parts);
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
  // Deep link: report.html#node=<id>&columns=1 selects a node (and shows its column lineage).
  function openFromHash() {
    var params = new URLSearchParams(window.location.hash.slice(1));
    if (!params.get("node") || !byId[params.get("node")]) { return; }
    select(byId[params.get("node")]);
    var button = document.getElementById("show-columns");
    if (params.get("columns") === "1" && button) { button.click(); }
  }

  // ---- Measurements on the body element, for the tests: what is visible once the page is drawn and fitted ----
  function box(r) { return [r.left, r.top, r.right, r.bottom].map(Math.round).join(","); }
  function ownText(e) {
    return Array.prototype.some.call(e.childNodes, function (c) { return c.nodeType === 3 && c.data.trim(); });
  }
  function measure() {
    var b = document.body, doc = document.documentElement, graphFont = Infinity, pageFont = Infinity, cut = [];
    Array.prototype.forEach.call(svg.querySelectorAll(".node text"), function (t) {
      graphFont = Math.min(graphFont, parseFloat(getComputedStyle(t).fontSize) * t.getScreenCTM().a);
    });
    var blocks = [details].concat(Array.prototype.slice.call(document.querySelectorAll("#details *, section *")));
    Array.prototype.forEach.call(document.querySelectorAll("header *, #details *, section *"), function (e) {
      if (ownText(e) && e.getClientRects().length) { pageFont = Math.min(pageFont, parseFloat(getComputedStyle(e).fontSize)); }
    });
    var checked = blocks.filter(function (e) { return getComputedStyle(e).display !== "inline" && e.clientWidth > 0; });
    checked.forEach(function (e) { if (e.scrollWidth > e.clientWidth) { cut.push(e.tagName.toLowerCase()); } });
    b.setAttribute("data-viewport", window.innerWidth + "x" + window.innerHeight);
    b.setAttribute("data-scroll-width", String(doc.scrollWidth));
    b.setAttribute("data-client-width", String(doc.clientWidth));
    b.setAttribute("data-canvas-box", box(canvas.getBoundingClientRect()));
    b.setAttribute("data-panel-box", box(details.getBoundingClientRect()));
    b.setAttribute("data-graph-box", box(scene.getBoundingClientRect()));
    b.setAttribute("data-orientation", vertical ? "top-down" : "left-right");
    b.setAttribute("data-scale", view.k.toFixed(3));
    b.setAttribute("data-min-graph-font", graphFont === Infinity ? "" : graphFont.toFixed(1));
    b.setAttribute("data-min-page-font", pageFont === Infinity ? "" : pageFont.toFixed(1));
    b.setAttribute("data-blocks-checked", String(checked.length));
    b.setAttribute("data-blocks-cut", cut.join(","));
  }

  // ---- Start: draw, fit, open the linked node, measure ----
  var drawn = 0;
  ordered.forEach(function (n) { drawNode(n); drawn += 1; });
  var sample = svg.querySelector(".node text.sub");
  if (sample) { smallestFont = parseFloat(getComputedStyle(sample).fontSize); }
  if (!drawn) { text("p", "No jobs or datasets in this graph.", canvas).className = "empty"; }
  function resized() {
    document.documentElement.style.setProperty("--head", header.offsetHeight + "px");
    if (fitted) { fitView(); }
  }
  place();
  resized();
  controls();
  document.getElementById("summary").textContent =
    data.nodes.filter(function (n) { return n.type === "JOB"; }).length + " jobs, " +
    data.nodes.filter(function (n) { return n.type === "DATASET"; }).length + " datasets, " +
    data.edges.length + " edges, " + data.columnEdges.length + " column edges (" + data.level + " level, from " + data.source + ")";
  resized();  // the summary may have changed the header's height
  openFromHash();
  window.addEventListener("hashchange", openFromHash);
  window.addEventListener("resize", function () { resized(); measure(); });
  measure();
  document.body.setAttribute("data-rendered", String(drawn));
})();
