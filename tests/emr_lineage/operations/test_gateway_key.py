"""doctor's gateway API key row against moto: what the ingest accepts now, since when, and how to rotate."""

from __future__ import annotations

import datetime as dt
import json
from collections.abc import Iterator
from pathlib import Path

import pytest

from emr_lineage.aws import parameters
from emr_lineage.gateway import aws_lambda
from emr_lineage.gateway.config import API_KEY_SECRET_ARN, GatewayConfigError
from emr_lineage.operations.checks import Status
from emr_lineage.operations.doctor import DoctorOptions, run_doctor
from emr_lineage.operations.gateway_key import CHECK, SPOKES_CHECK, spoke_rotation_steps
from emr_lineage.settings.loader import load_settings
from emr_lineage.settings.model import EnvironmentSettings
from tests.emr_lineage.operations.prepared_account import (
    API_KEY,
    ENV,
    PreparedAccount,
    cdk_json_copy,
    client,
    doctor_clients,
    moto_account,
    prepare_account,
)

PUT = "aws secretsmanager put-secret-value --secret-id {arn} --secret-string "


@pytest.fixture
def aws(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    yield from moto_account(monkeypatch)


@pytest.fixture
def prepared(aws, tmp_path: Path, closed_port_url: str) -> PreparedAccount:
    """A deployed environment with the gateway on; no load balancer to reach, which this row does not need."""
    return prepare_account(cdk_json_copy(tmp_path), closed_port_url)


def key_row(settings: EnvironmentSettings, now: dt.datetime | None = None) -> tuple[Status, str, str]:
    options = DoctorOptions(timeout=2, clock=lambda: now or dt.datetime.now(dt.UTC))
    report = run_doctor(settings, options, doctor_clients)
    rows = {r.check: r for r in report.results}
    assert all(API_KEY not in r.detail + r.fix for r in report.results)  # a key is never printed
    return rows[CHECK].status, rows[CHECK].detail, rows[CHECK].fix


def created(arn: str, stage: str = aws_lambda.CURRENT) -> dt.datetime:
    return client("secretsmanager").get_secret_value(SecretId=arn, VersionStage=stage)["CreatedDate"]


def minute(moment: dt.datetime) -> str:
    return f"{moment.astimezone(dt.UTC):%Y-%m-%d %H:%M} UTC"


def put(arn: str, value: str) -> None:
    client("secretsmanager").put_secret_value(SecretId=arn, SecretString=value)


def accepted_by_the_ingest(arn: str, monkeypatch: pytest.MonkeyPatch) -> tuple[str, ...]:
    """The keys the ingest Lambda itself accepts now (a new container: no cache)."""
    monkeypatch.setenv(API_KEY_SECRET_ARN, arn)
    aws_lambda.reset()
    try:
        return aws_lambda.api_keys(arn)
    finally:
        aws_lambda.reset()


def test_a_secret_never_rotated_passes_with_its_age_and_the_rotation(prepared: PreparedAccount) -> None:
    arn = prepared.api_key_secret_arn
    since = created(arn)
    status, detail, fix = key_row(prepared.settings, since + dt.timedelta(days=3, hours=1))
    assert (status, fix) == (Status.PASS, "")
    assert detail.startswith(
        f"{arn}: current value (AWSCURRENT) since {minute(since)} (3 days); "
        "no AWSPREVIOUS value: only the current key is accepted. "
    )
    assert PUT.format(arn=arn) + "<new key>; within 5 minutes every ingest Lambda accepts the new key and " in detail
    assert "new EMR clusters read the key at boot" in detail and "docs/gateway.md#rotating-the-api-key" in detail
    assert detail.endswith("the next put retires the old key")


def test_after_a_put_the_previous_key_is_still_accepted(prepared: PreparedAccount, monkeypatch) -> None:
    arn = prepared.api_key_secret_arn
    put(arn, "new-key")
    since = created(arn)
    status, detail, _ = key_row(prepared.settings, since)
    assert status is Status.PASS
    assert detail.startswith(
        f"{arn}: current value (AWSCURRENT) since {minute(since)} (0 days); "
        f"the previous value (AWSPREVIOUS, current until {minute(since)}) is still accepted: "
        "clients not yet updated still get in. rotate without loss: "
    )
    assert accepted_by_the_ingest(arn, monkeypatch) == ("new-key", API_KEY)  # what the row says, the ingest does


def test_a_second_put_retires_the_first_key(prepared: PreparedAccount, monkeypatch) -> None:
    arn = prepared.api_key_secret_arn
    put(arn, "second")
    put(arn, "third")
    status, detail, _ = key_row(prepared.settings)
    assert status is Status.PASS and "the previous value (AWSPREVIOUS" in detail
    assert accepted_by_the_ingest(arn, monkeypatch) == ("third", "second")


def test_a_json_key_passes_without_emr_serverless(prepared: PreparedAccount) -> None:
    put(prepared.api_key_secret_arn, json.dumps({"apiKey": "from-json"}))
    assert key_row(prepared.settings)[0] is Status.PASS


@pytest.mark.parametrize("value", [json.dumps({"apiKey": "from-json"}), "padded-key\n"], ids=["json", "newline"])
def test_with_emr_serverless_only_the_bare_key_passes(aws, tmp_path: Path, closed_port_url, value) -> None:
    """Job runs send the secret's whole string as their key: the ingest takes these values, their runs' events not."""
    prepared = prepare_account(cdk_json_copy(tmp_path, serverless=True), closed_port_url)
    arn = prepared.api_key_secret_arn
    assert key_row(prepared.settings)[0] is Status.PASS  # the stack's: a plain string
    put(arn, value)
    status, detail, fix = key_row(prepared.settings)
    assert status is Status.FAIL
    assert detail == (
        f"{arn}: the current value is not the key alone (a JSON object, or spaces around the key): the ingest "
        "and the clusters take it, but EMR Serverless job runs send the whole string as their key and the "
        "gateway refuses their events (401)"
    )
    assert fix == "put the same key alone as the value (clients keep working): " + PUT.format(arn=arn) + "<the key>"
    assert "from-json" not in detail + fix and "padded-key" not in detail + fix


def test_a_missing_secret_fails_with_the_deploy(prepared: PreparedAccount) -> None:
    arn = prepared.api_key_secret_arn
    client("secretsmanager").delete_secret(SecretId=arn, ForceDeleteWithoutRecovery=True)
    assert key_row(prepared.settings) == (
        Status.FAIL,
        f"no secret {arn}: the ingest refuses every event (500) and new clusters fail at boot",
        f"deploy the Gateway stack (make deploy ENV={ENV})",
    )


def test_a_secret_scheduled_for_deletion_fails_with_the_restore(prepared: PreparedAccount) -> None:
    arn = prepared.api_key_secret_arn
    client("secretsmanager").delete_secret(SecretId=arn, RecoveryWindowInDays=7)
    status, detail, fix = key_row(prepared.settings)
    assert status is Status.FAIL and detail == f"{arn} is scheduled for deletion: the ingest refuses every event (500)"
    assert fix == f"aws secretsmanager restore-secret --secret-id {arn}"
    client("secretsmanager").restore_secret(SecretId=arn)
    assert key_row(prepared.settings)[0] is Status.PASS


def test_json_without_api_key_after_a_good_key_fails_with_the_way_back(prepared: PreparedAccount, monkeypatch) -> None:
    arn = prepared.api_key_secret_arn
    secrets = client("secretsmanager")
    good = secrets.get_secret_value(SecretId=arn)["VersionId"]
    put(arn, json.dumps({"key": "misnamed"}))
    bad = secrets.get_secret_value(SecretId=arn)["VersionId"]
    status, detail, fix = key_row(prepared.settings)
    assert status is Status.FAIL
    assert detail == (
        f"secret {arn} is a JSON object without a string 'apiKey': "
        "the ingest refuses every event (500) and new clusters fail at boot"
    )
    with pytest.raises(GatewayConfigError):  # the ingest's own verdict
        accepted_by_the_ingest(arn, monkeypatch)
    assert fix.startswith(
        "give AWSCURRENT back to the previous value, which the clients hold: aws secretsmanager "
        f"update-secret-version-stage --secret-id {arn} --version-stage AWSCURRENT "
        f"--move-to-version-id {good} --remove-from-version-id {bad}; "
    )
    # The fix, as printed: the clients' key is current again, the misnamed value previous and ignored.
    secrets.update_secret_version_stage(
        SecretId=arn, VersionStage="AWSCURRENT", MoveToVersionId=good, RemoveFromVersionId=bad
    )
    status, detail, _ = key_row(prepared.settings)
    assert status is Status.PASS
    assert "the previous value is not a key (" in detail and "only the current key is accepted" in detail
    assert accepted_by_the_ingest(arn, monkeypatch) == (API_KEY,)


def test_json_without_api_key_and_nothing_before_fails_with_a_put(aws, tmp_path: Path, closed_port_url) -> None:
    prepared = prepare_account(cdk_json_copy(tmp_path), closed_port_url)
    arn = client("secretsmanager").create_secret(Name="json-key", SecretString=json.dumps({"apiKey": 42}))["ARN"]
    client("ssm").put_parameter(Name=parameters.gateway_api_key_secret(ENV), Value=arn, Overwrite=True)
    status, detail, fix = key_row(prepared.settings)
    assert status is Status.FAIL and detail.startswith(f"secret {arn} is a JSON object without a string 'apiKey'")
    assert fix.startswith('put a usable value (the key itself, or a JSON object with a string "apiKey"): ')
    assert PUT.format(arn=arn) in fix


def test_an_empty_current_value_fails(prepared: PreparedAccount) -> None:
    arn = prepared.api_key_secret_arn
    put(arn, "   ")
    status, detail, fix = key_row(prepared.settings)
    assert status is Status.FAIL and detail.startswith(f"secret {arn} is empty: ")
    assert fix.startswith("give AWSCURRENT back to the previous value")


def test_without_the_gateway_or_its_parameter_the_row_says_why(aws, tmp_path: Path, closed_port_url) -> None:
    settings = prepare_account(cdk_json_copy(tmp_path, gateway=False), closed_port_url).settings
    assert key_row(settings) == (Status.SKIP, "not needed: gateway.enabled is false", "")

    settings = load_settings(ENV, cdk_json_copy(tmp_path))
    client("ssm").delete_parameter(Name=parameters.gateway_api_key_secret(ENV))
    status, detail, _ = key_row(settings)
    assert (status, detail) == (Status.SKIP, f"skipped (needs SSM parameter {parameters.gateway_api_key_secret(ENV)})")


# --- the spoke accounts' keys ------------------------------------------------------------------------

SPOKES = ("210987654321", "345678901234")


def spoke_row(settings: EnvironmentSettings, now: dt.datetime | None = None) -> tuple[Status, str, str]:
    options = DoctorOptions(timeout=2, clock=lambda: now or dt.datetime.now(dt.UTC))
    report = run_doctor(settings, options, doctor_clients)
    (row,) = [r for r in report.results if r.check == SPOKES_CHECK]
    assert all(f"key-{a}" not in r.detail + r.fix for r in report.results for a in SPOKES)  # never printed
    return row.status, row.detail, row.fix


@pytest.fixture
def spokes(aws, tmp_path: Path, closed_port_url: str) -> tuple[EnvironmentSettings, dict[str, str]]:
    """A deployed environment with two spoke accounts: their secrets (one value each) and SSM parameters."""
    path = cdk_json_copy(tmp_path)
    document = json.loads(path.read_text())
    document["context"]["emr-lineage"]["environments"][ENV]["gateway"]["spoke_accounts"] = list(SPOKES)
    path.write_text(json.dumps(document))
    settings = prepare_account(path, closed_port_url).settings
    arns = {}
    for account in SPOKES:
        arns[account] = client("secretsmanager").create_secret(Name=f"spokes/{account}", SecretString=f"key-{account}")[
            "ARN"
        ]
        client("ssm").put_parameter(
            Name=parameters.gateway_spoke_key_secret(ENV, account), Value=arns[account], Type="String"
        )
    return settings, arns


def test_the_spokes_keys_pass_with_their_age_and_how_to_rotate_one(spokes) -> None:
    settings, arns = spokes
    since = created(arns[SPOKES[0]])
    status, detail, fix = spoke_row(settings, since + dt.timedelta(days=2, hours=1))
    assert (status, fix) == (Status.PASS, "")
    for account, arn in arns.items():
        assert f"{account} ({arn}): current value since " in detail
    assert detail.startswith(
        f"{SPOKES[0]} ({arns[SPOKES[0]]}): current value since {minute(since)} (2 days); "
        "no AWSPREVIOUS value: only the current key is accepted; "
    )
    assert detail.endswith(". " + spoke_rotation_steps())
    assert "put-secret-value --secret-id <its ARN> --secret-string <new key>; within 5 minutes" in detail


def test_after_a_put_a_spokes_previous_key_is_still_accepted(spokes, monkeypatch) -> None:
    settings, arns = spokes
    arn = arns[SPOKES[1]]
    put(arn, "spoke-new")
    since = created(arn)
    status, detail, _ = spoke_row(settings, since)
    assert status is Status.PASS
    assert (
        f"{SPOKES[1]} ({arn}): current value since {minute(since)} (0 days); the previous value (AWSPREVIOUS, "
        f"current until {minute(since)}) is still accepted: clients not yet updated still get in. " in detail
    )
    assert accepted_by_the_ingest(arn, monkeypatch) == ("spoke-new", f"key-{SPOKES[1]}")


def test_a_missing_spoke_secret_fails_naming_the_spoke(spokes) -> None:
    settings, arns = spokes
    client("secretsmanager").delete_secret(SecretId=arns[SPOKES[0]], ForceDeleteWithoutRecovery=True)
    put(arns[SPOKES[1]], json.dumps({"key": "misnamed"}))
    status, detail, fix = spoke_row(settings)
    assert status is Status.FAIL
    assert detail == (
        f"spoke account {SPOKES[0]}: no secret {arns[SPOKES[0]]}; spoke account {SPOKES[1]}: secret "
        f"{arns[SPOKES[1]]} is a JSON object without a string 'apiKey': their events are refused (401)"
    )
    assert fix == (
        f"deploy the Gateway stack (make deploy ENV={ENV}); "
        'put a usable value (the key itself, or a JSON object with a string "apiKey"): '
        f"{PUT.format(arn=arns[SPOKES[1]])}<new key>"
    )
    assert key_row(settings)[0] is Status.PASS  # the gateway's own key is another row


def test_without_spokes_or_their_parameters_the_spoke_row_says_why(spokes, tmp_path: Path, closed_port_url) -> None:
    settings, _ = spokes
    client("ssm").delete_parameter(Name=parameters.gateway_spoke_key_secret(ENV, SPOKES[1]))
    status, detail, _ = spoke_row(settings)
    assert (status, detail) == (
        Status.SKIP,
        f"skipped (needs SSM parameter {parameters.gateway_spoke_key_secret(ENV, SPOKES[1])})",
    )
    plain = load_settings(ENV, cdk_json_copy(tmp_path))
    assert spoke_row(plain) == (Status.SKIP, "not needed: no gateway.spoke_accounts", "")
