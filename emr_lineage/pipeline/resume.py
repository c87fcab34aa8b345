"""What a demo has done in its --out-dir, so that ``demo --resume`` runs only what is left.

After generating the data and after each job that succeeded, the demo records in ``<out>/demo.json``
the rows it generated, the OpenLineage namespace it reported in and the jobs it ran, in order. A
resumed demo takes the same lake and events file and runs the scenario's jobs after those: the
schema-change scenario after a standard demo runs its two jobs only, and a demo whose third job
failed starts again at the third.
"""

from __future__ import annotations

import json
import os
from dataclasses import asdict, dataclass
from pathlib import Path

from emr_lineage.errors import EmrLineageError, json_type
from emr_lineage.pipeline.definition import Scenario

STATE = "demo.json"


class ResumeError(EmrLineageError):
    """--resume cannot continue what --out-dir holds (exit 2, nothing run)."""


@dataclass(frozen=True)
class DemoState:
    rows: int
    namespace: str
    jobs: tuple[str, ...] = ()

    def with_job(self, job: str) -> DemoState:
        return DemoState(self.rows, self.namespace, (*self.jobs, job))

    def save(self, out: Path) -> None:
        """Written whole, then renamed: an interrupted demo never leaves half a record."""
        partial = out / f".{STATE}.partial"
        partial.write_text(json.dumps({**asdict(self), "jobs": list(self.jobs)}) + "\n", encoding="utf-8")
        os.replace(partial, out / STATE)


def load_state(out: Path) -> DemoState:
    """The record of the demo in ``out``; :class:`ResumeError` naming the fix when there is none."""
    path = out / STATE
    if not path.is_file():
        raise ResumeError(f"--resume: {out} holds no demo to continue ({STATE} is missing); leave out --resume")
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        raise ResumeError(f"--resume: {path} is unreadable ({exc}); leave out --resume to start again") from None
    fields = (("rows", int), ("namespace", str), ("jobs", list))
    if not isinstance(data, dict) or any(not isinstance(data.get(k), t) for k, t in fields):
        found = json_type(data)
        raise ResumeError(f"--resume: {path} is not a demo record (a JSON {found}); leave out --resume to start again")
    return DemoState(data["rows"], data["namespace"], tuple(str(job) for job in data["jobs"]))


def jobs_left(state: DemoState, scenario: Scenario, *, rows: int, namespace: str, out: Path) -> tuple[str, ...]:
    """The scenario's jobs the demo recorded in ``out`` has not run; :class:`ResumeError` when the rows,
    the namespace or the jobs already run are not those of the scenario."""
    if state.rows != rows:
        raise ResumeError(f"--resume: {out} holds a demo of {state.rows} orders; give --rows {state.rows}")
    if state.namespace != namespace:
        raise ResumeError(
            f"--resume: {out} holds a demo that reported in namespace {state.namespace!r}, the settings name "
            f"{namespace!r}; choose the environment it ran with (--env)"
        )
    done = len(state.jobs)
    if state.jobs != scenario.jobs[:done]:
        raise ResumeError(
            f"--resume: {out} ran {', '.join(state.jobs)}, which scenario {scenario.name} does not begin with "
            f"({', '.join(scenario.jobs)}); leave out --resume to start again"
        )
    return scenario.jobs[done:]
