"""Every option two or more commands take, declared once with its one meaning (docs/cli.md, "Vocabulary"),
and the deprecated spellings of the last release (:mod:`emr_lineage.cli.options_deprecated`). An option's
help is written for the command that shows it: a factory takes ``help=``, the command's own text, where what
the option does differs between commands (:class:`SharedOption` keeps the one meaning).

Light on purpose: ``emr-lineage graph`` imports this module, so settings (pydantic) and EMR (boto3)
are imported only when a command that takes their options is defined.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import click

from emr_lineage.aws.archive import is_account_id
from emr_lineage.cli.options_deprecated import Decorator, deprecated_alias
from emr_lineage.cli.output import fail
from emr_lineage.http.defaults import DEFAULT_TIMEOUT
from emr_lineage.marquez.api import base_url


class SharedOption(click.Option):
    """An option declared here: ``meaning`` is what its name means in every command that takes it (one per
    name, tests/emr_lineage/cli/test_vocabulary.py), its help what it does in this one."""

    def __init__(self, *args: Any, meaning: str, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.meaning = meaning


def shared_option(*decls: str, meaning: str, help: str | None = None, **kwargs: Any) -> Decorator:
    """An option of ``meaning`` whose help is the command's ``help`` (default: the meaning itself)."""
    return click.option(*decls, cls=SharedOption, meaning=meaning, help=help or meaning, **kwargs)


def apply_options(function: Any, options: Sequence[Decorator]) -> Any:
    """``options`` in the order given, as if stacked as decorators in that order."""
    for option in reversed(options):
        function = option(function)
    return function


# ---- Settings and EMR.


_ENV_HELP = "Environment name in cdk.json."
_CDK_JSON_HELP = "The cdk.json that holds the emr-lineage settings."


def settings_options(function: Any, light: bool = False) -> Any:
    """``--env NAME``, ``--cdk-json PATH``; ``light``: None unless given, and only for ``--on-emr`` (graph starts
    without the settings)."""
    defaults: tuple[str | None, str | None] = (None, None)
    if not light:
        from emr_lineage.settings.loader import DEFAULT_CDK_JSON, DEFAULT_ENV

        defaults = (DEFAULT_ENV, str(DEFAULT_CDK_JSON))
    only = "With --on-emr: " if light else ""  # graph: only its Spark job on EMR reads them
    env = shared_option(
        "--env", meaning=_ENV_HELP, help=only + _ENV_HELP, default=defaults[0], show_default=not light, metavar="NAME"
    )
    cdk_json = shared_option(
        "--cdk-json",
        "cdk_json",
        meaning=_CDK_JSON_HELP,
        help=only + _CDK_JSON_HELP,
        default=defaults[1],
        show_default=not light,
        type=click.Path(path_type=Path),
        metavar="PATH",
    )
    return apply_options(function, [env, cdk_json])


def dry_run_option(help: str) -> Decorator:
    return shared_option("--dry-run", meaning="Show what would be done, and do nothing.", help=help, is_flag=True)


# ---- Where events come from, and where they go.

EVENTS_HELP = (
    "OpenLineage events: .jsonl/.ndjson/.json files (gzipped or not), directories, or - for standard input "
    "(repeatable)."
)


def events_option(required: bool = False) -> Decorator:
    return click.option("--events", "events", multiple=True, required=required, metavar="PATH", help=EVENTS_HELP)


def marquez_option(purpose: str, required: bool = False, callback: Callable[..., Any] | None = None) -> Decorator:
    """``--marquez URL``; ``purpose``: what the command does with that Marquez (the help's start)."""
    return shared_option(
        "--marquez",
        "marquez_url",
        meaning="A Marquez API base URL.",
        help=f"{purpose}: its base URL, http://host:5000 (with or without /api/v1).",
        required=required,
        callback=callback,
        metavar="URL",
    )


MARQUEZ_EVENTS = "Read the raw events this Marquez stored"
ARCHIVE_FORM = "s3://bucket, or s3://bucket/prefix for a copy under a prefix"
ARCHIVE_HELP = f"The lineage gateway's event archive: {ARCHIVE_FORM}."


def archive_option(required: bool = False, help: str | None = None) -> Decorator:
    """``--archive s3://bucket[/prefix]``, with the last release's ``--bucket NAME`` (= s3://NAME)."""
    new = shared_option("--archive", "archive", meaning=ARCHIVE_HELP, help=help, required=required, metavar="S3URI")
    old = deprecated_alias(
        "--bucket", "archive", "--archive s3://NAME", convert=lambda name: f"s3://{name}", metavar="NAME"
    )
    return lambda function: apply_options(function, [new, old])


_SINCE = "events whose eventTime is at or after this time (ISO 8601, UTC by default)."
_UNTIL = "events whose eventTime is at or before this time."


def since_option(help: str | None = None, *, given_with: str | None = None) -> Decorator:
    """``--since ISO``; ``given_with``: the options it applies with (the help says so)."""
    default = f"With {given_with}: only {_SINCE}" if given_with else f"Only {_SINCE}"
    return shared_option("--since", meaning=f"Only {_SINCE}", help=help or default, metavar="ISO")


def until_option(help: str | None = None, *, given_with: str | None = None) -> Decorator:
    """``--until ISO``, as :func:`since_option`."""
    default = f"With {given_with}: only {_UNTIL}" if given_with else f"Only {_UNTIL}"
    return shared_option("--until", meaning=f"Only {_UNTIL}", help=help or default, metavar="ISO")


def timeout_option(default: float = DEFAULT_TIMEOUT) -> Decorator:
    return click.option(
        "--timeout",
        type=click.FloatRange(min=0.1),
        default=default,
        show_default=True,
        metavar="SECONDS",
        help="Deadline of each request, its retries included.",
    )


