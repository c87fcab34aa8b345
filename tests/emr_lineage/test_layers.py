"""Imports flow one way: cli -> features -> core. A newcomer can read a layer without the ones above it."""

from __future__ import annotations

import ast
import functools
import importlib.util
from pathlib import Path

import networkx as nx
import pytest

import emr_lineage

PACKAGE = Path(emr_lineage.__file__).parent
FEATURE = 5  # the layer of every feature: above the core, below the command line
# Layer of each top-level part of the package; a module may import lower layers, and a feature the features
# FEATURE_IMPORTS names.
LAYERS = {
    # core
    "errors": 0,
    "processes": 0,  # child process groups and short-lived JVMs (stdlib only)
    "settings": 1,
    "http": 1,
    "aws": 2,
    "marquez": 2,
    "lineage": 3,
    "spark": 4,  # the listener's Spark properties (settings) and local spark-submit runs
    # features
    "launch": FEATURE,
    "listener": FEATURE,
    "gateway": FEATURE,  # the lineage gateway's Lambdas: stdlib + boto3, and of the core only config.ASSET_FILES
    "pipeline": FEATURE,
    "operations": FEATURE,
    "analysis": FEATURE,  # impact, drift, audit, runs: the archive is checked by lineage.door, as the gateway checks
    # the command line
    "cli": 6,
}
# The features each feature builds on; any other import between two features is lateral, and refused.
FEATURE_IMPORTS = {
    "pipeline": {"launch"},  # e2e launches the sample pipeline with launch's plan
    "operations": {"gateway", "listener"},  # doctor reads the key by the ingest's rule; the listener's S3 key
}
# Inside lineage/, the same rule between its subpackages: reading events knows nothing of the graph
# built from them (it merges into any events.merging.Merger), the graph nothing of contracts.
LINEAGE_LAYERS = {
    "naming": 0,
    "times": 0,
    "event_json": 0,
    "event_rule": 1,
    "schemas": 2,
    "events": 3,
    "door": 3,  # a body of one event checked as every door checks it: the gateway's ingest, the archive's readers
    "graph": 4,
    "contracts": 5,
    "report": 6,
}
MAX_LINES = 400  # "no module over ~400 lines"


def _modules() -> list[Path]:
    return sorted(p for p in PACKAGE.rglob("*.py") if "jobs" not in p.relative_to(PACKAGE).parts)


def _name(path: Path) -> str:
    """The dotted name of a module of the package (of a package's ``__init__``: the package's)."""
    parts = path.relative_to(PACKAGE.parent).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


_NAMES = {_name(path) for path in _modules()}


def _part(module: str) -> str | None:
    parts = module.split(".")
    return parts[1] if len(parts) > 1 and parts[0] == "emr_lineage" else None


@functools.cache
def _imports(path: Path) -> frozenset[str]:
    found = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            found.add(node.module)  # `from package import module` imports both
            found.update(name for alias in node.names if (name := f"{node.module}.{alias.name}") in _NAMES)
        elif isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
    return frozenset(found)


def test_every_part_of_the_package_has_a_layer() -> None:
    parts = {p.relative_to(PACKAGE).parts[0].removesuffix(".py") for p in _modules()}
    assert parts - {"__init__", "__main__"} == set(LAYERS)


@pytest.mark.parametrize("path", _modules(), ids=lambda p: str(p.relative_to(PACKAGE)))
def test_every_import_of_the_package_names_a_module_that_exists(path: Path) -> None:
    # _imports: every module imported by name (its `from m import n` adds m.n only where that module exists)
    missing = sorted(m for m in _imports(path) if m.startswith("emr_lineage.") and importlib.util.find_spec(m) is None)
    assert missing == [], f"{path.relative_to(PACKAGE)} imports modules that do not exist"


def _own(path: Path) -> str:
    return path.relative_to(PACKAGE).parts[0].removesuffix(".py")


@pytest.mark.parametrize("path", _modules(), ids=lambda p: str(p.relative_to(PACKAGE)))
def test_imports_flow_from_cli_to_features_to_core(path: Path) -> None:
    own = _own(path)
    if own not in LAYERS:
        return  # __init__ / __main__ of the package itself
    upward = sorted(
        module
        for module in _imports(path)
        if (part := _part(module)) in LAYERS
        and part != own
        and LAYERS[part] >= LAYERS[own]
        and not LAYERS[part] == LAYERS[own] == FEATURE  # between features: the next test's
    )
    assert upward == [], f"{path.relative_to(PACKAGE)} (layer {own}) imports from its own level or above"


