"""One real `emr-lineage demo` per test run, shared by every pytest-xdist worker.

The demo (five Spark applications on local Spark) takes most of a minute. The first worker that
needs it runs it, as a user would (`python -m emr_lineage demo` in its own process), under a file
lock in the run's shared temporary directory; the others read its recorded result.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

from filelock import FileLock

from tests.paths import REPO_ROOT

ROWS = 1500
RESULT = "result.json"


@dataclass(frozen=True)
class DemoRun:
    """The demo's output directory and its process's exit code and output."""

    out: Path
    returncode: int
    stdout: str
    stderr: str

    @property
    def events_path(self) -> Path:
        return self.out / "events.jsonl"

    def events(self) -> list[dict]:
        if not self.events_path.exists():
            return []
        return [json.loads(line) for line in self.events_path.read_text(encoding="utf-8").splitlines()]


def shared_demo(root: Path) -> DemoRun:
    """The demo run recorded under ``root`` (run now when it is not there yet)."""
    root.mkdir(parents=True, exist_ok=True)
    out = root / "demo"
    with FileLock(root / "demo.lock"):
        recorded = root / RESULT
        if not recorded.exists():
            proc = subprocess.run(
                [sys.executable, "-m", "emr_lineage", "demo", "--out", str(out), "--rows", str(ROWS)],
                cwd=REPO_ROOT,
                capture_output=True,
                text=True,
                timeout=900,
                env={**os.environ, "COLUMNS": "160"},
            )
            result = {"returncode": proc.returncode, "stdout": proc.stdout, "stderr": proc.stderr}
            recorded.write_text(json.dumps(result), encoding="utf-8")
        result = json.loads(recorded.read_text(encoding="utf-8"))
    return DemoRun(out=out, **result)
