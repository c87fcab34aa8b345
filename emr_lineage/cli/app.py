"""The ``emr-lineage`` command line: thin commands over the packages that do the work.

Each command lives in its own module of ``emr_lineage.cli`` and is registered below; how every
command ends (exit codes, one-line errors, Ctrl-C) is ``emr_lineage.cli.output`` and docs/cli.md.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import click

from emr_lineage import __version__
from emr_lineage.cli.audit import audit_command, runs_command
from emr_lineage.cli.demo import demo_command
from emr_lineage.cli.doctor import doctor_command
from emr_lineage.cli.drift import drift_command
from emr_lineage.cli.e2e import e2e_command
from emr_lineage.cli.gateway import gateway_group
from emr_lineage.cli.graph import graph_command, validate_command
from emr_lineage.cli.impact import impact_command
from emr_lineage.cli.launch import launch
from emr_lineage.cli.listener import stage_listener_command
from emr_lineage.cli.output import DEBUG_ENV_VAR, Command, Group, settings_options
from emr_lineage.cli.post import post_command
from emr_lineage.cli.replay import replay_command
from emr_lineage.cli.schemas import schemas_group
from emr_lineage.cli.tls import tls_command
from emr_lineage.settings.loader import load_settings


@click.group("emr-lineage", cls=Group, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, prog_name="emr-lineage")
@click.option("--debug", is_flag=True, help=f"Show the traceback of an unexpected error (or set {DEBUG_ENV_VAR}=1).")
def main(debug: bool) -> None:
    """Data lineage for Apache Spark on Amazon EMR, reported to Marquez."""
    if debug:
        os.environ[DEBUG_ENV_VAR] = "1"


@main.command("config", cls=Command)
@settings_options
def show_config(env: str, cdk_json: Path) -> None:
    """Print the validated settings of one environment as JSON."""
    settings = load_settings(env, cdk_json)
    click.echo(json.dumps(settings.model_dump(mode="json"), indent=2, sort_keys=True))


# Commands from their own modules (keep this list sorted).
for command in (
    audit_command,
    demo_command,
    doctor_command,
    drift_command,
    e2e_command,
    gateway_group,
    graph_command,
    impact_command,
    launch,
    post_command,
    replay_command,
    runs_command,
    schemas_group,
    stage_listener_command,
    tls_command,
    validate_command,
):
    main.add_command(command)
