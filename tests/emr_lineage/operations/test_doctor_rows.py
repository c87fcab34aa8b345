"""doctor's TLS and stacks rows against moto: a staged zip that is no good, stacks whose last operation failed."""

from __future__ import annotations

import datetime as dt
import io
import zipfile
from collections.abc import Iterator
from pathlib import Path

import botocore.session
import pytest

from emr_lineage.aws.artifacts import TLS_CERTIFICATES_KEY
from emr_lineage.aws.stacks import stack_name
from emr_lineage.operations import tls
from emr_lineage.operations.checks import CDK_TOOLKIT_STACK, Status, stack_state_problem
from emr_lineage.operations.doctor import DoctorOptions, run_doctor
from emr_lineage.settings.model import EnvironmentSettings
from tests.emr_lineage.moto_backends import cloudformation_backends
from tests.emr_lineage.operations.prepared_account import (
    BUCKET,
    ENV,
    REGION,
    cdk_json_copy,
    client,
    doctor_clients,
    moto_account,
    prepare_account,
)

NOW = dt.datetime(2026, 11, 23, 12, 0, tzinfo=dt.UTC)
URI = f"s3://{BUCKET}/{TLS_CERTIFICATES_KEY}"
REPLACE = f"emr-lineage tls --env {ENV} --replace"
ACCOUNT = "123456789012"  # moto's


