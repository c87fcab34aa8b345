"""``emr-lineage gateway archive query`` against moto's Athena: the named query rendered and started in the
environment's workgroup, its rows printed; a failed, cancelled, overdue or interrupted query.

moto runs no SQL: the rows are seeded (``query_results_queue``) and the states set on its backend.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import boto3
import pytest
from click.testing import CliRunner
from moto import mock_aws
from moto.moto_api import state_manager

from emr_lineage.aws import athena, parameters
from emr_lineage.aws.clients import clients_for
from emr_lineage.cli.app import main
from tests.emr_lineage.moto_backends import DEFAULT_ACCOUNT_ID, athena_backends
from tests.helpers import fake_aws_credentials
from tests.paths import CDK_JSON

REGION = "eu-west-1"
ENV = "dev"
WORKGROUP = "emr-lineage-dev-lineage-archive"
DATABASE = "emr_lineage_dev_lineage_archive"
WINDOW = ["--since", "2026-11-20", "--until", "2026-11-23T12:00Z"]


def _cell(value: str | None) -> dict[str, str]:
    return {} if value is None else {"VarCharValue": value}


def seed_rows(columns: list[str], rows: list[list[str | None]]) -> None:
    """The next query's results, as Athena gives a SELECT's: the header first."""
    from moto.athena.models import QueryResults  # imported with its backend, when a test seeds rows

    athena_backends[DEFAULT_ACCOUNT_ID][REGION].query_results_queue.append(
        QueryResults(
            rows=[{"Data": [_cell(c) for c in columns]}, *({"Data": [_cell(v) for v in row]} for row in rows)],
            column_info=[{"Name": c, "Type": "varchar"} for c in columns],
        )
    )


def executions() -> list[Any]:
    return list(athena_backends[DEFAULT_ACCOUNT_ID][REGION].executions.values())


@pytest.fixture()
def aws(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    fake_aws_credentials(monkeypatch, REGION)
    monkeypatch.setattr(athena, "pause", lambda seconds: pytest.fail("the query was not done at once"))
    with mock_aws():
        boto3.client("athena", region_name=REGION).create_work_group(Name=WORKGROUP)
        ssm = boto3.client("ssm", region_name=REGION)
        for name, value in {
            parameters.gateway_athena_workgroup(ENV): WORKGROUP,
            parameters.gateway_archive_database(ENV): DATABASE,
        }.items():
            ssm.put_parameter(Name=name, Value=value, Type="String")
        yield
        state_manager.unset_transition("athena::execution")


def run(*args: str) -> Any:
    return CliRunner().invoke(main, ["gateway", "archive", "query", *args, "--env", ENV, "--cdk-json", str(CDK_JSON)])


def test_a_named_query_runs_in_the_workgroup_and_prints_its_rows(aws: None) -> None:
    seed_rows(
        ["run_id", "job_name", "access", "events"], [["r-1", "revenue_daily", "read", "3"], ["r-2", None, "write", "1"]]
    )
    result = run("runs_for_dataset", *WINDOW, "--dataset", "s3a://lake/raw/o'rders/", "--format", "json")
    assert result.exit_code == 0, result.output
    assert json.loads(result.stdout) == {
        "query": "runs_for_dataset",
        "columns": ["run_id", "job_name", "access", "events"],
        "rows": [
            {"run_id": "r-1", "job_name": "revenue_daily", "access": "read", "events": "3"},
            {"run_id": "r-2", "job_name": None, "access": "write", "events": "1"},
        ],
    }
    (execution,) = executions()
    assert execution.workgroup.name == WORKGROUP and execution.context == {"Database": DATABASE}
    # The dataset as the ingest names it, its quote doubled; the partitions a day either side.
    assert "= 's3://lake' AND rtrim(d.name, '/') = 'raw/o''rders'" in execution.query
    assert "e.dt BETWEEN '2026-11-19' AND '2026-11-24'" in execution.query
    assert "from_iso8601_timestamp('2026-11-23T12:00:00.000Z')" in execution.query


def test_the_table_shows_the_rows_and_a_count(aws: None) -> None:
    seed_rows(
        ["producer", "events"], [["https://github.com/OpenLineage/OpenLineage/tree/1.53.0/integration/spark", "42"]]
    )
    result = run("events_per_producer_per_day", *WINDOW)
    assert result.exit_code == 0, result.output
    assert "integration/spark" in result.stdout and "│ 42" in result.stdout
    assert result.stdout.rstrip().endswith("1 row(s) from archive query events_per_producer_per_day")
    assert "Athena query" in result.stderr and "SUCCEEDED" in result.stderr  # progress on stderr


def test_no_rows_is_a_count_of_zero(aws: None) -> None:
    seed_rows(["job_namespace", "job_name", "failed_runs", "last_failure"], [])
    result = run("failed_runs_per_job", *WINDOW, "--job", "revenue_daily")
    assert result.exit_code == 0 and result.stdout == "0 row(s) from archive query failed_runs_per_job\n"
    assert "('revenue_daily' = '' OR w.job.name = 'revenue_daily')" in executions()[0].query


SPOKE = "210987654321"


def test_a_source_account_keeps_the_events_that_accounts_key_sent(aws: None) -> None:
    seed_rows(["event_date", "source_account", "events"], [["2026-11-21", SPOKE, "7"]])
    result = run("events_per_source_account", *WINDOW, "--source-account", SPOKE)
    assert result.exit_code == 0, result.output
    assert f"('{SPOKE}' = '' OR regexp_extract(\"$path\", '-([0-9]{{12}})\\.json$', 1) = '{SPOKE}')" in (
        executions()[0].query
    )
    seed_rows(["producer", "events"], [])
    assert run("events_per_producer_per_day", *WINDOW).exit_code == 0
    assert "('' = '' OR regexp_extract(" in executions()[1].query  # without it: every account


def _failing(reason: str | None, state: str) -> Any:
    """clients_for whose Athena query ends ``state`` with Athena's ``reason``."""

    def clients(settings: Any, services: tuple[str, ...]) -> dict[str, Any]:
        made = clients_for(settings, services)

        def end(**_: Any) -> None:
            for execution in executions():
                execution.status = state

        def explain(parsed: dict, **_: Any) -> None:
            if reason:
                parsed["QueryExecution"]["Status"]["StateChangeReason"] = reason

        made["athena"].meta.events.register("after-call.athena.StartQueryExecution", end)
        made["athena"].meta.events.register("after-call.athena.GetQueryExecution", explain)
        return made

    return clients


