"""``emr-lineage gateway serve``: what it refuses before it starts (one line, exit 2)."""

from __future__ import annotations

import pytest
from click.testing import CliRunner

from emr_lineage.cli.app import main
from emr_lineage.cli.gateway import API_KEY_ENV_VAR

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
