"""``emr-lineage gateway serve``: what it refuses before it starts (one line, exit 2)."""

from __future__ import annotations

import pytest
from click.testing import CliRunner

from emr_lineage.cli.app import main
from emr_lineage.cli.gateway import API_KEY_ENV_VAR
from tests.helpers import free_port, one_error_line, without_aws_credentials

SERVE = ["gateway", "serve", "--archive", "s3://b", "--queue", "q", "--port", "0"]


@pytest.mark.parametrize("url", ["notaurl", "localhost:5000", "ftp://marquez", "http://", "http://host:port"])
def test_a_marquez_that_is_not_an_http_url_is_refused_at_once(url: str) -> None:
    result = CliRunner().invoke(main, [*SERVE, "--marquez", url])
    assert result.exit_code == 2
    (line,) = result.output.strip().splitlines()
    assert line.startswith("error: --marquez: ") and url in line


def test_an_empty_key_is_refused_not_taken_for_no_key(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(API_KEY_ENV_VAR, "")
    result = CliRunner().invoke(main, [*SERVE, "--marquez", "http://127.0.0.1:9"])
    assert result.exit_code == 2
    assert (
        result.output.strip()
        == f"error: {API_KEY_ENV_VAR} is set but empty: set the key, or unset it to run without authentication"
    )


@pytest.fixture
def no_aws_credentials(monkeypatch: pytest.MonkeyPatch, tmp_path) -> None:
    without_aws_credentials(monkeypatch, tmp_path / "none", "eu-west-1")


def test_no_aws_credentials_says_how_to_give_them_not_create(no_aws_credentials) -> None:
    result = CliRunner().invoke(main, [*SERVE, "--marquez", "http://127.0.0.1:9"])
    line = one_error_line(result, "no AWS credentials")
    assert "AWS_PROFILE" in line and "AWS_ENDPOINT_URL" in line
    assert "--create" not in line


def test_an_endpoint_that_does_not_answer_is_not_a_missing_queue(
    no_aws_credentials, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("AWS_ACCESS_KEY_ID", "testing")
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", "testing")
    monkeypatch.setenv("AWS_ENDPOINT_URL", f"http://127.0.0.1:{free_port()}")
    line = one_error_line(CliRunner().invoke(main, [*SERVE, "--marquez", "http://127.0.0.1:9"]), "AWS_ENDPOINT_URL")
    assert "--create" not in line


def test_no_region_is_one_line_saying_where_to_set_one(no_aws_credentials, monkeypatch: pytest.MonkeyPatch) -> None:
    for name in ("AWS_DEFAULT_REGION", "AWS_REGION"):
        monkeypatch.delenv(name, raising=False)
    line = one_error_line(CliRunner().invoke(main, [*SERVE, "--marquez", "http://127.0.0.1:9"]), "no AWS region")
    assert "AWS_DEFAULT_REGION" in line and "NoRegionError" not in line
