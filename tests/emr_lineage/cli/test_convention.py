"""docs/cli.md, checked for every command: exit codes, one-line errors, --cdk-json, Ctrl-C."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner

from emr_lineage.cli.app import main
from emr_lineage.cli.output import DEBUG_ENV_VAR
from tests.helpers import every_command
from tests.paths import CDK_JSON

# Every command, with the arguments that get it past option parsing.
COMMANDS = {
    "gateway archive list": [],
    "gateway archive query": ["late_events", "--since", "2026-11-20"],
    "config": [],
    "demo": ["--out-dir", "OUT", "--rows", "200"],
    "e2e": [],
    "graph": ["--events", "EVENTS"],
    "validate": ["--contract", "CONTRACT", "--events", "EVENTS"],
    "launch": ["--job", "JOB"],
    "attach": ["--cluster-id", "j-2AL4XXXXXX5T9"],
    "detach": ["--cluster-id", "j-2AL4XXXXXX5T9"],
    "listener stage": ["--bucket", "some-bucket"],
    "listener fetch": [],
    "run-local": ["--events", "EVENTS", "JOB"],
    "schemas fetch": ["--schema-dir", "OUT"],
    "gateway post": ["--events", "EVENTS", "--marquez", "http://127.0.0.1:9"],
    "gateway replay": ["--archive", "s3://b", "--marquez", "http://127.0.0.1:9"],
    "gateway serve": ["--marquez", "http://127.0.0.1:9", "--archive", "s3://b", "--queue", "q"],
    "tls": [],
    "doctor": [],
    "impact": ["--dataset", "s3://b/k", "--events", "EVENTS"],
    "drift": ["--dataset", "s3://b/k", "--events", "EVENTS"],
    "audit": ["--dataset", "s3://b/k", "--events", "EVENTS"],
    "runs": ["--events", "EVENTS"],
    "runs compare": ["RUN_A", "RUN_B", "--events", "EVENTS"],
}
SETTINGS_COMMANDS = (
    "gateway archive query",
    "config",
    "demo",
    "doctor",
    "e2e",
    "listener fetch",
    "launch",
    "attach",
    "detach",
    "run-local",
    "listener stage",
    "tls",
)


def _run(args: list[str]) -> tuple[int, str, str]:
    result = CliRunner().invoke(main, args)
    return result.exit_code, result.stdout, result.stderr


def _one_error_line(stderr: str) -> str:
    lines = [line for line in stderr.splitlines() if line.startswith("error: ")]
    assert len(lines) == 1, stderr
    assert not any(line.startswith(("Traceback", "Error:", "Usage:")) for line in stderr.splitlines()), stderr
    return lines[0]


@pytest.fixture
def inputs(tmp_path: Path) -> dict[str, str]:
    job = tmp_path / "job.py"
    job.write_text("print('hi')\n")
    events = tmp_path / "events.jsonl"
    events.write_text("")
    contract = tmp_path / "contract.yaml"
    contract.write_text("version: 1\njobs: []\n")
    return {"OUT": str(tmp_path / "out"), "JOB": str(job), "EVENTS": str(events), "CONTRACT": str(contract)}


def _args(command: str, inputs: dict[str, str]) -> list[str]:
    return [*command.split(), *(inputs.get(a, a) for a in COMMANDS[command])]


def test_every_command_is_in_the_table() -> None:
    assert set(every_command()) == set(COMMANDS)  # and each lazy entry names its command


def test_a_command_imports_only_what_it_runs() -> None:
    # `graph` must not pay for Spark, boto3 or the settings model (start-up is part of its speed).
    code = "import sys; from emr_lineage.cli.app import main; main(['graph', '--help'], standalone_mode=False); " + (
        "print(sorted(m for m in ('pyspark', 'boto3', 'botocore', 'pydantic') if m in sys.modules))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip().splitlines()[-1] == "[]"


@pytest.mark.parametrize(
    "args, expected",
    [
        (["bogus"], "No such command 'bogus'. (see: emr-lineage --help)"),
        (["--bogus"], "No such option '--bogus'. (see: emr-lineage --help)"),
        (["schemas", "bogus"], "No such command 'bogus'. (see: emr-lineage schemas --help)"),
        (["gateway", "archive", "bogus"], "No such command 'bogus'. (see: emr-lineage gateway archive --help)"),
    ],
)
def test_a_mistake_before_the_command_is_one_line_and_exit_2(args: list[str], expected: str) -> None:
    code, _, err = _run(args)
    assert code == 2 and _one_error_line(err) == f"error: {expected}"


@pytest.mark.parametrize("args", [[], ["schemas"], ["listener"], ["gateway"], ["gateway", "archive"]])
def test_a_group_without_a_command_shows_its_help(args: list[str]) -> None:
    code, out, _ = _run(args)
    assert code == 0 and out.startswith("Usage: ")


@pytest.mark.parametrize("command", sorted(COMMANDS))
def test_an_unknown_option_is_one_line_and_exit_2(command: str, inputs: dict[str, str]) -> None:
    code, _, err = _run([*_args(command, inputs), "--no-such-option"])
    assert code == 2
    assert "--no-such-option" in _one_error_line(err)


@pytest.mark.parametrize("command", sorted(COMMANDS))
def test_help_exits_0(command: str) -> None:
    code, out, _ = _run([*command.split(), "--help"])
    assert code == 0 and "Usage:" in out


@pytest.mark.parametrize("command", sorted(COMMANDS))
def test_a_usage_line_names_the_command_as_typed_and_each_argument_once(command: str) -> None:
    _, out, _ = _run([*command.split(), "--help"])
    usage = out.splitlines()[0]
    assert usage.startswith(f"Usage: emr-lineage {command} [OPTIONS]"), usage
    words = [word.strip("[]|.") for word in usage.split()[2:] if word.strip("[]|.").isupper()]
    assert len(words) == len(set(words)), usage


@pytest.mark.parametrize("command", SETTINGS_COMMANDS)
@pytest.mark.parametrize(
    "content, expected",
    [
        ("[]", "expected a JSON object"),
        ("null", "expected a JSON object"),
        (b"\x89PNG\r\n\x1a\n\x00\xff", "not UTF-8"),
        ('{"context": {}}', "no context.'emr-lineage' block"),
        ("{", "invalid JSON"),
    ],
)
def test_a_bad_cdk_json_is_one_line_and_exit_2(
    command: str, content: str | bytes, expected: str, inputs: dict[str, str], tmp_path: Path
) -> None:
    bad = tmp_path / "cdk.json"
    bad.write_bytes(content if isinstance(content, bytes) else content.encode())
    code, _, err = _run([*_args(command, inputs), "--cdk-json", str(bad)])
    assert code == 2
    line = _one_error_line(err)
    assert expected in line and str(bad) in line


@pytest.mark.parametrize("command", SETTINGS_COMMANDS)
def test_a_directory_or_missing_cdk_json_and_an_empty_env_are_errors(
    command: str, inputs: dict[str, str], tmp_path: Path
) -> None:
    for extra, expected in (
        (["--cdk-json", str(tmp_path)], "is a directory"),
        (["--cdk-json", str(tmp_path / "none.json")], "not found"),
        (["--cdk-json", str(CDK_JSON), "--env", ""], "unknown environment ''"),
    ):
        code, _, err = _run([*_args(command, inputs), *extra])
        assert code == 2, (extra, err)
        assert expected in _one_error_line(err)


def test_config_reads_the_named_cdk_json_from_anywhere(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)  # no cdk.json here
    code, _, err = _run(["config"])
    assert code == 2 and "cdk.json: not found" in _one_error_line(err)
    code, out, _ = _run(["config", "--env", "prod", "--cdk-json", str(CDK_JSON)])
    assert code == 0 and json.loads(out)["name"] == "prod"


@pytest.mark.parametrize(
    "command, target",
    [
        ("graph", "emr_lineage.cli.graph.stream_events"),
        ("validate", "emr_lineage.lineage.contracts.model.load_contract"),  # imported when validate runs
        ("demo", "emr_lineage.cli.demo.run_demo"),
        ("config", "emr_lineage.cli.config.load_settings"),
    ],
)
def test_ctrl_c_exits_130_with_one_line(
    command: str, target: str, inputs: dict[str, str], monkeypatch: pytest.MonkeyPatch
) -> None:
    def interrupted(*args, **kwargs):
        raise KeyboardInterrupt

    monkeypatch.setattr(target, interrupted)
    code, _, err = _run([*_args(command, inputs), *(["--cdk-json", str(CDK_JSON)] if command == "demo" else [])])
    assert code == 130
    assert "interrupted" in _one_error_line(err)


@pytest.mark.parametrize("command", ["tls", "listener stage"])
@pytest.mark.parametrize(
    ("bucket", "expected"),
    [
        ("s3://my-artifacts/x", "give the bucket's name alone, 'my-artifacts'"),
        ("My_Bucket", "is not an S3 bucket name: use lowercase letters"),
    ],
)
def test_a_bucket_option_takes_a_bucket_name_only(command: str, bucket: str, expected: str) -> None:
    code, _, err = _run([*command.split(), "--bucket", bucket, "--cdk-json", str(CDK_JSON)])
    assert code == 2 and expected in _one_error_line(err)


def test_no_help_shows_source_markup() -> None:
    """--help is read in a terminal: no reST literals or roles from the docstrings it is made of."""
    from tests.helpers import command_contexts

    shown = {name: c.command.get_help(c) for name, c in command_contexts(groups=True).items()}
    assert {name: text for name, text in shown.items() if "``" in text or ":func:" in text or ":mod:" in text} == {}


@pytest.mark.parametrize("printed_by", ["click.echo", "rich", "click's help"])
def test_output_piped_to_a_reader_that_stops_ends_quietly_with_141(printed_by: str, tmp_path: Path) -> None:
    """As ``emr-lineage runs ... | head -1``: the reader is gone before the command writes."""
    from tests.emr_lineage.analysis.builders import app_run, at
    from tests.emr_lineage.conftest import write_jsonl

    events = write_jsonl(tmp_path / "events.jsonl", app_run("report", at(0)))
    args = {
        "click.echo": ["config", "--cdk-json", str(CDK_JSON)],
        "rich": ["runs", "--events", str(events)],  # its table
        "click's help": ["--help"],
    }[printed_by]
    read_end, write_end = os.pipe()
    os.close(read_end)
    try:
        done = subprocess.run(
            [sys.executable, "-m", "emr_lineage", *args], stdout=write_end, stderr=subprocess.PIPE, text=True
        )
    finally:
        os.close(write_end)
    assert (done.returncode, done.stderr) == (141, "")


def test_a_broken_pipe_that_is_not_stdout_is_an_error(monkeypatch: pytest.MonkeyPatch) -> None:
    def broken(*args, **kwargs):
        raise BrokenPipeError(32, "Broken pipe")

    monkeypatch.setattr("emr_lineage.cli.config.load_settings", broken)
    code, _, err = _run(["config", "--cdk-json", str(CDK_JSON)])
    assert code == 2 and "Broken pipe" in _one_error_line(err)


def test_a_surprise_is_one_line_and_debug_shows_the_traceback(monkeypatch: pytest.MonkeyPatch) -> None:
    def broken(*args, **kwargs):
        raise ZeroDivisionError("boom")

    monkeypatch.setattr("emr_lineage.cli.config.load_settings", broken)
    code, _, err = _run(["config", "--cdk-json", str(CDK_JSON)])
    assert code == 2 and "unexpected ZeroDivisionError: boom" in _one_error_line(err) and "--debug" in err
    monkeypatch.setenv(DEBUG_ENV_VAR, "")  # --debug sets it for the process: unset again after this test
    result = CliRunner().invoke(main, ["--debug", "config", "--cdk-json", str(CDK_JSON)])
    assert isinstance(result.exception, ZeroDivisionError)


@pytest.mark.parametrize("command", SETTINGS_COMMANDS)
@pytest.mark.parametrize(
    "change, args, expected",
    [
        (None, ["--env", "nope"], "unknown environment 'nope'"),
        (lambda block: block["environments"]["dev"]["openlineage"].update(namespace=5), [], "namespace"),
        (lambda block: block["environments"].clear(), [], "emr-lineage.environments: missing or empty"),
        (lambda block: block["environments"].update(dev=[]), [], "expected an object ({...}), not a JSON array"),
    ],
)
def test_a_settings_problem_names_the_file_given(
    command: str, change, args: list[str], expected: str, inputs: dict[str, str], tmp_path: Path
) -> None:
    document = json.loads(CDK_JSON.read_text())
    if change:
        change(document["context"]["emr-lineage"])
    mine = tmp_path / "my-settings.json"
    mine.write_text(json.dumps(document))
    code, _, err = _run([*_args(command, inputs), "--cdk-json", str(mine), *args])
    line = _one_error_line(err)
    assert code == 2 and expected in line and f"{mine}" in line, line
    assert "cdk.json" not in line.replace("--cdk-json", ""), line


def test_a_command_group_refuses_an_argument_its_commands_usage_would_name() -> None:
    import click

    from emr_lineage.cli.output import CommandGroup

    with pytest.raises(TypeError, match="GroupArgument"):
        click.group("g", cls=CommandGroup)(click.argument("item")(lambda item: None))
