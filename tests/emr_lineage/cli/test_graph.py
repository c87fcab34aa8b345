"""``emr-lineage graph`` and ``emr-lineage validate`` through click's CliRunner."""

from __future__ import annotations

import datetime as dt
import gzip
import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from emr_lineage.cli.app import main
from emr_lineage.spark.conf import ParentContext
from tests.emr_lineage.conftest import write_jsonl
from tests.emr_lineage.e2e_support import E2E_PARENT, LAKE_BUCKET, launched
from tests.emr_lineage.fake_marquez import FakeMarquez
from tests.emr_lineage.lineage.rule_events import completed, run_event
from tests.helpers import one_error_line

NS = "emr-lineage-dev"


@pytest.fixture()
def runner() -> CliRunner:
    return CliRunner()


@pytest.fixture(scope="session")
def contract_file(repo_root: Path, tmp_path_factory) -> Path:
    doc = (repo_root / "docs" / "contracts.md").read_text(encoding="utf-8")
    path = tmp_path_factory.mktemp("contract") / "lineage_contract.yaml"
    path.write_text(doc.split("```yaml\n", 1)[1].split("```", 1)[0])
    return path


@pytest.fixture(scope="session")
def local_run(gen, tmp_path_factory) -> tuple[Path, str]:
    """Events of a local demo run of the sample pipeline: (events dir, lake)."""
    root = tmp_path_factory.mktemp("demo")
    lake = str(root / "lake")
    events = gen.pipeline(lake, NS)
    gen.write_jsonl(root / "events" / "part-1.jsonl", events[:13])
    gen.write_jsonl(root / "events" / "part-2.jsonl", events[13:])
    return root / "events", lake


# --- graph ------------------------------------------------------------------------------------


def test_graph_json_from_events(runner, local_run) -> None:
    events, lake = local_run
    result = runner.invoke(main, ["graph", "--events", str(events)])
    assert result.exit_code == 0, result.output
    form = json.loads(result.stdout)
    assert [n["id"] for n in form["nodes"] if n["type"] == "JOB"] == sorted(
        f"job:{NS}:{a}" for a in ("ingest_orders", "revenue_daily", "customer_ltv", "train_model", "score_stream")
    )
    assert {"source": f"job:{NS}:ingest_orders", "target": f"dataset:file:{lake}/clean/orders_clean"} in form["edges"]


def test_graph_action_level_mermaid_and_dot(runner, local_run) -> None:
    events, _ = local_run
    mermaid = runner.invoke(main, ["graph", "--events", str(events), "--level", "action", "--format", "mermaid"])
    assert mermaid.exit_code == 0 and mermaid.stdout.startswith("flowchart LR\n")
    assert "ingest_orders.execute_insert_into_hadoop_fs_relation_command.clean_orders_clean" in mermaid.stdout
    dot = runner.invoke(main, ["graph", "--events", str(events), "--format", "dot"])
    assert dot.exit_code == 0 and dot.stdout.startswith("digraph lineage {")
    assert f'"job:{NS}:ingest_orders"' in dot.stdout


def test_graph_html_to_file(runner, local_run, tmp_path: Path) -> None:
    events, _ = local_run
    out = tmp_path / "graph.html"
    result = runner.invoke(
        main, ["graph", "--events", str(events), "--format", "html", "-o", str(out), "--title", "Demo"]
    )
    assert result.exit_code == 0, result.output
    text = out.read_text()
    assert text.startswith("<!DOCTYPE html>") and "<title>Demo</title>" in text


def _completed_fragments(ol_fixtures_dir: Path, folder: Path) -> Path:
    """The OpenLineage Spark integration's fragments, completed with what the event rule demands and they
    leave out (tests/emr_lineage/lineage/rule_events.py), one file each in ``folder``."""
    folder.mkdir(parents=True, exist_ok=True)
    for path in sorted(ol_fixtures_dir.glob("ol_container_*.json")):
        (folder / path.name).write_text(json.dumps(completed(json.loads(path.read_text()))))
    return folder


def test_graph_on_real_fixtures_needs_skip_invalid_for_the_bare_facet(runner, ol_fixtures_dir, tmp_path) -> None:
    folder = _completed_fragments(ol_fixtures_dir, tmp_path / "fixtures")
    bare = "ol_spec_tests_ColumnLineageDatasetFacet_2.json"  # a facet, not an event
    (folder / bare).write_bytes((ol_fixtures_dir / bare).read_bytes())
    one_error_line(runner.invoke(main, ["graph", "--events", str(folder)]), f"{bare}:1: event has no 'job' object")
    result = runner.invoke(main, ["graph", "--events", str(folder), "--skip-invalid"])
    assert result.exit_code == 0
    assert "skipped 1 invalid event(s)" in result.stderr
    assert len(json.loads(result.stdout)["nodes"]) == 11


def test_the_fragments_as_they_are_are_not_events(runner, ol_fixtures_dir) -> None:
    one_error_line(
        runner.invoke(main, ["graph", "--events", str(ol_fixtures_dir / "ol_container_pysparkHadoopFSEndEvent.json")]),
        "ol_container_pysparkHadoopFSEndEvent.json:1: eventTime is missing or not a string",
    )


# --- graph and validate from the raw events Marquez stored ----------------------------------------

INGEST = f"job:{NS}:ingest_orders"
LAKE = f"s3://{LAKE_BUCKET}"


def _lake(path: str) -> str:
    return f"dataset:{LAKE}:{path}"


