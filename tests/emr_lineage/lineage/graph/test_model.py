"""The lineage graph model: merging partial events, levels, aliases, column lineage, Marquez."""

from __future__ import annotations

import json
import pickle
import random
from pathlib import Path

import orjson
import pytest

from emr_lineage.lineage.events.reader import load_events
from emr_lineage.lineage.graph.from_events import GraphBuilder, build_graph
from emr_lineage.lineage.graph.model import GraphError, LineageGraph
from emr_lineage.lineage.report.render import json_bytes
from tests.emr_lineage.lineage.rule_events import completed

LAKE = "s3://lake"
NS = "emr-lineage-dev"


@pytest.fixture(scope="session")
def pipeline_events(gen) -> list[dict]:
    return gen.pipeline(LAKE, NS)


def test_application_level_folds_actions_into_their_application(pipeline_events) -> None:
    graph = build_graph(pipeline_events)
    assert graph.level == "application"
    assert graph.jobs() == [
        f"job:{NS}:{app}"
        for app in sorted(["ingest_orders", "revenue_daily", "customer_ltv", "train_model", "score_stream"])
    ]
    ingest = f"job:{NS}:ingest_orders"
    assert graph.inputs_of(ingest) == ["dataset:s3://lake:raw/orders"]
    assert graph.outputs_of(ingest) == ["dataset:s3://lake:clean/orders_clean"]
    assert graph.nodes[ingest]["actions"] == [
        "ingest_orders.execute_insert_into_hadoop_fs_relation_command.clean_orders_clean"
    ]
    assert graph.nodes[ingest]["states"] == ["COMPLETE"]
    assert graph.inputs_of(f"job:{NS}:score_stream") == [
        "dataset:s3://lake:models/order_value_model",
        "dataset:s3://lake:raw/orders_stream",
    ]


def test_action_level_keeps_one_job_per_action(pipeline_events) -> None:
    graph = build_graph(pipeline_events, level="action")
    action = f"job:{NS}:ingest_orders.execute_insert_into_hadoop_fs_relation_command.clean_orders_clean"
    assert action in graph.jobs()
    assert graph.inputs_of(action) == ["dataset:s3://lake:raw/orders"]
    # The application jobs themselves have no datasets of their own.
    assert graph.inputs_of(f"job:{NS}:ingest_orders") == [] and graph.outputs_of(f"job:{NS}:ingest_orders") == []
    assert len(graph.jobs()) == 10


def test_partial_events_of_a_run_are_merged(pipeline_events) -> None:
    # START carries only the inputs, COMPLETE only the outputs: the run has both.
    starts = [e for e in pipeline_events if e["eventType"] == "START" and e.get("inputs")]
    assert starts and all(not e.get("outputs") for e in starts)
    graph = build_graph(pipeline_events, level="action")
    for start in starts:
        job_id = f"job:{start['job']['namespace']}:{start['job']['name']}"
        assert graph.inputs_of(job_id) and graph.outputs_of(job_id)


@pytest.mark.parametrize("level", ["application", "action"])
def test_same_graph_for_any_permutation_and_duplication(pipeline_events, level: str) -> None:
    reference = build_graph(pipeline_events, level=level).to_dict()
    rng = random.Random(20261121)
    for _ in range(60):
        shuffled = list(pipeline_events) + rng.sample(pipeline_events, rng.randint(0, len(pipeline_events)))
        rng.shuffle(shuffled)
        assert build_graph(shuffled, level=level).to_dict() == reference


@pytest.mark.parametrize("level", ["application", "action"])
def test_builders_of_parts_merge_into_the_graph_of_the_whole(gen, level: str) -> None:
    """How a graph read in two processes is put together: each builds from its part of the
    events (split at random, overlapping runs and datasets), one merges the other's export
    (pickled, as it crosses the pipe)."""
    glue = ("arn:aws:glue:eu-west-1:123456789012", "table/analytics/customer_ltv", "TABLE")
    events = gen.pipeline("s3://lake", NS, table=glue)
    reference = build_graph(events, level=level).to_dict()
    assert reference["columnEdges"] and any(node.get("aliases") for node in reference["nodes"])
    rng = random.Random(14)
    for _ in range(20):
        mine, theirs = GraphBuilder(), GraphBuilder()
        for event in events:
            (mine if rng.random() < 0.5 else theirs).add_all([event])
        mine.merge(pickle.loads(pickle.dumps(theirs.export())))
        assert mine.graph(level).to_dict() == reference


