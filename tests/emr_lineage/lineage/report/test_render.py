"""JSON, Mermaid and DOT renderings of the graph."""

from __future__ import annotations

import json

import pytest

from emr_lineage.lineage.graph.from_events import build_graph
from emr_lineage.lineage.graph.model import LineageGraph
from emr_lineage.lineage.report.render import render, to_dot, to_mermaid


@pytest.fixture(scope="session")
def graph(gen) -> LineageGraph:
    return build_graph(gen.pipeline("s3://lake"))


def test_json_is_the_graph_dict(graph) -> None:
    assert json.loads(render(graph, "json")) == graph.to_dict()


def test_mermaid_declares_every_node_and_edge(graph) -> None:
    text = to_mermaid(graph)
    lines = text.splitlines()
    assert lines[0] == "flowchart LR"
    assert sum(1 for line in lines if "-->" in line) == len(graph.edges())
    assert sum(1 for line in lines if line.strip().startswith("n") and ("([" in line or "[(" in line)) == len(
        graph.nodes
    )
    assert '(["ingest_orders<br/>(emr-lineage-dev)"])' in text
    assert '[("s3://lake<br/>clean/orders_clean")]' in text


def test_dot_quotes_ids_and_labels() -> None:
    g = LineageGraph()
    job = g.add_job("ns", 'we"ird\\name')
    g.add_edge(job, g.add_dataset("file", "/tmp/out"))
    text = to_dot(g)
    assert '"job:ns:we\\"ird\\\\name" -> "dataset:file:/tmp/out";' in text
    assert text.startswith("digraph lineage {") and text.rstrip().endswith("}")


def test_mermaid_escapes_quotes() -> None:
    g = LineageGraph()
    g.add_job("ns", 'a"b')
    assert "a#quot;b" in to_mermaid(g)


def test_renderings_are_stable(graph, gen) -> None:
    again = build_graph(list(reversed(gen.pipeline("s3://lake"))))
    for fmt in ("json", "mermaid", "dot"):
        assert render(graph, fmt) == render(again, fmt)


def test_unknown_format() -> None:
    with pytest.raises(ValueError, match="unknown format 'svg'"):
        render(LineageGraph(), "svg")


def test_html_is_the_self_contained_report(graph) -> None:
    page = render(graph, "html")
    assert page.startswith("<!DOCTYPE html>") and "id='lineage-data'" in page and "<script src" not in page
