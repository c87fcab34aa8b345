"""emr-lineage runs compare RUN_A RUN_B: the differences as a table or JSON, --fail-on-change as a CI gate,
the same answer from a graph file with its runs, and bad input as one line."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from emr_lineage.cli.app import main
from tests.emr_lineage.analysis.builders import app_run, at, dataset
from tests.emr_lineage.analysis.iceberg_metadata import BUCKET, put_metadata, snapshot_entry
from tests.emr_lineage.conftest import write_jsonl
from tests.helpers import one_error_line

A, B, C, W = (f"00000000-0000-4000-8000-00000000000{n}" for n in "abc1")


def _events() -> list[dict]:
    def report(run_id: str, minutes: float, version: str, rows: int) -> list[dict]:
        orders = dataset("s3://lake/orders", {"id": "int"}, version=version, rows=rows)
        return app_run("report", at(minutes), run_id=run_id, inputs=[orders], spark="3.5.6")

    return (
        report(A, 0, "1", 40)
        + app_run("load", at(5), run_id=W, outputs=[dataset("s3://lake/orders", version="2", output=True, rows=60)])
        + report(B, 10, "2", 100)
        + report(C, 20, "2", 100)
    )


@pytest.fixture(autouse=True)
def _s3(lake_s3):
    """The tables of these events are on S3 (``s3://lake``): moto's, never an account's."""
    return lake_s3


@pytest.fixture
def events(tmp_path: Path) -> str:
    return str(write_jsonl(tmp_path / "events.jsonl", _events()))


def _run(*args: str):
    return CliRunner().invoke(main, list(args))


def test_the_table_shows_the_input_read_at_another_version_and_who_wrote_it_between(events: str) -> None:
    result = _run("runs", "compare", A, B, "--events", events)
    assert result.exit_code == 0, result.output
    out = result.stdout
    assert f"run A: {A}  report  COMPLETE" in out and f"run B: {B}  report" in out
    assert "1 (40 rows)" in out and "2 (100 rows)" in out and "other version" in out
    assert f"written by load run {W} (2, 60 rows)" in out
    assert "1 of 1 input(s) read at another version, 0 schema change(s), 0 property change(s) (from events)" in out


def test_a_table_on_s3_says_what_its_snapshots_between_the_two_versions_did(events: str, lake_s3) -> None:
    put_metadata(lake_s3, "orders", "v2.metadata.json", [snapshot_entry(1, None, "append", "40")])
    put_metadata(
        lake_s3,
        "orders",
        "v3.metadata.json",
        [snapshot_entry(1, None, "append", "40"), snapshot_entry(2, 1, "append", "60")],
    )
    result = _run("runs", "compare", A, B, "--events", events)
    assert result.exit_code == 0 and result.stderr == "", result.output
    assert "table: 1 snapshot(s) between (append), +60 -0 rows" in result.stdout
    [orders] = json.loads(_run("runs", "compare", A, B, "--events", events, "--format", "json").stdout)["inputs"]
    assert [s["snapshotId"] for s in orders["snapshotsBetween"]] == ["2"]


def test_a_table_that_cannot_be_read_is_one_warning_and_the_events_still_answer(events: str, lake_s3) -> None:
    lake_s3.delete_bucket(Bucket=BUCKET)
    result = _run("runs", "compare", A, B, "--events", events)
    assert result.exit_code == 0 and f"written by load run {W} (2, 60 rows)" in result.stdout
    assert result.stderr == (
        "warning: cannot read the Iceberg metadata in s3://lake/orders/metadata/: NoSuchBucket: The specified bucket "
        "does not exist; what changed there is from the events alone\n"
    )


def test_fail_on_change_exits_1_only_when_an_input_version_differs(events: str) -> None:
    changed = _run("runs", "compare", A, B, "--events", events, "--fail-on-change", "--format", "json")
    assert changed.exit_code == 1 and json.loads(changed.stdout)["inputsChanged"] is True
    same = _run("runs", "compare", B, C, "--events", events, "--fail-on-change", "--format", "json")
    assert same.exit_code == 0, same.output
    [orders] = json.loads(same.stdout)["inputs"]
    assert orders["changed"] is False and orders["runA"]["versions"] == orders["runB"]["versions"] == ["2"]


def test_a_graph_file_with_its_runs_answers_as_its_events(events: str, tmp_path: Path) -> None:
    graph = tmp_path / "graph.json"
    built = _run("graph", "--events", events, "--format", "json", "--with-runs", "-o", str(graph))
    assert built.exit_code == 0, built.output
    from_graph = json.loads(_run("runs", "compare", A, B, "--graph", str(graph), "--format", "json").stdout)
    from_events = json.loads(_run("runs", "compare", A, B, "--events", events, "--format", "json").stdout)
    assert (from_graph.pop("source"), from_events.pop("source")) == ("graph", "events")
    assert from_graph == from_events


def test_runs_keeps_its_own_command_line_beside_compare(events: str) -> None:
    listed = _run("runs", "--events", events, "--job", "report", "--format", "json")
    assert [r["runId"] for r in json.loads(listed.stdout)["runs"]] == [A, B, C]
    assert "compare" in _run("runs", "--help").stdout


def test_bad_input_is_one_line(events: str) -> None:
    one_error_line(_run("runs", "compare", A, "nope", "--events", events), "run nope: no run with this id in")
    one_error_line(_run("runs", "compare", A, W, "--events", events), f"run {A} is of job report, run {W} of job load")
    one_error_line(_run("runs", "compare", A, "--events", events), "Missing argument 'RUN_B'")
    one_error_line(_run("runs", "compare", A, B, "--events", events, "--format", "yaml"), "--format")


def test_compare_after_options_says_it_comes_first(events: str) -> None:
    one_error_line(_run("runs", "--events", events, "compare", A, B), "compare comes first: emr-lineage runs compare")
    listed = _run("runs", "--job", "compare", "--events", events)  # an option's value, not the command
    one_error_line(listed, "--job 'compare': no run of this job")


def test_a_word_runs_does_not_take_is_an_error_not_dropped(events: str) -> None:
    one_error_line(_run("runs", A, "extra", "--events", events), "unexpected extra argument (extra)")


def test_completing_after_compare_lists_options_and_a_word_after_dashes_is_an_argument(events: str) -> None:
    from click.shell_completion import ShellComplete

    completion = ShellComplete(main, {}, "emr-lineage", "_EMR_LINEAGE_COMPLETE")
    offered = {item.value for item in completion.get_completions(["runs", "--events", events, "compare", A], "--")}
    assert "--events" in offered
    one_error_line(_run("runs", "--events", events, "--", "compare"), "run compare: no run with this id")
