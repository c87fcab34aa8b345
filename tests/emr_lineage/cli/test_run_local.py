"""`emr-lineage run-local`: what cannot run is one line and exit 2. A real run (the script's exit status,
arguments and --conf; its lineage through the gateway) is in tests/emr_lineage/gateway/test_local.py."""

from __future__ import annotations

from pathlib import Path

import pytest
from click.testing import CliRunner

from emr_lineage.cli.app import main
from emr_lineage.listener.maven import LISTENER_DIR_ENV_VAR
from tests.helpers import one_error_line
from tests.paths import CDK_JSON

SCRIPT = "print('never run')\n"


@pytest.fixture
def script(tmp_path: Path) -> Path:
    path = tmp_path / "job.py"
    path.write_text(SCRIPT)
    return path


def _run(*args: str, env: dict[str, str] | None = None):
    return CliRunner().invoke(main, ["run-local", "--cdk-json", str(CDK_JSON), *args], env=env)


def test_a_missing_script_is_one_line_and_exit_2(tmp_path) -> None:
    one_error_line(_run("--output", str(tmp_path / "e.jsonl"), str(tmp_path / "no.py")), "no.py: no such script")


def test_a_destination_is_required(script) -> None:
    one_error_line(_run(str(script)), "give --url URL, -o/--output FILE or both")


def test_a_listener_jar_not_fetched_is_one_line_and_exit_2(script, tmp_path) -> None:
    result = _run("--output", str(tmp_path / "e.jsonl"), str(script), env={LISTENER_DIR_ENV_VAR: str(tmp_path)})
    one_error_line(result, "not fetched yet: run `make setup` or `emr-lineage fetch-listener`")


def test_a_conf_that_is_not_key_value_is_one_line_and_exit_2(script, tmp_path) -> None:
    one_error_line(_run("--output", str(tmp_path / "e"), "--conf", "spark.master", str(script)), "expected KEY=VALUE")


def test_options_after_the_script_without_a_double_dash_are_refused(script, tmp_path) -> None:
    one_error_line(_run("--output", str(tmp_path / "e"), str(script), "--lake", "x"), "No such option")
