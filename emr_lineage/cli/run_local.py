"""``emr-lineage run-local SCRIPT [ARGS]...``: any PySpark script on local Spark with the real listener.

Exit status: the script's own; 2 when it cannot run (no such script, the listener jar not fetched or
not the pinned one, no Java, bad options or settings, an -o that is not a new or events file), one
``error:`` line; 130 interrupted.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Sequence
from pathlib import Path

import click

from emr_lineage.cli.gateway import api_key_from_env
from emr_lineage.cli.options import conf_option, output_option, settings_options, url_option
from emr_lineage.cli.output import Command
from emr_lineage.cli.output_paths import refuse_appending_to_other_files, refuse_output_over
from emr_lineage.listener.maven import local_listener_jar
from emr_lineage.settings.loader import load_settings
from emr_lineage.spark.conf import DRIVER_CLASSPATH, ListenerConfig, local_listener_properties
from emr_lineage.spark.local import run_script


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
@output_option(old="--events", type=click.Path(dir_okay=False, path_type=Path))
@conf_option
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
    of ENV's settings; exit with the script's status.
    Arguments after -- go to the script (as with launch).

    \b
    The script runs with spark-submit, as an EMR step does: the listener jar on the driver's
    classpath, the same listener properties as ENV's clusters; only the destination differs. Spark's output goes
    to this terminal. Example:
      emr-lineage run-local -o events.jsonl jobs/revenue_daily.py -- --lake /tmp/lake
    """
    if url is None and output is None:
        raise click.UsageError("give --url URL, -o/--output FILE or both: where the listener sends the events")
    if output is not None:
        _check_output(str(output), script, script_args)
    extra = conf
    settings = load_settings(env, cdk_json)
    jar = local_listener_jar(settings.versions.openlineage_spark)
    listener = ListenerConfig.for_settings(
        settings.openlineage, api_url=url, events_file=str(output.resolve()) if output else None
    )
    properties = local_listener_properties(listener, jar=str(jar), api_key=api_key_from_env())
    if DRIVER_CLASSPATH in extra:  # the script's own classpath entries, after the listener's
        extra[DRIVER_CLASSPATH] = properties[DRIVER_CLASSPATH] + os.pathsep + extra[DRIVER_CLASSPATH]
    sys.exit(run_script(script, script_args, {**properties, **extra}))
