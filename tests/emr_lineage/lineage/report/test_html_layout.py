"""What the HTML report shows at 1400 and 700 px wide, in real headless Chromium.

One Chromium run per width opens the sample pipeline's report on a dataset (deep link, column
lineage shown), dumps the DOM and takes a screenshot. The page's script puts what it measured once
drawn and fitted on <body> (viewport, canvas, graph and panel boxes, scroll width, smallest
rendered font, panel blocks whose text does not fit); the tests assert on those and on the PNG."""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import quote

import pytest

from tests.emr_lineage.lineage.report.browser import (
    body_attributes,
    chromium,
    colours,
    console_messages,
    png_pixels,
    without_wbr,
)

HEIGHT = 900
SELECTED = "dataset:file:/data/lake/curated/revenue_daily"
JOB_FILL, DATASET_FILL, HEADER = (219, 234, 254), (220, 252, 231), (15, 23, 42)


@dataclass
class Shown:
    width: int
    dom: str
    body: dict[str, str]
    screenshot: Path
    stderr: str

    def box(self, name: str) -> tuple[int, int, int, int]:
        left, top, right, bottom = (int(v) for v in self.body[f"data-{name}-box"].split(","))
        return left, top, right, bottom


@pytest.fixture(scope="session", params=[1400, 700], ids=lambda width: f"{width}px")
def shown(request, report, tmp_path_factory) -> Shown:
    path, _, _ = report
    width = request.param
    folder = tmp_path_factory.mktemp(f"shown-{width}")
    shot = folder / "report.png"
    link = f"{path.as_uri()}#node={quote(SELECTED)}&columns=1"
    done = chromium(folder, f"--window-size={width},{HEIGHT}", f"--screenshot={shot}", "--dump-dom", link)
    assert done.returncode == 0, done.stderr[-2000:]
    return Shown(width, done.stdout, body_attributes(done.stdout), shot, done.stderr)


@pytest.mark.browser
def test_every_node_and_edge_is_drawn_without_errors(shown: Shown, report) -> None:
    _, graph, _ = report
    assert shown.body["data-rendered"] == str(len(graph.nodes)) and "data-errors" not in shown.body
    page = shown.dom.split("<script", 1)[0]  # the drawn document, without the script sources
    drawn = re.findall(r'<g class="node ([a-z]+)[a-z ]*" data-node-id="([^"]+)" tabindex="0" role="button"', page)
    assert sorted(node for _, node in drawn) == sorted(graph.nodes)
    assert {kind for kind, _ in drawn} == {"job", "dataset"}
    assert len(re.findall(r'<path class="edge"', page)) == len(graph.edges())
    assert console_messages(shown.stderr) == []
    assert "2 difference(s)" in shown.dom and "job 'train_model' not in the graph" in shown.dom


def test_the_deep_link_opens_the_dataset_and_its_column_lineage(shown: Shown) -> None:
    dom = without_wbr(shown.dom)
    assert 'class="node dataset selected"' in dom
    assert "<h3>DATASET: /data/lake/curated/revenue_daily</h3>" in dom  # the whole name, in the panel
    columns = re.findall(r"<li>([^<]*)</li>", dom.split('class="columns"', 1)[1])
    assert columns == [
        "file:/data/lake/clean/orders_clean:amount \u2192 file:/data/lake/curated/revenue_daily:revenue (DIRECT)"
    ]
    # long names may wrap after a separator, not inside a word
    assert "<h3>DATASET: /<wbr>data/<wbr>lake/<wbr>curated/<wbr>revenue_<wbr>daily</h3>" in shown.dom


def test_the_whole_graph_is_in_the_window_and_fills_it(shown: Shown) -> None:
    width, height = (int(v) for v in shown.body["data-viewport"].split("x"))
    assert width == shown.width and height > 500
    canvas, graph = shown.box("canvas"), shown.box("graph")
    assert min(canvas[:2]) >= 0 and canvas[2] <= width and canvas[3] <= height
    assert canvas[0] <= graph[0] and canvas[1] <= graph[1] and graph[2] <= canvas[2] and graph[3] <= canvas[3]
    # fitted: the graph spans its canvas across or down (less a margin), not a corner of it
    across, down = (graph[2] - graph[0]) / (canvas[2] - canvas[0]), (graph[3] - graph[1]) / (canvas[3] - canvas[1])
    assert max(across, down) > 0.85, (across, down)
    # the canvas takes the width left by the panel and most of the window's height
    assert canvas[2] - canvas[0] > 0.7 * width if shown.width == 1400 else canvas[2] - canvas[0] > 0.9 * width
    assert canvas[3] - canvas[1] > 0.6 * height


def test_the_panel_is_beside_a_wide_graph_and_below_a_narrow_one(shown: Shown) -> None:
    canvas, panel = shown.box("canvas"), shown.box("panel")
    if shown.width == 1400:
        assert panel[0] >= canvas[2] and panel[2] <= shown.width and panel[2] - panel[0] >= 280
    else:
        assert panel[1] >= canvas[3] and panel[0] == canvas[0] and panel[2] == canvas[2]
        assert panel[1] < int(shown.body["data-viewport"].split("x")[1])  # its top shows without scrolling


def test_no_horizontal_scroll_bar(shown: Shown) -> None:
    assert int(shown.body["data-scroll-width"]) <= int(shown.body["data-client-width"]) <= shown.width


def test_no_text_under_12px(shown: Shown) -> None:
    assert float(shown.body["data-min-graph-font"]) >= 12, shown.body
    assert float(shown.body["data-min-page-font"]) >= 12, shown.body
    # left to right where that is readable; a narrow window turns the graph top to bottom
    assert shown.body["data-orientation"] == ("left-right" if shown.width == 1400 else "top-down")


