"""doctor's EMR Serverless row against moto: the application exists, takes job runs, runs the clusters' release."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from emr_lineage.aws import parameters
from emr_lineage.operations.checks import SERVERLESS_CHECK, CheckResult, Status
from emr_lineage.operations.doctor import DoctorOptions, run_doctor
from emr_lineage.settings.model import EnvironmentSettings
from tests.emr_lineage.operations.prepared_account import (
    ENV,
    cdk_json_copy,
    client,
    deploy_serverless_application,
    doctor_clients,
    moto_account,
    prepare_account,
)


@pytest.fixture
def aws(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    yield from moto_account(monkeypatch)


def _deployed(tmp_path: Path, closed_port_url: str, *, release: str | None = None) -> tuple[EnvironmentSettings, str]:
    """An environment with serverless on, its application redeployed at ``release`` when given."""
    prepared = prepare_account(cdk_json_copy(tmp_path, serverless=True), closed_port_url)
    application = prepared.serverless_application_id
    assert application is not None
    return prepared.settings, deploy_serverless_application(prepared.settings, release) if release else application


def _row(settings: EnvironmentSettings) -> CheckResult:
    report = run_doctor(settings, DoctorOptions(timeout=2), doctor_clients)
    return {r.check: r for r in report.results}[SERVERLESS_CHECK]


def test_a_started_application_at_the_clusters_release_passes(aws, tmp_path: Path, closed_port_url: str) -> None:
    settings, application = _deployed(tmp_path, closed_port_url)
    row = _row(settings)
    assert row.status is Status.PASS, row
    assert row.detail == f"{application} ({settings.resource_prefix}-spark): STARTED, {settings.emr.release_label}"


def test_another_release_fails_with_a_redeploy(aws, tmp_path: Path, closed_port_url: str) -> None:
    settings, _ = _deployed(tmp_path, closed_port_url, release="emr-7.12.0")
    row = _row(settings)
    assert row.status is Status.FAIL and row.detail.endswith(f"but emr.release_label is {settings.emr.release_label}")
    assert row.fix == f"redeploy the EMR stack: make deploy ENV={ENV}"


def test_a_terminated_application_takes_no_job_runs(aws, tmp_path: Path, closed_port_url: str) -> None:
    settings, application = _deployed(tmp_path, closed_port_url)
    serverless = client("emr-serverless")
    serverless.stop_application(applicationId=application)
    serverless.delete_application(applicationId=application)
    row = _row(settings)
    assert row.status is Status.FAIL and "TERMINATED" in row.detail and row.detail.endswith("takes no job runs")


def test_an_application_that_is_not_there_fails_with_the_aws_error(aws, tmp_path: Path, closed_port_url: str) -> None:
    settings, _ = _deployed(tmp_path, closed_port_url)
    client("ssm").put_parameter(
        Name=parameters.serverless_application_id(ENV), Value="00fnosuchapp", Type="String", Overwrite=True
    )
    row = _row(settings)
    assert row.status is Status.FAIL and row.detail.startswith("00fnosuchapp: ResourceNotFoundException")


def test_with_serverless_off_the_row_is_not_needed(aws, tmp_path: Path, closed_port_url: str) -> None:
    settings = prepare_account(cdk_json_copy(tmp_path), closed_port_url).settings
    row = _row(settings)
    assert row.status is Status.SKIP and row.detail == "not needed: emr_serverless.enabled is false"
