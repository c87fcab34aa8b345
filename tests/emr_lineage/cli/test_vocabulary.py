"""docs/cli.md "Vocabulary": one meaning per option name across every command (its help written for each),
and the last release's spellings still working with one deprecation line on stderr."""

from __future__ import annotations

from pathlib import Path

import click
import pytest
from click.testing import CliRunner

from emr_lineage.cli.app import main
from emr_lineage.cli.options import SharedOption
from tests.emr_lineage.analysis.builders import app_run, at, dataset
from tests.emr_lineage.conftest import write_jsonl
from tests.helpers import every_command
from tests.paths import CDK_JSON

DEPRECATED = "is deprecated and will be removed in the next release; use"
RETIRED = "no longer applies and will be removed in the next release:"


def _options(hidden: bool) -> list[tuple[str, click.Option]]:
    return [
        (name, param)
        for name, command in every_command().items()
        for param in command.params
        if isinstance(param, click.Option) and param.hidden == hidden
    ]


def test_no_two_commands_give_an_option_name_two_meanings() -> None:
    """An option two commands show is options.py's (a SharedOption): one meaning and metavar, whatever its help
    says in each command."""
    meanings: dict[str, dict[tuple, list[str]]] = {}
    for command, option in _options(hidden=False):
        for spelling in option.opts:
            meaning = option.meaning if isinstance(option, SharedOption) else option.help
            meanings.setdefault(spelling, {}).setdefault((meaning, option.metavar), []).append(command)
    differing = {spelling: m for spelling, m in meanings.items() if len(m) > 1}
    assert differing == {}


def _help(command: str, spelling: str) -> str:
    (option,) = [p for p in every_command()[command].params if isinstance(p, click.Option) and spelling in p.opts]
    return " ".join((option.help or "").split())


@pytest.mark.parametrize(
    "command, spelling, says, not_said",
    [
        ("impact", "--graph", "graph --format json", ["runs", "impact"]),
        *[(c, "--graph", "--with-runs", ["impact"]) for c in ("drift", "audit", "runs")],
        ("gateway replay", "--dry-run", "Count what would be replayed", ["launch", "serverless"]),
        ("launch", "--dry-run", "StartJobRun", ["replay"]),
        ("run-local", "--conf", "spark.master=local[2]", ["launch", "serverless"]),
        ("launch", "--conf", "With --serverless", ["run-local", "local[2]"]),
        ("demo", "--force", "--out-dir", ["tls", "in_transit"]),
        ("tls", "--force", "in_transit_encryption", ["demo", "--out-dir"]),
        ("gateway post", "--marquez", "lineage gateway", ["replay", "refused"]),
        ("gateway replay", "--marquez", "lineage gateway's URL is refused", ["Send"]),
        ("graph", "--marquez", "raw events", ["post", "replay"]),
        ("gateway serve", "--archive", "s3://bucket", ["prefix for a copy"]),
        ("impact", "--archive", "s3://bucket/prefix", ["gateway serve", "root"]),
        ("launch", "--job", "PySpark script", ["runs"]),
        ("runs", "--job", "by name", ["launch", "script"]),
        ("graph", "--depth", "With --node", ["impact"]),
        ("impact", "--depth", "from the dataset", ["graph", "--node"]),
        ("doctor", "--format", "table", ["graph"]),
        ("gateway archive query", "--dataset", "storage URI", ["table:"]),
        ("schemas fetch", "--schema-dir", "Write the schemas", ["schemas fetch"]),
    ],
)
def test_an_options_help_is_written_for_its_command(
    command: str, spelling: str, says: str, not_said: list[str]
) -> None:
    """What an option does in another command is that command's help, not this one's."""
    text = _help(command, spelling)
    assert says in text and not [word for word in not_said if word in text], text


def test_every_hidden_option_is_a_deprecated_spelling_or_a_retired_option_that_warns() -> None:
    """A hidden option is either the last release's spelling of a shown one, which it maps onto, or an option
    that no longer does anything (``retired_option``): given, it warns once and the command runs without it."""
    hidden = _options(hidden=True)
    aliases = [(command, option) for command, option in hidden if hasattr(option, "new")]
    retired = [(command, option) for command, option in hidden if not hasattr(option, "new")]
    assert {spelling for _, option in aliases for spelling in option.opts} == {
        "--bucket",
        "--events",
        "--fail-if-downstream",
        "--html",
        "--out",
    }
    for command, option in aliases:
        shown = {p.name for p in every_command()[command].params if isinstance(p, click.Option) and not p.hidden}
        assert option.new in shown, (command, option.opts)
        assert not option.expose_value
    assert sorted((command, option.opts[0]) for command, option in retired) == [
        ("graph", "--column-lineage"),
        ("validate", "--depth"),
    ]
    for command, option in retired:
        assert not option.expose_value and option.callback is not None, (command, option.opts)
        given = [option.opts[0]] if option.is_flag else [option.opts[0], "3"]
        result = CliRunner().invoke(main, [*command.split(), *given])  # then fails for want of a source
        warnings = [line for line in result.stderr.splitlines() if line.startswith("warning: ")]
        assert warnings == [line for line in warnings if RETIRED in line] and len(warnings) == 1, result.stderr
        assert warnings[0].startswith(f"warning: {option.opts[0]} {RETIRED} ")


