"""drift: a dataset's schema history per run (added, removed, retyped) and what each change reaches."""

from __future__ import annotations

import uuid

from emr_lineage.analysis.drift import Drift, drift
from emr_lineage.analysis.impact import Lineage
from emr_lineage.analysis.runs import collect_runs
from emr_lineage.lineage.graph.history import RunHistory
from tests.emr_lineage.analysis.builders import app_run, at, dataset
from tests.emr_lineage.demo_run import DemoRun

LAKE = "s3://lake"
V1 = {"id": "string", "amount": "double", "note": "string"}
V2 = {"id": "string", "amount": "decimal(10,2)", "country": "string"}


def _drift(events: list[dict], name: str) -> Drift:
    return drift(collect_runs(RunHistory.of(events)), Lineage.of(events), name)


def _writes(fields: dict[str, str], minutes: float) -> list[dict]:
    return app_run(
        "clean",
        at(minutes),
        inputs=[dataset(f"{LAKE}/raw", {"id": "string", "price": "double"})],
        outputs=[dataset(f"{LAKE}/clean", fields, columns={"amount": [(f"{LAKE}/raw", "price")]}, output=True)],
    )


def _reader() -> list[dict]:
    return app_run(
        "report",
        at(30),
        inputs=[dataset(f"{LAKE}/clean")],
        outputs=[
            dataset(
                f"{LAKE}/report", {"total": "double"}, columns={"total": [(f"{LAKE}/clean", "amount")]}, output=True
            )
        ],
    )


def test_added_removed_and_retyped_fields_per_run_in_time_order() -> None:
    # Events out of order: the history follows event time, not arrival.
    events = _reader() + _writes(V2, 20) + _writes(V1, 0) + _writes(V1, 10)
    report = _drift(events, "s3://lake/clean")
    assert [v.fields for v in report.versions] == [V1, V1, V2]
    assert [v.job for v in report.versions] == ["clean", "clean", "clean"]
    [change] = report.changes
    assert change.version is report.versions[2]
    assert change.added == {"country": "string"}
    assert change.removed == {"note": "string"}
    assert change.retyped == {"amount": ("double", "decimal(10,2)")}
    assert change.summary == "+country string, -note string, ~amount double->decimal(10,2)"
    assert [job.name for job in change.readers] == ["report"]
    reach = {r.field: r for r in change.reaches}
    assert [(c.label, c.field) for c in reach["amount"].columns] == [("s3://lake/report", "total")]
    assert [j.name for j in reach["amount"].jobs] == ["report"]
    assert reach["note"].columns == []


def _evolves(schemas: list[dict[str, str]], minutes: float) -> list[dict]:
    """One run of ``clean`` as the listener reports an Iceberg table's evolution: an action per ALTER TABLE, each
    with the schema after it (all but the last of ``schemas``), then the write with the last."""
    run_id = str(uuid.uuid4())
    *altered, written = schemas
    events = app_run("clean", at(minutes), outputs=[dataset(f"{LAKE}/clean", written, output=True)], run_id=run_id)
    for step, fields in enumerate(altered):
        outputs = [dataset(f"{LAKE}/clean", fields, output=True)]
        # Done in the run's first seconds, before the write's action ends (a minute after the run starts).
        alter = app_run("clean", at(minutes + step / 60), outputs=outputs, run_id=run_id, seconds=3)[2]
        alter["job"]["name"] = "clean.alter_table"
        events.insert(0, alter)  # arrival order does not matter: event time does
    return events


def test_an_evolution_in_place_is_one_version_of_its_run() -> None:
    """A run that alters the table (add, drop, widen) and then writes it: one version, the schema it wrote, and
    one change from the run before it; the intermediate schemas of its ALTERs fold into it."""
    v1 = {"id": "string", "n": "integer", "note": "string"}
    added = {**v1, "country": "string"}
    dropped = {"id": "string", "n": "integer", "country": "string"}
    v2 = {"id": "string", "n": "long", "country": "string"}
    events = _writes(v1, 0) + _evolves([added, dropped, v2, v2], 10) + _reader()
    report = _drift(events, f"{LAKE}/clean")
    assert [v.fields for v in report.versions] == [v1, v2]
    [change] = report.changes
    assert change.summary == "+country string, -note string, ~n integer->long"
    assert [job.name for job in change.readers] == ["report"]


def test_a_dataset_nobody_writes_is_followed_as_an_input() -> None:
    events = app_run("a", at(0), inputs=[dataset(f"{LAKE}/src", {"x": "int"})]) + app_run(
        "b", at(5), inputs=[dataset(f"{LAKE}/src", {"x": "bigint"})]
    )
    report = _drift(events, "s3://lake/src")
    assert [v.role for v in report.versions] == ["input", "input"]
    assert report.changes[0].retyped == {"x": ("int", "bigint")}
    assert "its readers saw" in report.notes[0]


def test_nested_fields_and_no_schema() -> None:
    events = _writes(V1, 0)
    later = _writes(V1, 5)
    later[2]["outputs"][0]["facets"]["schema"]["fields"].append(
        {"name": "address", "type": "struct", "fields": [{"name": "city", "type": "string"}]}
    )
    report = _drift(events + later, f"{LAKE}/clean")
    assert report.changes[0].added == {"address": "struct", "address.city": "string"}
    empty = _drift(app_run("c", at(0), inputs=[dataset(f"{LAKE}/bare")]), f"{LAKE}/bare")
    assert empty.versions == [] and empty.notes == ["no schema facet reports this dataset"]


def test_the_demo_tables_have_one_version_each(demo_run: DemoRun) -> None:
    report = _drift(demo_run.events(), "table:customer_ltv")
    [version] = report.versions
    assert version.job == "customer_ltv" and "lifetime_value" in version.fields and report.changes == []
