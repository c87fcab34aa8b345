"""Every option two or more commands take, declared once with its one meaning (docs/cli.md, "Vocabulary"),
and the deprecated spellings of the last release (:mod:`emr_lineage.cli.options_deprecated`).

Light on purpose: ``emr-lineage graph`` imports this module, so settings (pydantic) and EMR (boto3)
are imported only when a command that takes their options is defined.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import click

from emr_lineage.cli.options_deprecated import deprecated_alias
from emr_lineage.cli.output import fail
from emr_lineage.http.defaults import DEFAULT_TIMEOUT
from emr_lineage.marquez.api import base_url

Decorator = Callable[[Any], Any]


def _apply(function: Any, options: Sequence[Decorator]) -> Any:
    """``options`` in the order given, as if stacked as decorators in that order."""
    for option in reversed(options):
        function = option(function)
    return function


# ---- Settings and EMR.


_ENV_HELP = "Environment name in cdk.json."


def settings_options(function: Any, light: bool = False) -> Any:
    """``--env NAME``, ``--cdk-json PATH``; ``light``: None unless given (graph starts without the settings)."""
    defaults: tuple[str | None, str | None] = (None, None)
    if not light:
        from emr_lineage.settings.loader import DEFAULT_CDK_JSON, DEFAULT_ENV

        defaults = (DEFAULT_ENV, str(DEFAULT_CDK_JSON))
    env = click.option("--env", default=defaults[0], show_default=not light, metavar="NAME", help=_ENV_HELP)
    cdk_json = click.option(
        "--cdk-json",
        "cdk_json",
        default=defaults[1],
        show_default=not light,
        type=click.Path(path_type=Path),
        metavar="PATH",
        help="The cdk.json that holds the emr-lineage settings.",
    )
    return _apply(function, [env, cdk_json])


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


def conf_option(function: Any) -> Any:
    """``--conf KEY=VALUE`` (repeatable), a Spark property of the run; the command gets a dict."""
    from emr_lineage.spark.local import LOCAL_SPARK

    return click.option(
        "--conf",
        "conf",
        multiple=True,
        metavar="KEY=VALUE",
        callback=_spark_properties,
        help="A Spark property for this run (repeatable). run-local: over its defaults "
        + ", ".join(f"{key}={value}" for key, value in LOCAL_SPARK.items())
        + "; launch --serverless: spark.openlineage.parent*/transport* keys given here replace emr-lineage's, "
        "spark.jars and spark.extraListeners are appended to.",
    )(function)


dry_run_option = click.option(
    "--dry-run",
    is_flag=True,
    help="Show what would be done, and do nothing: replay counts what would be replayed and posts nothing; "
    "launch --serverless prints the StartJobRun request (credentials masked), uploads and starts nothing.",
)


artifacts_bucket_option = click.option(
    "--bucket", default=None, metavar="NAME", help="The artifacts bucket's name (default: from SSM)."
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
    return _apply(function, [pin, pgp_key, replace_pin])


# ---- Where events come from, and where they go.

EVENTS_HELP = (
    "OpenLineage events: .jsonl/.ndjson/.json files (gzipped or not), directories, or - for standard input "
    "(repeatable)."
)


def events_option(required: bool = False) -> Decorator:
    return click.option("--events", "events", multiple=True, required=required, metavar="PATH", help=EVENTS_HELP)


def marquez_option(required: bool = False, callback: Callable[..., Any] | None = None) -> Decorator:
    return click.option(
        "--marquez",
        "marquez_url",
        required=required,
        callback=callback,
        metavar="URL",
        help="Marquez API base URL (http://host:5000, with or without /api/v1); post may send to the lineage "
        "gateway's URL instead, replay may not (it re-posts to Marquez itself).",
    )


ARCHIVE_HELP = (
    "The lineage gateway's event archive: s3://bucket, or s3://bucket/prefix for a copy under a prefix "
    "(gateway serve: s3://bucket only, it writes at the root)."
)


def archive_option(required: bool = False) -> Decorator:
    """``--archive s3://bucket[/prefix]``, with the last release's ``--bucket NAME`` (= s3://NAME)."""
    new = click.option("--archive", "archive", required=required, metavar="S3URI", help=ARCHIVE_HELP)
    old = deprecated_alias(
        "--bucket", "archive", "--archive s3://NAME", convert=lambda name: f"s3://{name}", metavar="NAME"
    )
    return lambda function: _apply(function, [new, old])


since_option = click.option(
    "--since", metavar="ISO", help="Only events whose eventTime is at or after this time (ISO 8601, UTC by default)."
)
until_option = click.option("--until", metavar="ISO", help="Only events whose eventTime is at or before this time.")


def timeout_option(default: float = DEFAULT_TIMEOUT) -> Decorator:
    return click.option(
        "--timeout",
        type=click.FloatRange(min=0.1),
        default=default,
        show_default=True,
        metavar="SECONDS",
        help="Deadline of each request (HTTP or AWS), its retries included.",
    )