def test_every_gate_is_spelled_fail_on() -> None:
    gates = {s for _, o in _options(hidden=False) for s in o.opts if s.startswith("--fail")}
    assert gates and all(s.startswith("--fail-on-") for s in gates)


def _deprecation_lines(stderr: str) -> list[str]:
    return [line for line in stderr.splitlines() if DEPRECATED in line]


@pytest.fixture
def events(tmp_path: Path) -> str:
    run = app_run(
        "clean",
        at(0),
        inputs=[dataset("s3://lake/raw", {"price": "double"})],
        outputs=[dataset("s3://lake/clean", {"amount": "double"}, output=True)],
    )
    return str(write_jsonl(tmp_path / "events.jsonl", run))


def test_fail_if_downstream_still_gates_with_one_warning(events: str) -> None:
    old = CliRunner().invoke(main, ["impact", "--events", events, "--dataset", "s3://lake/raw", "--fail-if-downstream"])
    new = CliRunner().invoke(main, ["impact", "--events", events, "--dataset", "s3://lake/raw", "--fail-on-downstream"])
    assert old.exit_code == new.exit_code == 1 and old.stdout == new.stdout
    assert _deprecation_lines(old.stderr) == [
        "warning: --fail-if-downstream is deprecated and will be removed in the next release; use --fail-on-downstream"
    ]
    assert _deprecation_lines(new.stderr) == []


def test_validate_html_is_now_output_and_still_works_with_one_warning(events: str, tmp_path: Path) -> None:
    contract = tmp_path / "contract.yaml"
    contract.write_text('version: 1\nnamespace: n\njobs:\n  - {name: clean, inputs: ["s3://lake/raw"]}\n')
    base = ["validate", "--contract", str(contract), "--events", events]
    for spelling, name in (("--html", "old.html"), ("-o", "new.html"), ("--output", "long.html")):
        result = CliRunner().invoke(main, [*base, spelling, str(tmp_path / name)])
        assert (tmp_path / name).read_text().startswith("<!"), result.output
        expected = ["warning: --html is deprecated and will be removed in the next release; use -o/--output FILE"]
        assert _deprecation_lines(result.stderr) == (expected if spelling == "--html" else [])
        assert result.stderr.count("warning:") == len(_deprecation_lines(result.stderr))


def test_demo_out_is_now_out_dir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    seen: list[str] = []

    def run(out_dir: str, *args, **kwargs):
        seen.append(out_dir)
        raise click.exceptions.Exit(0)

    monkeypatch.setattr("emr_lineage.cli.demo._run", run)
    for spelling in ("--out", "--out-dir"):
        result = CliRunner().invoke(main, ["demo", spelling, str(tmp_path / spelling), "--cdk-json", str(CDK_JSON)])
        assert result.exit_code == 0, result.output
        assert len(_deprecation_lines(result.stderr)) == (spelling == "--out")
    assert seen == [str(tmp_path / "--out"), str(tmp_path / "--out-dir")]
    assert (
        "--out-dir DIR" in _deprecation_lines(CliRunner().invoke(main, ["demo", "--out", "x", "--env", ""]).stderr)[0]
    )


def test_run_local_events_file_is_now_output(tmp_path: Path) -> None:
    missing = str(tmp_path / "no.py")
    old = CliRunner().invoke(main, ["run-local", "--events", str(tmp_path / "e.jsonl"), missing])
    new = CliRunner().invoke(main, ["run-local", "-o", str(tmp_path / "e.jsonl"), missing])
    assert old.exit_code == new.exit_code == 2
    assert "no such script" in old.stderr and "no such script" in new.stderr  # past the "give a destination" check
    assert _deprecation_lines(old.stderr) == [
        "warning: --events is deprecated and will be removed in the next release; use -o/--output FILE"
    ]


def test_gateway_serve_bucket_is_now_archive() -> None:
    serve = ["gateway", "serve", "--queue", "q", "--port", "0", "--marquez", "notaurl"]
    old = CliRunner().invoke(main, [*serve, "--bucket", "b"])
    assert old.exit_code == 2 and "--marquez" in old.stderr.splitlines()[-1]
    assert _deprecation_lines(old.stderr) == [
        "warning: --bucket is deprecated and will be removed in the next release; use --archive s3://NAME"
    ]
    prefixed = CliRunner().invoke(main, [*serve[:-1], "http://127.0.0.1:9", "--archive", "s3://b/copy"])
    assert prefixed.exit_code == 2 and "at a bucket's root; give s3://b" in prefixed.stderr
    missing = CliRunner().invoke(main, serve)
    assert missing.exit_code == 2 and "--archive" in missing.stderr


def test_an_old_and_a_new_spelling_together_are_one_error(events: str) -> None:
    result = CliRunner().invoke(
        main,
        ["impact", "--events", events, "--dataset", "s3://lake/raw", "--fail-on-downstream", "--fail-if-downstream"],
    )
    assert result.exit_code == 2
    assert result.stderr.splitlines() == [
        "error: --fail-if-downstream and --fail-on-downstream both given; give only --fail-on-downstream"
    ]


def test_help_shows_the_new_spellings_only() -> None:
    result = CliRunner().invoke(main, ["gateway", "replay", "--help"])
    assert "--archive" in result.stdout and "--bucket" not in result.stdout
    assert "--arrived-since" in result.stdout and "in 0.1" not in result.stdout
