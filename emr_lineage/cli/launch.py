"""``emr-lineage launch``: run one PySpark job on an ephemeral EMR cluster and wait for it (with
``--serverless``, as an EMR Serverless job run: :mod:`emr_lineage.cli.launch_serverless`).

Exit codes (docs/cli.md): 0 step completed; 1 step failed/cancelled or cluster ended early;
2 it could not launch (settings, job file, launch spec, AWS errors); 130 interrupted (Ctrl-C or
SIGTERM; the cluster is terminated unless you answer no at the prompt).
"""

from __future__ import annotations

import sys
from pathlib import Path

import click
from rich.console import Console

from emr_lineage.aws import clients as aws_clients
from emr_lineage.aws import emr as emr_cluster
from emr_lineage.cli.emr_options import conf_option, poll_interval_option, serverless_option
from emr_lineage.cli.launch_serverless import launch_serverless, lineage_lines, report_plan
from emr_lineage.cli.options import dry_run_option, job_option, settings_options
from emr_lineage.cli.output import Command, fail
from emr_lineage.cli.progress import Steps, cluster_poll_printer
from emr_lineage.errors import EXIT_CHECK_FAILED, EXIT_INTERRUPTED
from emr_lineage.launch import plan as launch_plan
from emr_lineage.settings.loader import load_settings
from emr_lineage.spark.conf import ParentContext, ParentContextError


def stdin_is_interactive() -> bool:
    """True when someone can answer the Ctrl-C prompt (tests replace it)."""
    return sys.stdin is not None and sys.stdin.isatty()


@click.command("launch", cls=Command)
@settings_options
@job_option(
    "The PySpark script to run, e.g. jobs/revenue_daily.py (its file stem is the job's name).",
    required=True,
    type=click.Path(path_type=Path, dir_okay=False),
)
@click.option(
    "--deploy-mode",
    type=click.Choice(launch_plan.DEPLOY_MODES),
    default="client",
    show_default=True,
    help="spark-submit deploy mode; client keeps the driver's output in the step log.",
)
@click.option("--no-wait", is_flag=True, help="Print the cluster id (job run id) and return at once.")
@poll_interval_option
@serverless_option
@conf_option(
    "With --serverless: a Spark property of the job run (repeatable); spark.openlineage.parent*/transport* keys "
    "given here replace emr-lineage's, spark.jars and spark.extraListeners are appended to."
)
@dry_run_option("With --serverless: print the StartJobRun request (credentials masked); upload and start nothing.")
@click.argument("job_args", nargs=-1, type=click.UNPROCESSED)
@click.pass_context
def launch(
    ctx: click.Context,
    env: str,
    cdk_json: Path,
    job: Path,
    deploy_mode: str,
    no_wait: bool,
    poll_interval: float,
    serverless: bool,
    conf: dict[str, str],
    dry_run: bool,
    job_args: tuple[str, ...],
) -> None:
    """Run JOB on a new EMR cluster that terminates after it (--serverless: as an EMR Serverless job
    run); arguments after -- go to the job.

    \b
    emr-lineage launch --env dev --job jobs/revenue_daily.py -- \\
      --orders-table lakehouse.emr_lineage_dev_clean.orders_clean \\
      --revenue-table lakehouse.emr_lineage_dev_curated.revenue_daily
    emr-lineage launch --env prod --serverless --job jobs/revenue_daily.py -- \\
      --orders-table lakehouse.emr_lineage_prod_clean.orders_clean \\
      --revenue-table lakehouse.emr_lineage_prod_curated.revenue_daily
    """
    _check_exclusive(ctx, serverless)
    console = Console(stderr=True, highlight=False, markup=False, soft_wrap=True)
    settings = load_settings(env, cdk_json)
    job = launch_plan.JobRequest(script=job, args=job_args, deploy_mode=deploy_mode)
    try:
        parent = ParentContext.from_env()
    except ParentContextError as exc:
        fail(f"OPENLINEAGE_PARENT_* environment: {exc}")
    if serverless:
        options = {"no_wait": no_wait, "dry_run": dry_run, "poll_interval": poll_interval}
        launch_serverless(settings, job, parent, conf=conf, **options)
        return

    try:
        job.check()
        clients = aws_clients.AwsClients.for_settings(settings)
        plan = launch_plan.prepare_launch(clients, settings, [job], parent=parent)
        _report_plan(console, plan)
        lineage = _lineage_lines(clients, plan)  # SSM reads: before the cluster, so Ctrl-C here costs nothing
        cluster = emr_cluster.start_cluster(clients.emr, plan.request, log_uri=plan.log_uri)
    except KeyboardInterrupt:
        fail(
            "interrupted before the cluster was known; a cluster started by now terminates after its steps",
            EXIT_INTERRUPTED,
        )

    console.print(f"cluster {cluster.cluster_id} starting ({plan.request['Name']})")
    if no_wait:
        for name, step_id in cluster.steps:
            console.print(f"step {name} logs: {cluster.step_log_uri(step_id)}")
        for line in lineage:
            console.print(line)
        click.echo(cluster.cluster_id)
        return

    try:
        outcome = _wait(console, clients, cluster, poll_interval)
    except KeyboardInterrupt:
        _on_interrupt(console, clients, cluster)
        fail("interrupted", EXIT_INTERRUPTED)
    except aws_clients.AwsError as exc:
        fail(f"{exc}; the cluster {cluster.cluster_id} keeps running until its steps end", exc.exit_code)

    for log_uri in outcome.log_uris:
        click.echo(f"logs: {log_uri}", err=not outcome.succeeded)
    for line in lineage:
        click.echo(line, err=not outcome.succeeded)
    if not outcome.succeeded:
        fail(outcome.message, EXIT_CHECK_FAILED)
    click.echo(f"{outcome.message} on {cluster.cluster_id}; the cluster terminates on its own")