@pytest.fixture
def demo_in_marquez(marquez: FakeMarquez, e2e_events, tmp_path: Path) -> Path:
    """The demo's real events (as on EMR) POSTed to the Marquez stand-in, and the same events in a file."""
    marquez.store(e2e_events)
    return write_jsonl(tmp_path / "demo.jsonl", e2e_events)


def _same_output(runner, args: list[str], events: Path, marquez_url: str, exit_code: int = 0):
    """``args`` with --events FILE and with --marquez URL: the same exit code, the same bytes on stdout."""
    from_events = runner.invoke(main, [*args, "--events", str(events)])
    from_marquez = runner.invoke(main, [*args, "--marquez", marquez_url])
    assert from_events.exit_code == exit_code, from_events.output
    assert from_marquez.exit_code == exit_code, from_marquez.output
    assert from_marquez.stdout_bytes == from_events.stdout_bytes
    return from_marquez


def test_graph_from_marquez_is_the_graph_of_the_same_events(runner, marquez, demo_in_marquez) -> None:
    result = _same_output(runner, ["graph", "--format", "json"], demo_in_marquez, marquez.url)
    form = json.loads(result.stdout)
    assert [n["id"] for n in form["nodes"] if n["type"] == "JOB"] == sorted(
        f"job:{NS}:{a}" for a in ("ingest_orders", "revenue_daily", "customer_ltv", "train_model", "score_stream")
    )
    assert {"source": INGEST, "target": _lake("clean/orders_clean")} in form["edges"]
    assert result.stderr == ""  # nothing skipped: the demo's events all meet the event rule
    reads = [r for r in marquez.requests if r.startswith("GET /api/v1/events/lineage")]
    assert len(reads) == 1  # 117 events: one page
    # with the runs too (the JSON form that runs, audit and drift read with --graph)
    with_runs = _same_output(runner, ["graph", "--with-runs"], demo_in_marquez, marquez.url)
    assert len(json.loads(with_runs.stdout)["runs"]) > 5


def test_graph_from_marquez_around_a_node_shows_its_inputs_and_outputs(runner, marquez, demo_in_marquez) -> None:
    args = ["graph", "--node", INGEST, "--depth", "0"]
    form = json.loads(_same_output(runner, args, demo_in_marquez, marquez.url).stdout)
    assert form["edges"] == [
        {"source": _lake("raw/orders"), "target": INGEST},
        {"source": INGEST, "target": _lake("clean/orders_clean")},
    ]
    assert sorted(n["id"] for n in form["nodes"]) == sorted([INGEST, _lake("clean/orders_clean"), _lake("raw/orders")])
    # one job further: the readers of clean/orders_clean and what they wrote
    wider = json.loads(
        runner.invoke(main, ["graph", "--marquez", marquez.url, "--node", INGEST, "--depth", "1"]).stdout
    )
    assert {"source": _lake("clean/orders_clean"), "target": f"job:{NS}:revenue_daily"} in wider["edges"]
    assert {"source": f"job:{NS}:revenue_daily", "target": _lake("curated/revenue_daily")} in wider["edges"]
    assert f"job:{NS}:score_stream" not in {n["id"] for n in wider["nodes"]}  # two jobs away


def test_graph_with_runs_around_a_node_keeps_the_runs(runner, marquez, demo_in_marquez) -> None:
    """--with-runs --node: the part's JSON form carries the runs (as the whole graph's does), from either source."""
    whole = json.loads(_same_output(runner, ["graph", "--with-runs"], demo_in_marquez, marquez.url).stdout)
    args = ["graph", "--with-runs", "--node", INGEST, "--depth", "0"]
    part = json.loads(_same_output(runner, args, demo_in_marquez, marquez.url).stdout)
    assert sorted(n["id"] for n in part["nodes"]) == sorted([INGEST, _lake("clean/orders_clean"), _lake("raw/orders")])
    assert part["runs"] == whole["runs"] and len(part["runs"]) > 5


def test_graph_column_edges_from_marquez_run_from_input_field_to_output_field(runner, marquez, demo_in_marquez) -> None:
    form = json.loads(_same_output(runner, ["graph"], demo_in_marquez, marquez.url).stdout)
    columns = form["columnEdges"]
    assert len(columns) > 10
    assert {
        "source": f"datasetField:{LAKE}:clean/orders_clean:customer_id",
        "target": f"datasetField:{LAKE}:curated/revenue_daily:customers",
        "transformation": "DIRECT",
    } in columns
    assert {e["transformation"] for e in columns} - {""}  # the listener's transformations are kept
    # each from a field of a job's input to a field of that job's output
    edges = {(e["source"], e["target"]) for e in form["edges"]}
    jobs = [n["id"] for n in form["nodes"] if n["type"] == "JOB"]

    def dataset_of(field_id: str) -> str:
        return "dataset:" + field_id.removeprefix("datasetField:").rpartition(":")[0]

    for edge in columns:
        source, target = dataset_of(edge["source"]), dataset_of(edge["target"])
        assert any((source, job) in edges and (job, target) in edges for job in jobs), edge


def test_column_lineage_option_is_retired_with_a_warning(runner, marquez, demo_in_marquez) -> None:
    plain = runner.invoke(main, ["graph", "--marquez", marquez.url])
    retired = runner.invoke(main, ["graph", "--marquez", marquez.url, "--column-lineage"])
    assert retired.exit_code == 0, retired.output
    assert retired.stdout == plain.stdout and json.loads(retired.stdout)["columnEdges"]
    assert retired.stderr == (
        "warning: --column-lineage no longer applies and will be removed in the next release: "
        "column lineage is always read, from Marquez's raw events too\n"
    )


