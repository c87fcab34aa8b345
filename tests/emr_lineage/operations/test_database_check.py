"""doctor's database row against moto: the engine version Marquez's database runs, against the settings."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from emr_lineage.aws import parameters
from emr_lineage.operations.checks import DATABASE_CHECK, CheckResult, Status
from emr_lineage.operations.doctor import DoctorOptions, run_doctor
from emr_lineage.settings.model import EnvironmentSettings
from tests.emr_lineage.operations.prepared_account import (
    DATABASE_ID,
    ENV,
    cdk_json_copy,
    client,
    deploy_database,
    doctor_clients,
    moto_account,
    prepare_account,
)


@pytest.fixture
def aws(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    yield from moto_account(monkeypatch)


def _row(settings: EnvironmentSettings) -> CheckResult:
    report = run_doctor(settings, DoctorOptions(timeout=2), doctor_clients)
    return {r.check: r for r in report.results}[DATABASE_CHECK]


def test_the_running_engine_version_is_shown(aws, tmp_path: Path, closed_port_url: str) -> None:
    settings = prepare_account(cdk_json_copy(tmp_path), closed_port_url).settings
    row = _row(settings)
    assert row.status is Status.PASS, row
    assert row.detail == f"{DATABASE_ID}: postgres 17.6, available"


def test_an_older_major_than_the_settings_fails_with_the_upgrade(aws, tmp_path: Path, closed_port_url: str) -> None:
    settings = prepare_account(cdk_json_copy(tmp_path), closed_port_url).settings
    _redeployed(settings, "14.24")
    row = _row(settings)
    assert row.status is Status.FAIL and row.detail.endswith(
        "postgres 14.24, available, but database.postgres_version is 17"
    )
    assert row.fix == f"upgrade it (docs/operations.md, Upgrading PostgreSQL): make deploy ENV={ENV}"


def test_a_newer_major_than_the_settings_fails_with_the_setting_to_change(
    aws, tmp_path: Path, closed_port_url: str
) -> None:
    settings = prepare_account(cdk_json_copy(tmp_path), closed_port_url).settings
    _redeployed(settings, "18.1")
    row = _row(settings)
    assert row.status is Status.FAIL and row.detail.endswith(
        "postgres 18.1, available, but database.postgres_version is 17"
    )
    assert row.fix == "set database.postgres_version to 18 in cdk.json"


def _redeployed(settings: EnvironmentSettings, version: str) -> None:
    client("rds").delete_db_instance(DBInstanceIdentifier=DATABASE_ID, SkipFinalSnapshot=True)
    deploy_database(settings, version)


def test_a_stopped_database_fails_with_where_to_look(aws, tmp_path: Path, closed_port_url: str) -> None:
    settings = prepare_account(cdk_json_copy(tmp_path), closed_port_url).settings
    client("rds").stop_db_instance(DBInstanceIdentifier=DATABASE_ID)
    row = _row(settings)
    assert row.status is Status.FAIL and row.detail.endswith(", stopped")
    assert "describe-events" in row.fix


def test_a_missing_instance_fails_with_a_deploy(aws, tmp_path: Path, closed_port_url: str) -> None:
    settings = prepare_account(cdk_json_copy(tmp_path), closed_port_url).settings
    client("rds").delete_db_instance(DBInstanceIdentifier=DATABASE_ID, SkipFinalSnapshot=True)
    row = _row(settings)
    assert row.status is Status.FAIL and "DBInstanceNotFound" in row.detail
    assert row.fix == f"deploy the lineage service: make deploy ENV={ENV}"


def test_the_instance_is_found_by_the_identifier_the_lineage_stack_published(
    aws, tmp_path: Path, closed_port_url: str
) -> None:
    settings = prepare_account(cdk_json_copy(tmp_path), closed_port_url).settings
    client("ssm").delete_parameter(Name=parameters.marquez_database_id(ENV))
    row = _row(settings)
    assert row.status is Status.SKIP
    assert row.detail == f"skipped (needs SSM parameter {parameters.marquez_database_id(ENV)})"
