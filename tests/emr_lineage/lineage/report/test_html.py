"""The HTML report, rendered by real headless Chromium (Debian ``chromium``)."""

from __future__ import annotations

import re
import shutil
import subprocess
from pathlib import Path
from urllib.parse import quote

import pytest

from emr_lineage.lineage.contracts.check import validate
from emr_lineage.lineage.contracts.model import parse_contract
from emr_lineage.lineage.graph.from_events import build_graph
from emr_lineage.lineage.report.html import render_html, write_html

CHROMIUM = "/usr/bin/chromium"
NS = "emr-lineage-dev"


def _chromium(tmp_path: Path, *args: str) -> subprocess.CompletedProcess:
    assert Path(CHROMIUM).exists() or shutil.which("chromium"), "chromium is installed by make setup"
    profile = tmp_path / f"profile-{len(list(tmp_path.iterdir()))}"
    command = [
        CHROMIUM,
        "--headless",
        "--no-sandbox",
        "--disable-gpu",
        "--disable-quic",
        "--no-first-run",
        "--disable-background-networking",
        "--disable-component-update",
        "--disable-sync",
        f"--user-data-dir={profile}",
        "--enable-logging=stderr",
        "--v=0",
        *args,
    ]
    return subprocess.run(command, capture_output=True, text=True, timeout=120)


def _body(dom: str) -> str:
    """The attributes of the rendered <body> tag (where the page reports itself)."""
    match = re.search(r"<body([^>]*)>", dom)
    assert match, dom[:500]
    return match.group(1)


def _console_messages(stderr: str) -> list[str]:
    return [line for line in stderr.splitlines() if "CONSOLE" in line or "Uncaught" in line]


@pytest.fixture(scope="session")
def report(gen, repo_root: Path, tmp_path_factory) -> tuple[Path, object, object]:
    """A report of the sample pipeline (local run) with one contract difference."""
    lake = "/data/lake"
    events = [e for e in gen.pipeline(lake, NS) if not e["job"]["name"].startswith("train_model")]
    graph = build_graph(events)
    doc = (repo_root / "docs" / "contracts.md").read_text(encoding="utf-8")
    contract = parse_contract(doc.split("```yaml\n", 1)[1].split("```", 1)[0], "lineage_contract.yaml")
    result = validate(contract, graph, {"lake": lake})
    path = write_html(
        tmp_path_factory.mktemp("report") / "lineage <report>.html", graph, result, title="Demo & <lineage>"
    )
    return path, graph, result


def test_report_is_self_contained(report) -> None:
    path, _, _ = report
    text = path.read_text(encoding="utf-8")
    assert "<script src" not in text and "<link" not in text and "@import" not in text
    assert not re.search(r"(src|href)\s*=\s*['\"]?https?:", text)
    assert not re.search(r"url\(\s*['\"]?https?:", text)
    # the only absolute URL is the SVG namespace name, which is never fetched
    assert set(re.findall(r"https?://[^\s\"'<>]+", text)) == {"http://www.w3.org/2000/svg"}
    assert "<title>Demo &amp; &lt;lineage&gt;</title>" in text


def test_chromium_renders_every_node_without_errors(report, tmp_path: Path) -> None:
    path, graph, _ = report
    done = _chromium(tmp_path, "--dump-dom", path.as_uri())
    assert done.returncode == 0, done.stderr[-2000:]
    dom = done.stdout
    assert f'data-rendered="{len(graph.nodes)}"' in _body(dom)
    assert "data-errors" not in _body(dom)
    page = dom.split("<script", 1)[0]  # the drawn document, without the script sources
    drawn = re.findall(r'<g class="node [a-z]+" data-node-id="([^"]+)"', page)
    assert sorted(drawn) == sorted(graph.nodes)
    assert len(re.findall(r'<path class="edge"', page)) == len(graph.edges())
    assert _console_messages(done.stderr) == []
    # the contract result is shown
    assert "2 difference(s)" in dom and "job 'train_model' not in the graph" in dom


def test_column_lineage_on_demand(report, tmp_path: Path) -> None:
    path, graph, _ = report
    node = "dataset:file:/data/lake/curated/revenue_daily"
    done = _chromium(tmp_path, "--dump-dom", f"{path.as_uri()}#node={quote(node)}&columns=1")
    assert done.returncode == 0
    assert 'class="node dataset selected"' in done.stdout
    columns = re.findall(r"<li>([^<]*)</li>", done.stdout.split('class="columns"', 1)[1])
    assert columns == [
        "file:/data/lake/clean/orders_clean:amount \u2192 file:/data/lake/curated/revenue_daily:revenue (DIRECT)"
    ]
    assert _console_messages(done.stderr) == []


def test_screenshot(report, tmp_path: Path) -> None:
    path, _, _ = report
    shot = tmp_path / "report.png"
    done = _chromium(tmp_path, "--window-size=1400,900", f"--screenshot={shot}", path.as_uri())
    assert done.returncode == 0
    assert shot.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n" and shot.stat().st_size > 10_000


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
    # the hostile name is drawn as text
    assert "&lt;/script&gt;&lt;script&gt;document.title='pwned'&lt;/script&gt;" in done.stdout


def test_empty_graph_renders(tmp_path: Path) -> None:
    path = write_html(tmp_path / "empty.html", build_graph([]))
    done = _chromium(tmp_path, "--dump-dom", path.as_uri())
    assert 'data-rendered="0"' in _body(done.stdout) and "data-errors" not in _body(done.stdout)
    assert "No contract was checked." in done.stdout


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
    impact = done.stdout.split('class="impact"', 1)[1].split("</ul>", 1)[0]
    assert re.findall(r"<li>([^<]*)</li>", impact) == [
        f"1 \u00b7 job {NS}:report",
        "2 \u00b7 dataset s3://lake:summary",
    ]
    changes = re.findall(r"<li>([^<]*)</li>", done.stdout.split('class="drift"', 1)[1].split("</ul>", 1)[0])
    [change] = changes  # the second run of clean, at the time of its last event
    assert change.startswith(at(10).isoformat()[:16]) and change.endswith(" clean: ~amount double\u2192decimal(10,2)")
    # Without the events the panel says so; a dataset without changes says that.
    bare = write_html(tmp_path / "bare.html", graph, title="bare")
    done = _chromium(tmp_path, "--dump-dom", f"{bare.as_uri()}#node={quote(node)}")
    assert "Not in this report (made without its events)." in done.stdout
    done = _chromium(tmp_path, "--dump-dom", f"{path.as_uri()}#node={quote('dataset:s3://lake:summary')}")
    assert "Nothing reads this dataset in this graph." in done.stdout
    assert "No schema change in these events." in done.stdout
