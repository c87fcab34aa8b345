"""Options of the commands that run Spark jobs or act on EMR: clusters and their polls, Spark properties, the
artifacts bucket, the listener jar's pin (each declared once, as in :mod:`emr_lineage.cli.options`)."""

from __future__ import annotations

import re
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import click

from emr_lineage.cli.options import apply_options, shared_option
from emr_lineage.cli.options_deprecated import Decorator


def poll_interval_option(function: Any) -> Any:
    """``--poll-interval SECONDS`` between EMR polls: 0 would be a busy loop on the API until throttled."""
    from emr_lineage.aws.emr import DEFAULT_POLL_SECONDS

    return click.option(
        "--poll-interval",
        type=click.FloatRange(min=0, min_open=True),
        default=DEFAULT_POLL_SECONDS,
        show_default=True,
        metavar="SECONDS",
        help="Seconds between EMR state polls.",
    )(function)


_CLUSTER_ID = re.compile(r"^j-[0-9A-Z]{1,256}$")  # EMR's: j- and upper-case letters and digits


def _cluster_id(ctx: click.Context, param: click.Parameter, value: str | None) -> str | None:
    if value is not None and not _CLUSTER_ID.match(value):
        raise click.BadParameter(f"{value!r} is not an EMR cluster id (j- and upper-case letters and digits)")
    return value


def cluster_id_option(help: str) -> Decorator:
    """``--cluster-id j-...``: a running EMR cluster the command acts on (required)."""
    return shared_option(
        "--cluster-id",
        meaning="A running EMR cluster's id (j-...).",
        help=help,
        required=True,
        metavar="ID",
        callback=_cluster_id,
    )


serverless_option = click.option(
    "--serverless",
    is_flag=True,
    help="Run as EMR Serverless job runs on the environment's application (emr_serverless.enabled in cdk.json) "
    "instead of on a new cluster; Ctrl-C or SIGTERM cancels the run.",
)


def _spark_properties(ctx: click.Context, param: click.Parameter, pairs: Sequence[str]) -> dict[str, str]:
    """``KEY=VALUE`` pairs as a dict (later ones win); anything else is a usage error (exit 2)."""
    properties = {}
    for pair in pairs:
        key, sep, value = pair.partition("=")
        if not sep or not key.strip():
            raise click.BadParameter(f"{pair!r}: expected KEY=VALUE", param_hint="--conf")
        properties[key.strip()] = value
    return properties


def conf_option(help: str) -> Decorator:
    """``--conf KEY=VALUE`` (repeatable), a Spark property of the run; the command gets a dict."""
    return shared_option(
        "--conf",
        "conf",
        meaning="A Spark property for this run (repeatable).",
        help=help,
        multiple=True,
        metavar="KEY=VALUE",
        callback=_spark_properties,
    )


def _bucket_name(ctx: click.Context, param: click.Parameter, value: str | None) -> str | None:
    from emr_lineage.settings.data_lake import bucket_name_problem  # only when given: graph commands skip it

    if value is not None and value.startswith("s3://"):
        raise click.BadParameter(f"{value!r}: give the bucket's name alone, {value[5:].split('/')[0]!r}")
    if value is not None and (problem := bucket_name_problem(value)):
        raise click.BadParameter(f"{value!r} is not an S3 bucket name: {problem}")
    return value


artifacts_bucket_option = click.option(
    "--bucket",
    default=None,
    metavar="NAME",
    help="The artifacts bucket's name (default: from SSM).",
    callback=_bucket_name,
)


def pin_options(function: Any) -> Any:
    """``--pin``, ``--pgp-key FILE`` and ``--replace-pin`` of the listener jar."""
    pin = click.option(
        "--pin",
        is_flag=True,
        help="Verify the jar through Maven (the repository's SHA-1; and its .asc when cdk.json sets "
        "pgp_fingerprint) instead of against the pin, and write its SHA-256 into cdk.json.",
    )
    pgp_key = click.option(
        "--pgp-key",
        type=click.Path(exists=True, dir_okay=False, path_type=Path),
        default=None,
        metavar="FILE",
        help="With --pin: armored public key file holding the key whose fingerprint cdk.json sets "
        "(versions.openlineage_spark.pgp_fingerprint); the jar's .asc must be its signature. No keyserver is asked.",
    )
    replace_pin = click.option(
        "--replace-pin",
        is_flag=True,
        help="With --pin: replace a different SHA-256 already pinned in cdk.json (else that is refused).",
    )
    return apply_options(function, [pin, pgp_key, replace_pin])
