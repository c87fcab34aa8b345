"""Click options shared by the commands that read settings or poll EMR (kept out of
``emr_lineage.cli.output`` so that commands without them do not import settings and boto3)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import click

from emr_lineage.aws.emr import DEFAULT_POLL_SECONDS
from emr_lineage.settings.loader import DEFAULT_CDK_JSON, DEFAULT_ENV

# Options shared by every command that reads settings.
env_option = click.option(
    "--env", "env", default=DEFAULT_ENV, show_default=True, metavar="NAME", help="Environment name in cdk.json."
)
cdk_json_option = click.option(
    "--cdk-json",
    "cdk_json",
    default=str(DEFAULT_CDK_JSON),
    show_default=True,
    type=click.Path(path_type=Path),
    metavar="PATH",
    help="The cdk.json that holds the emr-lineage settings.",
)


# Polling EMR: 0 would be a busy loop on the API until throttled.
poll_interval_option = click.option(
    "--poll-interval",
    type=click.FloatRange(min=0, min_open=True),
    default=DEFAULT_POLL_SECONDS,
    show_default=True,
    metavar="SECONDS",
    help="Seconds between EMR state polls.",
)


def settings_options(function: Any) -> Any:
    """``--env`` and ``--cdk-json``, in that order."""
    return env_option(cdk_json_option(function))
