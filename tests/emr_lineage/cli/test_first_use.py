"""What a new user meets first: where progress goes, when bad options are refused, what an
output path may do, what a terminal on standard input is told, and error lines kept whole."""

from __future__ import annotations

import json
import os
import pty
import subprocess
import sys
import time
from pathlib import Path

import pytest
from click.testing import CliRunner

from emr_lineage.cli.app import main
from emr_lineage.pipeline.demo import DemoError, JobRun
from tests.helpers import one_error_line
from tests.paths import CDK_JSON

EVENT = {
    "eventType": "COMPLETE",
    "eventTime": "2026-11-23T10:00:00.000Z",
    "run": {"runId": "0193a1b2-0000-7000-8000-000000000001"},
    "job": {"namespace": "emr-lineage-test", "name": "job_a"},
    "inputs": [{"namespace": "file", "name": "/lake/raw/orders"}],
    "outputs": [{"namespace": "file", "name": "/lake/curated/orders"}],
    "producer": "https://github.com/OpenLineage/OpenLineage/tree/1.0.0/integration/spark",
    "schemaURL": "https://openlineage.io/spec/2-0-2/OpenLineage.json#/$defs/RunEvent",
}
CONTRACT = """\
version: 1
namespace: emr-lineage-test
jobs:
  - name: job_a
    inputs: [ "/lake/raw/orders" ]
    outputs: [ "/lake/curated/orders" ]
"""


@pytest.fixture
def events(tmp_path: Path) -> Path:
    path = tmp_path / "events.jsonl"
    path.write_text(json.dumps(EVENT) + "\n", encoding="utf-8")
    return path


def _demo(tmp_path: Path, *args: str):
    return CliRunner().invoke(main, ["demo", "--out-dir", str(tmp_path / "out"), "--cdk-json", str(CDK_JSON), *args])


def test_demo_progress_goes_to_stderr(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    def one_job_then_a_failure(*args, on_job, **kwargs):
        on_job("ingest_orders", None)
        on_job("ingest_orders", JobRun("ingest_orders", 1.5, 3))
        raise DemoError("revenue_daily failed")

    monkeypatch.setattr("emr_lineage.cli.demo.run_demo", one_job_then_a_failure)
    result = _demo(tmp_path)
    assert result.exit_code == 1, result.output
    assert "ingest_orders: 1.5s, 3 lineage events" in result.stderr
    assert result.stdout == ""


def test_demo_refuses_a_bad_url_before_any_spark(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    def no_spark(*args, **kwargs):
        raise AssertionError("the demo ran with a bad --url")

    monkeypatch.setattr("emr_lineage.cli.demo.run_demo", no_spark)
    line = one_error_line(_demo(tmp_path, "--url", "notaurl"), "--url 'notaurl'", stdout_empty=True)
    assert "http" in line
    assert not (tmp_path / "out").exists()


@pytest.mark.parametrize("command", ["graph", "validate"])
def test_an_output_in_a_missing_directory_is_refused_not_created(command: str, events: Path, tmp_path: Path) -> None:
    missing = tmp_path / "new" / "dir"
    contract = tmp_path / "contract.yaml"
    contract.write_text(CONTRACT, encoding="utf-8")
    args = (
        ["graph", "--events", str(events), "-o", str(missing / "g.json")]
        if command == "graph"
        else ["validate", "--contract", str(contract), "--events", str(events), "--output", str(missing / "r.html")]
    )
    line = one_error_line(CliRunner().invoke(main, args), f"directory {missing} does not exist", stdout_empty=True)
    assert f"mkdir -p {missing}" in line
    assert not (tmp_path / "new").exists()


def test_validate_html_that_cannot_be_written_prints_no_verdict(
    events: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    contract = tmp_path / "contract.yaml"
    contract.write_text(CONTRACT, encoding="utf-8")
    report = tmp_path / "report.html"
    args = ["validate", "--contract", str(contract), "--events", str(events)]
    assert CliRunner().invoke(main, args).exit_code == 0  # the lineage matches: only the write fails below

    def refused(self: Path, *args, **kwargs) -> int:
        raise PermissionError(13, "Permission denied", str(self))

    monkeypatch.setattr(Path, "write_text", refused)
    one_error_line(CliRunner().invoke(main, [*args, "--output", str(report)]), "--output", stdout_empty=True)


def test_graph_says_it_reads_standard_input_on_a_terminal(tmp_path: Path) -> None:
    """On a real pseudo-terminal, before anything is typed: the hint, while the command waits."""
    leader, follower = pty.openpty()
    err = tmp_path / "stderr"
    with err.open("wb") as stderr:
        process = subprocess.Popen(
            [sys.executable, "-m", "emr_lineage", "graph", "--events", "-"],
            stdin=follower,
            stdout=subprocess.DEVNULL,
            stderr=stderr,
        )
    os.close(follower)
    try:
        deadline = time.monotonic() + 60
        while not err.read_text() and process.poll() is None and time.monotonic() < deadline:
            time.sleep(0.05)
        assert process.poll() is None  # still waiting for the events
    finally:
        process.kill()
        process.wait()
        os.close(leader)
    assert err.read_text() == "reading events from standard input (end with Ctrl-D)\n"


def test_graph_says_nothing_about_a_piped_standard_input(events: Path) -> None:
    result = CliRunner().invoke(main, ["graph", "--events", "-"], input=events.read_text())
    assert result.exit_code == 0, result.output
    assert "standard input" not in result.stderr


def test_an_error_line_to_a_file_is_whole(tmp_path: Path) -> None:
    """stderr a file, not a terminal: the long line is not folded at 80 columns."""
    missing = tmp_path / ("x" * 150) / "events.jsonl"
    err = tmp_path / "stderr"
    with err.open("wb") as stderr:
        done = subprocess.run(
            [sys.executable, "-m", "emr_lineage", "graph", "--events", str(missing)],
            stdout=subprocess.PIPE,
            stderr=stderr,
            timeout=60,
            env={**os.environ, "COLUMNS": "80"},
        )
    assert done.returncode == 2
    lines = err.read_text().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: ") and str(missing) in lines[0], lines
