"""``emr-lineage attach`` and ``emr-lineage detach``: the OpenLineage listener on a running EMR cluster
(:mod:`emr_lineage.launch.attach`), through EMR's reconfiguration of its instance groups or fleets.

Exit codes (docs/cli.md): 0 applied (or nothing to change, or a dry run shown); 1 EMR failed (and reverted)
the reconfiguration of a group, or it was not applied before the deadline; 2 it was refused before anything
was sent (cluster not found or not running, its release or configuration, the jar not staged, settings, AWS
errors); 130 Ctrl-C or SIGTERM (once sent, the reconfiguration goes on in EMR).
"""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import click
from rich.console import Console

from emr_lineage.aws import emr as emr_steps
from emr_lineage.aws import reconfigure
from emr_lineage.aws.clients import AwsClients, AwsError
from emr_lineage.cli.emr_options import cluster_id_option, poll_interval_option
from emr_lineage.cli.launch_serverless import listener_of
from emr_lineage.cli.options import dry_run_option, settings_options
from emr_lineage.cli.output import Command, fail
from emr_lineage.cli.progress import Steps
from emr_lineage.errors import EXIT_CHECK_FAILED, EXIT_INTERRUPTED
from emr_lineage.launch import attach
from emr_lineage.launch.listener_target import ListenerTarget, resolve_listener_target, trusted_ca_truststore
from emr_lineage.settings.loader import load_settings


def _console() -> Console:
    # No emoji codes: a secret's ARN has ":secret:".
    return Console(stderr=True, highlight=False, markup=False, emoji=False, soft_wrap=True)


@click.command("attach", cls=Command)
@settings_options
@cluster_id_option("The running EMR cluster whose instance groups (or fleets) get the listener.")
@click.option(
    "--append-listener",
    is_flag=True,
    help="Add the OpenLineage listener after the listeners the cluster's spark.extraListeners already names "
    "(without it, such a cluster is refused).",
)
@poll_interval_option
@dry_run_option("Print the reconfiguration requests (credentials masked); send nothing.")
def attach_command(
    env: str, cdk_json: Path, cluster_id: str, append_listener: bool, poll_interval: float, dry_run: bool
) -> None:
    """Load the pinned OpenLineage listener on a running EMR cluster (spark.jars, its properties, the
    environment's lineage URL and key), through EMR's reconfiguration of its instance groups; detach undoes it.

    \b
    emr-lineage attach --env prod --cluster-id j-2AL4XXXXXX5T9 --dry-run
    emr-lineage attach --env prod --cluster-id j-2AL4XXXXXX5T9
    """
    settings = load_settings(env, cdk_json)
    console = _console()
    try:
        clients = AwsClients.for_settings(settings)
        cluster, sets = attach.read_cluster(clients.emr, cluster_id)
        target = resolve_listener_target(clients.ssm, clients.s3, settings, listener_of(settings))
        store = trusted_ca_truststore(clients.s3, settings, target.bucket, upload=not dry_run)
        target = dataclasses.replace(target, truststore=store)
        plan = attach.plan_attach(cluster, sets, settings, target, append_listener=append_listener)
    except KeyboardInterrupt:
        fail("interrupted; nothing was sent to EMR", EXIT_INTERRUPTED)
    _report_listener(console, plan.cluster, target)
    _apply(console, clients.emr, plan, "attached", dry_run=dry_run, poll_interval=poll_interval)


@click.command("detach", cls=Command)
@settings_options
@cluster_id_option("The running EMR cluster to take the listener off.")
@poll_interval_option
@dry_run_option("Print the reconfiguration requests (credentials masked); send nothing.")
def detach_command(env: str, cdk_json: Path, cluster_id: str, poll_interval: float, dry_run: bool) -> None:
    """Take off a running EMR cluster exactly what emr-lineage attach added to it, through EMR's
    reconfiguration of its instance groups; the cluster's own configuration stays.

    \b
    emr-lineage detach --env prod --cluster-id j-2AL4XXXXXX5T9
    """
    settings = load_settings(env, cdk_json)
    console = _console()
    try:
        clients = AwsClients.for_settings(settings)
        cluster, sets = attach.read_cluster(clients.emr, cluster_id)
        plan = attach.plan_detach(cluster, sets)
    except KeyboardInterrupt:
        fail("interrupted; nothing was sent to EMR", EXIT_INTERRUPTED)
    _apply(console, clients.emr, plan, "detached", dry_run=dry_run, poll_interval=poll_interval)


def _report_listener(console: Console, cluster: reconfigure.Cluster, target: ListenerTarget) -> None:
    """Where the listener reports, and how the nodes get the key (never shown: EMR reads it)."""
    if target.api_key_secret:
        auth = (
            f"with the gateway's API key: EMR reads secret {target.api_key_secret} with the cluster's service role "
            f"{cluster.service_role} when it applies the configuration (secretsmanager:GetSecretValue on the secret, "
            "kms:Decrypt on its key)"
        )
    else:
        auth = "without an API key (gateway off)"
    console.print(f"listener {target.jar_uri} reporting to {target.lineage_url} {auth}")
    if target.truststore is not None:
        console.print(
            "drivers trust openlineage.trusted_ca: in cluster mode through the truststore "
            f"{target.truststore.archive}, in client mode through the primary node's Java truststores "
            "(a step imports the CA there, with the "
            "cluster's instance role)"
        )


