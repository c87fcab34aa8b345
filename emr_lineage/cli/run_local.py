"""``emr-lineage run-local SCRIPT [ARGS]...``: any PySpark script on local Spark with the real listener.

Exit status: the script's own, except 1 when it succeeded but the listener wrote no event to -o FILE
(one ``error:`` line: the listener's reason is in Spark's output); 2 when it cannot run (no such
script, the listener jar not fetched or not the pinned one, no Java, bad options or settings, a --url
that is not an http(s) URL, an -o that is not a new or events file), one ``error:`` line; 130 interrupted.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Sequence
from pathlib import Path

import click

from emr_lineage.cli.emr_options import conf_option
from emr_lineage.cli.gateway import api_key_from_env
from emr_lineage.cli.options import output_option, settings_options, url_option
from emr_lineage.cli.output import Command, fail
from emr_lineage.cli.output_paths import refuse_appending_to_other_files, refuse_output_over
from emr_lineage.errors import EXIT_CHECK_FAILED
from emr_lineage.listener.maven import local_jars
from emr_lineage.settings.loader import load_settings
from emr_lineage.spark import iceberg
from emr_lineage.spark.conf import DRIVER_CLASSPATH, ListenerConfig, local_listener_properties
from emr_lineage.spark.local import LOCAL_SPARK, run_script


def _check_output(output: str, script: Path, script_args: Sequence[str]) -> None:
    """The events file is never the script, a path among its arguments (``--input=PATH`` too) or a file
    that is not an events file (the job's input, read by the script: the listener appends to what is there),
    nor in a directory that is not there."""
    paths = {value for arg in script_args for value in (arg, arg.partition("=")[2]) if value}
    inputs = [("script", str(script)), *(("script's argument", path) for path in sorted(paths))]
    refuse_output_over("--output", output, inputs, "the events")
    refuse_appending_to_other_files("--output", output, "the events")


@click.command("run-local", cls=Command)
@url_option
@output_option(
    "Append the listener's events to this file, one JSON event per line.",
    old="--events",
    type=click.Path(dir_okay=False, path_type=Path),
)
@conf_option(
    "A Spark property for this run (repeatable), over the defaults "
    + ", ".join(f"{key}={value}" for key, value in LOCAL_SPARK.items())
    + "."
)
@settings_options
@click.argument("script", type=click.Path(dir_okay=False, path_type=Path))
@click.argument("script_args", nargs=-1, type=click.UNPROCESSED)
def run_local_command(
    url: str | None,
    output: Path | None,
    conf: dict[str, str],
    env: str,
    cdk_json: Path,
    script: Path,
    script_args: Sequence[str],
) -> None:
    """Run the PySpark SCRIPT on local Spark with the pinned OpenLineage listener reporting to --url,
    -o/--output FILE (the events appended, one JSON event per line) or both, in the OpenLineage namespace
    of ENV's settings; exit with the script's status (1 when it succeeded but the listener wrote no event to
    FILE). FILE is new, empty or an events file. Arguments after -- go to the script (as with launch).

    \b
    The script runs with spark-submit, as an EMR step does: the listener jar on the driver's
    classpath, the same listener properties as ENV's clusters; only the destination differs. The pinned
    Iceberg runtime is on the classpath beside it, and the Iceberg catalog lakehouse is a Hadoop catalog
    whose warehouse is the script's --lake directory (else the current directory). Spark's output goes
    to this terminal. Example:
      emr-lineage run-local -o events.jsonl jobs/train_model.py -- --lake /tmp/lake \\
        --orders-table lakehouse.clean.orders_clean
    """
    if url is None and output is None:
        raise click.UsageError("give --url URL, -o/--output FILE or both: where the listener sends the events")
    if output is not None:
        _check_output(str(output), script, script_args)
    extra = conf
    settings = load_settings(env, cdk_json)
    jars = local_jars(settings.versions)
    listener = ListenerConfig.for_settings(
        settings.openlineage, api_url=url, events_file=str(output.resolve()) if output else None
    )
    properties = {
        **iceberg.hadoop_catalog_properties(_warehouse(script_args)),
        **local_listener_properties(
            listener, jar=str(jars.listener), beside=[str(jars.iceberg_runtime)], api_key=api_key_from_env()
        ),
    }
    if DRIVER_CLASSPATH in extra:  # the script's own classpath entries, after the listener's
        extra[DRIVER_CLASSPATH] = properties[DRIVER_CLASSPATH] + os.pathsep + extra[DRIVER_CLASSPATH]
    before = _size(output)
    status = run_script(script, script_args, {**properties, **extra})
    if status == 0 and output is not None and _size(output) == before:
        fail(
            f"the script ran (exit 0) but the listener wrote no events to {output}: its reason is in Spark's output "
            "above (lines with OpenLineage); check --url and any spark.openlineage.* --conf",
            EXIT_CHECK_FAILED,
        )
    sys.exit(status)


def _warehouse(script_args: Sequence[str]) -> str:
    """The Iceberg catalog's warehouse: the script's ``--lake`` (as the demo's), else the current directory."""
    for index, arg in enumerate(script_args):
        if arg.startswith("--lake="):
            return arg.partition("=")[2]
        if arg == "--lake" and index + 1 < len(script_args):
            return script_args[index + 1]
    return os.getcwd()


def _size(path: Path | None) -> int | None:
    try:
        return path.stat().st_size if path is not None else None
    except FileNotFoundError:
        return None