def test_multi_application_sets_with_many_actions(gen) -> None:
    events = []
    for app_index in range(12):
        actions = [
            gen.Action(f"step_{i}", [f"s3://lake/app{app_index}/in_{i}"], [f"s3://lake/app{app_index}/out_{i}"])
            for i in range(8)
        ]
        events += gen.application(f"app_{app_index}", NS, actions)
    graph = build_graph(events)
    assert len(graph.jobs()) == 12
    assert len(graph.datasets()) == 12 * 16
    assert graph.outputs_of(f"job:{NS}:app_3") == sorted(f"dataset:s3://lake:app3/out_{i}" for i in range(8))
    assert sorted(graph.nodes[f"job:{NS}:app_3"]["actions"]) == [f"app_3.step_{i}" for i in range(8)]
    assert len(build_graph(events, level="action").jobs()) == 12 * 9


def test_orchestrator_parent_does_not_swallow_applications(gen) -> None:
    # spark.openlineage.parent* makes the application's own parent an Airflow task.
    events = gen.application(
        "daily_etl", NS, [gen.Action("write", ["s3://lake/a"], ["s3://lake/b"])], orchestrator=("airflow", "dag.task")
    )
    graph = build_graph(events)
    assert graph.jobs() == [f"job:{NS}:daily_etl"]


def test_catalog_symlinks_are_kept_as_aliases(gen) -> None:
    glue = ("arn:aws:glue:eu-west-1:123456789012", "table/analytics/customer_ltv", "TABLE")
    graph = build_graph(gen.pipeline("s3://lake", NS, table=glue))
    node = graph.nodes["dataset:s3://lake:warehouse/customer_ltv"]
    assert node["aliases"] == [{"namespace": glue[0], "name": glue[1], "type": "TABLE"}]


@pytest.mark.parametrize("width", [3, 40])  # facets merged again / skipped as a repeat (fingerprinted)
def test_facets_reported_again_or_changed_are_all_merged(width: int) -> None:
    def event(types: dict[str, str]) -> dict:
        fields = [{"name": name, "type": kind} for name, kind in types.items()]
        dataset = {"namespace": "s3://lake", "name": "t", "facets": {"schema": {"fields": fields}}}
        return {"job": {"namespace": NS, "name": "j"}, "run": {"runId": "r"}, "outputs": [dataset]}

    first = {f"c{i}": "string" for i in range(width)}
    changed = first | {"c0": "int"}
    for order in ([first, first, changed, first], [changed, first, first, changed]):
        fields = build_graph([event(types) for types in order]).nodes["dataset:s3://lake:t"]["fields"]
        assert fields[0] == {"name": "c0", "type": "int|string"}
        assert len(fields) == width and all(f["type"] == "string" for f in fields[1:])


@pytest.mark.parametrize(
    "facets",
    [
        {"schema": {"fields": [{"name": "a", "type": "string"}, "oops"]}},
        {"schema": [1]},
        {"columnLineage": {"fields": 5}},
        {"columnLineage": {"fields": [1]}},
        {"columnLineage": {"fields": {"a": {"inputFields": ["x"]}}}},
        {"symlinks": {"identifiers": ["x"]}},
        {"schema": {"fields": [{"name": f"c{i}", "type": "string"} for i in range(20)] + ["oops"]}},  # fingerprinted
    ],
)
def test_malformed_facets_of_an_unchecked_event_are_merged_up_to_the_bad_part(facets: dict) -> None:
    """Events read without schema checks (no schemas, lenient) may hold anything: the graph is
    still built, with what the facets hold before their first malformed part."""
    dataset = {"namespace": "s3://lake", "name": "t", "facets": facets}
    event = {"job": {"namespace": NS, "name": "j"}, "run": {"runId": "r"}, "outputs": [dataset]}
    node = build_graph([event, event]).nodes["dataset:s3://lake:t"]
    schema = facets.get("schema")
    expected = [f for f in schema["fields"] if isinstance(f, dict)] if isinstance(schema, dict) else []
    assert node["fields"] == sorted(expected, key=lambda f: f["name"])


