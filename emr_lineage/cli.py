"""The ``emr-lineage`` command line: a thin layer over the modules that do the work.

Each sub-command lives in ``emr_lineage/commands/`` and is registered at the bottom. Errors the user can fix are raised as
``click.ClickException`` (exit 1) or ``click.UsageError``/``BadParameter`` (exit 2),
never as tracebacks.
"""

from __future__ import annotations

import json

import click

from emr_lineage import __version__
from emr_lineage.commands.demo import demo_command
from emr_lineage.commands.e2e import e2e_command
from emr_lineage.commands.graph import graph_command, validate_command
from emr_lineage.commands.launch import launch
from emr_lineage.commands.listener import stage_listener_command
from emr_lineage.config import ConfigError, load_settings


@click.group(context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, prog_name="emr-lineage")
def main() -> None:
    """Data lineage for Apache Spark on Amazon EMR, reported to Marquez."""


@main.command("config")
@click.option("--env", "env", default=None, help="Environment name from cdk.json (default: dev).")
def show_config(env: str | None) -> None:
    """Print the validated settings of one environment as JSON."""
    try:
        settings = load_settings(env)
    except ConfigError as exc:
        raise click.ClickException(str(exc)) from None
    click.echo(json.dumps(settings.model_dump(mode="json"), indent=2, sort_keys=True))


# Sub-commands from their own modules (keep this list sorted).
for command in (demo_command, e2e_command, graph_command, launch, stage_listener_command, validate_command):
    main.add_command(command)
