"""The runs' history a graph carries (``graph --with-runs``): order-free, mergeable in parts, written
into the graph's JSON form and read back exactly; malformed events add what they hold."""

from __future__ import annotations

import copy
import random

import orjson
import pytest

from emr_lineage.lineage.graph.from_events import GraphBuilder, build_graph
from emr_lineage.lineage.graph.history import INPUT, OUTPUT, RunHistory
from emr_lineage.lineage.graph.model import GraphError, LineageGraph
from tests.emr_lineage.analysis.builders import app_run, at, dataset

LAKE = "s3://lake"


def _events() -> list[dict]:
    """``clean`` twice (its schema changes, snapshots 1 and 2), ``report`` reading snapshot 2 and failing."""

    def clean(fields: dict[str, str], minutes: float, version: str) -> list[dict]:
        out = dataset(f"{LAKE}/clean", fields, version=version, output=True, rows=10 * minutes)
        raw = dataset(f"{LAKE}/raw", {"price": "double"}, rows=7)
        return app_run("clean", at(minutes), inputs=[raw], outputs=[out], spark="3.5.6")

    reader = app_run("report", at(30), inputs=[dataset(f"{LAKE}/clean", version="2")], final="FAIL")
    return clean({"a": "int"}, 0, "1") + clean({"a": "bigint", "b": "string"}, 20, "2") + reader


def test_any_order_and_repetition_gives_the_same_history() -> None:
    events = _events()
    expected = RunHistory.of(events).to_dict()
    shuffled = events + copy.deepcopy(events[:5])
    random.Random(7).shuffle(shuffled)
    assert RunHistory.of(shuffled).to_dict() == expected
    assert len(expected) == 6  # three applications, one action each
    [report_action] = [run for run in expected if run["jobs"][0]["name"] == "report.write"]
    assert report_action["inputs"] == [{"namespace": LAKE, "name": "clean", "versions": ["2"]}]
    [second_clean] = [run for run in expected if run["outputs"] and run["outputs"][0]["versions"] == ["2"]]
    assert second_clean["outputs"][0]["statistics"] == {
        "rowCount": 200,
        "size": 20000,
        "fileCount": 1,
        "eventTime": at(20 + 59 / 60).isoformat(),  # the action's final event, a second before the application's
    }
    assert {p["name"]: p["value"] for p in second_clean["properties"]} == {
        "processing_engine.name": "spark",
        "processing_engine.version": "3.5.6",
    }
    assert [e["eventType"] for e in report_action["events"]] == ["START", "FAIL"]
    assert report_action["parents"][0]["job"] == "report"


def test_the_latest_schema_of_a_run_stands_and_a_timeless_one_counts_as_earliest() -> None:
    first, second = _events()[1:3]  # the first run's action: START (an input schema) and COMPLETE
    later = copy.deepcopy(second)
    later["eventTime"] = at(9).isoformat()
    later["outputs"][0]["facets"]["schema"]["fields"] = [{"name": "z", "type": "int"}]
    run_id = first["run"]["runId"]
    for events in ([first, second, later], [later, second, first]):
        schemas = RunHistory.of(events).runs[run_id].schemas
        assert schemas[(OUTPUT, (LAKE, "clean"))] == (at(9), (("z", "int"),))
        assert schemas[(INPUT, (LAKE, "raw"))][1] == (("price", "double"),)
    timeless = copy.deepcopy(second)
    del timeless["eventTime"]
    for events in ([later, timeless], [timeless, later]):  # it cannot be placed: the timed one stands
        schemas = RunHistory.of(events).runs[run_id].schemas
        assert schemas[(OUTPUT, (LAKE, "clean"))] == (at(9), (("z", "int"),))
    assert RunHistory.of([timeless]).runs[run_id].schemas[(OUTPUT, (LAKE, "clean"))] == (None, (("a", "int"),))


def test_histories_of_parts_merge_into_the_history_of_the_whole() -> None:
    events = _events()
    whole = build_graph(events, runs=True)
    parts = [GraphBuilder(runs=True) for _ in range(3)]
    for index, event in enumerate(events):
        parts[index % 3].add_all([event])
    merged = GraphBuilder(runs=True)
    for part in parts:
        merged.merge(part.export())
    assert merged.graph().to_dict() == whole.to_dict()
    assert whole.to_dict()["runs"] == RunHistory.of(events).to_dict()
    for mine, theirs in ((GraphBuilder(), GraphBuilder(runs=True)), (GraphBuilder(runs=True), GraphBuilder())):
        with pytest.raises(ValueError, match="with and without runs cannot be merged"):
            mine.merge(theirs.export())
    assert "runs" not in build_graph(events).to_dict()


