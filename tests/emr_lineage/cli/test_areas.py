"""``emr-lineage --help`` by area (docs/cli.md, "Commands by area"), and the last release's command names:
hidden, each one deprecation line on stderr, then exactly the command it became."""

from __future__ import annotations

import subprocess
import sys

import click
import pytest
from click.testing import CliRunner

from emr_lineage.cli.app import RENAMED, main

AREAS = {
    "Start": ["demo", "doctor", "config"],
    "Run Spark": ["run-local", "launch", "e2e", "attach", "detach"],
    "Lineage": ["graph", "validate", "impact", "drift", "audit", "runs"],
    "Gateway": ["gateway"],
    "Set-up": ["listener", "schemas", "tls"],
}
DEPRECATED = "is deprecated and will be removed in the next release; use"


def _sections(help_text: str) -> dict[str, list[str]]:
    """The sections of a --help after Options: heading -> the first word of each row."""
    sections: dict[str, list[str]] = {}
    current = None
    for line in help_text.split("Options:", 1)[1].splitlines():
        if line and not line.startswith(" "):
            current = sections.setdefault(line.removesuffix(":"), [])
        elif current is not None and line.startswith("  ") and not line.startswith("   "):
            current.append(line.split()[0])
    return sections


def test_help_lists_each_command_under_its_area_once() -> None:
    result = CliRunner().invoke(main, ["--help"])
    assert result.exit_code == 0
    sections = _sections(result.stdout)
    assert sections == AREAS  # the areas in this order, each command in one, none under "Commands"
    context = click.Context(main)
    assert sorted(name for names in sections.values() for name in names) == sorted(main.list_commands(context))


def test_help_aligns_the_areas() -> None:
    rows = [line for line in CliRunner().invoke(main, ["--help"]).stdout.splitlines() if line.startswith("  ")]
    commands = [line for line in rows if line.split()[0] in main.list_commands(click.Context(main))]
    assert len({len(line) - len(line[2:].split(maxsplit=1)[1]) for line in commands}) == 1


def test_the_old_names_are_hidden() -> None:
    shown = {name for names in _sections(CliRunner().invoke(main, ["--help"]).stdout).values() for name in names}
    assert shown and not shown & set(RENAMED)
    assert all(main.get_command(click.Context(main), old) is None for old in RENAMED)


def test_the_groups_list_their_commands() -> None:
    assert _sections(CliRunner().invoke(main, ["gateway"]).stdout) == {
        "Commands": ["serve", "post", "replay", "archive"]
    }
    assert _sections(CliRunner().invoke(main, ["listener"]).stdout) == {"Commands": ["fetch", "stage"]}


@pytest.mark.parametrize("old, new", RENAMED.items())
@pytest.mark.parametrize("args", [["--help"], ["--no-such-option"], []])
def test_an_old_name_warns_once_then_is_the_new_command(old: str, new: str, args: list[str]) -> None:
    then = CliRunner().invoke(main, [old, *args])
    now = CliRunner().invoke(main, [*new.split(), *args])
    assert (then.exit_code, then.stdout) == (now.exit_code, now.stdout)
    assert then.stderr.splitlines() == [
        f"warning: emr-lineage {old} {DEPRECATED} emr-lineage {new}",
        *now.stderr.splitlines(),
    ]
    assert "warning:" not in now.stderr


def test_an_old_group_name_runs_its_commands() -> None:
    then = CliRunner().invoke(main, ["archive", "list", "--format", "json"])
    now = CliRunner().invoke(main, ["gateway", "archive", "list", "--format", "json"])
    assert then.exit_code == now.exit_code == 0 and then.stdout == now.stdout and now.stdout.startswith("[")
    assert then.stderr.splitlines() == [f"warning: emr-lineage archive {DEPRECATED} emr-lineage gateway archive"]


@pytest.mark.parametrize(
    "args, not_imported",
    [
        (["gateway", "serve", "--help"], ["emr_lineage.cli.post", "emr_lineage.cli.replay", "emr_lineage.cli.archive"]),
        (["listener", "fetch", "--help"], ["boto3", "pyspark"]),
        (["fetch-listener", "--help"], ["boto3", "pyspark"]),
    ],
)
def test_a_group_imports_only_the_command_named(args: list[str], not_imported: list[str]) -> None:
    code = f"import sys; from emr_lineage.cli.app import main; main({args!r}, standalone_mode=False); " + (
        f"print(sorted(m for m in {not_imported!r} if m in sys.modules))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip().splitlines()[-1] == "[]"


def test_completing_a_subcommand_of_a_group_lists_its_commands() -> None:
    """The shell's completion of `emr-lineage gateway <TAB>` (click's protocol, bash)."""
    import os
    import subprocess
    import sys
    from pathlib import Path

    env = {
        **os.environ,
        "_EMR_LINEAGE_COMPLETE": "bash_complete",
        "COMP_WORDS": "emr-lineage gateway ",
        "COMP_CWORD": "2",
    }
    script = Path(sys.executable).parent / "emr-lineage"  # completion answers for the installed command's name
    done = subprocess.run([str(script)], env=env, capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    assert "Traceback" not in done.stderr
    assert {"serve", "post", "replay", "archive"} <= {line.split(",")[-1] for line in done.stdout.split()}
