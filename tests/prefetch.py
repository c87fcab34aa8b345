"""Start the test run's expensive shared results ahead of the tests, in the background.

The CDK synths (``tests/stacks/synth_cache.py``), checkov's scan of their templates right after them
(``tests/stacks/checkov_scan.py``, the same process) and the two real Spark demos
(``tests/emr_lineage/demo_run.py``) take most of two minutes of CPU. Each is made under a file lock by
whoever asks first, and the others wait for it: a worker that reaches a test needing one while
another worker makes it sits idle. Started by the controller before the workers are (one process
each), they are usually done, or under way, when the first test asks, and the two cores stay busy.
Only for a run of the whole suite: a chosen subset (``-k``, paths) makes what it needs itself.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys

import pytest

from tests.emr_lineage.demo_run import SHARED_RUNS
from tests.paths import REPO_ROOT, SYNTH_FOLDER, run_shared_dir


def _whole_suite(config: pytest.Config) -> bool:
    return (
        config.args_source == pytest.Config.ArgsSource.TESTPATHS
        and not config.option.keyword
        and not config.option.markexpr
        and not getattr(config.option, "lf", False)
    )


def start(config: pytest.Config) -> list[subprocess.Popen]:
    """The background processes started for this run (none for a worker or a chosen subset)."""
    if hasattr(config, "workerinput") or not _whole_suite(config):
        return []
    root = run_shared_dir(config._tmp_path_factory.getbasetemp())
    modules = {SYNTH_FOLDER: "tests.stacks.checkov_scan", **dict.fromkeys(SHARED_RUNS, "tests.emr_lineage.demo_run")}
    return [
        subprocess.Popen(
            [sys.executable, "-m", module, str(root / folder)],
            cwd=REPO_ROOT,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            start_new_session=True,  # its own process group: stop() ends the demo and Spark it started too
        )
        for folder, module in modules.items()
    ]


def stop(processes: list[subprocess.Popen]) -> None:
    """End what is still running (an interrupted or failed run)."""
    for process in processes:
        if process.poll() is None:
            os.killpg(process.pid, signal.SIGTERM)
        process.wait()
