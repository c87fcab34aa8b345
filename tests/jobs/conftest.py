"""Job modules loaded from jobs/<name>.py by path (each job is a standalone spark-submit file)."""

from __future__ import annotations

import importlib.util
import sys

import pytest

from tests.paths import JOBS_DIR


def load_job(name: str):
    if str(JOBS_DIR) not in sys.path:  # as spark-submit runs a job: its folder first, for jobs/as_of.py
        sys.path.insert(0, str(JOBS_DIR))
    module_name = f"_pipeline_job_{name}"
    if module_name in sys.modules:
        return sys.modules[module_name]
    spec = importlib.util.spec_from_file_location(module_name, JOBS_DIR / f"{name}.py")
    module = importlib.util.module_from_spec(spec)
    sys.modules[module_name] = module
    spec.loader.exec_module(module)
    return module


@pytest.fixture(scope="session")
def job():
    return load_job
