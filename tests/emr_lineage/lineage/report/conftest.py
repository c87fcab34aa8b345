"""The sample pipeline's HTML report, written once for the report tests."""

from __future__ import annotations

from pathlib import Path

import pytest

from emr_lineage.lineage.contracts.check import validate
from emr_lineage.lineage.contracts.model import parse_contract
from emr_lineage.lineage.graph.from_events import build_graph
from emr_lineage.lineage.report.html import write_html
from tests.emr_lineage.lineage.report import browser


def pytest_runtest_setup(item: pytest.Item) -> None:
    """Before the test's fixtures: whether it may start Chromium (only a test marked ``browser``, so that
    ``make test-fast`` never starts one)."""
    browser.allowed = item.get_closest_marker("browser") is not None


@pytest.fixture(scope="session")
def report(gen, repo_root: Path, tmp_path_factory) -> tuple[Path, object, object]:
    """A report of the sample pipeline (local run) with one contract difference."""
    lake = "/data/lake"
    events = [e for e in gen.pipeline(lake, "emr-lineage-dev") if not e["job"]["name"].startswith("train_model")]
    graph = build_graph(events)
    doc = (repo_root / "docs" / "contracts.md").read_text(encoding="utf-8")
    contract = parse_contract(doc.split("```yaml\n", 1)[1].split("```", 1)[0], "lineage_contract.yaml")
    result = validate(contract, graph, {"lake": lake})
    path = write_html(
        tmp_path_factory.mktemp("report") / "lineage <report>.html", graph, result, title="Demo & <lineage>"
    )
    return path, graph, result
