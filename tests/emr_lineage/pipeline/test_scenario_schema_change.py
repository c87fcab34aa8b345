"""`emr-lineage demo --scenario schema-change`: one real run (the CLI in its own process, local Spark,
the real listener), shared by every test here and every xdist worker, and the scenario's definition without
Spark."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
import yaml

from emr_lineage.lineage.naming import dataset_identity
from emr_lineage.pipeline.definition import (
    CHANGED_DATASET,
    CONTRACT,
    PIPELINE,
    SCENARIOS,
    SCHEMA_CHANGE,
    application_name,
)
from emr_lineage.pipeline.demo import DemoError, run_demo
from tests.emr_lineage.demo_run import (
    SCHEMA_CHANGE_FOLDER,
    DemoRun,
    shared_folder,
    shared_schema_change,
)

# curated/revenue_daily as revenue_daily (version 1) and revenue_daily_v2 write it.
SCHEMA_V1 = {"order_date": "date", "revenue": "double", "orders": "long", "customers": "long"}
SCHEMA_V2 = {"order_date": "date", "revenue": "decimal(18,2)", "orders": "long", "average_order_value": "decimal(18,2)"}


@pytest.fixture(scope="session")
def schema_change_run(tmp_path_factory: pytest.TempPathFactory) -> DemoRun:
    return shared_schema_change(shared_folder(tmp_path_factory, SCHEMA_CHANGE_FOLDER))


def _dataset(run: DemoRun, relative: str) -> tuple[str, str]:
    return dataset_identity(str(run.out.resolve() / "lake" / relative))


def _schemas(run: DemoRun, side: str, relative: str) -> dict[str, list[dict[str, str]]]:
    """Application -> schema of ``relative`` per application run that has it on ``side``, in run order."""
    namespace, name = _dataset(run, relative)
    found: dict[str, dict[str, dict[str, str]]] = {}
    for event in run.events():
        for dataset in event.get(side, []):
            fields = dataset.get("facets", {}).get("schema", {}).get("fields")
            if (dataset["namespace"], dataset["name"]) == (namespace, name) and fields:
                application = event["job"]["name"].split(".", 1)[0]
                root_run = event["run"]["facets"]["parent"]["run"]["runId"]
                found.setdefault(application, {})[root_run] = {f["name"]: f["type"] for f in fields}
    return {application: list(runs.values()) for application, runs in found.items()}


def test_the_scenario_continues_the_demo_and_its_lineage_matches_its_contract(schema_change_run: DemoRun) -> None:
    """Resumed after the standard demo, the scenario runs its two jobs only, counted from the sixth step,
    and validates the lineage of all seven."""
    run = schema_change_run
    assert run.returncode == 0, run.stdout + run.stderr
    assert "scenario schema-change" in run.stdout
    assert f"lineage matches lineage_contract_schema_change.yaml: {run.contract_edges() + 2} edges" in run.stdout
    for job in PIPELINE:
        assert f"{job} (earlier run)" in run.stdout and f"] {job}: " not in run.stderr
    steps = len(SCHEMA_CHANGE.jobs) + 2
    lines = [line.split("] ", 1)[1] for line in run.stderr.splitlines()]
    added = list(enumerate(SCHEMA_CHANGE.jobs, 1))[len(PIPELINE) :]
    assert [line for line in lines if line.startswith("running ")] == [f"running {j}: {n}/{steps}" for n, j in added]
    for _, job in added:
        assert any(line.startswith(f"{job}: ") for line in lines)  # its time and events, on stderr (docs/cli.md)


def test_two_runs_write_the_changed_dataset_with_the_designed_schemas(schema_change_run: DemoRun) -> None:
    writes = _schemas(schema_change_run, "outputs", CHANGED_DATASET)
    assert writes == {"revenue_daily": [SCHEMA_V1, SCHEMA_V2]}  # one job, two runs, two schemas
    added, removed = SCHEMA_V2.keys() - SCHEMA_V1.keys(), SCHEMA_V1.keys() - SCHEMA_V2.keys()
    retyped = {f for f in SCHEMA_V1.keys() & SCHEMA_V2.keys() if SCHEMA_V1[f] != SCHEMA_V2[f]}
    assert (added, removed, retyped) == ({"average_order_value"}, {"customers"}, {"revenue"})


def test_the_downstream_job_reads_the_changed_dataset_after_the_change(schema_change_run: DemoRun) -> None:
    reads = _schemas(schema_change_run, "inputs", CHANGED_DATASET)
    assert reads == {"revenue_weekly": [SCHEMA_V2]}
    writes = _schemas(schema_change_run, "outputs", "curated/revenue_weekly")
    assert writes == {"revenue_weekly": [{"week_start": "date", "revenue": "double", "orders": "long"}]}
    names = [e["job"]["name"].split(".", 1)[0] for e in schema_change_run.events() if e["eventType"] == "COMPLETE"]
    last_write = max(i for i, n in enumerate(names) if n == "revenue_daily")
    assert min(i for i, n in enumerate(names) if n == "revenue_weekly") > last_write


def test_the_report_shows_the_change_on_the_changed_dataset(schema_change_run: DemoRun) -> None:
    page = schema_change_run.file("report.html").read_text(encoding="utf-8")
    payload = json.loads(page.split("id='lineage-data'>", 1)[1].split("</script>", 1)[0])
    namespace, name = _dataset(schema_change_run, CHANGED_DATASET)
    [change] = payload["drift"][f"dataset:{namespace}:{name}"]
    assert change["job"] == "revenue_daily"  # its second run, the revenue_daily_v2 script
    assert [f["name"] for f in change["added"]] == ["average_order_value"]
    assert [f["name"] for f in change["removed"]] == ["customers"]
    assert [(f["name"], f["from"], f["to"]) for f in change["retyped"]] == [("revenue", "double", "decimal(18,2)")]
    assert [r["name"] for r in change["readers"]] == ["revenue_weekly"]


# --- the definition, without Spark ----------------------------------------------------------


def test_the_scenario_contract_is_the_pipelines_plus_the_reader() -> None:
    standard = yaml.safe_load(CONTRACT.read_text(encoding="utf-8"))
    scenario: dict[str, Any] = yaml.safe_load(SCHEMA_CHANGE.contract.read_text(encoding="utf-8"))
    assert scenario["jobs"][: len(standard["jobs"])] == standard["jobs"]
    assert [j["name"] for j in scenario["jobs"][len(standard["jobs"]) :]] == ["revenue_weekly"]
    assert {k: v for k, v in scenario.items() if k not in ("jobs", "description")} == {
        k: v for k, v in standard.items() if k not in ("jobs", "description")
    }


def test_the_scenarios_and_their_jobs() -> None:
    assert SCENARIOS["standard"].jobs == PIPELINE
    assert SCHEMA_CHANGE.jobs == (*PIPELINE, "revenue_daily_v2", "revenue_weekly")
    assert application_name("revenue_daily_v2") == "revenue_daily"
    assert application_name("revenue_weekly") == "revenue_weekly"
    for job in SCHEMA_CHANGE.jobs:
        text = (SCHEMA_CHANGE.contract.parent / f"{job}.py").read_text(encoding="utf-8")
        assert f'APP_NAME = "{application_name(job)}"' in text


def test_an_unknown_scenario_is_refused_before_anything_runs(tmp_path: Path, listener_lineage) -> None:
    with pytest.raises(DemoError, match="no such scenario .* standard, schema-change"):
        run_demo(tmp_path / "out", 200, lineage=listener_lineage, scenario="bogus")
    assert not (tmp_path / "out").exists()
