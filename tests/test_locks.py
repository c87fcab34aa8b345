"""What requirements.lock and requirements-checkov.lock install (make setup's two virtualenvs) runs on the
oldest Python 3.11 the README's prerequisites admit: Debian 12's python3.11 package, 3.11.2."""

from __future__ import annotations

import sysconfig
from importlib import metadata
from pathlib import Path

import pytest
from packaging.specifiers import SpecifierSet

from tests.paths import REPO_ROOT

OLDEST_PYTHON = "3.11.2"
CHECKOV_SITE_PACKAGES = REPO_ROOT / ".venv-checkov" / "lib" / "python3.11" / "site-packages"


@pytest.mark.parametrize(
    "site_packages", [Path(sysconfig.get_paths()["purelib"]), CHECKOV_SITE_PACKAGES], ids=["venv", "venv-checkov"]
)
def test_every_installed_package_runs_on_debian_12s_python(site_packages: Path) -> None:
    requires = {
        dist.metadata["Name"]: dist.metadata["Requires-Python"]
        for dist in metadata.distributions(path=[str(site_packages)])
    }
    assert len(requires) > 50  # the virtualenv is there, with its packages
    refused = {name: spec for name, spec in requires.items() if spec and OLDEST_PYTHON not in SpecifierSet(spec)}
    assert refused == {}
