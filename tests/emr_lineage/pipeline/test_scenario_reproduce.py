"""`emr-lineage demo --scenario reproduce`: one real run after the shared demo (the CLI in its own process,
local Spark, the real listener): revenue_daily's input changes, the job reruns, then runs as of its first run
and gives the first run's rows again; runs compare and the pins say what the lineage says."""

from __future__ import annotations

import json

import pytest
from click.testing import CliRunner

from emr_lineage.analysis.compare import compare
from emr_lineage.analysis.runs import collect_runs
from emr_lineage.cli.app import main
from emr_lineage.lineage.graph.history import INPUT, RunHistory
from tests.emr_lineage.demo_run import REPRODUCE_FOLDER, DemoRun, shared_folder, shared_reproduce


@pytest.fixture(scope="session")
def reproduce_run(tmp_path_factory: pytest.TempPathFactory) -> DemoRun:
    return shared_reproduce(shared_folder(tmp_path_factory, REPRODUCE_FOLDER))


@pytest.fixture(scope="session")
def revenue_runs(reproduce_run: DemoRun) -> tuple[RunHistory, list]:
    history = RunHistory.of(reproduce_run.events())
    return history, [run for run in collect_runs(history) if run.job == "revenue_daily"]


def test_the_run_as_of_the_first_gives_its_rows_again_and_the_changed_run_does_not(reproduce_run: DemoRun) -> None:
    assert reproduce_run.returncode == 0, reproduce_run.stderr[-3000:]
    out = reproduce_run.stdout
    assert "reproduced: run" in out and "rows run" in out
    differ = int(out.split("the rerun on the changed orders: ", 1)[1].split(" rows", 1)[0])
    assert differ > 0  # the row check tells a difference where there is one


def test_the_lineage_says_which_snapshot_each_run_read(revenue_runs: tuple[RunHistory, list]) -> None:
    history, (first, changed, reproduced) = revenue_runs
    [orders] = [key for key in first.inputs if key[1].endswith("/clean/orders_clean")]
    assert len(first.inputs[orders]) == len(changed.inputs[orders]) == 1
    assert changed.inputs[orders] != first.inputs[orders]
    # read as of the first run: the listener's version facet names the table's current snapshot, its scan
    # report the one read; the runs say the one read
    assert reproduced.inputs[orders] == first.inputs[orders]
    assert reproduced.counts(INPUT, orders)["rowCount"] == first.counts(INPUT, orders)["rowCount"]
    assert changed.scans[orders] and reproduced.scans[orders] != changed.scans[orders]
    source = {"where": "the demo's events", "source": "events"}
    assert [d.dataset for d in compare(history, first.run_id, changed.run_id, **source).inputs_changed] == [orders]
    assert compare(history, first.run_id, reproduced.run_id, **source).inputs_changed == []


def test_the_pins_file_is_the_first_runs_pins(reproduce_run: DemoRun, revenue_runs: tuple[RunHistory, list]) -> None:
    first = revenue_runs[1][0]
    pins = json.loads((reproduce_run.out / "pins.json").read_text())
    printed = CliRunner().invoke(main, ["runs", first.run_id, "--pins", "--events", str(reproduce_run.events_path)])
    assert printed.exit_code == 0, printed.output
    assert json.loads(printed.stdout) == pins
    [(table, snapshot)] = pins["tables"].items()
    assert table == "lakehouse.clean.orders_clean" and {snapshot} == next(iter(first.inputs.values()))
    gate = ["runs", "compare", first.run_id, revenue_runs[1][1].run_id, "--fail-on-change"]
    assert CliRunner().invoke(main, [*gate, "--events", str(reproduce_run.events_path)]).exit_code == 1
