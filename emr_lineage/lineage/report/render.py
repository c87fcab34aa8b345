"""Renderings of a :class:`~emr_lineage.lineage.graph.model.LineageGraph`: JSON, Mermaid and DOT
text, and the HTML report (:mod:`emr_lineage.lineage.report.html`).

The text ones are sorted, so the same graph always prints the same text.
"""

from __future__ import annotations

from collections.abc import Callable

import orjson

from emr_lineage.lineage.graph.model import LineageGraph
from emr_lineage.lineage.report.html import render_html

FORMATS = ("json", "mermaid", "dot", "html")


def json_bytes(graph: LineageGraph) -> bytes:
    """The documented JSON form (``docs/graph.md``) as UTF-8: two-space indent, sorted keys.
    orjson writes what ``json.dumps(indent=2, sort_keys=True)`` does (except that it leaves
    non-ASCII characters as they are), about ten times faster: a large graph is megabytes."""
    return orjson.dumps(graph.to_dict(copy=False), option=orjson.OPT_INDENT_2 | orjson.OPT_SORT_KEYS)


def to_json(graph: LineageGraph) -> str:
    """:func:`json_bytes` as text."""
    return json_bytes(graph).decode()


def _short_ids(graph: LineageGraph) -> dict[str, str]:
    # Mermaid ids must be plain words; node ids contain ':' and '/'.
    return {node_id: f"n{index}" for index, node_id in enumerate(sorted(graph.nodes))}


def _label(attrs: dict) -> str:
    if attrs["type"] == "JOB":
        return f"{attrs['name']}\n({attrs['namespace']})"
    namespace, name = attrs["namespace"], attrs["name"]
    return name if namespace == "file" else f"{namespace}\n{name}"


def to_mermaid(graph: LineageGraph) -> str:
    """A Mermaid ``flowchart LR``: jobs as rounded boxes, datasets as cylinders."""
    ids = _short_ids(graph)
    lines = ["flowchart LR"]
    for node_id in sorted(graph.nodes):
        attrs = graph.nodes[node_id]
        text = _label(attrs).replace('"', "#quot;").replace("\n", "<br/>")
        shape = ('(["', '"])') if attrs["type"] == "JOB" else ('[("', '")]')
        lines.append(f"    {ids[node_id]}{shape[0]}{text}{shape[1]}")
    for source, target in graph.edges():
        lines.append(f"    {ids[source]} --> {ids[target]}")
    lines.append("    classDef job fill:#dbeafe,stroke:#1d4ed8")
    lines.append("    classDef dataset fill:#dcfce7,stroke:#15803d")
    jobs = [ids[n] for n in graph.jobs()]
    datasets = [ids[n] for n in graph.datasets()]
    if jobs:
        lines.append(f"    class {','.join(jobs)} job")
    if datasets:
        lines.append(f"    class {','.join(datasets)} dataset")
    return "\n".join(lines) + "\n"


def _dot_quote(text: str) -> str:
    return '"' + text.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n") + '"'


def to_dot(graph: LineageGraph) -> str:
    """Graphviz DOT, left to right; node names are the Marquez node ids."""
    lines = ["digraph lineage {", "  rankdir=LR;", '  node [fontname="Helvetica", fontsize=10];']
    for node_id in sorted(graph.nodes):
        attrs = graph.nodes[node_id]
        style = (
            'shape=box, style="rounded,filled", fillcolor="#dbeafe"'
            if attrs["type"] == "JOB"
            else ('shape=cylinder, style=filled, fillcolor="#dcfce7"')
        )
        lines.append(f"  {_dot_quote(node_id)} [label={_dot_quote(_label(attrs))}, {style}];")
    for source, target in graph.edges():
        lines.append(f"  {_dot_quote(source)} -> {_dot_quote(target)};")
    lines.append("}")
    return "\n".join(lines) + "\n"


RENDERERS: dict[str, Callable[[LineageGraph], str]] = {"json": to_json, "mermaid": to_mermaid, "dot": to_dot}


def render(graph: LineageGraph, fmt: str) -> str:
    """Render ``graph`` as ``json``, ``mermaid``, ``dot`` or ``html`` (the report of :mod:`.html`)."""
    if fmt == "html":
        return render_html(graph)
    try:
        return RENDERERS[fmt](graph)
    except KeyError:
        raise ValueError(f"unknown format {fmt!r} (expected one of {', '.join(FORMATS)})") from None
