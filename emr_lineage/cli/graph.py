"""``emr-lineage graph`` and ``emr-lineage validate``: thin click layers over the graph modules.

Exit status: 0 success (validate: the graph matches the contract), 1 differences (validate
only), 2 bad input (unreadable or malformed events/contract/--var, Marquez unreachable or
answering an error, strict checks without the OpenLineage schemas, an output that would
overwrite an input). Bad input prints ONE line ``error: <file>:<line>: <problem>``, never a
traceback (:class:`emr_lineage.cli.output.Command`).
"""

from __future__ import annotations

import functools
import json
import sys
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

import click
from click.core import ParameterSource

from emr_lineage.cli.graph_job import GraphJob
from emr_lineage.cli.graph_marquez import marquez_contract_graph, marquez_graph
from emr_lineage.cli.graph_spark import check_request, spark_graph
from emr_lineage.cli.options import (
    ARCHIVE_FORM,
    MARQUEZ_EVENTS,
    archive_option,
    depth_option,
    events_option,
    format_option,
    level_option,
    marquez_option,
    on_emr_option,
    output_option,
    schema_dir_option,
    settings_options,
    since_option,
    skip_invalid_option,
    spark_option,
    strict_option,
    timeout_option,
    until_option,
)
from emr_lineage.cli.options_deprecated import retired_option
from emr_lineage.cli.output import Command, fail, print_contract_rows
from emr_lineage.cli.output_paths import emit_output, refuse_overwriting_inputs, write_output
from emr_lineage.errors import EXIT_CHECK_FAILED, EXIT_OK
from emr_lineage.lineage.events.merging import cyclic_gc_paused
from emr_lineage.lineage.events.reader import EventsError, EventStream, load_events, stream_events
from emr_lineage.lineage.events.sources import STDIN
from emr_lineage.lineage.graph.around import DEFAULT_DEPTH
from emr_lineage.lineage.graph.from_events import build_graph_streamed
from emr_lineage.lineage.graph.model import LineageGraph
from emr_lineage.lineage.report.html import render_html, write_html
from emr_lineage.lineage.report.render import FORMATS, json_bytes, render

if TYPE_CHECKING:
    from emr_lineage.lineage.contracts.check import ContractResult


def _report_skipped(events: EventStream) -> None:
    for note in events.skipped_notes():
        click.echo(note, err=True)


def _load(
    paths: Sequence[str],
    skip_invalid: bool,
    strict: bool,
    level: str,
    schema_dir: str | None,
    column_lineage: bool = True,
    runs: bool = False,
) -> LineageGraph:
    """The graph of the events, built as they stream in: memory holds the graph, not the events
    (``column_lineage=False``: without column edges, which a contract check does not read; ``runs``:
    with the runs' history)."""
    events = stream_events(paths, skip_invalid=skip_invalid, strict=strict, schema_directory=schema_dir)
    graph = build_graph_streamed(events, level, column_lineage, runs)
    if not events.count:
        skipped = f" ({events.skipped} invalid skipped; first: {events.skipped_details[0]})" if events.skipped else ""
        raise EventsError(f"{', '.join(paths)}: no events to build a graph from{skipped}")
    if events.schema_note:  # once the events are read: a refused input is its one error line only
        click.echo(f"warning: {events.schema_note}", err=True)
    _report_skipped(events)
    return graph


def _without_cyclic_gc(command: Callable[..., None]) -> Callable[..., None]:
    """Run a command with the cyclic GC paused: re-enabled after the build, it would traverse the
    graph's millions of objects (allocated meanwhile) once more, about 0.2 s a 200k-event read.
    They hold no cycles worth collecting, and the command ends once the output is written."""

    @functools.wraps(command)
    def run(*args: Any, **kwargs: Any) -> None:
        with cyclic_gc_paused():
            command(*args, **kwargs)

    return run


def _check_events_paths(events: Sequence[str]) -> None:
    """Refuse an empty path; on a terminal, say that ``-`` waits for events typed or pasted there."""
    if any(not path for path in events):
        fail("--events '': empty path (give an events file or directory)")
    if STDIN in events and sys.stdin.isatty():
        click.echo("reading events from standard input (end with Ctrl-D)", err=True)


def _refuse_file_checks(strict: bool, skip_invalid: bool, schema_dir: str | None) -> None:
    if strict or skip_invalid or schema_dir:
        fail(
            "--strict, --skip-invalid and --schema-dir are for --events: the events read from Marquez are "
            "held to the event rule, and those that break it skipped and counted"
        )


def _parse_vars(pairs: Sequence[str]) -> dict[str, str]:
    from emr_lineage.lineage.contracts.model import ContractError

    values: dict[str, str] = {}
    for pair in pairs:
        name, sep, value = pair.partition("=")
        if not sep or not name.strip():
            raise ContractError(f"--var {pair!r}: expected NAME=VALUE")
        if name.strip() in values:
            raise ContractError(f"--var {name.strip()!r} given twice")
        values[name.strip()] = value
    return values


