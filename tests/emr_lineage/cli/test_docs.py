"""Help and docs agree: every option a command shows is documented, and what help says of an option holds."""

from __future__ import annotations

import re
from pathlib import Path

import click
from click.testing import CliRunner

from emr_lineage.cli.app import LAZY_COMMANDS, main
from tests.helpers import every_command

DOCS = Path(__file__).resolve().parents[3] / "docs"


def _shown_options() -> list[tuple[str, str]]:
    found = []
    for full, command in every_command().items():
        for param in command.params:
            if isinstance(param, click.Option) and not param.hidden:
                found += [(full, spelling) for spelling in param.opts if spelling.startswith("--")]
    return [(command, option) for command, option in found if option != "--help"]


def _names(text: str, option: str) -> bool:
    return re.search(re.escape(option) + r"(?![\w-])", text) is not None


def test_every_option_a_command_shows_is_in_the_docs() -> None:
    docs = "".join(path.read_text(encoding="utf-8") for path in sorted(DOCS.glob("*.md")))
    undocumented = [(command, option) for command, option in _shown_options() if not _names(docs, option)]
    assert undocumented == []


def test_gateway_serve_options_are_in_cli_md_and_gateway_md() -> None:
    serve = [option for command, option in _shown_options() if command == "gateway serve"]
    for doc in ("cli.md", "gateway.md"):
        text = (DOCS / doc).read_text(encoding="utf-8")
        assert [option for option in serve if not _names(text, option)] == [], doc


def test_gateway_serve_help_says_its_archive_is_a_bucket() -> None:
    """gateway serve refuses s3://bucket/prefix (it writes at the root): its help says so."""
    text = " ".join(CliRunner().invoke(main, ["gateway", "serve", "--help"]).stdout.split())
    assert "s3://bucket: the gateway writes at its root (no prefix)" in text


def test_cli_md_follows_the_areas_of_help() -> None:
    """docs/cli.md shows the commands part of `emr-lineage --help` as it is, and has one section per area, in
    the order of the help."""
    text = (DOCS / "cli.md").read_text(encoding="utf-8")
    shown = CliRunner().invoke(main, ["--help"], terminal_width=78).stdout  # click's width on 80+ columns
    commands = shown.split("Show this message and exit.\n\n", 1)[1]
    assert f"```text\n{commands}```" in text
    areas = list(dict.fromkeys(area for area, _ in LAZY_COMMANDS.values()))
    sections = [line[3:].split(":")[0] for line in text.splitlines() if line.startswith("## ")]
    assert [section for section in sections if section in areas] == areas
