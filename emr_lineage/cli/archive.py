"""``emr-lineage gateway archive``: the lineage gateway's archive as Athena tables (docs/analysis.md, "Querying
the archive with Athena").

``archive list`` shows the named queries (the stack creates the same ones in the workgroup);
``archive query NAME --since T [--until T]`` runs one in the environment's workgroup (names from SSM)
and prints its rows. Exit status: 0 the rows are printed; 1 Athena failed or cancelled the query
(its reason on the error line: the scan limit, a permission), or it outlived its deadline and was
stopped; 2 it could not run (an unknown NAME, with the closest names; a missing or bad value; the
gateway off; AWS); 130 interrupted: the query is stopped first.
"""

from __future__ import annotations

import datetime as dt
import difflib
import json

import click

from emr_lineage.aws import athena, parameters
from emr_lineage.aws.archive_queries import QUERIES, WINDOW, NamedQuery, QueryValueError, render, window_values
from emr_lineage.aws.clients import clients_for, read_parameter
from emr_lineage.cli.options import (
    dataset_option,
    format_option,
    job_option,
    settings_options,
    since_option,
    source_account_option,
    until_option,
)
from emr_lineage.cli.output import Group, fail
from emr_lineage.cli.progress import Steps
from emr_lineage.cli.sources import print_table
from emr_lineage.errors import EXIT_CHECK_FAILED
from emr_lineage.lineage.naming import NamingError, dataset_identity
from emr_lineage.lineage.times import parse_time
from emr_lineage.settings.loader import load_settings

MB = 1_000_000


def utc_now() -> dt.datetime:
    return dt.datetime.now(dt.UTC)


@click.group("archive", cls=Group)
def archive_group() -> None:
    """Query the lineage gateway's archive with Athena: its named queries."""


def named_query(name: str) -> NamedQuery:
    """The query called ``name``; an unknown one is exit 2 with the closest names."""
    if name in QUERIES:
        return QUERIES[name]
    close = difflib.get_close_matches(name, list(QUERIES), n=3, cutoff=0.5)
    hint = f" (did you mean {' or '.join(repr(c) for c in close)}?)" if close else ""
    fail(f"no archive query {name!r}{hint}; `emr-lineage gateway archive list` shows them: {', '.join(QUERIES)}")


def _time(option: str, value: str) -> dt.datetime:
    try:
        return parse_time(value)
    except ValueError:
        fail(f"{option} {value!r}: not an ISO 8601 date or time (e.g. 2026-11-23 or 2026-11-23T10:00Z)")


def query_values(
    query: NamedQuery,
    *,
    since: str | None,
    until: str | None,
    dataset: str | None,
    job: str | None,
    source_account: str | None = None,
) -> dict[str, str]:
    """The values of ``query`` from the options: the window, the dataset or job it takes, the account."""
    if not since:
        fail(f"archive query {query.name} needs --since (the window bounds the partitions Athena reads)")
    start, end = _time("--since", since), _time("--until", until) if until else utc_now()
    values = window_values(query, start, end)
    for option, given, names in (
        ("--dataset", dataset, ("dataset_namespace", "dataset_name")),
        ("--job", job, ("job",)),
        ("--source-account", source_account, ("source_account",)),
    ):
        takes = set(names) & set(query.parameters)
        if given is not None and not takes:
            fail(f"archive query {query.name} takes no {option}")
        if given is None and takes & set(query.required):
            fail(f"archive query {query.name} needs {option}")
    if dataset is not None:
        if dataset.startswith("table:"):
            fail(f"--dataset {dataset!r}: the archive query needs a storage URI (s3://bucket/path or a path)")
        try:
            values["dataset_namespace"], values["dataset_name"] = dataset_identity(dataset)
        except NamingError as exc:
            fail(f"--dataset {dataset!r}: {exc}")
    if job is not None:
        values["job"] = job
    if source_account is not None:
        values["source_account"] = source_account
    return values


