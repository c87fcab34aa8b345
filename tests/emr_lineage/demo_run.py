"""One real `emr-lineage demo`, its reproduce scenario and its schema-change scenario per test run, shared by
every pytest-xdist worker.

The demo (five Spark applications, each a spark-submit run with the real listener) takes about a
minute. It runs as a user would run it (`python -m emr_lineage demo` in its own process), under a
file lock in the run's shared temporary directory: started ahead of the tests by
``tests/prefetch.py``, else by the first worker that needs it; the others wait for the lock and read
the recorded result. The files its tests read (events, report, Spark log) are copied aside when it
ends, because the reproduce scenario then continues it in the same directory (`demo --scenario reproduce
--resume`: revenue_daily's input changed, the job rerun, then run as of its first run), and the schema-change
scenario after that (`demo --scenario schema-change --resume`: its two jobs only, on the same lake). An
Iceberg table of the Hadoop catalog names its files by absolute path, so a copy of the lake is no copy.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import pytest
from filelock import FileLock

from tests.paths import REPO_ROOT, run_shared_dir

ROWS = 1500  # the schema-change scenario continues the demo: the same rows
# The real listener (the pinned jar) reports the saved model as its parts: metadata/, metadata/ of each
# of its six stages and data/ of the four that have data; at most these 11. Not always all of them:
# the metadata is written by small RDD jobs whose events the listener can lose when it lags behind
# Spark (OpenLineage #1646; seen when its transport is slow). So the counts below come from the run.
MODEL = "models/order_value_model/**"
MODEL_PARTS = 11
RESULT = "result.json"
# The demo's files its tests read, copied aside before the scenario continues the demo.
RECORDED_FILES = ("events.jsonl", "report.html", "spark.log")
# Folders of the run's shared temporary directory that hold the shared runs.
DEMO_FOLDER = "shared-demo"
SCHEMA_CHANGE_FOLDER = "shared-schema-change"
REPRODUCE_FOLDER = "shared-reproduce"


@dataclass(frozen=True)
class DemoRun:
    """The demo's output directory (whose lake the events name), its process's exit code and output, and
    where its files are as it left them (``files``: the directory itself, or a copy taken when it ended)."""

    out: Path
    returncode: int
    stdout: str
    stderr: str
    files: Path | None = None

    def file(self, name: str) -> Path:
        return (self.files or self.out) / name

    @property
    def events_path(self) -> Path:
        return self.file("events.jsonl")

    def events(self) -> list[dict]:
        if not self.events_path.exists():
            return []
        return [json.loads(line) for line in self.events_path.read_text(encoding="utf-8").splitlines()]

    def model_parts(self) -> tuple[set[str], set[str]]:
        """The model's parts (names) that train_model wrote and that score_stream read, as the events say."""
        model = f"/lake/{MODEL.removesuffix('**')}"
        parts: dict[tuple[str, str], set[str]] = {}
        for event in self.events():
            application = event["job"]["name"].split(".", 1)[0]
            for side in ("inputs", "outputs"):
                names = {d["name"] for d in event.get(side, []) if model in d["name"]}
                parts.setdefault((application, side), set()).update(names)
        return parts.get(("train_model", "outputs"), set()), parts.get(("score_stream", "inputs"), set())

    def contract_edges(self) -> int:
        """Edges of the sample pipeline's contract at application level: 9, and one per model part written
        or read."""
        written, read = self.model_parts()
        return 9 + len(written) + len(read)

    def datasets(self) -> int:
        written, read = self.model_parts()
        return 6 + len(written | read)


def _shared_run(root: Path, out: Path, options: list[str], columns: int, *, keep: bool = False) -> DemoRun:
    """The demo run into ``out`` recorded under ``root`` (run now, under a file lock, when it is not
    recorded yet); ``keep``: copy its files aside as it left them."""
    root.mkdir(parents=True, exist_ok=True)
    files = root / "files" if keep else None
    with FileLock(root / "run.lock"):
        recorded = root / RESULT
        if not recorded.exists():
            proc = subprocess.run(
                [sys.executable, "-m", "emr_lineage", "demo", *options, "--rows", str(ROWS), "--out-dir", str(out)],
                cwd=REPO_ROOT,
                capture_output=True,
                text=True,
                timeout=900,
                env={**os.environ, "COLUMNS": str(columns)},
            )
            if files is not None:
                files.mkdir(exist_ok=True)
                for name in RECORDED_FILES:
                    if (out / name).exists():
                        shutil.copy2(out / name, files / name)
            result = {"returncode": proc.returncode, "stdout": proc.stdout, "stderr": proc.stderr}
            recorded.write_text(json.dumps(result), encoding="utf-8")
        result = json.loads(recorded.read_text(encoding="utf-8"))
    return DemoRun(out=out, files=files, **result)


def shared_demo(root: Path) -> DemoRun:
    """The standard demo recorded under ``root``."""
    return _shared_run(root, root / "demo", [], columns=160, keep=True)


def shared_reproduce(root: Path) -> DemoRun:
    """``demo --scenario reproduce --resume`` recorded under ``root``: the standard demo of the run's shared
    folder beside ``root``, continued in its directory (its files copied aside as it left them)."""
    demo = shared_demo(root.parent / DEMO_FOLDER)
    return _shared_run(root, demo.out, ["--scenario", "reproduce", "--resume"], columns=200, keep=True)


def shared_schema_change(root: Path) -> DemoRun:
    """``demo --scenario schema-change --resume`` recorded under ``root``: the standard demo of the run's
    shared folder beside ``root``, reproduced, then continued in its directory."""
    demo = shared_reproduce(root.parent / REPRODUCE_FOLDER)
    options = ["--scenario", "schema-change", "--resume"]
    return _shared_run(root, demo.out, options, columns=200)


def shared_folder(tmp_path_factory: pytest.TempPathFactory, name: str) -> Path:
    """``name`` in the run's temporary directory that every xdist worker shares."""
    return run_shared_dir(tmp_path_factory.getbasetemp()) / name


SHARED_RUNS = {
    DEMO_FOLDER: shared_demo,
    REPRODUCE_FOLDER: shared_reproduce,
    SCHEMA_CHANGE_FOLDER: shared_schema_change,
}
LAST_SHARED_RUN = SCHEMA_CHANGE_FOLDER  # each shared run continues the one before: making the last makes them all


if __name__ == "__main__":  # python -m tests.emr_lineage.demo_run FOLDER: one shared run, ahead of the tests
    folder = Path(sys.argv[1])
    SHARED_RUNS[folder.name](folder)
