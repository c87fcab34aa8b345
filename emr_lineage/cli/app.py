"""The ``emr-lineage`` command line: thin commands over the packages that do the work.

Each command lives in its own module of ``emr_lineage.cli`` and is registered below, under its area of
``emr-lineage --help``; how every command ends (exit codes, one-line errors, Ctrl-C) is
``emr_lineage.cli.output`` and docs/cli.md.
"""

from __future__ import annotations

import importlib
import os
from collections.abc import Mapping
from typing import Any

import click

from emr_lineage import __version__
from emr_lineage.cli.options_deprecated import deprecated
from emr_lineage.cli.output import DEBUG_ENV_VAR, Group

Target = str | click.Command  # "module:attribute", imported when the command is named; or the command


class LazyGroup(Group):
    """A group whose commands are imported when named (the pattern of click's docs,
    https://click.palletsprojects.com/en/stable/complex/#lazily-loading-subcommands), listed in the order
    given; with ``areas`` (area -> its commands) its --help lists them under one heading per area, and
    ``renamed`` (old name -> new command line) keeps old names working, hidden, each with one warning."""

    def __init__(
        self,
        *args: Any,
        lazy: Mapping[str, Target] | None = None,
        areas: Mapping[str, list[str]] | None = None,
        renamed: Mapping[str, str] | None = None,
        **kwargs: Any,
    ) -> None:
        super().__init__(*args, **kwargs)
        self.lazy = dict(lazy or {})
        self.areas = dict(areas or {})
        self.renamed = dict(renamed or {})

    def list_commands(self, ctx: click.Context) -> list[str]:
        return [*self.lazy, *(name for name in super().list_commands(ctx) if name not in self.lazy)]

    def get_command(self, ctx: click.Context, cmd_name: str) -> click.Command | None:
        if cmd_name in self.lazy and cmd_name not in self.commands:
            target = self.lazy[cmd_name]
            if isinstance(target, str):
                module, _, attribute = target.partition(":")
                target = getattr(importlib.import_module(module), attribute)
            self.add_command(target, cmd_name)
        return super().get_command(ctx, cmd_name)

    def resolve_command(self, ctx: click.Context, args: list[str]) -> Any:
        """An old name is its new command line, after one ``warning:`` line on stderr."""
        new = self.renamed.get(args[0]) if args else None
        if new is not None:
            if not ctx.resilient_parsing:  # not while completing a command line
                deprecated(f"{ctx.command_path} {args[0]}", f"{ctx.command_path} {new}")
            args = [*new.split(), *args[1:]]
        return super().resolve_command(ctx, args)

    def format_commands(self, ctx: click.Context, formatter: click.HelpFormatter) -> None:
        """One section per area, its commands in the order given, their help aligned across the sections."""
        if not self.areas:
            return super().format_commands(ctx, formatter)
        width = max(len(name) for names in self.areas.values() for name in names)
        for area, names in self.areas.items():
            commands = [(name, self.get_command(ctx, name)) for name in names]
            rows = [
                (name.ljust(width), command.get_short_help_str(formatter.width - 6 - width))
                for name, command in commands
                if command is not None and not command.hidden
            ]
            if rows:
                with formatter.section(area):
                    formatter.write_dl(rows)


def lazy_group(name: str, help: str, commands: Mapping[str, Target]) -> LazyGroup:
    """A group of commands from several modules, each imported when named."""
    return LazyGroup(name, help=help, lazy=commands)


# Every command: its area in `emr-lineage --help` (areas and commands in the order shown) and where it lives.
# A module is imported only when its command is named: `emr-lineage graph` does not pay for importing Spark,
# boto3 and the AWS commands it never runs.
LAZY_COMMANDS: dict[str, tuple[str, Target]] = {
    "demo": ("Start", "emr_lineage.cli.demo:demo_command"),
    "doctor": ("Start", "emr_lineage.cli.doctor:doctor_command"),
    "config": ("Start", "emr_lineage.cli.config:config_command"),
    "run-local": ("Run Spark", "emr_lineage.cli.run_local:run_local_command"),
    "launch": ("Run Spark", "emr_lineage.cli.launch:launch"),
    "e2e": ("Run Spark", "emr_lineage.cli.e2e:e2e_command"),
    "attach": ("Run Spark", "emr_lineage.cli.attach:attach_command"),
    "detach": ("Run Spark", "emr_lineage.cli.attach:detach_command"),
    "graph": ("Lineage", "emr_lineage.cli.graph:graph_command"),
    "validate": ("Lineage", "emr_lineage.cli.graph:validate_command"),
    "impact": ("Lineage", "emr_lineage.cli.impact:impact_command"),
    "drift": ("Lineage", "emr_lineage.cli.drift:drift_command"),
    "audit": ("Lineage", "emr_lineage.cli.audit:audit_command"),
    "runs": ("Lineage", "emr_lineage.cli.runs:runs_group"),
    "gateway": (
        "Gateway",
        lazy_group(
            "gateway",
            "Serve the lineage gateway; post, replay and query its events.\n\n"
            "The gateway is durable, ordered, deduplicated ingestion in front of Marquez; it archives every event "
            "it takes (docs/gateway.md).",
            {
                "serve": "emr_lineage.cli.gateway:serve_command",
                "post": "emr_lineage.cli.post:post_command",
                "replay": "emr_lineage.cli.replay:replay_command",
                "archive": "emr_lineage.cli.archive:archive_group",
            },
        ),
    ),
    "listener": (
        "Set-up",
        lazy_group(
            "listener",
            "Fetch the pinned OpenLineage listener jar, or stage it for EMR.\n\n"
            "fetch puts it in the user cache, verified against its SHA-256 pin in cdk.json; stage uploads it to "
            "the artifacts bucket, where EMR's bootstrap action reads it (docs/listener.md).",
            {
                "fetch": "emr_lineage.cli.listener:fetch_command",
                "stage": "emr_lineage.cli.listener:stage_command",
            },
        ),
    ),
    "schemas": ("Set-up", "emr_lineage.cli.schemas:schemas_group"),
    "tls": ("Set-up", "emr_lineage.cli.tls:tls_command"),
}
# The last release's names: hidden, each runs its new command line after one deprecation warning.
RENAMED = {
    "fetch-listener": "listener fetch",
    "stage-listener": "listener stage",
    "post": "gateway post",
    "replay": "gateway replay",
    "archive": "gateway archive",
}


def _areas() -> dict[str, list[str]]:
    areas: dict[str, list[str]] = {}
    for name, (area, _) in LAZY_COMMANDS.items():
        areas.setdefault(area, []).append(name)
    return areas


@click.group(
    "emr-lineage",
    cls=LazyGroup,
    lazy={name: target for name, (_, target) in LAZY_COMMANDS.items()},
    areas=_areas(),
    renamed=RENAMED,
    context_settings={"help_option_names": ["-h", "--help"]},
)
@click.version_option(__version__, prog_name="emr-lineage")
@click.option("--debug", is_flag=True, help=f"Show the traceback of an unexpected error (or set {DEBUG_ENV_VAR}=1).")
def main(debug: bool) -> None:
    """Data lineage for Apache Spark on Amazon EMR, reported to Marquez."""
    if debug:
        os.environ[DEBUG_ENV_VAR] = "1"