def test_column_lineage_from_column_lineage_facets(pipeline_events) -> None:
    graph = build_graph(pipeline_events)
    assert {
        "source": "datasetField:s3://lake:clean/orders_clean:amount",
        "target": "datasetField:s3://lake:curated/revenue_daily:revenue",
        "transformation": "DIRECT",
    } in graph.column_edges
    assert graph.nodes["dataset:s3://lake:curated/revenue_daily"]["fields"] == [
        {"name": "amount", "type": "string"},
        {"name": "order_id", "type": "string"},
        {"name": "revenue", "type": "string"},
    ]


def real_fragments(ol_fixtures_dir: Path, folder: Path) -> list[dict]:
    """The OpenLineage Spark integration's fragments, completed with the envelope and the rest the event rule
    demands (tests/emr_lineage/lineage/rule_events.py), as read from files."""
    for path in sorted(ol_fixtures_dir.glob("ol_container_*.json")):
        (folder / path.name).write_text(json.dumps(completed(json.loads(path.read_text()))))
    return load_events([folder]).events


def test_real_fixture_fragments(ol_fixtures_dir: Path, tmp_path: Path) -> None:
    loaded = real_fragments(ol_fixtures_dir, tmp_path)
    graph = build_graph(loaded)
    # Hadoop FS relation: file inputs/outputs, Hive symlink of the output.
    hadoop = (
        "job:testPysparkSQLHadoopFSTest:open_lineage_integration_hadoop_fs_relation."
        "execute_insert_into_hadoop_fs_relation_command.warehouse_target"
    )
    assert graph.inputs_of(hadoop) == ["dataset:file:/tmp/warehouse/test"]
    assert graph.outputs_of(hadoop) == ["dataset:file:/tmp/warehouse/target"]
    assert graph.nodes["dataset:file:/tmp/warehouse/target"]["aliases"] == [
        {"namespace": "file:/tmp/warehouse", "name": "default.target", "type": "TABLE"}
    ]
    assert graph.nodes["dataset:file:/tmp/warehouse/test"]["aliases"] == [
        {"namespace": "hive://metastore", "name": "default.test", "type": "TABLE"}
    ]
    # CTAS: column lineage a->a, b->b.
    assert {e["source"] + ">" + e["target"] for e in graph.column_edges} >= {
        "datasetField:file:/tmp/ctas_load/temp:a>datasetField:file:/tmp/ctas_load/tbl1:a",
        "datasetField:file:/tmp/ctas_load/temp:b>datasetField:file:/tmp/ctas_load/tbl1:b",
    }
    # Application level: the action-level START (named by the completion: the fragment has no name) folds
    # into its application; the application is not folded into its external parent "parent-job".
    application = "job:generic-namespace:generic_integration_test"
    assert application in graph.jobs()
    assert not any("parent-job" in j for j in graph.jobs())
    assert graph.nodes[application]["actions"] == ["generic-namespace.job"]
    assert len(build_graph(loaded, level="action").jobs()) == len(graph.jobs()) + 1
    # The graph itself holds no event to the rule: built from the fragments as they are, the nameless
    # action folds in as "(unnamed)".
    raw = [json.loads(path.read_text()) for path in sorted(ol_fixtures_dir.glob("ol_container_*.json"))]
    assert build_graph(raw).nodes[application]["actions"] == ["(unnamed)"]