@pytest.mark.parametrize(
    ("args", "fragment"),
    [
        ([], "give either --events PATH... or --marquez URL"),
        (["--events", "x.jsonl", "--marquez", "http://h"], "give either"),
        (["--events", "EVENTS", "--node", f"job:{NS}:ingest_order"], f"did you mean job:{NS}:ingest_orders"),
        (["--events", "EVENTS", "--node", "ingest_orders"], "expected job:<namespace>:<name> or dataset:"),
        (["--events", "/nonexistent/events"], "/nonexistent/events: no such file or directory"),
        (["--marquez", "ftp://h", "--node", "job:a:b"], "is not an http(s) URL"),
        (["--events", "EVENTS", "--depth", "-1"], "Invalid value for '--depth'"),
    ],
)
def test_graph_bad_input(runner, local_run, args, fragment: str) -> None:
    args = [str(local_run[0]) if a == "EVENTS" else a for a in args]
    one_error_line(runner.invoke(main, ["graph", *args]), fragment)


def test_graph_marquez_errors(runner, marquez: FakeMarquez, gen, closed_port_url, retry_waits) -> None:
    one_error_line(
        runner.invoke(main, ["graph", "--marquez", marquez.url]),
        f"{marquez.url}/: Marquez holds no events to build a graph from",
    )
    marquez.store(gen.pipeline("s3://lake", NS)[:5])  # ingest_orders only
    one_error_line(
        runner.invoke(main, ["graph", "--marquez", marquez.url, "--since", "2030-06-01"]),
        "Marquez holds no events in the window to build a graph from",
    )
    line = one_error_line(runner.invoke(main, ["graph", "--marquez", marquez.url, "--node", f"job:{NS}:ingest"]))
    assert line == (
        f"error: --node job:{NS}:ingest: not in the lineage read (at the application level a Spark action "
        f"is folded into its application: --level action); did you mean job:{NS}:ingest_orders?"
    )
    assert retry_waits == []
    one_error_line(runner.invoke(main, ["graph", "--marquez", closed_port_url, "--node", "job:x:y"]), "is unreachable")
    assert retry_waits == [0, 1.0, 2.0]  # three retries with their backoff, then the error


def test_graph_only_invalid_events(runner, tmp_path: Path) -> None:
    (tmp_path / "e.jsonl").write_text("{bad\n")
    one_error_line(
        runner.invoke(main, ["graph", "--events", str(tmp_path / "e.jsonl"), "--skip-invalid"]),
        "no events to build a graph from",
    )


def _all_events(events_dir: Path) -> bytes:
    return b"".join(path.read_bytes() for path in sorted(events_dir.glob("*.jsonl")))


def test_graph_reads_standard_input_gzip_and_ndjson_alike(runner, local_run, tmp_path: Path) -> None:
    events, _ = local_run
    expected = runner.invoke(main, ["graph", "--events", str(events)])
    assert expected.exit_code == 0, expected.output
    from_stdin = runner.invoke(main, ["graph", "--events", "-"], input=_all_events(events))
    assert from_stdin.exit_code == 0, from_stdin.output
    assert from_stdin.stdout == expected.stdout
    gzipped = runner.invoke(main, ["graph", "--events", "-"], input=gzip.compress(_all_events(events)))
    assert gzipped.stdout == expected.stdout
    (tmp_path / "mixed").mkdir()
    (tmp_path / "mixed" / "a.ndjson").write_bytes((events / "part-1.jsonl").read_bytes())
    (tmp_path / "mixed" / "b.jsonl.gz").write_bytes(gzip.compress((events / "part-2.jsonl").read_bytes()))
    mixed = runner.invoke(main, ["graph", "--events", str(tmp_path / "mixed")])
    assert mixed.exit_code == 0, mixed.output
    assert mixed.stdout == expected.stdout


@pytest.mark.parametrize("how", ["pipe", "redirect"])
def test_graph_reads_a_real_standard_input(repo_root: Path, local_run, tmp_path: Path, how: str) -> None:
    """The process's own standard input (a pipe, or a file redirected onto it), not a test
    stand-in: it is read on, never at offsets; with a file after it as well."""
    import subprocess
    import sys

    events, _ = local_run
    data = tmp_path / "all.jsonl"
    data.write_bytes(_all_events(events))
    paths = ["-", str(data)] if how == "pipe" else [str(data), "-"]  # standard input first, or last
    command = [sys.executable, "-m", "emr_lineage", "graph", "--events", paths[0], "--events", paths[1]]
    with data.open("rb") as redirected:
        done = subprocess.run(
            command,
            input=data.read_bytes() if how == "pipe" else None,
            stdin=None if how == "pipe" else redirected,
            capture_output=True,
            timeout=120,
            cwd=repo_root,
        )
    assert done.returncode == 0, done.stderr
    expected = subprocess.run(
        [sys.executable, "-m", "emr_lineage", "graph", "--events", str(data)],
        capture_output=True,
        timeout=120,
        cwd=repo_root,
    )
    assert json.loads(done.stdout) == json.loads(expected.stdout)


def test_graph_html_with_skip_invalid_reads_the_events_again_skipping_too(runner, local_run, tmp_path: Path) -> None:
    events, _ = local_run
    mixed = tmp_path / "mixed.jsonl"
    mixed.write_bytes(_all_events(events) + b"{oops\n")
    out = tmp_path / "report.html"
    result = runner.invoke(
        main, ["graph", "--events", str(mixed), "--skip-invalid", "--format", "html", "-o", str(out)]
    )
    assert result.exit_code == 0, result.output
    assert "skipped 1 invalid event(s)" in result.stderr and out.read_text().startswith("<!DOCTYPE html>")