@pytest.mark.parametrize("path", _modules(), ids=lambda p: str(p.relative_to(PACKAGE)))
def test_a_feature_imports_no_other_feature_but_those_it_builds_on(path: Path) -> None:
    own = _own(path)
    if LAYERS.get(own) != FEATURE:
        return
    lateral = sorted(
        module
        for module in _imports(path)
        if (part := _part(module)) in LAYERS
        and LAYERS[part] == FEATURE
        and part not in {own, *FEATURE_IMPORTS.get(own, ())}
    )
    assert lateral == [], f"{path.relative_to(PACKAGE)} (feature {own}) imports another feature's modules"


def test_no_module_of_the_package_imports_itself_through_others() -> None:
    """No import circle, whether at the top, in a function or for type checking: a newcomer can read each
    module knowing only the ones below it."""
    graph = nx.DiGraph()
    for path in _modules():
        graph.add_node(_name(path))
        # A package's __init__ importing its own modules (`from emr_lineage.http import client`) names itself too.
        graph.add_edges_from((_name(path), m) for m in _imports(path) if m in _NAMES and m != _name(path))
    circles = sorted(" -> ".join([*cycle, cycle[0]]) for cycle in nx.simple_cycles(graph))
    assert circles == []


def _lineage_part(module: str) -> str | None:
    parts = module.split(".")
    return parts[2] if len(parts) > 2 and parts[:2] == ["emr_lineage", "lineage"] else None


def _lineage_modules() -> list[Path]:
    return [p for p in _modules() if p.relative_to(PACKAGE).parts[0] == "lineage" and p.name != "__init__.py"]


def test_every_part_of_lineage_has_a_layer() -> None:
    parts = {p.relative_to(PACKAGE / "lineage").parts[0].removesuffix(".py") for p in _lineage_modules()}
    assert parts == set(LINEAGE_LAYERS)


@pytest.mark.parametrize("path", _lineage_modules(), ids=lambda p: str(p.relative_to(PACKAGE)))
def test_lineage_reads_events_without_knowing_the_graph(path: Path) -> None:
    own = path.relative_to(PACKAGE / "lineage").parts[0].removesuffix(".py")
    upward = sorted(
        module
        for module in _imports(path)
        if (part := _lineage_part(module)) in LINEAGE_LAYERS
        and part != own
        and LINEAGE_LAYERS[part] >= LINEAGE_LAYERS[own]
    )
    assert upward == [], f"{path.relative_to(PACKAGE)} (lineage/{own}) imports from its own level or above"


@pytest.mark.parametrize("path", _modules(), ids=lambda p: str(p.relative_to(PACKAGE)))
def test_no_module_is_over_the_size_limit(path: Path) -> None:
    lines = len(path.read_text(encoding="utf-8").splitlines())
    assert lines <= MAX_LINES, f"{path.relative_to(PACKAGE)} has {lines} lines; split it by job"


def _documented_layer_table() -> dict[str, tuple[str, set[str]]]:
    """docs/architecture.md's package table: part -> (layer name, the parts it says it depends on)."""
    readme = (PACKAGE.parent / "docs" / "architecture.md").read_text(encoding="utf-8")
    rows = {}
    for line in readme.split("| Layer | Folder | Job | Depends on |", 1)[1].split("\n\n", 1)[0].splitlines()[2:]:
        layer, folder, _, depends = (cell.strip() for cell in line.strip("|").split(" | "))
        part = folder.split("`")[1].rstrip("/").removesuffix(".py")
        rows[part] = (layer, set() if depends == "—" else {d.strip() for d in depends.split(",")})
    return rows


def _depends_on(part: str) -> set[str]:
    paths = [p for p in _modules() if p.relative_to(PACKAGE).parts[0].removesuffix(".py") == part]
    return {
        name
        for path in paths
        for module in _imports(path)
        if (name := _part(module)) in LAYERS and name not in (part, "errors")
    }


def test_the_documented_layer_table_matches_the_code() -> None:
    """docs/architecture.md's table lists every part, in its layer, with what it really imports (errors aside)."""
    table = _documented_layer_table()
    assert set(table) == set(LAYERS)
    named = {FEATURE: "feature", LAYERS["cli"]: "command line"}
    assert {part: layer for part, (layer, _) in table.items()} == {
        part: named.get(LAYERS[part], "core") for part in LAYERS
    }
    assert {part: depends for part, (_, depends) in table.items()} == {part: _depends_on(part) for part in LAYERS}
