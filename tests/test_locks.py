"""What requirements.lock and requirements-checkov.lock install (make setup's two virtualenvs) runs on every
Python 3.11 the README's prerequisites admit: from 3.11.0 (Ubuntu 22.04's python3.11; Debian 12's is 3.11.2)."""

from __future__ import annotations

import sysconfig
from importlib import metadata
from pathlib import Path

import pytest
from packaging.specifiers import SpecifierSet

from tests.paths import REPO_ROOT

OLDEST_PYTHON = "3.11.0"


def _site_packages(venv: Path) -> Path:
    (found,) = venv.glob("lib/python*/site-packages")
    return found


@pytest.mark.parametrize(
    "site_packages",
    [Path(sysconfig.get_paths()["purelib"]), _site_packages(REPO_ROOT / ".venv-checkov")],
    ids=["venv", "venv-checkov"],
)
def test_every_installed_package_runs_on_the_oldest_python_3_11(site_packages: Path) -> None:
    requires = {
        dist.metadata["Name"]: dist.metadata["Requires-Python"]
        for dist in metadata.distributions(path=[str(site_packages)])
    }
    assert len(requires) > 50  # the virtualenv is there, with its packages
    refused = {name: spec for name, spec in requires.items() if spec and OLDEST_PYTHON not in SpecifierSet(spec)}
    assert refused == {}