@pytest.fixture
def aws(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    yield from moto_account(monkeypatch)


@pytest.fixture
def settings(aws, tmp_path: Path, closed_port_url: str) -> EnvironmentSettings:
    """A prepared account (its zip made at NOW); no Marquez to reach, which these rows do not need."""
    return prepare_account(cdk_json_copy(tmp_path, gateway=False), closed_port_url, now=NOW).settings


def row(settings: EnvironmentSettings, check: str, now: dt.datetime = NOW) -> tuple[Status, str, str]:
    report = run_doctor(settings, DoctorOptions(timeout=2, clock=lambda: now), doctor_clients)
    found = {r.check: (r.status, r.detail, r.fix) for r in report.results}
    return found[check]


def stage(data: bytes) -> None:
    client("s3").put_object(Bucket=BUCKET, Key=TLS_CERTIFICATES_KEY, Body=data)


def without(data: bytes, name: str) -> bytes:
    buffer = io.BytesIO()
    with zipfile.ZipFile(io.BytesIO(data)) as source, zipfile.ZipFile(buffer, "w") as target:
        for member in source.namelist():
            if member != name:
                target.writestr(member, source.read(member))
    return buffer.getvalue()


# --- the TLS row ---------------------------------------------------------------------------------


def test_the_staged_zip_passes_until_thirty_days_before_it_ends(settings: EnvironmentSettings) -> None:
    assert row(settings, "tls-certificates") == (
        Status.PASS,
        f"{URI}: *.{REGION}.compute.internal, valid until 2027-11-23 (365 days)",
        "",
    )
    assert row(settings, "tls-certificates", NOW + dt.timedelta(days=334))[0] is Status.PASS
    status, detail, fix = row(settings, "tls-certificates", NOW + dt.timedelta(days=336))
    assert status is Status.FAIL and fix == REPLACE
    assert detail == f"{URI}: *.{REGION}.compute.internal expires on 2027-11-23 UTC, in 29 day(s) (renew 30 days ahead)"


def test_an_expiring_certificate_fails_with_the_replacement(settings: EnvironmentSettings) -> None:
    stage(tls.certificate_zip(REGION, days=20, now=NOW).data)
    status, detail, fix = row(settings, "tls-certificates")
    assert (status, fix) == (Status.FAIL, REPLACE)
    assert detail.endswith("expires on 2026-12-13 UTC, in 20 day(s) (renew 30 days ahead)")


def test_an_expired_certificate_fails(settings: EnvironmentSettings) -> None:
    stage(tls.certificate_zip(REGION, days=1, now=NOW - dt.timedelta(days=2)).data)
    status, detail, fix = row(settings, "tls-certificates")
    assert (status, fix) == (Status.FAIL, REPLACE)
    assert detail == f"{URI}: *.{REGION}.compute.internal expired on 2026-11-22 12:00 UTC"


def test_a_garbage_zip_fails(settings: EnvironmentSettings) -> None:
    stage(b"zip")
    status, detail, fix = row(settings, "tls-certificates")
    assert (status, fix) == (Status.FAIL, REPLACE)
    assert detail.startswith(f"{URI}: not a readable zip (")


def test_a_zip_without_the_private_key_fails(settings: EnvironmentSettings) -> None:
    stage(without(tls.certificate_zip(REGION, now=NOW).data, tls.PRIVATE_KEY_FILE))
    status, detail, fix = row(settings, "tls-certificates")
    assert (status, fix) == (Status.FAIL, REPLACE)
    assert detail == (
        f"{URI}: the zip lacks {tls.PRIVATE_KEY_FILE} "
        f"(it holds: {tls.CERTIFICATE_CHAIN_FILE}, {tls.TRUSTED_CERTIFICATES_FILE})"
    )


def test_an_object_too_large_for_a_certificate_zip_is_not_downloaded(settings: EnvironmentSettings) -> None:
    stage(b"\0" * (tls.MAX_ZIP_BYTES + 1))
    status, detail, fix = row(settings, "tls-certificates")
    assert (status, fix) == (Status.FAIL, REPLACE)
    assert detail == f"{URI} is {tls.MAX_ZIP_BYTES + 1} bytes, not a certificate zip (at most {tls.MAX_ZIP_BYTES})"


# --- the stacks rows ----------------------------------------------------------------------------


def set_status(name: str, status: str) -> None:
    """moto completes every operation; its backend's stack object takes any other status."""
    backend = cloudformation_backends[ACCOUNT][REGION]
    (found,) = [s for s in backend.stacks.values() if s.name == name]
    found.status = status


@pytest.mark.parametrize("status", ["CREATE_COMPLETE", "UPDATE_COMPLETE", "IMPORT_COMPLETE"])
def test_a_stack_whose_last_operation_succeeded_passes(settings: EnvironmentSettings, status: str) -> None:
    name = stack_name(ENV, "Emr")
    set_status(name, status)
    assert row(settings, f"stack:{name}") == (Status.PASS, f"{status}, 1 output", "")


@pytest.mark.parametrize(
    "status, why, command",
    [
        ("UPDATE_ROLLBACK_COMPLETE", "its last deploy failed and was rolled back: it runs the template before it", ""),
        ("IMPORT_ROLLBACK_COMPLETE", "its last deploy failed and was rolled back: it runs the template before it", ""),
        ("ROLLBACK_COMPLETE", "its first create failed", "aws cloudformation delete-stack --stack-name {name}, "),
        (
            "UPDATE_ROLLBACK_FAILED",
            "an update failed and so did its rollback",
            "aws cloudformation continue-update-rollback --stack-name {name}, ",
        ),
        ("CREATE_FAILED", "its last operation failed", ""),
        ("ROLLBACK_FAILED", "its last operation failed", ""),
        ("DELETE_FAILED", "its last operation failed", ""),
    ],
)
def test_a_failed_or_rolled_back_stack_fails_with_its_events_and_a_redeploy(
    settings: EnvironmentSettings, status: str, why: str, command: str
) -> None:
    name = stack_name(ENV, "LineageService")
    set_status(name, status)
    events = f"read why in its events (aws cloudformation describe-stack-events --stack-name {name})"
    assert row(settings, f"stack:{name}") == (
        Status.FAIL,
        f"{status}, 1 output ({why})",
        f"{events}, fix it, {command.format(name=name)}then make deploy ENV={ENV}",
    )


def test_a_stack_being_deployed_fails_until_it_ends(settings: EnvironmentSettings) -> None:
    name = stack_name(ENV, "Network")
    set_status(name, "UPDATE_IN_PROGRESS")
    assert row(settings, f"stack:{name}") == (
        Status.FAIL,
        "UPDATE_IN_PROGRESS, 1 output",
        "wait for the stack operation to end, then run doctor again",
    )


def test_a_rolled_back_bootstrap_fails_with_the_bootstrap_command(settings: EnvironmentSettings) -> None:
    set_status(CDK_TOOLKIT_STACK, "UPDATE_ROLLBACK_COMPLETE")
    status, detail, fix = row(settings, "cdk-bootstrap")
    assert (status, detail) == (Status.FAIL, f"{CDK_TOOLKIT_STACK} is UPDATE_ROLLBACK_COMPLETE")
    assert fix == f"npx cdk bootstrap aws://{ACCOUNT}/{REGION}"


def test_every_state_but_the_three_successes_is_a_problem() -> None:
    """The classification over the StackStatus enum of botocore's CloudFormation model."""
    states = list(botocore.session.get_session().get_service_model("cloudformation").shape_for("StackStatus").enum)
    assert len(states) > 20 and "UPDATE_ROLLBACK_COMPLETE" in states
    passing = [state for state in states if stack_state_problem("S", state, "deploy") is None]
    assert passing == ["CREATE_COMPLETE", "UPDATE_COMPLETE", "IMPORT_COMPLETE"]
    for state in set(states) - set(passing):
        why, fix = stack_state_problem("S", state, "deploy")  # type: ignore[misc]
        assert fix.endswith("deploy") or fix.endswith("run doctor again"), state