def test_the_json_form_reads_back_exactly() -> None:
    graph = build_graph(_events(), runs=True)
    data = orjson.loads(orjson.dumps(graph.to_dict()))
    again = LineageGraph.from_dict(data)
    assert again == graph and again.history is not None
    assert orjson.dumps(again.to_dict()) == orjson.dumps(graph.to_dict())


def test_a_graph_file_written_without_statistics_and_properties_reads_with_none() -> None:
    data = orjson.loads(orjson.dumps(build_graph(_events(), runs=True).to_dict()))
    for run in data["runs"]:
        del run["properties"]
        for entry in run["inputs"] + run["outputs"]:
            entry.pop("statistics", None)
    history = LineageGraph.from_dict(data).history
    assert history is not None and len(history.runs) == 6
    assert all(not run.statistics and not run.properties for run in history.runs.values())


@pytest.mark.parametrize(
    ("runs", "says"),
    [
        ("not a list", "'runs' is not a list"),
        ([{"runId": "r"}], r"runs\[0\] has no 'schemas'"),
        (
            [{**RunHistory.of(_events()[:1]).to_dict()[0], "schemas": [{"role": "sideways"}]}],
            r"runs\[0\] is malformed \(schema role 'sideways'",
        ),
        (
            [{**RunHistory.of(_events()[:1]).to_dict()[0], "events": [{"eventTime": "noon", "eventType": "START"}]}],
            r"runs\[0\] is malformed \(Invalid isoformat string: 'noon'\)",
        ),
        (
            [{**RunHistory.of(_events()[:1]).to_dict()[0], "events": [{"eventTime": 5, "eventType": "START"}]}],
            r"runs\[0\] is malformed \(time 5 is not a string\)",
        ),
        (
            [
                {
                    **RunHistory.of(_events()[2:3]).to_dict()[0],
                    "outputs": [
                        {
                            "namespace": LAKE,
                            "name": "clean",
                            "versions": [],
                            "statistics": {"rowCount": -1, "eventTime": None},
                        }
                    ],
                }
            ],
            r"runs\[0\] is malformed \(statistics .* hold a count that is not a whole number\)",
        ),
    ],
)
def test_a_malformed_runs_section_is_not_a_graph_and_says_which_run(runs: object, says: str) -> None:
    data = build_graph(_events()).to_dict() | {"runs": runs}
    with pytest.raises(GraphError, match=f"not the JSON form of a lineage graph .*: {says}"):
        LineageGraph.from_dict(data)


def test_malformed_events_add_what_they_hold() -> None:
    good = _events()[1]
    bad_facets = copy.deepcopy(good) | {"inputs": [{"namespace": LAKE, "name": "x", "facets": ["not", "a", "map"]}]}
    history = RunHistory.of(
        [
            bad_facets,
            {"eventType": "START", "run": {"runId": "only-a-run"}},
            {"dataset": {"namespace": LAKE, "name": "static"}},  # a DatasetEvent: no run
            ["not", "an", "event"],
            {"job": {"namespace": "ns", "name": "j"}, "run": {"runId": "r2", "facets": ["broken"]}},
        ]
    )
    assert set(history.runs) == {good["run"]["runId"], "only-a-run", "r2"}
    assert history.runs[good["run"]["runId"]].inputs == {(LAKE, "x"): set()}
    assert history.runs["only-a-run"].jobs == {("(unknown)", "(unnamed)")}
    assert history.runs["r2"].jobs == {("ns", "j")} and not history.runs["r2"].moments  # stopped at the facets


def test_a_run_given_twice_in_the_json_form_is_both_merged() -> None:
    events = _events()  # an action's START and COMPLETE: one run
    first, second = RunHistory.of(events[1:2]).to_dict()[0], RunHistory.of(events[2:3]).to_dict()[0]
    assert RunHistory.from_dict([first, second]).to_dict() == RunHistory.of(events[1:3]).to_dict()


def test_an_event_time_out_of_range_and_a_malformed_version_lose_nothing_else() -> None:
    event = copy.deepcopy(_events()[2])  # an action's COMPLETE: an input and an output
    event["eventTime"] = "0001-01-01T00:00:00+01:00"  # before datetime.min once in UTC
    event["inputs"].insert(0, {"namespace": LAKE, "name": "odd", "facets": {"version": "not a facet"}})
    [run] = RunHistory.of([event]).runs.values()
    assert run.moments == {(None, "COMPLETE")}
    assert set(run.inputs) == {(LAKE, "odd"), (LAKE, "raw")} and set(run.outputs) == {(LAKE, "clean")}


def test_names_that_are_not_strings_are_not_taken_for_one_another() -> None:
    events = [
        {"eventType": "START", "run": {"runId": f"r{i}"}, "job": {"namespace": ns, "name": "j"}}
        for i, ns in enumerate((True, 1))
    ]
    history = RunHistory.of(events)
    assert {run_id: run.jobs for run_id, run in history.runs.items()} == {"r0": {("True", "j")}, "r1": {("1", "j")}}
