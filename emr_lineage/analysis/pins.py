"""The pins of a run: the snapshot of each Iceberg table it read, by catalog table name, so that a job can
read its inputs again as that run read them (jobs/as_of.py reads this document; docs/analysis.md).

An input is pinned when the run read one version of it (the ``version`` facet) and the events name its
catalog table (the ``catalog`` and ``symlinks`` facets); every other input is listed as unpinned with why.
"""

from __future__ import annotations

from typing import Any

from emr_lineage.analysis.runs import RunRecord, collect_runs
from emr_lineage.analysis.sources import AnalysisError
from emr_lineage.lineage.graph.history import RunHistory
from emr_lineage.lineage.naming import dataset_uri
from emr_lineage.lineage.times import placed


def run_pins(run: RunRecord) -> dict[str, Any]:
    """``{"runId", "job", "tables": {table: snapshot id}, "unpinned": [{"dataset", "why"}]}`` of ``run``."""
    tables: dict[str, str] = {}
    unpinned = []
    for key in sorted(run.inputs):
        versions, table = run.inputs[key], run.tables.get(key)
        why = None
        if not versions:
            why = "no version reported (not an Iceberg or Delta table?)"
        elif len(versions) > 1:
            why = f"read at {len(versions)} versions: {', '.join(sorted(versions))}"
        elif table is None:
            why = "the events name no catalog table for it"
        if why is None:
            tables[table] = next(iter(versions))
        else:
            unpinned.append({"dataset": dataset_uri(*key), "why": why})
    return {"runId": run.run_id, "job": run.job, "tables": tables, "unpinned": unpinned}


def last_run(history: RunHistory, job: str) -> dict[str, Any]:
    """The last run of ``job`` (latest start): ``{"runId", "pins": run_pins(...), "outputs": {table: version}}``.

    An output table's version is the one the run wrote: of the versions its events report, the one no earlier
    run reported (the listener may also name the table's snapshot before the write); none when that is unclear.
    """
    runs = collect_runs(history)
    mine = [run for run in runs if run.job == job]
    if not mine:
        raise AnalysisError(f"no run of job {job} in the events")
    run = max(mine, key=lambda r: (placed(r.start), r.run_id))
    earlier = {
        version
        for other in runs
        if other is not run and placed(other.start) < placed(run.start)
        for side in (other.inputs, other.outputs)
        for versions in side.values()
        for version in versions
    }
    outputs = {}
    for key, versions in run.outputs.items():
        new = versions - earlier if len(versions) > 1 else versions
        if key in run.tables and len(new) == 1:
            outputs[run.tables[key]] = next(iter(new))
    return {"runId": run.run_id, "pins": run_pins(run), "outputs": outputs}
