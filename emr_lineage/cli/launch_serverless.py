"""``emr-lineage launch --serverless``: run one PySpark job as an EMR Serverless job run and wait for it.

Exit codes (docs/cli.md): 0 the run succeeded (or, with --no-wait/--dry-run, was started/shown); 1 it
failed, was cancelled or outlived its deadline (emr_serverless.job_timeout_minutes; then it is
cancelled); 2 it could not launch (EMR Serverless off for the env, settings, job file, a listener jar
not staged, AWS errors); 130 Ctrl-C or SIGTERM, after the run was cancelled.

The request names the gateway's API key secret (EMR Serverless reads the key when the run starts);
only :func:`emr_lineage.launch.serverless.redacted` is shown, as a ``--conf`` may hold a credential.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

import click
from rich.console import Console

from emr_lineage.aws import emr_serverless
from emr_lineage.aws.clients import AwsError
from emr_lineage.cli.output import fail
from emr_lineage.cli.progress import Steps, job_run_poll_printer
from emr_lineage.errors import EXIT_CHECK_FAILED, EXIT_INTERRUPTED
from emr_lineage.launch import plan as launch_plan
from emr_lineage.launch import serverless
from emr_lineage.listener.artifact import listener_s3_key, trusted_ca_only_arguments
from emr_lineage.settings.model import EnvironmentSettings
from emr_lineage.spark.conf import (
    AUTH_KEY_PROPERTY,
    SECRET_REFERENCE_PREFIX,
    TRANSPORT_GROUP_PREFIX,
    TRANSPORT_PREFIX,
    TRANSPORT_URL_PROPERTY,
    ParentContext,
    is_secret_reference,
)
from emr_lineage.spark.truststore import DRIVER_JAVA_OPTIONS


def report_plan(console: Console, staged: tuple[launch_plan.StagedJob, ...], parent: ParentContext, new: bool) -> None:
    """The staged scripts and the parent run, as a cluster launch reports them."""
    for job in staged:
        if job.planned:
            console.print(f"job {job.request.script} would be uploaded to {job.uri} (dry run: not uploaded)")
        elif job.uploaded:
            console.print(f"job {job.request.script} uploaded to {job.uri}")
        else:
            console.print(f"job {job.request.script} unchanged at {job.uri}, not re-uploaded")
    where = f"job {parent.parent_job_namespace}/{parent.parent_job_name}"
    if new:
        console.print(f"parent run id {parent.parent_run_id} (new; {where})")
    else:
        console.print(f"parent run id {parent.parent_run_id} from OPENLINEAGE_PARENT_* ({where})")


def listener_of(settings: EnvironmentSettings) -> serverless.Listener:
    """The pinned jar's key in the artifacts bucket, and the bootstrap script's arguments that import the CA."""
    trusted_ca = settings.openlineage.trusted_ca
    trust = tuple(trusted_ca_only_arguments(trusted_ca)) if trusted_ca else ()
    return serverless.Listener(listener_s3_key(settings.versions.openlineage_spark), trust)


def lineage_lines(ssm: object, env: str, namespace: str, app_name: str, parent: ParentContext) -> list[str]:
    """Where to see the application in Marquez: its runs in the web UI (the job Marquez names
    ``<parent>.<app>``, which holds no edges: they are on its Spark actions) and the command that shows
    its lineage, built from the raw events Marquez stored (docs/graph.md, "Marquez's own lineage view")."""
    web = launch_plan.marquez_web_url(ssm, env)
    job_name = launch_plan.marquez_job_name(app_name, parent)
    runs = (
        launch_plan.marquez_lineage_url(web, "job", namespace, job_name)
        if web is not None
        else f"Marquez web URL unknown (deploy the Marquez stack); job {namespace}/{job_name}"
    )
    api = launch_plan.marquez_api_url(ssm, env) or "MARQUEZ_API_URL"
    # This run's events only (from a little before it starts, for clock skew), the application and its datasets.
    command = launch_plan.graph_command(
        api, f"job:{namespace}:{app_name}", f"{app_name}-lineage.html", since=launch_plan.lineage_since(), depth=0
    )
    return [f"runs: {runs}", f"lineage: {command}"]


def launch_serverless(
    settings: EnvironmentSettings,
    job: launch_plan.JobRequest,
    parent: ParentContext | None,
    *,
    conf: Mapping[str, str],
    no_wait: bool,
    dry_run: bool,
    poll_interval: float,
) -> None:
    # No emoji codes: the secret's ARN in the listener line has ":secret:".
    console = Console(stderr=True, highlight=False, markup=False, emoji=False, soft_wrap=True)
    try:
        serverless.require_enabled(settings)
        job.check()
        clients = serverless.ServerlessClients.for_settings(settings)
        plan = serverless.prepare_serverless(
            clients,
            settings,
            [job],
            listener=listener_of(settings),
            parent=parent,
            user_properties=conf,
            upload=not dry_run,
        )
        report_plan(console, plan.staged, plan.parent, plan.parent_is_new)
        _report_listener(console, plan.target, plan.requests[0], conf)
        lineage = lineage_lines(clients.ssm, plan.env, plan.namespace, job.job_name, plan.parent)
        if dry_run:
            click.echo(json.dumps(serverless.redacted(plan.requests[0]), indent=2))
            console.print("dry run: the script was not uploaded and no job run was started")
            return
        run = serverless.start_run(clients.emr_serverless, plan.requests[0])
    except KeyboardInterrupt:
        fail(
            "interrupted before the job run was known; a run started by now ends on its own or at its deadline",
            EXIT_INTERRUPTED,
        )
    console.print(f"job run {run.job_run_id} starting ({run.name}) on EMR Serverless application {run.application_id}")
    if no_wait:
        console.print(f"driver log: {run.driver_log_uri}")
        for line in lineage:
            console.print(line)
        click.echo(run.job_run_id)
        return
    outcome = _wait(console, clients, run, poll_interval, plan.timeout_minutes)
    for log_uri in outcome.log_uris:
        click.echo(f"logs: {log_uri}", err=not outcome.succeeded)
    for line in lineage:
        click.echo(line, err=not outcome.succeeded)
    if not outcome.succeeded:
        fail(outcome.message, EXIT_CHECK_FAILED)
    click.echo(f"{outcome.message} on EMR Serverless application {run.application_id}")


def _report_listener(
    console: Console, target: serverless.Target, request: Mapping[str, Any], conf: Mapping[str, str]
) -> None:
    """Where the request's listener reports, and with which key: read from the request's properties, so a
    transport given with --conf (which replaces emr-lineage's) is the one named; no credential is shown."""
    properties = serverless.spark_defaults_of_request(request)
    kind, url = properties.get(TRANSPORT_PREFIX + "type"), properties.get(TRANSPORT_URL_PROPERTY)
    if kind != "http" or not url:
        console.print(
            f"listener {target.jar_uri} reporting with the transport given with --conf (type {kind or 'unset'})"
        )
        return
    key = properties.get(AUTH_KEY_PROPERTY)
    if key and is_secret_reference(key):
        secret = key.removeprefix(SECRET_REFERENCE_PREFIX)
        auth = f"with the gateway's API key (EMR Serverless reads secret {secret} when the run starts)"
    elif key:
        auth = "with the API key given with --conf (shown as ****)"
    elif any(k.lower() == f"{TRANSPORT_PREFIX}headers.authorization" for k in properties):
        auth = "with the Authorization header given with --conf (shown as ****)"
    elif target.api_key_secret and any(k.startswith(TRANSPORT_GROUP_PREFIX) for k in conf):
        auth = "without an API key (the --conf transport replaces emr-lineage's, and the gateway's key with it)"
    else:
        auth = "without an API key (gateway off)"
    console.print(f"listener {target.jar_uri} reporting to {url} {auth}")
    store = target.truststore
    if store is not None and f"trustStore={store.path}" in properties.get(DRIVER_JAVA_OPTIONS, ""):
        console.print(f"its driver trusts openlineage.trusted_ca and the public roots: truststore {store.archive}")


def _wait(
    console: Console,
    clients: serverless.ServerlessClients,
    run: emr_serverless.JobRun,
    poll_interval: float,
    timeout_minutes: int,
) -> emr_serverless.RunOutcome:
    try:
        with Steps(f"job run {run.job_run_id}", console=console) as steps:
            return serverless.wait_or_cancel(
                clients.emr_serverless,
                run,
                poll_interval=poll_interval,
                deadline_minutes=timeout_minutes,
                on_poll=job_run_poll_printer(steps),
            )
    except serverless.RunInterruptedError as exc:
        fail(f"interrupted; {exc.fate}", EXIT_INTERRUPTED)
    except AwsError as exc:
        fail(f"{exc}; the job run {run.job_run_id} goes on until it ends or its deadline", exc.exit_code)
