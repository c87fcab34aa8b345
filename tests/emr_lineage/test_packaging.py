"""A non-editable install (a built wheel) runs graph, validate and config from any directory.

The wheel is built from the checkout and installed into a folder of its own; the commands run
from an empty directory with only that folder (and the venv's dependencies) to import from.
"""

from __future__ import annotations

import ast
import json
import os
import re
import subprocess
import sys
from importlib.metadata import packages_distributions
from pathlib import Path

import pytest
from filelock import FileLock

from tests.emr_lineage.demo_run import DemoRun
from tests.paths import CDK_JSON, REPO_ROOT


@pytest.fixture(scope="session")
def installed(tmp_path_factory: pytest.TempPathFactory, request: pytest.FixtureRequest) -> Path:
    """The wheel, built and installed once per test run (xdist workers share it: one build in the checkout)."""
    base = tmp_path_factory.getbasetemp()
    root = (base.parent if hasattr(request.config, "workerinput") else base) / "installed-wheel"
    root.mkdir(parents=True, exist_ok=True)
    wheels, target = root / "wheels", root / "site"
    with FileLock(root / "build.lock"):
        if not (target / "emr_lineage").is_dir():
            pip = [sys.executable, "-m", "pip", "--disable-pip-version-check", "-q"]
            build = [*pip, "wheel", "--no-deps", "--no-build-isolation", "-w", str(wheels), str(REPO_ROOT)]
            subprocess.run(build, check=True)
            (wheel,) = wheels.glob("emr_lineage-*.whl")
            subprocess.run([*pip, "install", "--no-deps", "--target", str(target), str(wheel)], check=True)
    return target


def _run(installed: Path, cwd: Path, *args: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "emr_lineage", *args],
        cwd=cwd,
        env={**_environ(), "PYTHONPATH": str(installed)},
        capture_output=True,
        text=True,
        timeout=120,
    )


def _environ() -> dict[str, str]:
    return {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}


def test_the_installed_package_is_the_one_that_runs(installed: Path, tmp_path: Path) -> None:
    proc = subprocess.run(
        [sys.executable, "-c", "import emr_lineage; print(emr_lineage.__file__)"],
        cwd=tmp_path,
        env={**_environ(), "PYTHONPATH": str(installed)},
        capture_output=True,
        text=True,
        check=True,
    )
    assert Path(proc.stdout.strip()).is_relative_to(installed)
    # The sample jobs and the report's assets travel in the wheel (no link back to the checkout).
    assert (installed / "emr_lineage/pipeline/jobs/lineage_contract.yaml").is_file()
    assert not (installed / "emr_lineage/pipeline/jobs").is_symlink()
    assert (installed / "emr_lineage/lineage/report/assets/report.js").is_file()


def test_config_from_any_directory(installed: Path, tmp_path: Path) -> None:
    proc = _run(installed, tmp_path, "config", "--env", "prod", "--cdk-json", str(CDK_JSON))
    assert proc.returncode == 0, proc.stderr
    assert json.loads(proc.stdout)["name"] == "prod"
    proc = _run(installed, tmp_path, "config")  # no cdk.json here
    assert proc.returncode == 2 and proc.stderr.startswith("error: cdk.json: not found")


def test_graph_and_validate_from_any_directory(installed: Path, tmp_path: Path, demo_run: DemoRun) -> None:
    assert demo_run.returncode == 0, demo_run.stderr
    report = tmp_path / "report.html"
    proc = _run(
        installed, tmp_path, "graph", "--events", str(demo_run.events_path), "--format", "html", "-o", str(report)
    )
    assert proc.returncode == 0, proc.stderr
    assert "lineage-data" in report.read_text(encoding="utf-8")
    contract = installed / "emr_lineage/pipeline/jobs/lineage_contract.yaml"
    proc = _run(
        installed,
        tmp_path,
        "validate",
        "--contract",
        str(contract),
        "--events",
        str(demo_run.events_path),
        "--var",
        f"lake={(demo_run.out / 'lake').resolve()}",
        "--var",
        "namespace=emr-lineage-dev",
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert f"matches ({demo_run.contract_edges()} edge(s) matched)" in proc.stdout


def _imported_distributions() -> set[str]:
    """The installed distributions whose modules emr_lineage imports anywhere (lazily too)."""
    by_module = packages_distributions()
    found: set[str] = set()
    for path in (REPO_ROOT / "emr_lineage").rglob("*.py"):
        for node in ast.walk(ast.parse(path.read_text(), str(path))):
            names = [a.name for a in node.names] if isinstance(node, ast.Import) else []
            if isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
                names = [node.module]
            for name in names:
                top = name.partition(".")[0]
                if top != "emr_lineage" and top not in sys.stdlib_module_names:
                    found.update(by_module.get(top, [top]))
    return found


def _canonical(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()


def test_every_distribution_the_package_imports_is_a_declared_dependency(installed: Path) -> None:
    (metadata,) = installed.glob("emr_lineage-*.dist-info/METADATA")
    declared = {
        _canonical(re.split(r"[\s<>=!~;\[(]", line.removeprefix("Requires-Dist:").strip(), maxsplit=1)[0])
        for line in metadata.read_text().splitlines()
        if line.startswith("Requires-Dist:")
    }
    imported = {_canonical(name) for name in _imported_distributions()}
    assert imported and imported <= declared, f"imported but not in pyproject.toml dependencies: {imported - declared}"