def _apply(
    console: Console, emr: Any, plan: attach.ReconfigurationPlan, what: str, *, dry_run: bool, poll_interval: float
) -> None:
    """Show the plan; unless a dry run, send it, wait, and report per group."""
    cid = plan.cluster.cluster_id
    console.print(f"cluster {cid} ({plan.cluster.name}) {plan.cluster.release_label}, {plan.cluster.state}")
    for change in plan.changes:
        console.print(f"{change.instance_set.label}: {change.summary}")
        for note in change.notes:
            console.print(note)
    if plan.references:
        console.print(
            "sent again as references to their secrets (EMR shows them as ARNs): " + ", ".join(plan.references)
        )
    if not plan.changes:
        click.echo(f"cluster {cid}: already {what}, nothing to change")
        return
    if dry_run:
        click.echo(json.dumps(attach.shown(plan.shown_calls), indent=2))
        console.print("dry run: nothing was sent to EMR")
        return
    follow = _follow(plan.cluster)
    try:
        attach.submit(emr, plan)
    except KeyboardInterrupt:
        fail(f"interrupted while sending the reconfiguration; see what EMR got with: {follow}", EXIT_INTERRUPTED)
    console.print("reconfiguration sent: EMR applies it node by node and restarts the applications it concerns")
    try:
        with Steps(f"cluster {cid} reconfiguration", console=console) as steps:
            snapshot, done = reconfigure.wait_for_reconfiguration(
                emr,
                plan.cluster,
                plan.sent,
                plan.before,
                poll_interval=poll_interval,
                deadline_seconds=reconfigure.DEFAULT_DEADLINE_SECONDS,
                on_poll=_printer(steps),
            )
    except KeyboardInterrupt:
        fail(f"interrupted; the reconfiguration continues in EMR: follow it with {follow}", EXIT_INTERRUPTED)
    except AwsError as exc:
        fail(f"{exc}; the reconfiguration continues in EMR: follow it with {follow}", exc.exit_code)
    for progress in snapshot.sets:
        s = progress.instance_set
        click.echo(f"{s.key}\t{s.role}\t{s.name}\t{s.state}\t{progress.outcome}")
    if snapshot.failed:
        fail(
            "; ".join(f"{p.instance_set.label}: reconfiguration failed: {p.reason}" for p in snapshot.failed),
            EXIT_CHECK_FAILED,
        )
    if not done:
        minutes = reconfigure.DEFAULT_DEADLINE_SECONDS // 60
        fail(f"not applied after {minutes} minutes; EMR goes on: follow it with {follow}", EXIT_CHECK_FAILED)
    if plan.step is not None:
        _run_trust_step(console, emr, plan, poll_interval=poll_interval)
    click.echo(f"listener {what} on cluster {cid}")


def _run_trust_step(console: Console, emr: Any, plan: attach.ReconfigurationPlan, *, poll_interval: float) -> None:
    """Add the step that imports the CA on the primary node, wait for it, say where its log is if it failed."""
    cid = plan.cluster.cluster_id
    try:
        added = emr_steps.add_steps(emr, cid, [plan.step], log_uri=plan.cluster.log_uri)
        ((_, step_id),) = added.steps
        console.print(f"step {step_id}: {attach.TRUST_STEP_NAME}")
        with Steps(f"cluster {cid} step {step_id}", console=console) as steps:
            outcome = emr_steps.wait_for_steps(
                emr, added, poll_interval=poll_interval, on_poll=lambda s: steps.state(s.steps[0].state, s.elapsed)
            )
    except KeyboardInterrupt:
        fail(f"interrupted; the step goes on in EMR: aws emr list-steps --cluster-id {cid}", EXIT_INTERRUPTED)
    except AwsError as exc:
        fail(f"{exc}; the listener is attached, but client-mode drivers may not trust the CA", exc.exit_code)
    click.echo(f"{step_id}\tstep\t{attach.TRUST_STEP_NAME}\t{outcome.last.steps[0].state}")
    if not outcome.succeeded:
        logs = (
            f"its log: {outcome.log_uris[0]}"
            if plan.cluster.log_uri
            else (f"its log on the primary node: /mnt/var/log/hadoop/steps/{step_id}/")
        )
        fail(
            f"{outcome.message}; cluster-mode drivers trust the CA, client-mode drivers on the primary node do not "
            f"({logs})",
            EXIT_CHECK_FAILED,
        )


def _follow(cluster: reconfigure.Cluster) -> str:
    listing = "list-instance-fleets" if cluster.collection == reconfigure.FLEETS else "list-instance-groups"
    return f"aws emr {listing} --cluster-id {cluster.cluster_id}"


def _printer(steps: Steps) -> Callable[[reconfigure.ReconfigurationSnapshot], None]:
    """The live line follows every poll; a line is printed when a set's state or outcome changes."""

    def show(snapshot: reconfigure.ReconfigurationSnapshot) -> None:
        sets = ", ".join(
            f"{p.instance_set.key} {p.instance_set.state}" + ("" if p.outcome == "applying" else f" ({p.outcome})")
            for p in snapshot.sets
        )
        steps.state(f"reconfiguration: {sets}", snapshot.elapsed)

    return show
