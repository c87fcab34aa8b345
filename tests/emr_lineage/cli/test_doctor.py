"""``emr-lineage doctor``: one table (or JSON), exit 0 when every check passed, 1 when one failed,
2 when doctor itself cannot run."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest
from click.testing import CliRunner

from emr_lineage.cli.app import main
from emr_lineage.marquez.api import LINEAGE_ENDPOINT
from tests.emr_lineage.fake_marquez import Answer, FakeMarquez
from tests.emr_lineage.operations.prepared_account import (
    ENV,
    REGION,
    cdk_json_copy,
    client,
    moto_account,
    prepare_account,
)
from tests.helpers import one_error_line


@pytest.fixture
def aws(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    yield from moto_account(monkeypatch)


def doctor(cdk_json: Path | str, *args: str):
    return CliRunner().invoke(main, ["doctor", "--env", ENV, "--cdk-json", str(cdk_json), *args])


def test_an_empty_account_exits_1_with_each_fix_in_the_table(aws, tmp_path: Path) -> None:
    result = doctor(cdk_json_copy(tmp_path, sha256=None))
    assert result.exit_code == 1, result.output
    for fix in (
        f"npx cdk bootstrap aws://123456789012/{REGION}",
        "aws iam create-service-linked-role --aws-service-name elasticmapreduce.amazonaws.com",
        f"make deploy ENV={ENV}",
        f"emr-lineage listener stage --env {ENV} --pin",
        "skipped (needs",
    ):
        assert fix in result.stdout, fix
    assert "check(s) failed" in result.stdout and result.stderr == ""


def test_an_endpoint_url_without_its_scheme_fails_the_first_row_with_its_fix(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("AWS_ENDPOINT_URL", "127.0.0.1:5000")
    monkeypatch.setenv("AWS_DEFAULT_REGION", REGION)
    result = doctor(cdk_json_copy(tmp_path), "--format", "json")
    assert result.exit_code == 1, result.output
    (row,) = [c for c in json.loads(result.stdout)["checks"] if c["check"] == "credentials"]
    assert row["status"] == "fail" and "AWS_ENDPOINT_URL=127.0.0.1:5000 is not an endpoint URL" in row["detail"]
    assert "an endpoint URL with its scheme" in row["fix"]


def test_a_prepared_account_exits_0_and_json_lists_every_check(aws, tmp_path: Path, marquez: FakeMarquez) -> None:
    marquez.routes[f"POST {LINEAGE_ENDPOINT}"] = lambda state, request: Answer(401, {"error": "no key"})
    cdk_json = cdk_json_copy(tmp_path)
    prepare_account(cdk_json, marquez.url)
    result = doctor(cdk_json)
    assert result.exit_code == 0, result.output
    assert "all checks passed" in result.stdout and " 1 warned, 0 failed, " in result.stdout  # Docker Hub in dev
    result = doctor(cdk_json, "--format", "json", "--timeout", "5")
    assert result.exit_code == 0, result.output
    report = json.loads(result.stdout)
    assert report["passed"] is True and report["env"] == ENV and report["counts"]["fail"] == 0
    assert report["counts"]["warn"] == 1 and {c["check"] for c in report["checks"] if c["status"] == "warn"} == {
        "marquez-images"
    }
    assert {c["check"] for c in report["checks"]} >= {"credentials", "cdk-bootstrap", "marquez", "gateway"}
    assert all(set(c) == {"check", "title", "status", "detail", "fix"} for c in report["checks"])


def test_the_key_row_prints_the_secret_arn_as_it_is_and_exits_1_when_the_key_is_unusable(
    aws, tmp_path: Path, marquez: FakeMarquez
) -> None:
    marquez.routes[f"POST {LINEAGE_ENDPOINT}"] = lambda state, request: Answer(401, {"error": "no key"})
    cdk_json = cdk_json_copy(tmp_path)
    arn = prepare_account(cdk_json, marquez.url).api_key_secret_arn
    assert ":secret:" in arn  # an emoji code to rich's default console
    result = doctor(cdk_json)
    assert result.exit_code == 0, result.output
    assert arn in result.stdout and "㊙" not in result.stdout
    result = doctor(cdk_json, "--format", "json")
    (row,) = [c for c in json.loads(result.stdout)["checks"] if c["check"] == "gateway-api-key"]
    assert row["status"] == "pass" and f"put-secret-value --secret-id {arn}" in row["detail"]  # how to rotate

    client("secretsmanager").put_secret_value(SecretId=arn, SecretString="{}")
    result = doctor(cdk_json, "--format", "json")
    assert result.exit_code == 1
    (row,) = [c for c in json.loads(result.stdout)["checks"] if c["check"] == "gateway-api-key"]
    assert row["status"] == "fail" and "without a string 'apiKey'" in row["detail"]
    assert "update-secret-version-stage" in row["fix"]


def test_json_of_a_failed_check_exits_1(aws, tmp_path: Path) -> None:
    result = doctor(cdk_json_copy(tmp_path), "--format", "json")
    assert result.exit_code == 1
    report = json.loads(result.stdout)
    assert report["passed"] is False and report["counts"]["fail"] > 0


@pytest.mark.parametrize(
    "args, fragment",
    [
        (["--env", "nope"], "unknown environment 'nope'"),
        (["--timeout", "0"], "--timeout"),
        (["--format", "xml"], "--format"),
    ],
)
def test_doctor_that_cannot_run_is_one_line_exit_2(args: list[str], fragment: str, tmp_path: Path) -> None:
    one_error_line(doctor(cdk_json_copy(tmp_path), *args), fragment, stdout_empty=True)


def test_a_bad_cdk_json_is_one_line_exit_2(tmp_path: Path) -> None:
    bad = tmp_path / "cdk.json"
    bad.write_text("{")
    one_error_line(doctor(bad), "invalid JSON", stdout_empty=True)


@pytest.mark.parametrize("option", ["--marquez", "--gateway"])
def test_a_url_option_that_is_not_an_http_url_is_a_bad_option_before_any_check(
    option: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import emr_lineage.cli.doctor as doctor_module

    def no_check(*args: object, **kwargs: object) -> None:
        raise AssertionError("a check ran")

    monkeypatch.setattr(doctor_module, "run_doctor", no_check)
    monkeypatch.setattr(doctor_module, "load_settings", no_check)
    line = one_error_line(doctor(cdk_json_copy(tmp_path), option, "notaurl"), option, stdout_empty=True)
    assert "'notaurl' is not an http(s) URL with a host" in line


def test_docs_list_every_check_id_of_the_json_form(aws, tmp_path: Path) -> None:
    """docs/cli.md names each stable id of `doctor --format json` (every row of an environment with everything
    on: the gateway, EMR Serverless)."""
    result = doctor(cdk_json_copy(tmp_path, sha256=None), "--format", "json")
    ids = {
        "stack:<name>" if row["check"].startswith("stack:") else row["check"]
        for row in json.loads(result.stdout)["checks"]
    }
    docs = " ".join((Path(__file__).resolve().parents[3] / "docs" / "cli.md").read_text(encoding="utf-8").split())
    listed = docs.split("`check` is a stable id (", 1)[1].split(")", 1)[0]
    assert ids == {name.strip(" `") for name in listed.split(",")}
