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

# curated/revenue_daily as revenue_daily (version 1) writes it and revenue_daily_v2 evolves it, in the listener's
# schema facets (Spark's type names) and in the table's Iceberg metadata (Iceberg's).
SCHEMA_V1 = {"order_date": "date", "revenue": "double", "orders": "integer", "customers": "long"}
SCHEMA_V2 = {"order_date": "date", "revenue": "double", "orders": "long", "average_order_value": "double"}
TABLE_V1 = {"order_date": "date", "revenue": "double", "orders": "int", "customers": "long"}
TABLE_V2 = {"order_date": "date", "revenue": "double", "orders": "long", "average_order_value": "double"}


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


def _table_metadata(run: DemoRun, relative: str) -> dict[str, Any]:
    """The Iceberg table's current metadata: the file the Hadoop catalog's version hint names."""
    metadata = run.out / "lake" / relative / "metadata"
    version = (metadata / "version-hint.text").read_text(encoding="utf-8").strip()
    return json.loads((metadata / f"v{version}.metadata.json").read_text(encoding="utf-8"))


def _writes_of_last_run(run: DemoRun, application: str, relative: str) -> list[tuple[str, dict, str | None, str]]:
    """Per action of ``application``'s last run that wrote ``relative``, in event order: the action's kind (the
    middle of its job name), and from its COMPLETE event the schema, the version and the lifecycle change."""
    namespace, name = _dataset(run, relative)
    runs: dict[str, list[tuple[str, dict, str | None, str]]] = {}
    for event in run.events():
        job = event["job"]["name"].split(".")
        if job[0] != application or event["eventType"] != "COMPLETE":
            continue
        for dataset in event.get("outputs", []):
            if (dataset["namespace"], dataset["name"]) == (namespace, name):
                facets = dataset["facets"]
                root_run = event["run"]["facets"]["parent"]["run"]["runId"]
                runs.setdefault(root_run, []).append(
                    (
                        job[1],
                        {f["name"]: f["type"] for f in facets["schema"]["fields"]},
                        facets.get("version", {}).get("datasetVersion"),
                        facets["lifecycleStateChange"]["lifecycleStateChange"],
                    )
                )
    return list(runs.values())[-1]


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


def test_the_runs_of_one_job_write_the_changed_dataset_with_the_designed_schemas(schema_change_run: DemoRun) -> None:
    """revenue_daily's runs before revenue_daily_v2 (the demo's, and here the reproduce scenario's reruns, which
    the shared run continues: tests/emr_lineage/demo_run.py) write version 1's schema; v2's run, the last,
    version 2's."""
    writes = _schemas(schema_change_run, "outputs", CHANGED_DATASET)
    assert list(writes) == ["revenue_daily"]  # one job
    *earlier, last = writes["revenue_daily"]
    assert earlier and all(fields == SCHEMA_V1 for fields in earlier) and last == SCHEMA_V2
    added, removed = SCHEMA_V2.keys() - SCHEMA_V1.keys(), SCHEMA_V1.keys() - SCHEMA_V2.keys()
    retyped = {f for f in SCHEMA_V1.keys() & SCHEMA_V2.keys() if SCHEMA_V1[f] != SCHEMA_V2[f]}
    assert (added, removed, retyped) == ({"average_order_value"}, {"customers"}, {"orders"})


def _snapshots(metadata: dict[str, Any]) -> tuple[dict[str, Any], dict[str, Any]]:
    """The table's current snapshot (revenue_daily_v2's write) and its parent (version 1's last write)."""
    snapshots = {snapshot["snapshot-id"]: snapshot for snapshot in metadata["snapshots"]}
    current = snapshots[metadata["current-snapshot-id"]]
    return snapshots[current["parent-snapshot-id"]], current


def test_the_table_evolved_in_place_and_keeps_its_history(schema_change_run: DemoRun) -> None:
    """The table's Iceberg metadata: version 1's schema, then one schema per ALTER TABLE of revenue_daily_v2 (the
    kept columns keep their field ids), and v2's snapshot a child of version 1's on the same table, not a new
    one."""
    metadata = _table_metadata(schema_change_run, CHANGED_DATASET)
    schemas = {schema["schema-id"]: schema["fields"] for schema in metadata["schemas"]}
    types = {schema_id: {f["name"]: f["type"] for f in fields} for schema_id, fields in schemas.items()}
    added = {**TABLE_V1, "average_order_value": "double"}
    dropped = {k: v for k, v in added.items() if k != "customers"}
    assert [types[schema_id] for schema_id in sorted(types)[-4:]] == [TABLE_V1, added, dropped, TABLE_V2]
    before, after = _snapshots(metadata)
    assert types[before["schema-id"]] == TABLE_V1 and types[after["schema-id"]] == TABLE_V2
    assert metadata["current-schema-id"] == after["schema-id"]
    ids = [{f["name"]: f["id"] for f in schemas[snapshot["schema-id"]]} for snapshot in (before, after)]
    assert {name: ids[0][name] for name in ("order_date", "revenue", "orders")} == {
        name: ids[1][name] for name in ("order_date", "revenue", "orders")
    }
    assert ids[1]["average_order_value"] not in ids[0].values()  # a new field, not customers' id reused


def test_the_listener_reports_each_alter_then_the_write(schema_change_run: DemoRun) -> None:
    """revenue_daily_v2's run: one alter_table action per ALTER TABLE, then the write with the evolved schema and
    the snapshot it committed. An ALTER's event carries the table as the listener finds it when it makes the
    event (it reads the catalog then, a moment later: maybe after the next ALTER), so its schema is one of the
    evolution's and its version a snapshot of the table, the one before the write unless the listener lagged
    behind it; the last ALTER's schema is version 2's."""
    first, second = (str(s["snapshot-id"]) for s in _snapshots(_table_metadata(schema_change_run, CHANGED_DATASET)))
    added = {**SCHEMA_V1, "average_order_value": "double"}
    dropped = {k: v for k, v in added.items() if k != "customers"}
    *alters, write = _writes_of_last_run(schema_change_run, "revenue_daily", CHANGED_DATASET)
    assert write == ("overwrite_by_expression", SCHEMA_V2, second, "OVERWRITE")
    assert [(kind, change) for kind, _, _, change in alters] == [("alter_table", "ALTER")] * 3
    assert all(fields in (added, dropped, SCHEMA_V2) for _, fields, _, _ in alters)
    assert alters[-1][1] == SCHEMA_V2
    assert {version for _, _, version, _ in alters} <= {first, second}


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
    assert [(f["name"], f["from"], f["to"]) for f in change["retyped"]] == [("orders", "integer", "long")]
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