def _check_exclusive(ctx: click.Context, serverless: bool) -> None:
    """--deploy-mode is a cluster's; --conf and --dry-run a job run's: a wrong mix is exit 2."""
    given = {
        name
        for name in ("deploy_mode", "conf", "dry_run")
        if ctx.get_parameter_source(name) not in (None, click.core.ParameterSource.DEFAULT)
    }
    if serverless and "deploy_mode" in given:
        fail("--deploy-mode is for clusters: EMR Serverless places the driver itself (drop --deploy-mode)")
    for name in sorted(given - {"deploy_mode"}):
        if not serverless:
            fail(f"--{name.replace('_', '-')} is for EMR Serverless job runs: add --serverless")


def _report_plan(console: Console, plan: launch_plan.LaunchPlan) -> None:
    report_plan(console, plan.staged, plan.parent, plan.parent_is_new)


def _lineage_lines(clients: aws_clients.AwsClients, plan: launch_plan.LaunchPlan) -> list[str]:
    return lineage_lines(clients.ssm, plan.env, plan.namespace, plan.staged[0].request.job_name, plan.parent)


def _wait(
    console: Console, clients: aws_clients.AwsClients, cluster: emr_cluster.LaunchedCluster, poll_interval: float
) -> emr_cluster.Outcome:
    with Steps(f"cluster {cluster.cluster_id}", console=console) as steps:
        return emr_cluster.wait_for_steps(
            clients.emr, cluster, poll_interval=poll_interval, on_poll=cluster_poll_printer(steps)
        )


def _on_interrupt(console: Console, clients: aws_clients.AwsClients, cluster: emr_cluster.LaunchedCluster) -> None:
    cid = cluster.cluster_id
    if stdin_is_interactive():
        try:
            terminate = click.confirm(f"terminate the cluster {cid}?", default=False, err=True)
        except click.Abort:  # a second Ctrl-C or end of input: take the safe side
            terminate = True
    else:
        console.print(f"interrupted with no terminal to ask: terminating {cid}")
        terminate = True
    if terminate:
        try:
            emr_cluster.terminate_cluster(clients.emr, cid)
        except aws_clients.AwsError as exc:
            fail(f"interrupted; terminating {cid} failed: {exc}", EXIT_INTERRUPTED)
        console.print(f"cluster {cid} terminating")
    else:
        console.print(
            f"cluster {cid} keeps running and terminates after its steps; "
            f"stop it with: aws emr terminate-clusters --cluster-ids {cid}"
        )
