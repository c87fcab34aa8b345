"""runs compare's core: two runs of one job, what differs (input versions and what changed in the table
between them, outputs, schemas, reported properties), and the runs it refuses."""

from __future__ import annotations

import pytest

from emr_lineage.analysis.compare import compare
from emr_lineage.analysis.sources import AnalysisError
from emr_lineage.analysis.table_history import Snapshot
from emr_lineage.lineage.graph.history import RunHistory
from tests.emr_lineage.analysis.builders import app_run, at, dataset

LAKE = "s3://lake"
ORDERS = (LAKE, "orders")
A, B, L, OTHER = (f"00000000-0000-4000-8000-00000000000{n}" for n in "ab1c")  # run ids


def _events() -> list[dict]:
    """``report`` reads orders at snapshot 1, ``load`` appends snapshot 2, ``report`` reads it on another Spark."""
    return (
        app_run(
            "report",
            at(0),
            run_id=A,
            inputs=[
                dataset(f"{LAKE}/orders", {"id": "int"}, version="1", rows=40),
                dataset(f"{LAKE}/fx", version="v7"),
            ],
            outputs=[dataset(f"{LAKE}/report", {"n": "int"}, version="10", output=True, rows=3)],
            spark="3.5.1",
        )
        + app_run("load", at(5), run_id=L, outputs=[dataset(f"{LAKE}/orders", version="2", output=True, rows=60)])
        + app_run(
            "report",
            at(10),
            run_id=B,
            inputs=[
                dataset(f"{LAKE}/orders", {"id": "bigint"}, version="2", rows=100),
                dataset(f"{LAKE}/fx", version="v7"),
            ],
            outputs=[dataset(f"{LAKE}/report", {"n": "int", "m": "int"}, version="11", output=True, rows=4)],
            spark="3.5.6",
        )
        + app_run("other", at(12), run_id=OTHER)
    )


EVENTS = _events()


def _compare(first: str = A, second: str = B, **kwargs):
    return compare(RunHistory.of(EVENTS), first, second, where="the events", source="events", **kwargs)


def test_an_input_read_at_another_version_is_a_change_with_the_writes_between_and_the_rest_is_not() -> None:
    result = _compare(table_snapshots=lambda ns, name: None)
    fx, orders = result.inputs
    assert (fx.uri, fx.changed, fx.writes) == ("s3://lake/fx", False, [])
    assert orders.versions == (("1",), ("2",)) and orders.changed is True
    assert orders.counts[1] == {"rowCount": 100, "size": 10000, "fileCount": 1}
    assert [(w["runId"], w["job"], w["versions"], w["statistics"]["rowCount"]) for w in orders.writes] == [
        (L, "load", ["2"], 60)
    ]
    assert result.inputs_changed == [orders] and result.as_dict()["inputsChanged"] is True
    [report] = result.outputs
    assert report.versions == (("10",), ("11",)) and [c["rowCount"] for c in report.counts] == [3, 4]


def test_schemas_and_the_reported_properties_that_differ_are_listed() -> None:
    result = _compare(table_snapshots=lambda ns, name: None)
    assert result.schemas == [
        {
            "role": "input",
            "dataset": "s3://lake/orders",
            "added": [],
            "removed": [],
            "retyped": [{"name": "id", "from": "int", "to": "bigint"}],
        },
        {
            "role": "output",
            "dataset": "s3://lake/report",
            "added": [{"name": "m", "type": "int"}],
            "removed": [],
            "retyped": [],
        },
    ]
    assert result.properties == [{"name": "processing_engine.version", "runA": "3.5.1", "runB": "3.5.6"}]


def test_the_tables_own_snapshots_between_the_two_versions_say_what_changed() -> None:
    snapshots = {
        "1": Snapshot("1", None, 1, "append", 40, 0),
        "2": Snapshot("2", "15", 3, "overwrite", 100, 40),
        "15": Snapshot("15", "1", 2, "append", 5, 0),
    }
    asked = []

    def read(namespace: str, name: str):
        asked.append((namespace, name))
        return snapshots

    for first, second in ((A, B), (B, A)):  # either order: the snapshots between, oldest first
        orders = next(d for d in _compare(first, second, table_snapshots=read).inputs if d.dataset == ORDERS)
        assert [s.snapshot_id for s in orders.snapshots] == ["15", "2"]
    assert asked == [ORDERS, ORDERS]  # only the changed input's table is read
    expired = {"2": Snapshot("2", "15", 3, "overwrite", 100, 40)}
    orders = next(d for d in _compare(table_snapshots=lambda ns, n: expired).inputs if d.dataset == ORDERS)
    assert orders.snapshots is None and orders.changed is True


def test_an_input_without_versions_cannot_tell_and_an_input_of_one_run_only_is_a_change() -> None:
    events = app_run("j", at(0), run_id=A, inputs=[dataset("s3://b/raw"), dataset("s3://b/x", version="1")])
    events += app_run("j", at(5), run_id=B, inputs=[dataset("s3://b/raw")])
    result = compare(RunHistory.of(events), A, B, where="w", source="events", table_snapshots=lambda ns, n: None)
    assert [(d.uri, d.changed, d.present) for d in result.inputs] == [
        ("s3://b/raw", None, (True, True)),
        ("s3://b/x", True, (True, False)),
    ]


def test_a_run_not_there_or_a_run_of_another_job_is_refused_with_the_fix() -> None:
    with pytest.raises(AnalysisError, match=rf"run {A}f: no run with this id in the events \(did you mean {A}"):
        _compare(A, f"{A}f")
    with pytest.raises(AnalysisError, match=r"run x: no run with this id in the events \(list them with: emr-lineage"):
        _compare(A, "x")
    with pytest.raises(AnalysisError, match=rf"run {A} is of job report, run {OTHER} of job other: compare two runs"):
        _compare(A, OTHER)
    action = next(e["run"]["runId"] for e in EVENTS if e["job"]["name"] == "report.write")
    with pytest.raises(AnalysisError, match=rf"run {action}: a Spark action's run, folded into .* run {A}"):
        _compare(action, B)
    assert [d.uri for d in _compare(level="action", first=action, second=action).inputs] == [
        "s3://lake/fx",
        "s3://lake/orders",
    ]