def _drift(
    events: Sequence[str], skip_invalid: bool, strict: bool, schema_dir: str | None
) -> dict[str, list[Any]] | None:
    """The schema changes the HTML report shows per dataset: the events read a second time (the
    graph was built while streaming them), with the same options; None for standard input, which
    cannot be read again, and for Marquez."""
    if not events or STDIN in events:
        return None
    from emr_lineage.analysis.drift import schema_changes  # HTML only: graph's start-up stays light

    loaded = load_events(events, skip_invalid=skip_invalid, strict=strict, schema_directory=schema_dir)
    return schema_changes(loaded.events)


@click.command("graph", cls=Command)
@events_option()
@marquez_option(MARQUEZ_EVENTS)
@click.option(
    "--node",
    "node_id",
    metavar="ID",
    help="Only the lineage around this node, e.g. job:<namespace>:<application> or dataset:<namespace>:<name>.",
)
@depth_option("With --node: follow lineage at most N jobs from it, both ways.", DEFAULT_DEPTH, minimum=0)
@level_option
@format_option(
    FORMATS,
    "json",
    "How the graph is written: json for scripts (and for --graph FILE), mermaid or dot for a diagram, html for a "
    "report to open in a browser.",
)
@output_option("Write the graph here instead of to stdout.")
@click.option("--title", default="Lineage report", show_default=True, help="Title of the HTML report.")
@retired_option("--column-lineage", "column lineage is always read, from Marquez's raw events too", is_flag=True)
@click.option(
    "--with-runs",
    is_flag=True,
    help="With --format json: also write the runs (states, times, inputs and outputs with their versions, "
    "schemas), so drift, audit and runs can read the file (--graph FILE).",
)
@skip_invalid_option
@strict_option
@schema_dir_option()
@timeout_option()
@spark_option
@on_emr_option
@archive_option(
    help=f"Build the graph of the lineage gateway's archive on Spark (--spark or --on-emr): {ARCHIVE_FORM}."
)
@since_option(given_with="--marquez or --archive")
@until_option(given_with="--marquez or --archive")
@functools.partial(settings_options, light=True)
@_without_cyclic_gc
def graph_command(
    events: tuple[str, ...],
    marquez_url: str | None,
    node_id: str | None,
    depth: int,
    level: str,
    fmt: str,
    output: str | None,
    title: str,
    with_runs: bool,
    skip_invalid: bool,
    strict: bool,
    schema_dir: str | None,
    timeout: float,
    spark_master: str | None,
    on_emr: bool,
    archive: str | None,
    since: str | None,
    until: str | None,
    env: str | None,
    cdk_json: Path | None,
) -> None:
    """Print the lineage graph of OpenLineage events or of the raw events Marquez stored (-o FILE: write it there).

    --node ID: only the lineage around that node. With --spark MASTER (events or the archive) or --on-emr
    (the archive), a Spark job builds it."""

    if with_runs and fmt != "json":
        fail("--with-runs writes the runs into the JSON form: --format json")
    on_spark = bool(spark_master or on_emr or archive or ((since or until) and not marquez_url))
    settings_given = env is not None or cdk_json is not None
    _refuse_options_that_do_nothing(node_id, fmt, on_emr, settings_given, on_spark=on_spark, marquez=marquez_url)
    if on_spark:
        job = GraphJob(events, archive, since, until, level, strict, skip_invalid, schema_dir, with_runs)
        _graph_on_spark(spark_master, on_emr, job, fmt, marquez_url, env, cdk_json, output)
    if bool(events) == bool(marquez_url):
        fail("give either --events PATH... or --marquez URL")
    _check_events_paths(events)
    if output is not None:
        refuse_overwriting_inputs("--output", output, events)
    if marquez_url:
        _refuse_file_checks(strict, skip_invalid, schema_dir)
        graph = marquez_graph(marquez_url, since, until, level, timeout, with_runs)
    else:
        graph = _load(events, skip_invalid, strict, level, schema_dir, runs=with_runs)
    if node_id:
        from emr_lineage.lineage.graph.around import around

        graph = around(graph, node_id, depth)
    if fmt == "json":
        text: str | bytes = json_bytes(graph)
    else:
        text = (
            render_html(graph, None, title, _drift(events, skip_invalid, strict, schema_dir))
            if fmt == "html"
            else render(graph, fmt)
        )
    emit_output(text, output, graph.clear)
    sys.exit(EXIT_OK)


def _refuse_options_that_do_nothing(
    node_id: str | None, fmt: str, on_emr: bool, settings_given: bool, *, on_spark: bool, marquez: str | None
) -> None:
    """An option that would change nothing in this command line is refused, not ignored (each exit 2)."""
    context = click.get_current_context()

    def given(name: str) -> bool:
        return context.get_parameter_source(name) not in (None, ParameterSource.DEFAULT)

    if on_spark and (node_id or given("depth")):
        named = "--depth and --node take" if given("depth") else "--node takes"
        fail(f"{named} the part of a graph built here (--events or --marquez), not on Spark")
    if given("depth") and not node_id:
        fail("--depth N follows lineage from --node ID: give --node too")
    if given("timeout") and not marquez:
        fail("--timeout bounds each request to --marquez: event files and the graph on Spark make none")
    if given("title") and fmt != "html":
        fail("--title names the HTML report: --format html")
    if settings_given and not on_emr:
        fail("--env and --cdk-json name the environment of --on-emr")


