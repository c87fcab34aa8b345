"""``emr-lineage config``: the validated settings of one environment."""

from __future__ import annotations

import json
from pathlib import Path

import click

from emr_lineage.cli.options import settings_options
from emr_lineage.cli.output import Command
from emr_lineage.settings.loader import load_settings


@click.command("config", cls=Command)
@settings_options
def config_command(env: str, cdk_json: Path) -> None:
    """Print the validated settings of one environment as JSON."""
    settings = load_settings(env, cdk_json)
    click.echo(json.dumps(settings.model_dump(mode="json"), indent=2, sort_keys=True))
