"""What `demo --resume` continues and what it refuses, without Spark (the schema-change scenario's shared run
is the resumed demo on local Spark: tests/emr_lineage/pipeline/test_scenario_schema_change.py)."""

from __future__ import annotations

from pathlib import Path

import pytest
from click.testing import CliRunner

from emr_lineage.cli.app import main
from emr_lineage.pipeline.definition import PIPELINE, SCHEMA_CHANGE, STANDARD
from emr_lineage.pipeline.resume import STATE, DemoState, ResumeError, jobs_left, load_state

NAMESPACE = "emr-lineage-dev"


def _left(state: DemoState, scenario=SCHEMA_CHANGE, rows: int = 1500, namespace: str = NAMESPACE) -> tuple[str, ...]:
    return jobs_left(state, scenario, rows=rows, namespace=namespace, out=Path("/demo"))


def test_a_recorded_demo_reads_back_as_it_was_saved(tmp_path: Path) -> None:
    state = DemoState(1500, NAMESPACE).with_job("ingest_orders").with_job("revenue_daily")
    state.save(tmp_path)
    assert load_state(tmp_path) == state
    assert sorted(p.name for p in tmp_path.iterdir()) == [STATE]  # no partial file left beside it


def test_the_schema_change_after_a_standard_demo_runs_its_two_jobs() -> None:
    done = DemoState(1500, NAMESPACE, PIPELINE)
    assert _left(done) == ("revenue_daily_v2", "revenue_weekly")
    assert _left(done, STANDARD) == ()
    assert _left(DemoState(1500, NAMESPACE, PIPELINE[:2]), STANDARD) == PIPELINE[2:]  # a failed third job again


@pytest.mark.parametrize(
    ("state", "rows", "namespace", "says"),
    [
        (DemoState(300, NAMESPACE, PIPELINE), 1500, NAMESPACE, "holds a demo of 300 orders; give --rows 300"),
        (DemoState(1500, "other", PIPELINE), 1500, NAMESPACE, "namespace 'other', the settings name"),
        (DemoState(1500, NAMESPACE, ("revenue_weekly",)), 1500, NAMESPACE, "which scenario schema-change does not"),
    ],
)
def test_a_demo_of_other_rows_namespace_or_jobs_is_refused(state, rows, namespace, says) -> None:
    with pytest.raises(ResumeError, match="^--resume: /demo ") as info:
        _left(state, rows=rows, namespace=namespace)
    assert says in str(info.value)


@pytest.mark.parametrize(("content", "says"), [(None, "holds no demo to continue"), ("[1]", "not a demo record")])
def test_a_directory_without_a_readable_record_is_refused(tmp_path: Path, content: str | None, says: str) -> None:
    if content is not None:
        (tmp_path / STATE).write_text(content, encoding="utf-8")
    with pytest.raises(ResumeError, match=says):
        load_state(tmp_path)


def test_resume_on_a_directory_without_a_demo_is_one_line_and_creates_nothing(tmp_path: Path) -> None:
    out = tmp_path / "new"
    result = CliRunner().invoke(main, ["demo", "--resume", "--out-dir", str(out), "--rows", "1500"])
    assert result.exit_code == 2, result.output
    assert (
        result.stderr == f"error: --resume: {out} holds no demo to continue ({STATE} is missing); leave out --resume\n"
    )
    assert not out.exists()


def test_resume_with_other_rows_changes_nothing_in_the_directory(tmp_path: Path) -> None:
    DemoState(1500, NAMESPACE, PIPELINE).save(tmp_path)
    before = {p.name: p.read_bytes() for p in tmp_path.iterdir()}
    result = CliRunner().invoke(main, ["demo", "--resume", "--out-dir", str(tmp_path), "--rows", "300"])
    assert result.exit_code == 2 and "give --rows 1500" in result.stderr
    assert {p.name: p.read_bytes() for p in tmp_path.iterdir()} == before