def test_real_column_lineage_facet(ol_fixtures_dir: Path) -> None:
    facet = json.loads((ol_fixtures_dir / "ol_spec_tests_ColumnLineageDatasetFacet_2.json").read_text())
    event = {
        "eventType": "COMPLETE",
        "job": {"namespace": "ns", "name": "people_job"},
        "run": {"runId": "3f5e83fa-3480-44ff-99c5-ff943904e5e8"},
        "outputs": [{"namespace": "s3://test-bucket", "name": "out/people", "facets": facet}],
    }
    graph = build_graph([event])
    by_target = {e["target"]: e for e in graph.column_edges}
    assert by_target["datasetField:s3://test-bucket:out/people:ageNextYear"] == {
        "source": "datasetField:s3://test-bucket:/iceberg_warehouse/some-database/people:age",
        "target": "datasetField:s3://test-bucket:out/people:ageNextYear",
        "transformation": "DIRECT",
    }
    assert len(graph.column_edges) == 4


def test_json_form_is_sorted_and_documented(pipeline_events) -> None:
    form = build_graph(pipeline_events).to_dict()
    assert set(form) == {"level", "nodes", "edges", "columnEdges"}
    ids = [n["id"] for n in form["nodes"]]
    assert ids == sorted(ids)
    assert form["edges"] == sorted(form["edges"], key=lambda e: (e["source"], e["target"]))
    assert all(n["type"] in ("JOB", "DATASET") for n in form["nodes"])
    assert json.loads(json.dumps(form)) == form


def test_unknown_level_is_refused() -> None:
    with pytest.raises(GraphError, match="unknown level 'job'"):
        build_graph([], level="job")


def test_layers_place_producers_before_consumers(pipeline_events) -> None:
    graph = build_graph(pipeline_events)
    column = {node: i for i, layer in enumerate(graph.layers()) for node in layer}
    for source, target in graph.edges():
        assert column[source] < column[target]


# --- Marquez ----------------------------------------------------------------------------------


def test_fast_and_tolerant_paths_agree(pipeline_events) -> None:
    # Complete events take the fast path; dropping an optional key sends an event down the
    # tolerant path. Both must merge the same way.
    fragments = []
    for event in pipeline_events:
        trimmed = {k: v for k, v in event.items() if k not in ("eventTime", "producer", "schemaURL")}
        if not trimmed.get("outputs"):
            trimmed.pop("outputs", None)
        fragments.append(trimmed)
    assert any("outputs" not in f for f in fragments) and any("outputs" in f for f in fragments)
    for level in ("application", "action"):
        assert build_graph(fragments, level=level).to_dict() == build_graph(pipeline_events, level=level).to_dict()


def test_events_sharing_nothing_but_a_job_without_run_ids() -> None:
    # Fragments without runId: one run per job, still merged from all fragments.
    start = {
        "eventType": "START",
        "job": {"namespace": "n", "name": "j"},
        "inputs": [{"namespace": "s3://b", "name": "in"}],
    }
    complete = {
        "eventType": "COMPLETE",
        "job": {"namespace": "n", "name": "j"},
        "outputs": [{"namespace": "s3://b", "name": "out"}],
    }
    graph = build_graph([complete, start, complete])
    assert graph.edges() == [("dataset:s3://b:in", "job:n:j"), ("job:n:j", "dataset:s3://b:out")]
    assert graph.nodes["job:n:j"]["states"] == ["COMPLETE"] and graph.nodes["job:n:j"]["runs"] == 1


@pytest.mark.parametrize("level", ["application", "action"])
def test_the_json_form_is_the_same_before_and_after_networkx_is_built(
    gen, ol_fixtures_dir: Path, tmp_path: Path, level: str
) -> None:
    """A graph from events writes its JSON form without making the networkx graph; making it
    (as any question about the graph does) changes nothing in that form."""
    fragments = real_fragments(ol_fixtures_dir, tmp_path)
    one_id = {  # two datasets whose namespace and name make one node id
        "eventType": "COMPLETE",
        "job": {"namespace": "ns", "name": "j"},
        "run": {"runId": "r1"},
        "inputs": [{"namespace": "s3:b", "name": "x"}, {"namespace": "s3", "name": "b:x"}],
        "outputs": [],
    }
    for events in (gen.pipeline(LAKE, NS), fragments, [one_id]):
        graph = build_graph(events, level=level)
        assert graph._digraph is None
        before = graph.to_dict()
        assert before["nodes"] and before["edges"]
        assert graph.digraph.number_of_nodes() == len(before["nodes"])
        assert graph.to_dict() == before
        assert json_bytes(graph) == orjson.dumps(before, option=orjson.OPT_INDENT_2 | orjson.OPT_SORT_KEYS)


