"""The HTML report, rendered by real headless Chromium (Debian ``chromium``)."""

from __future__ import annotations

import html
import re
from pathlib import Path
from urllib.parse import quote

import pytest

from emr_lineage.lineage.graph.from_events import build_graph
from emr_lineage.lineage.report.html import render_html, write_html
from tests.emr_lineage.lineage.report.browser import body_tag as _body
from tests.emr_lineage.lineage.report.browser import chromium as _chromium
from tests.emr_lineage.lineage.report.browser import console_messages as _console_messages
from tests.emr_lineage.lineage.report.browser import without_wbr

NS = "emr-lineage-dev"


def test_report_is_self_contained(report) -> None:
    path, _, _ = report
    text = path.read_text(encoding="utf-8")
    assert "<script src" not in text and "<link" not in text and "@import" not in text
    assert not re.search(r"(src|href)\s*=\s*['\"]?https?:", text)
    assert not re.search(r"url\(\s*['\"]?https?:", text)
    # the only absolute URL is the SVG namespace name, which is never fetched
    assert set(re.findall(r"https?://[^\s\"'<>]+", text)) == {"http://www.w3.org/2000/svg"}
    assert "<title>Demo &amp; &lt;lineage&gt;</title>" in text


@pytest.mark.browser
def test_names_cannot_break_out_of_the_page(tmp_path: Path) -> None:
    hostile = "</script><script>document.title='pwned'</script>"
    event = {
        "job": {"namespace": "ns", "name": hostile},
        "run": {"runId": "3f5e83fa-3480-44ff-99c5-ff943904e5e8"},
        "outputs": [{"namespace": "file", "name": f"/tmp/{hostile}"}],
    }
    graph = build_graph([event])
    text = render_html(graph)
    assert hostile not in text
    path = tmp_path / "hostile.html"
    path.write_text(text)
    done = _chromium(tmp_path, "--dump-dom", path.as_uri())
    assert 'data-rendered="2"' in _body(done.stdout) and "data-errors" not in _body(done.stdout)
    assert re.search(r"<title>([^<]*)</title>", done.stdout).group(1) == "Lineage report"
    # the hostile name is drawn as text: whole in the node's tooltip, shortened with an ellipsis on the node
    assert "&lt;/script&gt;&lt;script&gt;document.title='pwned'&lt;/script&gt;" in done.stdout
    job = done.stdout.split('data-node-id="job:ns:', 1)[1].split("</g>", 1)[0]
    title = re.search(r"<title>([^<]*)</title>", job).group(1)
    assert title.startswith("job ns:&lt;/script&gt;&lt;script&gt;document.title='pwned'&lt;/script&gt;")
    label = re.search(r'<text x="12" y="27">([^<]*)</text>', job).group(1)
    assert label.endswith("\u2026") and hostile.startswith(html.unescape(label[:-1])) and len(label) > 5


@pytest.mark.browser
def test_empty_graph_renders(tmp_path: Path) -> None:
    path = write_html(tmp_path / "empty.html", build_graph([]))
    done = _chromium(tmp_path, "--dump-dom", path.as_uri())
    assert 'data-rendered="0"' in _body(done.stdout) and "data-errors" not in _body(done.stdout)
    assert "No contract was checked." in done.stdout and "No jobs or datasets in this graph." in done.stdout


@pytest.mark.browser
def test_the_checks_catch_a_broken_page(tmp_path: Path, monkeypatch) -> None:
    # Negative control: a page whose script fails must fail the checks used above.
    from emr_lineage.lineage.report import html as report_module

    broken = report_module._SCRIPT.replace(
        "var drawn = 0;", "var drawn = 0; window.setTimeout(function () { null.x; }, 0);"
    )
    monkeypatch.setattr(report_module, "_SCRIPT", broken)
    path = write_html(tmp_path / "broken.html", build_graph([]))
    done = _chromium(tmp_path, "--dump-dom", path.as_uri())
    assert 'data-errors="Uncaught TypeError' in _body(done.stdout)
    assert any("Uncaught TypeError" in line for line in _console_messages(done.stderr))


@pytest.mark.browser
def test_a_selected_dataset_shows_its_impact_and_schema_changes(tmp_path: Path) -> None:
    # clean is written twice with different schemas, then read by report, which writes summary.
    from emr_lineage.analysis.drift import schema_changes
    from tests.emr_lineage.analysis.builders import app_run, at, dataset

    lake = "s3://lake"

    def writes(fields: dict[str, str], minutes: float) -> list[dict]:
        return app_run(
            "clean",
            at(minutes),
            inputs=[dataset(f"{lake}/raw")],
            outputs=[dataset(f"{lake}/clean", fields, output=True)],
        )

    reader = app_run(
        "report", at(30), inputs=[dataset(f"{lake}/clean")], outputs=[dataset(f"{lake}/summary", output=True)]
    )
    events = writes({"id": "string", "amount": "double"}, 0) + writes({"id": "string", "amount": "decimal(10,2)"}, 10)
    events += reader
    graph = build_graph(events)
    path = write_html(tmp_path / "drift.html", graph, title="drift", drift=schema_changes(events))
    node = "dataset:s3://lake:clean"
    done = _chromium(tmp_path, "--dump-dom", f"{path.as_uri()}#node={quote(node)}")
    assert done.returncode == 0 and _console_messages(done.stderr) == []
    dom = without_wbr(done.stdout)
    impact = dom.split('class="impact"', 1)[1].split("</ul>", 1)[0]
    assert re.findall(r"<li>([^<]*)</li>", impact) == [
        f"1 \u00b7 job {NS}:report",
        "2 \u00b7 dataset s3://lake:summary",
    ]
    changes = re.findall(r"<li>([^<]*)</li>", dom.split('class="drift"', 1)[1].split("</ul>", 1)[0])
    [change] = changes  # the second run of clean, at the time of its last event
    assert change.startswith(at(10).isoformat()[:16]) and change.endswith(" clean: ~amount double\u2192decimal(10,2)")
    # Without the events the panel says so; a dataset without changes says that.
    bare = write_html(tmp_path / "bare.html", graph, title="bare")
    done = _chromium(tmp_path, "--dump-dom", f"{bare.as_uri()}#node={quote(node)}")
    assert "Not in this report (made without its events)." in done.stdout
    done = _chromium(tmp_path, "--dump-dom", f"{path.as_uri()}#node={quote('dataset:s3://lake:summary')}")
    assert "Nothing reads this dataset in this graph." in done.stdout
    assert "No schema change in these events." in done.stdout
