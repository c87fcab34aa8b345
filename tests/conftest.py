"""Shared fixtures. Expensive ones (CDK synth, Spark session) are session-scoped."""

from __future__ import annotations

import os
import sys
from pathlib import Path

import pytest

REPO_ROOT = Path(__file__).resolve().parent.parent
REFERENCE_DIR = REPO_ROOT.parent / "shared" / "reference"

# Node 20 makes jsii print an end-of-life banner on every CDK call.
os.environ.setdefault("JSII_SILENCE_WARNING_END_OF_LIFE_NODE_VERSION", "20")

# app.py, stacks/ and jobs/ are imported by the tests from the checkout itself.
if str(REPO_ROOT) not in sys.path:
    sys.path.insert(0, str(REPO_ROOT))


@pytest.fixture(scope="session")
def repo_root() -> Path:
    return REPO_ROOT


@pytest.fixture(scope="session")
def reference_dir() -> Path:
    """../shared/reference: OpenLineage schemas/fixtures and Marquez responses (read-only)."""
    if not REFERENCE_DIR.is_dir():
        pytest.fail(f"reference data not found at {REFERENCE_DIR}; the checkout must sit beside shared/")
    return REFERENCE_DIR


@pytest.fixture(scope="session")
def spark(tmp_path_factory):
    """One local SparkSession for the whole test run (jobs and capture tests share it).

    In-memory catalog with its warehouse in a tmp dir; UI and progress bars off.
    """
    from pyspark.sql import SparkSession

    base = tmp_path_factory.mktemp("spark")
    session = (
        SparkSession.builder.master("local[2]")
        .appName("emr-lineage-tests")
        .config("spark.sql.shuffle.partitions", "2")
        .config("spark.default.parallelism", "2")
        .config("spark.ui.enabled", "false")
        .config("spark.ui.showConsoleProgress", "false")
        .config("spark.sql.warehouse.dir", str(base / "warehouse"))
        .config("spark.driver.extraJavaOptions", f"-Dderby.system.home={base}")
        .getOrCreate()
    )
    session.sparkContext.setLogLevel("ERROR")
    yield session
    session.stop()