def test_graph_standard_input_errors(runner, local_run, tmp_path: Path) -> None:
    one_error_line(runner.invoke(main, ["graph", "--events", "-"], input=b""), "<stdin>: no events on standard input")
    one_error_line(runner.invoke(main, ["graph", "--events", "-"], input=b"{oops\n"), "<stdin>:1: invalid JSON")
    broken = tmp_path / "e.jsonl.gz"
    broken.write_bytes(b"\x1f\x8b broken")
    one_error_line(runner.invoke(main, ["graph", "--events", str(broken), "--skip-invalid"]), "gzip data")


def test_validate_reads_standard_input(runner, local_run, contract_file) -> None:
    events, lake = local_run
    result = runner.invoke(
        main,
        ["validate", "--contract", str(contract_file), "--events", "-", "--var", f"lake={lake}"],
        input=gzip.compress(_all_events(events)),
    )
    assert result.exit_code == 0, result.output


# --- validate ---------------------------------------------------------------------------------


def test_validate_local_run_matches(runner, local_run, contract_file, tmp_path: Path) -> None:
    events, lake = local_run
    html = tmp_path / "report.html"
    result = runner.invoke(
        main,
        [
            "validate",
            "--contract",
            str(contract_file),
            "--events",
            str(events),
            "--var",
            f"lake={lake}",
            "--output",
            str(html),
        ],
    )
    assert result.exit_code == 0, result.output
    assert "matches (11 edge(s) matched)" in result.stdout
    assert "Contract" in html.read_text() and "matches" in html.read_text()


def test_validate_differences_exit_1_with_table(runner, gen, contract_file, tmp_path: Path) -> None:
    events = gen.pipeline("s3a://lake", NS)  # dataset_identity already turns s3a into s3 ...
    for event in events:  # ... so spell ingest's input the way a misconfigured job would
        for dataset in event.get("inputs", []):
            if dataset["name"] == "raw/orders":
                dataset["namespace"] = "s3a://lake"
    events = [e for e in events if not e["job"]["name"].startswith("train_model")]
    path = gen.write_jsonl(tmp_path / "e.jsonl", events)
    result = runner.invoke(
        main, ["validate", "--contract", str(contract_file), "--events", str(path), "--var", "lake=s3://lake"]
    )
    assert result.exit_code == 1, result.output
    out = result.stdout
    assert "Contract differences" in out
    assert "missing" in out and "unexpected" in out
    assert "s3a:// vs s3://" in out
    assert "job 'train_model' not in the graph" in out
    assert "3 missing, 1 unexpected edge(s)" in out


def test_validate_json_output(runner, local_run, contract_file) -> None:
    events, lake = local_run
    result = runner.invoke(
        main,
        [
            "validate",
            "--contract",
            str(contract_file),
            "--events",
            str(events),
            "--var",
            f"lake={lake}/elsewhere",
            "--format",
            "json",
        ],
    )
    assert result.exit_code == 1
    body = json.loads(result.stdout)
    assert body["ok"] is False and len(body["missing"]) == len(body["unexpected"]) == 5
    # the catalog tables are matched by their aliases wherever the lake is; the storage URIs are not
    assert {(m["job"].rsplit(":", 1)[1], m["dataset"].removeprefix(lake)) for m in body["matched"]} == {
        ("ingest_orders", "/clean/orders_clean"),
        ("revenue_daily", "/clean/orders_clean"),
        ("revenue_daily", "/curated/revenue_daily"),
        ("customer_ltv", "/clean/orders_clean"),
        ("customer_ltv", "/warehouse/customer_ltv"),
        ("train_model", "/clean/orders_clean"),
    }
    assert {m["dataset"].removeprefix(lake) for m in body["missing"]} >= {"/elsewhere/raw/orders"}


def _contract_args(repo_root: Path) -> list[str]:
    """validate the sample pipeline's contract as e2e does on AWS (lake = the data lake bucket)."""
    contract = repo_root / "jobs" / "lineage_contract.yaml"
    return ["validate", "--contract", str(contract), "--var", f"lake={LAKE}", "--var", f"namespace={NS}"]


def test_validate_against_marquez_is_validate_of_the_same_events(
    runner, marquez, demo_in_marquez, repo_root, demo_run
) -> None:
    args = [*_contract_args(repo_root), "--format", "json"]
    body = json.loads(_same_output(runner, args, demo_in_marquez, marquez.url).stdout)
    assert body["ok"] is True and len(body["matched"]) == demo_run.contract_edges()
    table = _same_output(runner, _contract_args(repo_root), demo_in_marquez, marquez.url)
    assert f"matches ({demo_run.contract_edges()} edge(s) matched)" in table.stdout


# The contract's declared edges, each missing once when nothing matches (matched, the model's glob counts one
# edge per part: DemoRun.contract_edges).
CONTRACT_EDGES = 11
# Another pipeline's run of the same jobs, launched by another orchestrator job, on another lake.
NIGHTLY = ParentContext(
    parent_job_namespace=NS, parent_job_name="nightly", parent_run_id="0199f2e2-0000-7000-8000-00000000a11e"
)