def test_panel_and_contract_text_is_not_cut(shown: Shown) -> None:
    # every block of the panel and the contract section (paragraphs, list items, cells, ...)
    assert int(shown.body["data-blocks-checked"]) >= 30
    assert shown.body["data-blocks-cut"] == ""


def test_the_screenshot_shows_the_graph(shown: Shown) -> None:
    width, height, step, rows = png_pixels(shown.screenshot)
    assert (width, height) == (shown.width, HEIGHT)
    seen = colours(rows, step)
    assert len(seen) > 50  # not blank: text, shapes, edges
    total = sum(seen.values())
    assert seen.get(HEADER, 0) > 0.02 * total  # the header
    assert seen.get(JOB_FILL, 0) > 0.01 * total and seen.get(DATASET_FILL, 0) > 0.01 * total  # both kinds of node


# Driven by a script the test adds to the page: it zooms, pans, searches and opens a node with
# the keyboard, and writes what it saw on <body data-driven>.
_DRIVER = """<script>
(function () {
  var out = {}, svg = document.getElementById("graph"), scene = document.getElementById("scene");
  function view() { return scene.getAttribute("transform"); }
  function k() { return parseFloat(/scale\\(([^)]+)\\)/.exec(view())[1]); }
  function key(target, name) {
    target.dispatchEvent(new KeyboardEvent("keydown", {key: name, bubbles: true, cancelable: true}));
  }
  var fit = view(), fitK = k();
  out.fit = fit;
  key(document.body, "+"); out.plus = k() / fitK;
  key(document.body, "-"); key(document.body, "-"); out.minus = k() / fitK;
  document.getElementById("zoom-fit").click(); out.refit = view() === fit;
  document.getElementById("zoom-in").click(); out.button = k() / fitK;
  key(document.body, "0"); out.key0 = view() === fit;
  var r = svg.getBoundingClientRect();
  var wheel = new WheelEvent("wheel", {deltaY: -300, clientX: r.left + 100, clientY: r.top + 100,
                                       bubbles: true, cancelable: true});
  svg.dispatchEvent(wheel); out.wheel = k() / fitK; out.wheelPrevented = wheel.defaultPrevented;
  key(document.body, "0");
  function pointer(type, x, y) {
    svg.dispatchEvent(new PointerEvent(type, {pointerId: 7, button: 0, clientX: x, clientY: y, bubbles: true}));
  }
  pointer("pointerdown", 300, 300); pointer("pointermove", 350, 320); pointer("pointermove", 400, 350);
  pointer("pointerup", 400, 350);
  out.drag = view(); key(document.body, "0");
  var search = document.getElementById("search");
  search.value = "ORDERS_CL"; search.dispatchEvent(new Event("input", {bubbles: true}));
  out.count = document.getElementById("search-count").textContent;
  out.matches = Array.prototype.map.call(document.querySelectorAll(".node.match"),
                                         function (g) { return g.getAttribute("data-node-id"); });
  key(search, "Enter");
  out.focused = document.activeElement.getAttribute("data-node-id");
  out.selected = document.querySelector(".node.selected").getAttribute("data-node-id");
  out.panel = document.querySelector("#details h3").textContent;
  out.ring = getComputedStyle(document.activeElement.querySelector(".shape")).stroke;
  var job = document.querySelector('.node[data-node-id="job:emr-lineage-dev:score_stream"]');
  job.focus(); key(job, "Enter");
  out.enter = document.querySelector(".node.selected").getAttribute("data-node-id");
  out.tabbable = Array.prototype.every.call(document.querySelectorAll(".node"),
                                            function (g) { return g.tabIndex === 0; });
  out.tooltip = job.querySelector("title").textContent;
  document.body.setAttribute("data-driven", JSON.stringify(out));
})();
</script></body>"""


@pytest.mark.browser
def test_zoom_pan_search_and_keyboard(report, tmp_path: Path) -> None:
    path, _, _ = report
    page = tmp_path / "driven.html"
    page.write_text(path.read_text(encoding="utf-8").replace("</body>", _DRIVER), encoding="utf-8")
    done = chromium(tmp_path, f"--window-size=1400,{HEIGHT}", "--dump-dom", page.as_uri())
    body = body_attributes(done.stdout)
    assert "data-errors" not in body and console_messages(done.stderr) == []
    out = json.loads(body["data-driven"])
    assert out["plus"] == pytest.approx(1.25) and out["minus"] == pytest.approx(0.8)
    assert out["refit"] and out["key0"] and out["button"] == pytest.approx(1.25)
    assert out["wheel"] > 1.2 and out["wheelPrevented"]
    moved, fitted = (re.match(r"translate\(([-\d.]+),([-\d.]+)\)", out[k]).groups() for k in ("drag", "fit"))
    assert [float(a) - float(b) for a, b in zip(moved, fitted, strict=True)] == pytest.approx([100, 50])
    assert out["count"] == "1 match" and out["matches"] == ["dataset:file:/data/lake/clean/orders_clean"]
    assert out["focused"] == out["selected"] == "dataset:file:/data/lake/clean/orders_clean"
    assert out["panel"] == "DATASET: /data/lake/clean/orders_clean"
    assert out["ring"] == "rgb(245, 158, 11)"  # the focus ring's colour
    assert out["enter"] == "job:emr-lineage-dev:score_stream" and out["tabbable"]
    assert out["tooltip"].startswith("job emr-lineage-dev:score_stream")