skip_invalid_option = click.option(
    "--skip-invalid", is_flag=True, help="Skip malformed events (their count on stderr) instead of failing."
)


def graph_file_option(help: str) -> Decorator:
    return shared_option(
        "--graph",
        "graph_file",
        meaning="A lineage graph file, as emr-lineage graph --format json writes it.",
        help=help,
        metavar="FILE",
    )


spark_option = click.option("--spark", "spark_master", metavar="MASTER", help="Build the graph on this Spark master.")
on_emr_option = click.option("--on-emr", is_flag=True, help="Build the graph of --archive on a new EMR cluster.")


def http_base_url(ctx: click.Context, param: click.Parameter, value: str | None) -> str | None:
    """A URL option checked while the options are read (a typo costs no Spark run and no check): an http(s)
    URL with a host, without a query; its base (no trailing ``/`` or ``/api/v1``: callers add the path)."""
    if value is None:
        return None
    try:
        return base_url(value)
    except ValueError as exc:
        fail(f"{max(param.opts, key=len)} {exc}")


url_option = click.option(
    "--url",
    metavar="URL",
    callback=http_base_url,
    help="Have the listener send each event to this OpenLineage server too (the lineage gateway, e.g. "
    "emr-lineage gateway serve, or Marquez): its base URL, http://host:port (a pasted /api/v1 or /api/v1/lineage "
    "is dropped); $EMR_LINEAGE_API_KEY is its Bearer key.",
)


def output_option(help: str, old: str | None = None, **kwargs: Any) -> Decorator:
    """``-o/--output FILE``: the file the command writes; ``old`` is the last release's spelling, deprecated."""
    new = shared_option(
        "-o", "--output", "output", meaning="The file the command writes.", help=help, metavar="FILE", **kwargs
    )
    if old is None:
        return new
    alias = deprecated_alias(old, "output", "-o/--output FILE", metavar="FILE")
    return lambda function: apply_options(function, [new, alias])


def out_dir_option(help: str, old: str | None = None, **kwargs: Any) -> Decorator:
    """``--out-dir DIR``: the directory the command writes into; ``old`` deprecated as in :func:`output_option`."""
    new = shared_option(
        "--out-dir", "out_dir", meaning="The directory the command writes into.", help=help, metavar="DIR", **kwargs
    )
    if old is None:
        return new
    alias = deprecated_alias(old, "out_dir", "--out-dir DIR", metavar="DIR")
    return lambda function: apply_options(function, [new, alias])


def force_option(help: str) -> Decorator:
    return shared_option("--force", meaning="Go on where a safety check would stop.", help=help, is_flag=True)


# ---- What to analyse and how to show it.

DATASET_HELP = "The dataset: s3://bucket/path, a local path, or table:<name> / table:<db>.<name> (as in contracts)."


def dataset_option(required: bool = True, help: str | None = None) -> Decorator:
    return shared_option("--dataset", meaning=DATASET_HELP, help=help, required=required, metavar="ID")


def job_option(help: str, **kwargs: Any) -> Decorator:
    return shared_option("--job", meaning="A Spark job.", help=help, metavar="JOB", **kwargs)


def _account_id(ctx: click.Context, param: click.Parameter, value: str | None) -> str | None:
    if value is not None and not is_account_id(value):
        fail(f"--source-account {value!r}: not an AWS account id (12 digits, e.g. 210987654321)")
    return value


def source_account_option(help: str) -> Decorator:
    """``--source-account ACCOUNT``: the archive's events one AWS account's key sent."""
    meaning = "Only the archived events the gateway received with this AWS account's key (12 digits)."
    return shared_option("--source-account", meaning=meaning, help=help, metavar="ACCOUNT", callback=_account_id)


def format_option(choices: Sequence[str], default: str, help: str | None = None) -> Decorator:
    """``--format``; its help, unless given, is that of a table or JSON."""
    return shared_option(
        "--format",
        "fmt",
        meaning="How the result is written.",
        help=help or "How the result is written: a table for people, or JSON for scripts.",
        type=click.Choice(list(choices)),
        default=default,
        show_default=True,
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


def depth_option(help: str, default: int | None = None, minimum: int = 1) -> Decorator:
    return shared_option(
        "--depth",
        meaning="Follow lineage at most N jobs from the start.",
        help=help,
        type=click.IntRange(min=minimum),
        default=default,
        show_default=default is not None,
        metavar="N",
    )


def rows_option(minimum: int, default: int) -> Decorator:
    return click.option(
        "--rows",
        type=click.IntRange(min=minimum),
        default=default,
        show_default=True,
        help="Sample orders to generate.",
    )


def schema_dir_option(name: str = "schema_dir", help: str | None = None) -> Decorator:
    from emr_lineage.lineage.schemas.store import FETCH_COMMAND, SCHEMA_DIR_ENV_VAR

    return shared_option(
        "--schema-dir",
        name,
        meaning="The directory of the OpenLineage JSON schemas.",
        help=help
        or f"The directory of the OpenLineage JSON schemas (default: ${SCHEMA_DIR_ENV_VAR}, else the user cache "
        f"that `{FETCH_COMMAND}` fills).",
        metavar="DIR",
    )


def strict_option(function: Any) -> Any:
    from emr_lineage.lineage.schemas.store import FETCH_COMMAND

    return click.option(
        "--strict",
        is_flag=True,
        help="Require every field the OpenLineage schema requires (default: lenient, see docs/graph.md); needs the "
        f"schemas (`{FETCH_COMMAND}`).",
    )(function)