def test_validate_parent_job_keeps_only_the_runs_that_parent_launched(
    runner, marquez: FakeMarquez, e2e_events, gen, repo_root, demo_run, tmp_path: Path
) -> None:
    this_run = launched(e2e_events)  # as the listener reports them under e2e's parent job (E2E_PARENT)
    marquez.store(this_run + launched(gen.pipeline("s3://other-lake", NS), NIGHTLY))
    args = [*_contract_args(repo_root), "--format", "json"]
    from_file = runner.invoke(main, [*args, "--events", str(write_jsonl(tmp_path / "e.jsonl", this_run))])
    under_parent = runner.invoke(main, [*args, "--marquez", marquez.url, "--parent-job", E2E_PARENT.parent_job_name])
    assert under_parent.exit_code == from_file.exit_code == 0, under_parent.output
    assert under_parent.stdout_bytes == from_file.stdout_bytes
    assert len(json.loads(under_parent.stdout)["matched"]) == demo_run.contract_edges()
    # without --parent-job, the other pipeline's runs of the same jobs add edges to its lake
    everything = runner.invoke(main, [*args, "--marquez", marquez.url])
    assert everything.exit_code == 1, everything.output
    body = json.loads(everything.stdout)
    assert body["missing"] == [] and body["unexpected"]
    assert all(d["dataset"].startswith("s3://other-lake/") for d in body["unexpected"])
    # and the other parent's runs are theirs alone: none on this run's lake
    nightly = runner.invoke(main, [*args, "--marquez", marquez.url, "--parent-job", NIGHTLY.parent_job_name])
    assert nightly.exit_code == 1, nightly.output
    body = json.loads(nightly.stdout)
    assert body["missing"] and all(d["dataset"].startswith("s3://other-lake/") for d in body["unexpected"])
    assert not any(d["dataset"].startswith(LAKE) for d in body["matched"])
    # a parent job that launched nothing is one error line, not a contract with every edge missing
    nobody = runner.invoke(main, [*args, "--marquez", marquez.url, "--parent-job", "weekly"])
    assert nobody.exit_code == 2
    assert nobody.output.strip().endswith(
        "holds no events of a run under parent job 'weekly' to check the contract against"
    )


def test_validate_since_until_select_marquez_s_events(runner, marquez: FakeMarquez, e2e_events, repo_root) -> None:
    start = dt.datetime(2026, 11, 21, 12, 0, tzinfo=dt.UTC)
    marquez.store(launched(e2e_events, start=start))
    args = [*_contract_args(repo_root), "--marquez", marquez.url, "--format", "json"]
    around = runner.invoke(main, [*args, "--since", "2026-11-21T11:59Z", "--until", "2026-11-21T13:00Z"])
    assert around.exit_code == 0, around.output
    for window in (["--since", "2026-11-21T13:00Z"], ["--until", "2026-11-21T11:59Z"]):
        outside = runner.invoke(main, [*args, *window])
        assert outside.exit_code == 2, outside.output
        assert outside.output.strip().endswith("Marquez holds no events in the window to check the contract against")
    read = [r for r in marquez.requests if r.startswith("GET /api/v1/events/lineage")][-1]
    assert "before=2026-11-21T11%3A59%3A00.000001%2B00%3A00" in read  # until, inclusive


def test_validate_depth_is_retired_with_a_warning(runner, local_run, contract_file) -> None:
    events, lake = local_run
    args = ["validate", "--contract", str(contract_file), "--events", str(events), "--var", f"lake={lake}"]
    plain = runner.invoke(main, args)
    retired = runner.invoke(main, [*args, "--depth", "3"])
    assert retired.exit_code == plain.exit_code == 0 and retired.stdout == plain.stdout
    assert retired.stderr == (
        "warning: --depth no longer applies and will be removed in the next release: "
        "the contract is checked against the whole graph of the events read\n"
    )


@pytest.mark.parametrize(
    ("case", "fragment"),
    [
        ("missing_contract", "cannot read contract: No such file or directory"),
        ("bad_yaml", "c.yaml:3: invalid YAML"),
        ("bad_var_syntax", "--var 'lake': expected NAME=VALUE"),
        ("unknown_var", "unknown variable 'lak'"),
        ("dup_var", "--var 'lake' given twice"),
        ("bad_var_value", "lineage_contract.yaml:16: URI without a bucket or host"),
        ("bad_events", "e.jsonl:2: invalid JSON"),
        ("missing_events", "no such file or directory"),
        ("both_sources", "give either --events PATH... or --marquez URL"),
        ("no_source", "give either"),
        ("parent_job_without_marquez", "--parent-job, --since and --until select Marquez's events"),
        ("since_without_marquez", "they apply with --marquez"),
        ("unreachable", "is unreachable"),
        ("marquez_500", "HTTP 500 (server error)"),
        ("strict_fragments", "required property"),
    ],
)
def test_validate_bad_input_exits_2_with_one_line(
    runner, local_run, contract_file, tmp_path, closed_port_url, marquez, ol_fixtures_dir, retry_waits, case, fragment
) -> None:
    events, lake = local_run
    args = ["validate", "--contract", str(contract_file), "--events", str(events), "--var", f"lake={lake}"]
    if case == "missing_contract":
        args[2] = str(tmp_path / "none.yaml")
    elif case == "bad_yaml":
        (tmp_path / "c.yaml").write_text("version: 1\njobs: [\n")
        args[2] = str(tmp_path / "c.yaml")
    elif case == "bad_var_syntax":
        args[-1] = "lake"
    elif case == "unknown_var":
        args[-1] = "lak=/x"
    elif case == "dup_var":
        args += ["--var", "lake=/y"]
    elif case == "bad_var_value":
        args[-1] = "lake=s3://"
    elif case == "bad_events":
        (tmp_path / "e.jsonl").write_text(json.dumps(run_event("n", "j")) + "\n{oops\n")
        args[4] = str(tmp_path / "e.jsonl")
    elif case == "missing_events":
        args[4] = str(tmp_path / "none")
    elif case == "both_sources":
        args += ["--marquez", marquez.url]
    elif case == "no_source":
        args = ["validate", "--contract", str(contract_file)]
    elif case == "parent_job_without_marquez":
        args += ["--parent-job", "emr_lineage_e2e"]
    elif case == "since_without_marquez":
        args += ["--since", "2026-11-21"]
    elif case == "unreachable":
        args = ["validate", "--contract", str(contract_file), "--marquez", closed_port_url]
    elif case == "marquez_500":
        marquez.fail_next.extend([500] * 10)
        args = ["validate", "--contract", str(contract_file), "--marquez", marquez.url, "--timeout", "2"]
    elif case == "strict_fragments":
        args[4] = str(ol_fixtures_dir / "ol_container_pysparkSymlinksComplete.json")
        args.append("--strict")
    one_error_line(runner.invoke(main, args), fragment)
    # Retried with backoff: three times when unreachable, within its 2 s for the 500s; nothing else retries.
    assert retry_waits == {"unreachable": [0, 1.0, 2.0], "marquez_500": [0, 1.0]}.get(case, [])


