"""Start the test run's expensive shared results ahead of the tests, in the background.

The CDK synths (``tests/stacks/synth_cache.py``), checkov's scan of their templates right after them
(``tests/stacks/checkov_scan.py``, the same process) and the real Spark demo with its two scenarios after it
(``tests/emr_lineage/demo_run.py``, one process for the chain) take most of two minutes of CPU. Trino
(``tests/trino.py``) starts here too (about 10 s of CPU to start, then about 1.5 s a minute idle, until its
last test has ended and it stops): started by its first test instead, both xdist workers waited for it, and
the run took longer.
Each is made under a file lock by whoever asks first, and the others wait for it: a worker that reaches
a test needing one while another worker makes it sits idle. Started by the controller before the workers
are (one process each), they are usually done, or under way, when the first test asks, and the two cores
stay busy.
Only for a run of the whole suite: a chosen subset (``-k``, paths) makes what it needs itself, and
``--collect-only`` runs nothing.

Before the demos, local Spark's class archive for the listener's classpath is made if it is not there
(``make setup`` makes it; a jar fetched again or another pyspark names another one): every Spark JVM of
the run (the demos' dozen jobs, run-local, the shared session) starts from it, about 3 s of CPU less each.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest
from filelock import FileLock

from tests import trino
from tests.emr_lineage.demo_run import LAST_SHARED_RUN, SHARED_RUNS
from tests.paths import REPO_ROOT, SYNTH_FOLDER, run_shared_dir


def _whole_suite(config: pytest.Config) -> bool:
    return (
        config.args_source == pytest.Config.ArgsSource.TESTPATHS
        and not config.option.keyword
        and not config.option.markexpr
        and not getattr(config.option, "lf", False)
        and not config.option.collectonly  # nothing runs: nothing to make ahead
    )


def start(config: pytest.Config) -> list[subprocess.Popen]:
    """The background processes started for this run (none for a worker or a chosen subset)."""
    if hasattr(config, "workerinput") or not _whole_suite(config):
        return []
    root = run_shared_dir(config._tmp_path_factory.getbasetemp())
    modules = {SYNTH_FOLDER: "tests.stacks.checkov_scan", LAST_SHARED_RUN: "tests.prefetch"}
    return [trino.start_serving(root / trino.FOLDER, os.getpid())] + [
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


def class_archive_first(root: Path) -> None:
    """Local Spark's class archive for the listener's classpath (with the Iceberg runtime), made now (once per
    run: a file lock in ``root``) unless it is there; nothing when a jar is not (the demo then says so)."""
    from emr_lineage.listener.jar import ListenerError
    from emr_lineage.listener.maven import local_jars
    from emr_lineage.spark.conf import ListenerConfig, local_listener_properties
    from emr_lineage.spark.local import prepare_class_archive
    from tests.versions import DEV

    try:
        jars = local_jars(DEV.versions)
    except ListenerError:
        return
    listener = ListenerConfig.for_settings(DEV.openlineage, events_file=os.devnull)
    properties = local_listener_properties(listener, jar=str(jars.listener), beside=[str(jars.iceberg_runtime)])
    with FileLock(root / "class-archive.lock"):
        prepare_class_archive(properties)  # as listener fetch makes it


if __name__ == "__main__":  # python -m tests.prefetch FOLDER: one shared demo run, ahead of the tests
    folder = Path(sys.argv[1])
    class_archive_first(folder.parent)
    SHARED_RUNS[folder.name](folder)
