"""Imports flow one way: cli -> features -> core. A newcomer can read a layer without the ones above it."""

from __future__ import annotations

import ast
import importlib.util
from pathlib import Path

import pytest

import emr_lineage

PACKAGE = Path(emr_lineage.__file__).parent
# Layer of each top-level part of the package; a module may import its own layer or lower ones.
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
    "launch": 5,
    "listener": 5,
    "gateway": 5,  # the lineage gateway's Lambdas: stdlib + boto3, errors/naming/marquez.api/settings.limits only
    "pipeline": 6,
    "operations": 6,  # tls and doctor: the listener's S3 key comes from listener.artifact (layer 5)
    "analysis": 6,  # impact, drift, audit, runs: the archive is checked by lineage.door, as the gateway checks
    # the command line
    "cli": 7,
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


def _part(module: str) -> str | None:
    parts = module.split(".")
    return parts[1] if len(parts) > 1 and parts[0] == "emr_lineage" else None


def _imports(path: Path) -> set[str]:
    found = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            found.add(node.module)
            if node.module == "emr_lineage":
                found.update(f"emr_lineage.{alias.name}" for alias in node.names)
        elif isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
    return found


def test_every_part_of_the_package_has_a_layer() -> None:
    parts = {p.relative_to(PACKAGE).parts[0].removesuffix(".py") for p in _modules()}
    assert parts - {"__init__", "__main__"} == set(LAYERS)


@pytest.mark.parametrize("path", _modules(), ids=lambda p: str(p.relative_to(PACKAGE)))
def test_every_import_of_the_package_names_a_module_that_exists(path: Path) -> None:
    modules = {
        node.module if isinstance(node, ast.ImportFrom) else alias.name
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8")))
        if isinstance(node, ast.ImportFrom | ast.Import)
        for alias in node.names
        if not isinstance(node, ast.ImportFrom) or (node.module and node.level == 0)
    }
    missing = sorted(m for m in modules if m.startswith("emr_lineage.") and importlib.util.find_spec(m) is None)
    assert missing == [], f"{path.relative_to(PACKAGE)} imports modules that do not exist"


@pytest.mark.parametrize("path", _modules(), ids=lambda p: str(p.relative_to(PACKAGE)))
def test_imports_flow_from_cli_to_features_to_core(path: Path) -> None:
    own = path.relative_to(PACKAGE).parts[0].removesuffix(".py")
    if own not in LAYERS:
        return  # __init__ / __main__ of the package itself
    upward = sorted(
        module
        for module in _imports(path)
        if (part := _part(module)) in LAYERS and part != own and LAYERS[part] >= LAYERS[own]
    )
    assert upward == [], f"{path.relative_to(PACKAGE)} (layer {own}) imports from its own level or above"


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
    named = {0: "core", 1: "core", 2: "core", 3: "core", 4: "core", 5: "feature", 6: "feature", 7: "command line"}
    assert {part: layer for part, (layer, _) in table.items()} == {part: named[LAYERS[part]] for part in LAYERS}
    assert {part: depends for part, (_, depends) in table.items()} == {part: _depends_on(part) for part in LAYERS}