def test_validate_skip_invalid_reports_the_count(runner, local_run, contract_file, tmp_path: Path) -> None:
    events, lake = local_run
    bad = tmp_path / "bad.jsonl"
    bad.write_text("{oops\n[]\n")
    result = runner.invoke(
        main,
        [
            "validate",
            "--contract",
            str(contract_file),
            "--events",
            str(events),
            "--events",
            str(bad),
            "--var",
            f"lake={lake}",
            "--skip-invalid",
        ],
    )
    assert result.exit_code == 0, result.output
    assert f"skipped 2 invalid event(s) (first: {bad}:1: invalid JSON" in result.stderr


def test_real_process_prints_one_line_and_exits_2(repo_root: Path, local_run, contract_file) -> None:
    import subprocess
    import sys

    events, _ = local_run
    command = [
        sys.executable,
        "-m",
        "emr_lineage",
        "validate",
        "--contract",
        str(contract_file),
        "--events",
        str(events),
        "--var",
        "lake=s3://",
    ]
    done = subprocess.run(command, capture_output=True, text=True, timeout=120, cwd=repo_root)
    assert done.returncode == 2
    assert done.stderr.startswith("error: ") and done.stderr.count("\n") == 1


@pytest.mark.parametrize(
    ("args", "fragment"),
    [
        (["validate", "--events", "x"], "Missing option '--contract'"),
        (["graph", "--events", "x", "--level", "job"], "Invalid value for '--level'"),
        (["graph", "--events", "x", "--format", "svg"], "Invalid value for '--format'"),
        (["graph", "--events", "x", "--depth", "-1"], "Invalid value for '--depth'"),
        (
            ["validate", "--contract", "c", "--marquez", "http://h", "--timeout", "zero"],
            "Invalid value for '--timeout'",
        ),
        (["graph", "--no-such-option"], "No such option '--no-such-option'"),
    ],
)
def test_usage_errors_are_one_line_too(runner, args, fragment: str) -> None:
    one_error_line(runner.invoke(main, args), fragment)


def test_help_still_works(runner) -> None:
    result = runner.invoke(main, ["validate", "--help"])
    assert result.exit_code == 0 and "--contract FILE" in result.stdout


def test_unwritable_html_report_is_bad_input(runner, local_run, contract_file, tmp_path: Path) -> None:
    events, lake = local_run
    blocker = tmp_path / "file"
    blocker.write_text("a file where a directory should be")
    result = runner.invoke(
        main,
        [
            "validate",
            "--contract",
            str(contract_file),
            "--events",
            str(events),
            "--var",
            f"lake={lake}",
            "--output",
            str(blocker / "report.html"),
        ],
    )
    one_error_line(result, str(blocker))


def test_contract_that_is_a_directory(runner, local_run, tmp_path: Path) -> None:
    events, _ = local_run
    one_error_line(
        runner.invoke(main, ["validate", "--contract", str(tmp_path), "--events", str(events)]),
        "cannot read contract: Is a directory",
    )


def test_validate_on_the_real_fixture_fragments(runner, ol_fixtures_dir, tmp_path: Path) -> None:
    """A fragment of the Spark integration, completed into an event (tests/emr_lineage/lineage/rule_events.py)."""
    contract = tmp_path / "fixtures.yaml"
    contract.write_text(
        "version: 1\nlevel: action\nnamespace: testPysparkSQLHadoopFSTest\njobs:\n"
        "  - name: open_lineage_integration_hadoop_fs_relation."
        "execute_insert_into_hadoop_fs_relation_command.warehouse_target\n"
        "    inputs: [/tmp/warehouse/test]\n    outputs: ['table:default.target']\n"
    )
    fixture = _completed_fragments(ol_fixtures_dir, tmp_path / "fixtures") / "ol_container_pysparkHadoopFSEndEvent.json"
    result = runner.invoke(main, ["validate", "--contract", str(contract), "--events", str(fixture)])
    assert result.exit_code == 0, result.output
    assert "matches (2 edge(s) matched)" in result.stdout
    wrong = contract.read_text().replace("/tmp/warehouse/test", "s3://bucket/warehouse/test")
    contract.write_text(wrong)
    result = runner.invoke(main, ["validate", "--contract", str(contract), "--events", str(fixture)])
    assert result.exit_code == 1
    assert "1 missing, 1 unexpected" in result.stdout


# --- schemas, events paths and outputs ---------------------------------------------------------