def run_query(client, sql: str, *, workgroup: str, database: str, what: str) -> athena.QueryResult:
    """Start, wait (progress on stderr), read the rows; a query that did not succeed is exit 1, and
    one interrupted or past its deadline is stopped."""
    query_id = athena.start_query(client, sql, workgroup=workgroup, database=database)
    try:
        with Steps(what) as steps:
            snapshot = athena.wait_for_query(
                client, query_id, on_poll=lambda s: steps.state(f"Athena query {query_id}: {s.state}", s.elapsed)
            )
    except KeyboardInterrupt:
        athena.stop_query(client, query_id)
        click.echo(f"stopped the Athena query {query_id}", err=True)
        raise
    if not snapshot.finished:
        athena.stop_query(client, query_id)
        fail(
            f"Athena query {query_id} still {snapshot.state} after {athena.DEADLINE_SECONDS:g} s; stopped it",
            EXIT_CHECK_FAILED,
        )
    if snapshot.state != athena.SUCCEEDED:
        reason = f": {snapshot.reason}" if snapshot.reason else ""
        fail(f"Athena query {query_id} {snapshot.state}{reason}", EXIT_CHECK_FAILED)
    return athena.query_results(client, query_id)


def _print(query: NamedQuery, result: athena.QueryResult, fmt: str) -> None:
    if fmt == "json":
        rows = [dict(zip(result.columns, row, strict=False)) for row in result.rows]
        click.echo(json.dumps({"query": query.name, "columns": list(result.columns), "rows": rows}, indent=2))
        return
    if result.rows:
        print_table(query.description, result.columns, result.rows)
    click.echo(f"{len(result.rows)} row(s) from archive query {query.name}")


@archive_group.command("query")
@click.argument("name")
@since_option(
    "Start of the window: events whose eventTime is at or after this time (ISO 8601, UTC by default); required, "
    "it bounds the partitions Athena reads."
)
@until_option("End of the window: events whose eventTime is at or before this time (default: now).")
@dataset_option(
    required=False,
    help="The dataset of the queries that take one: its storage URI, s3://bucket/path or a local path.",
)
@job_option("The Spark job of the queries that take one: its name.")
@source_account_option(
    "Only the events the gateway received with this AWS account's key (12 digits; its own account, or a "
    "spoke's), in the queries over events."
)
@format_option(("table", "json"), "table")
@settings_options
def query_command(
    name: str,
    since: str | None,
    until: str | None,
    dataset: str | None,
    job: str | None,
    source_account: str | None,
    fmt: str,
    env: str,
    cdk_json,
) -> None:
    """Run the archive's named query NAME in the environment's Athena workgroup and print its rows."""
    query = named_query(name)
    try:
        values = query_values(query, since=since, until=until, dataset=dataset, job=job, source_account=source_account)
        sql = render(query, values)
    except QueryValueError as exc:
        fail(exc)
    settings = load_settings(env, cdk_json)
    if not settings.gateway.enabled:
        fail(f"the gateway (and its archive) is off for {env}: set emr-lineage.environments.{env}.gateway.enabled")
    clients = clients_for(settings, ("ssm", "athena"))
    workgroup, database = (
        read_parameter(clients["ssm"], parameter(env), env=env, published_by="gateway stack")
        for parameter in (parameters.gateway_athena_workgroup, parameters.gateway_archive_database)
    )
    result = run_query(clients["athena"], sql, workgroup=workgroup, database=database, what=f"archive query {name}")
    _print(query, result, fmt)


@archive_group.command("list")
@format_option(("table", "json"), "table")
def list_command(fmt: str) -> None:
    """List the archive's named queries and the options each takes."""
    options = {
        "dataset_namespace": "--dataset",
        "dataset_name": "--dataset",
        "job": "--job",
        "source_account": "--source-account",
    }
    listed = []
    for query in QUERIES.values():
        takes = dict.fromkeys(options[p] for p in query.parameters if p not in WINDOW)
        listed.append((query.name, " ".join(["--since", "--until", *takes]), query.description))
    if fmt == "json":
        keys = ("name", "options", "description")
        click.echo(json.dumps([dict(zip(keys, q, strict=True)) for q in listed], indent=2))
        return
    print_table("The archive's named queries", ("name", "options", "description"), listed)
