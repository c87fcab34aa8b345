"""The ``emr-lineage`` command line: thin commands over the packages that do the work.

Each command lives in its own module of ``emr_lineage.cli`` and is registered below; how every
command ends (exit codes, one-line errors, Ctrl-C) is ``emr_lineage.cli.output`` and docs/cli.md.
"""

from __future__ import annotations

import importlib
import os

import click

from emr_lineage import __version__
from emr_lineage.cli.output import DEBUG_ENV_VAR, Group

# Commands from their own modules, imported when named (keep this table sorted): `emr-lineage graph`
# does not pay for importing Spark, boto3 and the AWS commands it never runs.
LAZY_COMMANDS = {
    "archive": "emr_lineage.cli.archive:archive_group",
    "audit": "emr_lineage.cli.audit:audit_command",
    "config": "emr_lineage.cli.config:config_command",
    "demo": "emr_lineage.cli.demo:demo_command",
    "doctor": "emr_lineage.cli.doctor:doctor_command",
    "drift": "emr_lineage.cli.drift:drift_command",
    "e2e": "emr_lineage.cli.e2e:e2e_command",
    "fetch-listener": "emr_lineage.cli.listener:fetch_listener_command",
    "gateway": "emr_lineage.cli.gateway:gateway_group",
    "graph": "emr_lineage.cli.graph:graph_command",
    "impact": "emr_lineage.cli.impact:impact_command",
    "launch": "emr_lineage.cli.launch:launch",
    "post": "emr_lineage.cli.post:post_command",
    "replay": "emr_lineage.cli.replay:replay_command",
    "run-local": "emr_lineage.cli.run_local:run_local_command",
    "runs": "emr_lineage.cli.audit:runs_command",
    "schemas": "emr_lineage.cli.schemas:schemas_group",
    "stage-listener": "emr_lineage.cli.listener:stage_listener_command",
    "tls": "emr_lineage.cli.tls:tls_command",
    "validate": "emr_lineage.cli.graph:validate_command",
}


class LazyGroup(Group):
    """The top-level group: its own commands, and those of LAZY_COMMANDS imported on first use
    (the pattern of click's docs, https://click.palletsprojects.com/en/stable/complex/#lazily-loading-subcommands)."""

    def list_commands(self, ctx: click.Context) -> list[str]:
        return sorted({*super().list_commands(ctx), *LAZY_COMMANDS})

    def get_command(self, ctx: click.Context, cmd_name: str) -> click.Command | None:
        if cmd_name in LAZY_COMMANDS and cmd_name not in self.commands:
            module, _, attribute = LAZY_COMMANDS[cmd_name].partition(":")
            self.add_command(getattr(importlib.import_module(module), attribute), cmd_name)
        return super().get_command(ctx, cmd_name)


@click.group("emr-lineage", cls=LazyGroup, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, prog_name="emr-lineage")
@click.option("--debug", is_flag=True, help=f"Show the traceback of an unexpected error (or set {DEBUG_ENV_VAR}=1).")
def main(debug: bool) -> None:
    """Data lineage for Apache Spark on Amazon EMR, reported to Marquez."""
    if debug:
        os.environ[DEBUG_ENV_VAR] = "1"
