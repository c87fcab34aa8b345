"""Paths of the checkout the tests read (the package itself never walks up to them)."""

from __future__ import annotations

import os
from pathlib import Path

from emr_lineage.aws.artifacts import BOOTSTRAP_SCRIPT_NAME

REPO_ROOT = Path(__file__).resolve().parent.parent
BOOTSTRAP_SCRIPT = REPO_ROOT / "bootstrap" / BOOTSTRAP_SCRIPT_NAME
JOBS_DIR = REPO_ROOT / "jobs"
CDK_JSON = REPO_ROOT / "cdk.json"
# Third-party data (OpenLineage schemas and fixtures, Marquez replies): never committed here.
REFERENCE_DIR = Path(os.environ.get("EMR_LINEAGE_REFERENCE", REPO_ROOT.parent / "shared" / "reference")).resolve()
# The folder of the run's shared temporary directory that holds the synthesized assemblies
# (tests/stacks/synth_cache.py; started ahead of the tests by tests/prefetch.py).
SYNTH_FOLDER = "cdk-assemblies"


def run_shared_dir(basetemp: Path) -> Path:
    """The run's temporary directory every pytest-xdist worker shares: a worker's ``basetemp`` is a
    folder of the controller's, which is that directory (without xdist: ``basetemp`` itself)."""
    return basetemp.parent if os.environ.get("PYTEST_XDIST_WORKER") else basetemp