skip_invalid_option = click.option(
    "--skip-invalid", is_flag=True, help="Skip malformed events (their count on stderr) instead of failing."
)


graph_file_option = click.option(
    "--graph", "graph_file", metavar="FILE", help="A graph as graph --format json writes it (impact only: no runs)."
)
spark_option = click.option("--spark", "spark_master", metavar="MASTER", help="Build the graph on this Spark master.")
on_emr_option = click.option("--on-emr", is_flag=True, help="Build the graph of --archive on a new EMR cluster.")


def _listener_url(ctx: click.Context, param: click.Parameter, value: str | None) -> str | None:
    """``--url``, checked while the options are read (a typo costs no Spark run): an http(s) URL with a
    host, without a query; its base (no trailing ``/`` or ``/api/v1``: the listener adds the endpoint)."""
    if value is None:
        return None
    try:
        return base_url(value)
    except ValueError as exc:
        fail(f"--url {exc}")


url_option = click.option(
    "--url",
    metavar="URL",
    callback=_listener_url,
    help="Have the listener send each event to this OpenLineage server too (the lineage gateway, e.g. "
    "emr-lineage gateway serve, or Marquez): its base URL, http://host:port (a pasted /api/v1 or /api/v1/lineage "
    "is dropped); $EMR_LINEAGE_API_KEY is its Bearer key.",
)


def output_option(old: str | None = None, **kwargs: Any) -> Decorator:
    """``-o/--output FILE``: the file the command writes; ``old`` is the last release's spelling, deprecated."""
    new = click.option(
        "-o", "--output", "output", metavar="FILE", help="Write the command's file here (see above for what).", **kwargs
    )
    if old is None:
        return new
    alias = deprecated_alias(old, "output", "-o/--output FILE", metavar="FILE")
    return lambda function: _apply(function, [new, alias])


def out_dir_option(old: str | None = None, **kwargs: Any) -> Decorator:
    """``--out-dir DIR``: the directory the command writes into; ``old`` deprecated as in :func:`output_option`."""
    new = click.option(
        "--out-dir", "out_dir", metavar="DIR", help="Write the command's files in this directory (see above).", **kwargs
    )
    if old is None:
        return new
    alias = deprecated_alias(old, "out_dir", "--out-dir DIR", metavar="DIR")
    return lambda function: _apply(function, [new, alias])


force_option = click.option(
    "--force",
    is_flag=True,
    help="Go on where a safety check would stop: demo, in an --out-dir it did not make (your entries are kept); "
    "tls, though emr.in_transit_encryption is false.",
)


# ---- What to analyse and how to show it.

dataset_option = click.option(
    "--dataset",
    required=True,
    metavar="ID",
    help="The dataset: s3://bucket/path, a local path, or table:<name> / table:<db>.<name> (as in contracts).",
)


def job_option(**kwargs: Any) -> Decorator:
    return click.option(
        "--job",
        metavar="JOB",
        help="The Spark job: its name (runs: an application's name includes its actions), or for launch its "
        "PySpark script, e.g. jobs/revenue_daily.py (the file stem is the name).",
        **kwargs,
    )


def format_option(choices: Sequence[str], default: str) -> Decorator:
    return click.option(
        "--format",
        "fmt",
        type=click.Choice(list(choices)),
        default=default,
        show_default=True,
        help="How the result is written: a table for people, JSON for scripts, or a rendering of the graph.",
    )


def level_option(function: Any) -> Any:
    from emr_lineage.lineage.graph.model import LEVELS

    return click.option(
        "--level",
        type=click.Choice(LEVELS),
        default="application",
        show_default=True,
        help="application: Spark actions folded into their application's run; action: one run per action.",
    )(function)


def depth_option(default: int | None = None, minimum: int = 1) -> Decorator:
    return click.option(
        "--depth",
        type=click.IntRange(min=minimum),
        default=default,
        show_default=default is not None,
        metavar="N",
        help="Follow lineage at most N jobs from the start (graph: around --node; impact's default: all).",
    )


def rows_option(minimum: int, default: int) -> Decorator:
    return click.option(
        "--rows",
        type=click.IntRange(min=minimum),
        default=default,
        show_default=True,
        help="Sample orders to generate.",
    )


def schema_dir_option(name: str = "schema_dir") -> Decorator:
    from emr_lineage.lineage.schemas.store import FETCH_COMMAND, SCHEMA_DIR_ENV_VAR

    return click.option(
        "--schema-dir",
        name,
        metavar="DIR",
        help=f"The directory of the OpenLineage JSON schemas (default: ${SCHEMA_DIR_ENV_VAR}, else the user cache "
        f"that `{FETCH_COMMAND}` fills).",
    )


def strict_option(function: Any) -> Any:
    from emr_lineage.lineage.schemas.store import FETCH_COMMAND

    return click.option(
        "--strict",
        is_flag=True,
        help="Require every field the OpenLineage schema requires (default: lenient, see docs/graph.md); needs the "
        f"schemas (`{FETCH_COMMAND}`).",
    )(function)