def _answers(graph: LineageGraph) -> tuple:
    ids = sorted(graph.nodes)
    return dict(graph.nodes), graph.edges(), [(graph.inputs_of(n), graph.outputs_of(n)) for n in [*ids, "job:n:none"]]


def test_bulk_added_nodes_and_edges_answer_as_networkx_does() -> None:
    """add_bulk twice, an id given twice, a node known only from an edge, a repeated edge:
    the answers before networkx is made are those after, and adding one node after still works."""
    graph = LineageGraph()
    job = {"id": "job:n:j", "type": "JOB", "namespace": "n", "name": "j"}
    graph.add_bulk([("job:n:j", dict(job))], [("dataset:n:a", "job:n:j")])
    assert graph.inputs_of("job:n:j") == ["dataset:n:a"] and graph.outputs_of("job:n:j") == []
    dataset = {"id": "dataset:n:a", "type": "DATASET", "namespace": "n", "name": "a"}
    graph.add_bulk(
        [("dataset:n:a", dataset), ("job:n:j", {"runs": 2})],
        [("dataset:n:a", "job:n:j"), ("job:n:j", "dataset:n:b")],
    )
    before = _answers(graph)
    assert before[0]["job:n:j"] == job | {"runs": 2} and before[0]["dataset:n:b"] == {}
    assert before[2][2] == (["dataset:n:a"], ["dataset:n:b"])  # job:n:j, the third id
    with pytest.raises(TypeError):
        graph.nodes["x"] = {}  # type: ignore[index]  # read-only
    assert graph._digraph is None
    graph.digraph  # noqa: B018 - made here
    assert _answers(graph) == before
    graph.add_dataset("n", "c")
    graph.add_edge("job:n:j", "dataset:n:c")
    assert graph.outputs_of("job:n:j") == ["dataset:n:b", "dataset:n:c"]


def test_a_builder_assembles_its_graph_once(pipeline_events) -> None:
    builder = GraphBuilder()
    builder.add_all(pipeline_events)
    assert builder.graph().jobs()
    with pytest.raises(RuntimeError, match="once"):
        builder.graph()


def test_static_lineage_job_and_dataset_events() -> None:
    """A JobEvent is its job's lineage; a DatasetEvent adds its dataset, and no job of no name."""
    job_event = {
        "eventTime": "2026-11-21T12:00:00Z",
        "job": {"namespace": "airflow", "name": "nightly.load"},
        "inputs": [{"namespace": "s3://lake", "name": "raw/orders"}],
        "outputs": [{"namespace": "s3://lake", "name": "clean/orders"}],
    }
    dataset_event = {"eventTime": "2026-11-21T12:00:00Z", "dataset": {"namespace": "s3://lake", "name": "dim/dates"}}
    graph = build_graph([job_event, dataset_event])
    assert graph.jobs() == ["job:airflow:nightly.load"]
    assert graph.datasets() == [
        "dataset:s3://lake:clean/orders",
        "dataset:s3://lake:dim/dates",
        "dataset:s3://lake:raw/orders",
    ]
    assert graph.inputs_of("job:airflow:nightly.load") == ["dataset:s3://lake:raw/orders"]


@pytest.mark.parametrize("level", ["application", "action"])
def test_from_dict_is_the_inverse_of_to_dict(pipeline_events, level: str) -> None:
    graph = build_graph(pipeline_events, level)
    again = LineageGraph.from_dict(orjson.loads(json_bytes(graph)))
    assert again.to_dict() == graph.to_dict() and again.column_edges and again.level == level
    assert again.inputs_of(again.jobs()[0]) == graph.inputs_of(graph.jobs()[0])
    with pytest.raises(GraphError, match="not the JSON form of a lineage graph"):
        LineageGraph.from_dict({"nodes": []})
