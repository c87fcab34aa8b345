"""emr-lineage impact: the report, --fail-on-downstream for CI, and one-line errors (docs/cli.md)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from emr_lineage.cli.app import main
from tests.emr_lineage.analysis.builders import app_run, at, dataset
from tests.emr_lineage.conftest import write_jsonl
from tests.emr_lineage.demo_run import DemoRun
from tests.emr_lineage.fake_marquez import FakeMarquez
from tests.helpers import one_error_line


def _run(*args: str):
    return CliRunner().invoke(main, list(args))


@pytest.fixture
def events(tmp_path: Path) -> str:
    return str(
        write_jsonl(
            tmp_path / "events.jsonl",
            app_run(
                "clean",
                at(0),
                inputs=[dataset("s3://lake/raw", {"price": "double"})],
                outputs=[
                    dataset(
                        "s3://lake/clean",
                        {"amount": "double"},
                        columns={"amount": [("s3://lake/raw", "price")]},
                        output=True,
                    )
                ],
            ),
        )
    )


def test_the_demo_downstream_table_and_json(demo_run: DemoRun) -> None:
    raw = f"{demo_run.out}/lake/raw/orders"
    result = _run("impact", "--events", str(demo_run.events_path), "--dataset", raw)
    assert result.exit_code == 0, result.output
    assert "score_stream" in result.stdout
    assert f"5 job(s), {4 + len(demo_run.model_parts()[0])} dataset(s) downstream of {raw}" in result.stdout
    result = _run("impact", "--events", str(demo_run.events_path), "--dataset", raw, "--format", "json", "--depth", "1")
    report = json.loads(result.stdout)
    assert [(j["name"], j["distance"]) for j in report["jobs"]] == [("ingest_orders", 1)]


def test_fail_if_downstream_is_a_ci_gate(events: str) -> None:
    assert _run("impact", "--events", events, "--dataset", "s3://lake/raw", "--fail-on-downstream").exit_code == 1
    leaf = _run("impact", "--events", events, "--dataset", "s3://lake/clean", "--fail-on-downstream")
    assert leaf.exit_code == 0 and "nothing downstream of s3://lake/clean" in leaf.stdout


def test_column_and_upstream(events: str) -> None:
    result = _run("impact", "--events", events, "--dataset", "s3://lake/clean", "--column", "amount", "--upstream")
    assert result.exit_code == 0, result.output
    assert "s3://lake/raw" in result.stdout and "price" in result.stdout
    assert "1 job(s), 1 dataset(s), 1 column(s) upstream" in result.stdout


def test_the_marquez_raw_events_are_a_source(events: str, marquez: FakeMarquez) -> None:
    marquez.store([json.loads(line) for line in Path(events).read_text().splitlines()])
    result = _run("impact", "--marquez", marquez.url, "--dataset", "s3://lake/raw", "--format", "json")
    assert result.exit_code == 0, result.output
    assert [j["name"] for j in json.loads(result.stdout)["jobs"]] == ["clean"]


@pytest.mark.parametrize(
    "args, fragment",
    [
        (["--dataset", "s3://lake/rae"], "no such dataset in the lineage (did you mean 's3://lake/raw'"),
        (["--dataset", "s3://lake/raw", "--column", "prize"], "did you mean 'price'?"),
        (["--dataset", "s3://lake/raw", "--since", "last week"], "--since 'last week': expected an ISO 8601 time"),
        (["--dataset", "s3://lake/raw", "--since", "2030-01-01"], "no events in the window"),
        (["--dataset", "s3://lake/raw", "--upstream", "--fail-on-downstream"], "does not apply with --upstream"),
        (["--dataset", "table:a.b.c"], "table:<name> or table:<db>.<name>"),
    ],
)
def test_bad_input_is_one_line(events: str, args: list[str], fragment: str) -> None:
    one_error_line(_run("impact", "--events", events, *args), fragment, stdout_empty=True)


def test_sources_one_and_only_one(events: str, closed_port_url: str, retry_waits: list[float]) -> None:
    one_error_line(_run("impact", "--dataset", "s3://lake/raw"), "give one source")
    one_error_line(
        _run("impact", "--dataset", "x", "--events", events, "--marquez", closed_port_url), "give one source"
    )
    one_error_line(_run("impact", "--dataset", "s3://lake/raw", "--marquez", closed_port_url, "--timeout", "2"))
    one_error_line(_run("impact", "--dataset", "s3://lake/raw", "--archive", "lake"), "expected s3://bucket")


@pytest.mark.parametrize("command", [["impact", "--dataset", "x"], ["drift", "--dataset", "x"], ["runs"]])
def test_ctrl_c_exits_130_with_one_line(command: list[str], events: str, monkeypatch: pytest.MonkeyPatch) -> None:
    def interrupted(*args, **kwargs):
        raise KeyboardInterrupt

    monkeypatch.setattr("emr_lineage.cli.sources.read_files", interrupted)
    result = _run(*command, "--events", events)
    assert result.exit_code == 130 and result.stderr.strip() == "error: interrupted"


def _history_events(tmp_path: Path) -> str:
    """Two runs of ``clean`` (its schema changes, Iceberg snapshots 1 and 2), a failed reader of snapshot 2."""

    def clean(fields: dict[str, str], minutes: float, version: str) -> list[dict]:
        columns = {"amount": [("s3://lake/raw", "price")]}
        out = dataset("s3://lake/clean", fields, columns=columns, version=version, output=True)
        return app_run("clean", at(minutes), inputs=[dataset("s3://lake/raw", {"price": "double"})], outputs=[out])

    reader = app_run(
        "report",
        at(30),
        inputs=[dataset("s3://lake/clean", version="2")],
        outputs=[
            dataset(
                "s3://lake/report", {"total": "double"}, columns={"total": [("s3://lake/clean", "amount")]}, output=True
            )
        ],
        final="FAIL",
    )
    changed = clean({"amount": "decimal(10,2)", "country": "string"}, 20, "2")
    events = reader + changed + clean({"amount": "double", "note": "string"}, 0, "1")  # out of time order
    return str(write_jsonl(tmp_path / "history.jsonl", events))


def test_a_graph_file_with_runs_answers_drift_audit_and_runs_as_its_events(tmp_path: Path) -> None:
    events, graph = _history_events(tmp_path), tmp_path / "graph.json"
    assert _run("graph", "--events", events, "--with-runs", "-o", str(graph)).exit_code == 0
    for command in (
        ["drift", "--dataset", "s3://lake/clean"],
        ["audit", "--dataset", "s3://lake/clean"],
        ["audit", "--dataset", "s3://lake/clean", "--level", "action"],
        ["runs"],
        ["runs", "--job", "report"],
    ):
        for fmt in ("table", "json"):
            from_events = _run(*command, "--format", fmt, "--events", events)
            from_graph = _run(*command, "--format", fmt, "--graph", str(graph))
            assert from_events.exit_code == from_graph.exit_code == 0, from_graph.output
            expected = from_events.stdout.replace('"source": "events"', '"source": "graph"').replace(
                "(from events)", "(from graph)"
            )
            assert from_graph.stdout == expected, command
    drift = json.loads(_run("drift", "--dataset", "s3://lake/clean", "--format", "json", "--graph", str(graph)).stdout)
    [change] = drift["changes"]
    assert [f["name"] for f in change["added"]] == ["country"] and change["readers"][0]["name"] == "report"
    audit = json.loads(_run("audit", "--dataset", "s3://lake/clean", "--format", "json", "--graph", str(graph)).stdout)
    assert [(r["job"], r["access"], r["state"]) for r in audit["runs"]] == [
        ("clean", "write", "COMPLETE"),
        ("clean", "write", "COMPLETE"),
        ("report", "read", "FAIL"),
    ]
    assert audit["runs"][2]["versionsRead"] == ["2"] and audit["source"] == "graph"


def test_a_graph_file_without_runs_is_a_source_for_impact_only(events: str, tmp_path: Path) -> None:
    graph = tmp_path / "graph.json"
    assert _run("graph", "--events", events, "-o", str(graph)).exit_code == 0
    from_events = _run("impact", "--events", events, "--dataset", "s3://lake/raw", "--column", "price")
    from_graph = _run("impact", "--graph", str(graph), "--dataset", "s3://lake/raw", "--column", "price")
    assert from_graph.exit_code == 0, from_graph.output
    assert from_graph.stdout == from_events.stdout and "s3://lake/clean" in from_graph.stdout
    for command in ("drift", "audit", "runs"):
        args = [command, "--graph", str(graph)] + ([] if command == "runs" else ["--dataset", "s3://lake/raw"])
        one_error_line(_run(*args), "holds no runs; build it with them (emr-lineage graph --with-runs")
    one_error_line(_run("runs", "--graph", str(graph), "--until", "2026-11-23"), "--since/--until")
    one_error_line(_run("graph", "--with-runs", "--events", events, "--format", "dot"), "--with-runs writes the runs")
    one_error_line(_run("impact", "--graph", str(graph), "--events", events, "--dataset", "x"), "give one source")
    one_error_line(_run("impact", "--graph", str(graph), "--since", "2026-11-23", "--dataset", "x"), "--since/--until")
    (tmp_path / "other.json").write_text('{"nodes": []}')
    one_error_line(_run("impact", "--graph", str(tmp_path / "other.json"), "--dataset", "x"), "not the JSON form")
    one_error_line(_run("impact", "--graph", events, "--dataset", "x"), "not JSON")
    one_error_line(_run("impact", "--graph", str(tmp_path / "none.json"), "--dataset", "x"), "No such file")


JOB_NODE = {"id": "job:ns:clean", "type": "JOB", "namespace": "ns", "name": "clean"}


@pytest.mark.parametrize(
    "form, fragments",
    [
        (
            {
                "level": "application",
                "nodes": [JOB_NODE],
                "edges": [{"source": "job:ns:clean", "target": "dataset:s3://b:k"}],
            },
            ["edge job:ns:clean -> dataset:s3://b:k", "'dataset:s3://b:k' is not one of its nodes"],
        ),
        ([], ["a JSON array, not an object"]),
        ({"level": "application", "nodes": [None], "edges": []}, ["node 1 is a JSON null, not an object"]),
        (
            {"level": "application", "nodes": [{**JOB_NODE, "type": "TABLE"}], "edges": []},
            ["node 'job:ns:clean'", "type 'TABLE'", "JOB or DATASET"],
        ),
        ({"level": "application", "nodes": [{"id": "job:ns:x"}], "edges": []}, ["node 'job:ns:x'", "no 'type'"]),
        ({"level": "application", "nodes": {}, "edges": []}, ["'nodes' is a JSON object, not an array"]),
    ],
)
def test_a_graph_file_that_is_not_a_graph_is_one_line_naming_the_file(tmp_path: Path, form, fragments) -> None:
    path = tmp_path / "graph.json"
    path.write_text(json.dumps(form))
    line = one_error_line(_run("impact", "--graph", str(path), "--dataset", "s3://b/k"), f"--graph {path}: ")
    assert all(fragment in line for fragment in fragments), line
    for python in ("KeyError", "NoneType", "list indices", " dict", " list"):
        assert python not in line