def test_graph_without_schemas_warns_once_and_runs_structural_checks(runner, local_run, tmp_path: Path) -> None:
    events, _ = local_run
    empty = tmp_path / "no-schemas"
    result = runner.invoke(main, ["graph", "--events", str(events), "--schema-dir", str(empty)])
    assert result.exit_code == 0, result.output
    assert result.stderr.splitlines() == [
        f"warning: only structural event checks ran: no OpenLineage 2-0-2 JSON schemas in {empty}: get them with "
        "`emr-lineage schemas fetch` (or point --schema-dir / EMR_LINEAGE_SCHEMA_DIR at a directory that holds them)"
    ]
    assert json.loads(result.stdout)["nodes"]


@pytest.mark.parametrize(
    ("args", "expected"),
    [
        (["--since", "2026-01-01"], "--since/--until select events by time from --marquez or --archive"),
        (["--depth", "3"], "--depth N follows lineage from --node ID: give --node too"),
        (["--title", "Mine"], "--title names the HTML report: --format html"),
        (["--env", "dev"], "--env and --cdk-json name the environment of --on-emr"),
        (["--timeout", "5"], "--timeout bounds each request to --marquez"),
        (["--spark", "local[1]", "--depth", "2"], "--depth and --node take the part of a graph built here"),
    ],
)
def test_an_option_that_would_change_nothing_is_refused(runner, tmp_path: Path, args: list[str], expected: str) -> None:
    events = tmp_path / "events.jsonl"
    events.write_text("")
    result = runner.invoke(main, ["graph", "--events", str(events), *args])
    one_error_line(result, expected)


@pytest.mark.parametrize("content", ["{not json\n", ""])
def test_bad_events_without_schemas_are_the_error_line_only(runner, tmp_path: Path, content: str) -> None:
    events = tmp_path / "events.jsonl"
    events.write_text(content)
    result = runner.invoke(main, ["graph", "--events", str(events), "--schema-dir", str(tmp_path / "no-schemas")])
    assert result.exit_code == 2
    assert [line.split(":")[0] for line in result.stderr.splitlines()] == ["error"]


def test_graph_with_schemas_says_nothing_about_them(runner, local_run) -> None:
    events, _ = local_run
    result = runner.invoke(main, ["graph", "--events", str(events)])
    assert result.exit_code == 0 and result.stderr == ""


def test_schema_dir_from_the_environment(runner, local_run, tmp_path: Path) -> None:
    events, _ = local_run
    result = runner.invoke(main, ["graph", "--events", str(events)], env={"EMR_LINEAGE_SCHEMA_DIR": str(tmp_path)})
    assert result.exit_code == 0
    assert result.stderr.count("warning: only structural event checks ran") == 1 and str(tmp_path) in result.stderr


@pytest.mark.parametrize("command", ["graph", "validate"])
def test_strict_without_schemas_exits_2_naming_the_fetch_command(
    runner, local_run, contract_file, tmp_path: Path, command: str
) -> None:
    events, lake = local_run
    args = ["--events", str(events), "--strict", "--schema-dir", str(tmp_path / "none")]
    if command == "validate":
        args += ["--contract", str(contract_file), "--var", f"lake={lake}"]
    result = runner.invoke(main, [command, *args])
    one_error_line(result, "strict checks need the OpenLineage 2-0-2 JSON schemas")
    assert "get them with `emr-lineage schemas fetch`" in result.stderr


def test_incomplete_schema_dir_is_an_error(runner, local_run, tmp_path: Path, reference_dir: Path) -> None:
    events, _ = local_run
    (tmp_path / "OpenLineage.json").write_bytes((reference_dir / "openlineage/spec/OpenLineage.json").read_bytes())
    one_error_line(
        runner.invoke(main, ["graph", "--events", str(events), "--schema-dir", str(tmp_path)]),
        "incomplete OpenLineage schema directory (missing ParentRunFacet.json",
    )


@pytest.mark.parametrize("command", ["graph", "validate"])
def test_empty_events_path_is_an_error_not_the_current_directory(
    runner, local_run, contract_file, monkeypatch, command: str
) -> None:
    events, lake = local_run
    monkeypatch.chdir(events)  # valid events right here: they must not be read
    args = ["--events", ""] + (
        ["--contract", str(contract_file), "--var", f"lake={lake}"] if command == "validate" else []
    )
    one_error_line(runner.invoke(main, [command, *args]), "--events '': empty path")


def test_graph_reports_duplicate_keys_and_nameless_datasets_with_file_and_line(runner, tmp_path: Path) -> None:
    good = json.dumps(run_event("n", "j"))
    path = tmp_path / "e.jsonl"
    path.write_text(good + "\n" + good + "\n" + good[:-1] + ', "eventType": "COMPLETE"}\n')
    one_error_line(runner.invoke(main, ["graph", "--events", str(path)]), f"{path}:3: duplicate key 'eventType'")
    path.write_text(good + "\n" + json.dumps(run_event("n", "j", outputs=[{"namespace": "s3://b"}])) + "\n")
    one_error_line(
        runner.invoke(main, ["graph", "--events", str(path)]),
        f"{path}:2: event.outputs[0] has no 'name' (a dataset needs a name)",
    )


def _events_copy(local_run, tmp_path: Path) -> Path:
    events, _ = local_run
    copy = tmp_path / "events"
    copy.mkdir()
    for part in sorted(events.glob("*.jsonl")):
        (copy / part.name).write_bytes(part.read_bytes())
    return copy