def _graph_on_spark(
    master: str | None,
    on_emr: bool,
    job: GraphJob,
    fmt: str,
    marquez: str | None,
    env: str | None,
    cdk_json: Path | None,
    output: str | None,
) -> None:
    """``graph --spark MASTER`` / ``graph --on-emr``: the Spark job's graph (:mod:`emr_lineage.cli.graph_spark`)."""
    check_request(master, on_emr, job, fmt, marquez)
    _check_events_paths(job.events)
    if output is not None:
        refuse_overwriting_inputs("--output", output, job.events)
    emit_output(spark_graph(master, on_emr, job, env, cdk_json), output)
    sys.exit(EXIT_OK)


def _print_result(result: ContractResult, fmt: str) -> None:
    if fmt == "json":
        click.echo(json.dumps(result.as_dict(), indent=2, sort_keys=True))
        return
    rows = result.missing + result.unexpected + result.optional_missing
    if rows:
        print_contract_rows("Contract differences", rows)
    for hint in result.hints:
        click.echo(f"hint: {hint}")
    if result.ignored_jobs:
        click.echo(f"{len(result.ignored_jobs)} job(s) outside the contract's namespaces ignored")
    verdict = "matches" if result.ok else f"{len(result.missing)} missing, {len(result.unexpected)} unexpected edge(s)"
    # Plain echo: a long contract path must not be wrapped into the verdict.
    click.echo(f"contract {result.contract}: {verdict} ({len(result.matched)} edge(s) matched)")


@click.command("validate", cls=Command)
@click.option(
    "--contract", "contract_path", required=True, metavar="FILE", help="Lineage contract (YAML, see docs/contracts.md)."
)
@events_option()
@marquez_option("Check the lineage of the raw events this Marquez stored")
@click.option(
    "--var", "variables", multiple=True, metavar="NAME=VALUE", help="Contract placeholder value (repeatable)."
)
@format_option(("table", "json"), "table")
@click.option(
    "--parent-job",
    "parent_job",
    metavar="NAME",
    help="With --marquez: only the runs launched under this parent job (e.g. emr_lineage_launch), "
    "their Spark applications and actions.",
)
@since_option(given_with="--marquez")
@until_option(given_with="--marquez")
@output_option("Also write the HTML report here: the graph with the contract's result.", old="--html")
@retired_option("--depth", "the contract is checked against the whole graph of the events read", metavar="N")
@skip_invalid_option
@strict_option
@schema_dir_option()
@timeout_option()
@_without_cyclic_gc
def validate_command(
    contract_path: str,
    events: tuple[str, ...],
    marquez_url: str | None,
    variables: tuple[str, ...],
    fmt: str,
    parent_job: str | None,
    since: str | None,
    until: str | None,
    output: str | None,
    skip_invalid: bool,
    strict: bool,
    schema_dir: str | None,
    timeout: float,
) -> None:
    """Compare the lineage graph with an expected-graph contract (exit 0 match, 1 differences, 2 bad input).

    -o FILE also writes the HTML report with the contract result.
    """

    if bool(events) == bool(marquez_url):
        fail("give either --events PATH... or --marquez URL")
    _check_events_paths(events)
    if output is not None:
        refuse_overwriting_inputs("--output", output, events, contract_path)
    # Contracts (and YAML) only for validate: `graph` starts without them, about 20 ms sooner.
    from emr_lineage.lineage.contracts.check import resolve, validate
    from emr_lineage.lineage.contracts.model import load_contract

    contract = load_contract(contract_path)
    values = contract.resolve_variables(_parse_vars(variables))
    resolve(contract, values)  # resolves every dataset: bad URIs fail before any read
    if (parent_job or since or until) and not marquez_url:
        fail("--parent-job, --since and --until select Marquez's events: they apply with --marquez")
    if marquez_url:
        _refuse_file_checks(strict, skip_invalid, schema_dir)
        graph = marquez_contract_graph(marquez_url, contract, parent_job, since, until, timeout)
    else:
        graph = _load(events, skip_invalid, strict, contract.level, schema_dir, column_lineage=output is not None)
    result = validate(contract, graph, values)
    if output:  # the HTML report with the contract result, written before the verdict: a failing write is the
        # only line, not one after "matches"
        title = f"Lineage contract: {Path(contract_path).name}"
        drift = _drift(events, skip_invalid, strict, schema_dir)
        write_output("--output", output, lambda path: write_html(path, graph, result, title=title, drift=drift))
    _print_result(result, fmt)
    sys.exit(EXIT_OK if result.ok else EXIT_CHECK_FAILED)
