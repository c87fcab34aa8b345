"""``emr-lineage e2e``: the sample pipeline on an ephemeral EMR cluster, its lineage checked in Marquez.

With ``--serverless`` the jobs run one after the other as EMR Serverless job runs
(:mod:`emr_lineage.pipeline.e2e_serverless`).

Exit codes (docs/cli.md): 0 every step completed and the contract holds in Marquez; 1 a step
(job run) failed, the cluster ended early, or the lineage did not match the contract before the
deadline; 2 it could not run (settings, EMR Serverless off for the env, missing SSM parameter or
bucket, Marquez unreachable or not a Marquez, AWS errors, bad options); 130 Ctrl-C or SIGTERM (the
cluster is terminated unless --keep-cluster; the job run is cancelled).
"""

from __future__ import annotations

from pathlib import Path

import click
from rich.console import Console

from emr_lineage.cli.emr_options import poll_interval_option, serverless_option
from emr_lineage.cli.launch_serverless import listener_of
from emr_lineage.cli.options import marquez_option, rows_option, settings_options
from emr_lineage.cli.output import Command, fail, print_contract_rows
from emr_lineage.cli.progress import Steps, cluster_poll_printer, elapsed, job_run_poll_printer
from emr_lineage.errors import EXIT_INTERRUPTED
from emr_lineage.launch.plan import graph_command
from emr_lineage.launch.serverless import RunInterruptedError
from emr_lineage.lineage.contracts.check import ContractResult
from emr_lineage.pipeline import definition as pipeline
from emr_lineage.pipeline import e2e, e2e_lineage, e2e_serverless
from emr_lineage.settings.loader import load_settings


@click.command("e2e", cls=Command)
@settings_options
@marquez_option("Check the lineage in this Marquez instead of the URL in SSM (e.g. an SSM port forward)")
@click.option(
    "--keep-cluster", is_flag=True, help="Leave the cluster up after its steps (also after a failure) for debugging."
)
@rows_option(pipeline.MIN_ROWS, pipeline.DEFAULT_ROWS)
@poll_interval_option
@click.option(
    "--lineage-timeout",
    type=click.FloatRange(min=0),
    default=e2e_lineage.DEFAULT_LINEAGE_TIMEOUT,
    show_default=True,
    help="Seconds to wait, after the steps, for the lineage in Marquez to match the contract.",
)
@click.option(
    "--lineage-interval",
    type=click.FloatRange(min=0, min_open=True),
    default=e2e_lineage.DEFAULT_LINEAGE_INTERVAL,
    show_default=True,
    help="Seconds between two reads of Marquez.",
)
@serverless_option
def e2e_command(
    env: str,
    cdk_json: Path,
    marquez_url: str | None,
    keep_cluster: bool,
    rows: int,
    poll_interval: float,
    lineage_timeout: float,
    lineage_interval: float,
    serverless: bool,
) -> None:
    """Run the sample pipeline on a new EMR cluster (--serverless: as EMR Serverless job runs) and
    validate its lineage in Marquez.

    \b
    emr-lineage e2e --env dev
    emr-lineage e2e --env dev --marquez http://localhost:5080   # through an SSM port forward
    emr-lineage e2e --env prod --serverless
    """
    if serverless and keep_cluster:
        fail("--keep-cluster is for clusters: EMR Serverless job runs leave no cluster (drop --keep-cluster)")
    console = Console(stderr=True, highlight=False, markup=False, soft_wrap=True)
    settings = load_settings(env, cdk_json)
    options = e2e.E2EOptions(
        rows=rows,
        keep_cluster=keep_cluster,
        marquez_url=marquez_url,
        emr_poll_interval=poll_interval,
        lineage_timeout=lineage_timeout,
        lineage_interval=lineage_interval,
    )
    seen: list[e2e.E2EResult] = []
    progress = Steps("job run" if serverless else "cluster", console=console)
    callbacks = e2e.Callbacks(
        say=console.print,
        on_poll=job_run_poll_printer(progress) if serverless else cluster_poll_printer(progress),
        on_attempt=_show_attempt(console),
        on_cluster=seen.append,
    )
    try:
        with progress:
            if serverless:
                listener = listener_of(settings)
                result = e2e_serverless.run_e2e_serverless(settings, options, listener=listener, callbacks=callbacks)
            else:
                result = e2e.run_e2e(settings, options, callbacks=callbacks)
    except RunInterruptedError as exc:  # the job run being waited on is cancelled
        fail(f"interrupted; {exc.fate}", EXIT_INTERRUPTED)
    except KeyboardInterrupt:  # Ctrl-C or SIGTERM: run_e2e has ended the cluster it started (unless kept)
        if serverless:
            fail(
                "interrupted while no job run was waited on; a run started by now ends on its own or at its deadline",
                EXIT_INTERRUPTED,
            )
        if not seen:
            fail(
                "interrupted before the cluster was known; a cluster started by now terminates after its steps",
                EXIT_INTERRUPTED,
            )
        state = "kept (--keep-cluster)" if seen[0].kept else "terminating" if seen[0].terminated else "NOT terminated"
        fail(f"interrupted; cluster {seen[0].cluster_id} {state}", EXIT_INTERRUPTED)

    if result.steps is not None:
        for log_uri in result.steps.log_uris:
            click.echo(f"logs: {log_uri}", err=True)
    if result.lineage is not None and result.lineage.last.result is not None:
        _print_table(result.lineage.last.result)
    for url in result.graph_urls:
        click.echo(f"graph: {url}")
    if not result.graph_urls:
        node = f"job:{settings.openlineage.namespace}:{pipeline.PIPELINE[0]}"  # and every job it reaches
        command = graph_command(result.targets.marquez_api, node, "lineage.html", since=result.since)
        click.echo(f"graph: Marquez web URL unknown; the pipeline's lineage: {command}")
    if result.exit_code:
        fail(result.message, result.exit_code)
    click.echo(f"e2e passed on {result.ran_on}: {result.message}")


def _show_attempt(console: Console):
    def show(attempt: e2e_lineage.LineageAttempt) -> None:
        head = f"{elapsed(attempt.elapsed)} lineage read {attempt.number}:"
        if attempt.result is None:
            console.print(f"{head} {attempt.error}")
            return
        r = attempt.result
        text = f"{head} {len(r.matched)} edges matched, {len(r.missing)} missing, {len(r.unexpected)} unexpected"
        if attempt.skipped:
            text += f", {attempt.skipped} event(s) skipped (they fail the event checks)"
        console.print(text)

    return show


def _print_table(result: ContractResult) -> None:
    print_contract_rows(
        f"Lineage contract {_shown(result.contract)} in Marquez",
        result.matched + result.missing + result.unexpected + result.optional_missing,
    )
    verdict = (
        "holds" if result.ok else f"fails: {len(result.missing)} missing, {len(result.unexpected)} unexpected edge(s)"
    )
    click.echo(f"contract {verdict} ({len(result.matched)} edge(s) matched)")


def _shown(path: str) -> str:
    try:
        return str(Path(path).resolve().relative_to(Path.cwd()))
    except ValueError:
        return path