@pytest.mark.parametrize(
    "state, reason",
    [("FAILED", "TABLE_NOT_FOUND: line 3:8: Table 'x.events' does not exist"), ("CANCELLED", None)],
)
def test_a_query_that_fails_or_is_cancelled_is_exit_1_with_athenas_reason(
    aws: None, monkeypatch: pytest.MonkeyPatch, state: str, reason: str | None
) -> None:
    monkeypatch.setattr("emr_lineage.cli.archive.clients_for", _failing(reason, state))
    result = run("late_events", *WINDOW)
    assert result.exit_code == 1, result.output
    (line,) = [line for line in result.stderr.splitlines() if line.startswith("error: ")]
    query_id = executions()[0].id
    assert line == f"error: Athena query {query_id} {state}" + (f": {reason}" if reason else "")
    assert result.stdout == ""


def _stay_queued() -> None:
    state_manager.set_transition(model_name="athena::execution", transition={"progression": "manual", "times": 1000})


def test_ctrl_c_stops_the_query_and_exits_130(aws: None, monkeypatch: pytest.MonkeyPatch) -> None:
    _stay_queued()

    def interrupt(seconds: float) -> None:
        raise KeyboardInterrupt

    monkeypatch.setattr(athena, "pause", interrupt)
    result = run("late_events", *WINDOW)
    assert result.exit_code == 130
    (execution,) = executions()
    assert execution.status == "CANCELLED"
    assert f"stopped the Athena query {execution.id}" in result.stderr and "error: interrupted" in result.stderr


def test_a_query_past_its_deadline_is_stopped_and_exit_1(aws: None, monkeypatch: pytest.MonkeyPatch) -> None:
    _stay_queued()
    now = iter(range(0, 100_000, 300))
    monkeypatch.setattr(athena, "clock", lambda: next(now))
    monkeypatch.setattr(athena, "pause", lambda seconds: None)
    result = run("late_events", *WINDOW)
    assert result.exit_code == 1
    (execution,) = executions()
    assert execution.status == "CANCELLED"
    assert f"error: Athena query {execution.id} still QUEUED after 900 s; stopped it" in result.stderr


@pytest.mark.parametrize(
    "args, fragment",
    [
        (["runs_for_datset", *WINDOW], "no archive query 'runs_for_datset' (did you mean 'runs_for_dataset'?)"),
        (["late_events", "--until", "2026-11-23"], "needs --since"),
        (["late_events", "--since", "yesterday"], "--since 'yesterday': not an ISO 8601 date or time"),
        (["late_events", "--since", "2026-11-23", "--until", "2026-11-22"], "is before --since"),
        (["runs_for_dataset", *WINDOW], "archive query runs_for_dataset needs --dataset"),
        (["runs_for_dataset", *WINDOW, "--dataset", "table:orders"], "needs a storage URI"),
        (["late_events", *WINDOW, "--job", "x"], "archive query late_events takes no --job"),
        (["failed_runs_per_job", *WINDOW, "--job", "a\x00b"], "control characters cannot be in a query value"),
        (["late_events", *WINDOW, "--source-account", "1234"], "--source-account '1234': not an AWS account id"),
        (["unreadable_lines", *WINDOW, "--source-account", SPOKE], "unreadable_lines takes no --source-account"),
    ],
)
def test_bad_input_is_one_line_and_exit_2_before_athena_is_asked(aws: None, args: list[str], fragment: str) -> None:
    result = run(*args)
    assert result.exit_code == 2, result.output
    (line,) = [line for line in result.stderr.splitlines() if line.startswith("error: ")]
    assert fragment in line
    assert executions() == []


def test_a_missing_workgroup_parameter_names_the_gateway_stack(aws: None) -> None:
    boto3.client("ssm", region_name=REGION).delete_parameter(Name=parameters.gateway_athena_workgroup(ENV))
    result = run("late_events", *WINDOW)
    assert result.exit_code == 2 and "deploy the gateway stack" in result.stderr


def test_list_names_every_query_and_its_options() -> None:
    result = CliRunner().invoke(main, ["gateway", "archive", "list", "--format", "json"])
    assert result.exit_code == 0
    listed = {q["name"]: q["options"] for q in json.loads(result.stdout)}
    assert listed == {
        "runs_for_dataset": "--since --until --source-account --dataset",
        "failed_runs_per_job": "--since --until --source-account --job",
        "events_per_producer_per_day": "--since --until --source-account",
        "events_per_source_account": "--since --until --source-account",
        "late_events": "--since --until --source-account",
        "unreadable_lines": "--since --until",
    }