@pytest.mark.parametrize("how", ["same", "relative", "dotdot", "symlink", "inside_dir", "new_file_inside_dir"])
def test_graph_output_never_overwrites_the_events(runner, local_run, tmp_path: Path, monkeypatch, how: str) -> None:
    events = _events_copy(local_run, tmp_path)
    part = events / "part-1.jsonl"
    before = part.read_bytes()
    monkeypatch.chdir(tmp_path)
    event_args = ["--events", str(part)]
    if how == "same":
        output = str(part)
    elif how == "relative":
        output = "events/part-1.jsonl"
    elif how == "dotdot":
        output = str(events / ".." / "events" / "part-1.jsonl")
    elif how == "symlink":
        (tmp_path / "link.jsonl").symlink_to(part)
        output = str(tmp_path / "link.jsonl")
    elif how == "inside_dir":
        event_args, output = ["--events", str(events)], str(part)
    else:
        event_args, output = ["--events", str(events)], str(events / "sub" / "graph.json")
    result = runner.invoke(main, ["graph", *event_args, "-o", output])
    fragment = "is inside the events directory" if how.endswith("inside_dir") else "is the events file"
    one_error_line(result, fragment)
    assert part.read_bytes() == before
    assert not (events / "sub").exists()


@pytest.mark.parametrize("target", ["contract", "events_file", "events_dir"])
def test_validate_html_never_overwrites_an_input(runner, local_run, contract_file, tmp_path: Path, target) -> None:
    events = _events_copy(local_run, tmp_path)
    contract = tmp_path / "contract.yaml"
    contract.write_bytes(contract_file.read_bytes())
    _, lake = local_run
    html = {"contract": contract, "events_file": events / "part-2.jsonl", "events_dir": events / "report.html"}[target]
    before = html.read_bytes() if html.exists() else None
    args = ["validate", "--contract", str(contract), "--events", str(events), "--var", f"lake={lake}"]
    result = runner.invoke(main, [*args, "--output", str(html)])
    one_error_line(result, "write the output elsewhere")
    assert (html.read_bytes() if html.exists() else None) == before


def test_graph_output_beside_the_events_is_fine(runner, local_run, tmp_path: Path) -> None:
    events = _events_copy(local_run, tmp_path)
    out = tmp_path / "events-graph.json"  # shares a prefix with the events directory, is not inside it
    result = runner.invoke(main, ["graph", "--events", str(events), "-o", str(out)])
    assert result.exit_code == 0, result.output
    assert json.loads(out.read_text())["nodes"] and result.stderr == f"wrote {out}\n"


@pytest.mark.parametrize("where", ["under_a_file", "a_directory"])
def test_unwritable_graph_output_is_one_error_line(runner, local_run, tmp_path: Path, where: str) -> None:
    events, _ = local_run
    blocker = tmp_path / "file"
    blocker.write_text("a file where a directory should be")
    output = blocker / "graph.json" if where == "under_a_file" else tmp_path
    result = runner.invoke(main, ["graph", "--events", str(events), "-o", str(output)])
    problem = f"{blocker} is not a directory" if where == "under_a_file" else "cannot write: "
    one_error_line(result, f"--output {output}: {problem}")


def test_any_failure_of_the_output_write_is_one_error_line_not_wrote(
    runner, local_run, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The file is written in a thread (while the graph's memory is given back): whatever stops
    it there is reported as before, never followed by `wrote FILE`."""
    events, _ = local_run
    output = tmp_path / "graph.json"
    write_bytes = Path.write_bytes

    def failing(self: Path, data: bytes) -> int:
        if self == output:
            raise RuntimeError("the write broke")
        return write_bytes(self, data)

    monkeypatch.setattr(Path, "write_bytes", failing)
    result = runner.invoke(main, ["graph", "--events", str(events), "-o", str(output)])
    one_error_line(result, "the write broke")
    assert "wrote" not in result.stderr


def test_the_html_report_carries_each_datasets_schema_changes(runner: CliRunner, tmp_path: Path) -> None:
    from tests.emr_lineage.analysis.builders import app_run, at, dataset

    def writes(fields: dict[str, str], minutes: float) -> list[dict]:
        return app_run("clean", at(minutes), outputs=[dataset("s3://lake/clean", fields, output=True)])

    events = tmp_path / "events.jsonl"
    lines = writes({"id": "string"}, 0) + writes({"id": "string", "country": "string"}, 10)
    events.write_text("".join(json.dumps(e) + "\n" for e in lines), encoding="utf-8")
    out = tmp_path / "report.html"
    result = runner.invoke(main, ["graph", "--events", str(events), "--format", "html", "-o", str(out)])
    assert result.exit_code == 0, result.output
    payload = json.loads(out.read_text(encoding="utf-8").split("id='lineage-data'>", 1)[1].split("</script>", 1)[0])
    [change] = payload["drift"]["dataset:s3://lake:clean"]
    assert change["added"] == [{"name": "country", "type": "string"}] and change["job"] == "clean"
    piped = runner.invoke(main, ["graph", "--events", "-", "--format", "html"], input=events.read_text())
    assert piped.exit_code == 0 and '"drift": null' in piped.stdout  # standard input is read once


@pytest.mark.parametrize("option", [["--strict"], ["--skip-invalid"], ["--schema-dir", "/nowhere"]])
def test_file_check_options_are_refused_with_marquez(runner, marquez: FakeMarquez, option: list[str]) -> None:
    result = runner.invoke(main, ["graph", "--marquez", marquez.url, *option])
    assert result.exit_code == 2
    assert "are for --events: the events read from Marquez are held to the event rule" in result.output
