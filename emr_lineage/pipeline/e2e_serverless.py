"""The sample pipeline as EMR Serverless job runs, its lineage checked in Marquez (``e2e --serverless``).

The same check as on a cluster (:mod:`emr_lineage.pipeline.e2e`): the same targets, sample data,
jobs and arguments, one parent run, and the same read of Marquez until the contract holds. The
five jobs run one after the other on the environment's application (each a job run built by
:mod:`emr_lineage.launch.serverless`, the listener and its transport in its spark-defaults); the
first that does not succeed ends the pipeline. Ctrl-C or SIGTERM cancels the run being waited on
(:class:`~emr_lineage.launch.serverless.RunInterruptedError`); a run past its deadline is cancelled.
Nothing is left to terminate: the application stops on its own when idle.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from emr_lineage.aws import emr_serverless
from emr_lineage.launch import plan as launch_plan
from emr_lineage.launch import serverless
from emr_lineage.pipeline import e2e
from emr_lineage.settings.model import EnvironmentSettings

LAUNCHED_BY = "emr-lineage e2e --serverless"


def run_e2e_serverless(
    settings: EnvironmentSettings,
    options: e2e.E2EOptions,
    *,
    listener: serverless.Listener,
    clients: serverless.ServerlessClients | None = None,
    callbacks: e2e.Callbacks | None = None,
    environ: Mapping[str, str] | None = None,
) -> e2e.E2EResult:
    """Run the end-to-end check on EMR Serverless. Bad input (EMR Serverless off for the env included)
    raises an ``EmrLineageError`` before anything is uploaded or started."""
    cb = callbacks or e2e.Callbacks()
    serverless.require_enabled(settings)
    clients = clients or serverless.ServerlessClients.for_settings(settings)
    contract, values, result = e2e.start_e2e(settings, options, clients, environ)
    targets, parent = result.targets, result.parent
    cb.say(f"Marquez API {targets.marquez_api} answers (from {targets.marquez_api_from})")

    jobs = e2e.pipeline_jobs(settings, targets.lake, parent)
    plan = serverless.prepare_serverless(
        clients,
        settings,
        jobs,
        listener=listener,
        parent=parent,
        parent_job_name=parent.parent_job_name,
        launched_by=LAUNCHED_BY,
    )
    result.application_id = plan.target.application_id
    e2e.stage_data(clients.s3, targets, options.rows, cb)
    e2e.report_staged(plan.staged, result, cb)

    since = result.since = launch_plan.lineage_since()
    logs: list[str] = []
    for request in plan.requests:
        outcome = _run(clients, request, plan.timeout_minutes, options, cb, result)
        logs += outcome.log_uris
        result.steps = outcome
        if not outcome.succeeded:
            result.message = outcome.message
            return result
    result.steps = emr_serverless.RunOutcome(True, outcome.last, outcome.message, tuple(logs))
    cb.say(
        f"all {len(plan.requests)} job runs succeeded; reading lineage from Marquez "
        f"(up to {options.lineage_timeout:g}s)"
    )
    e2e.check_lineage(result, contract, values, since, options, cb)
    return result


def _run(
    clients: serverless.ServerlessClients,
    request: dict[str, Any],
    timeout_minutes: int,
    options: e2e.E2EOptions,
    cb: e2e.Callbacks,
    result: e2e.E2EResult,
) -> emr_serverless.RunOutcome:
    run = serverless.start_run(clients.emr_serverless, request)
    result.job_runs.append(run.job_run_id)
    cb.say(f"job run {run.job_run_id} starting ({run.name}) on EMR Serverless application {run.application_id}")
    if cb.on_cluster is not None:
        cb.on_cluster(result)
    return serverless.wait_or_cancel(
        clients.emr_serverless,
        run,
        poll_interval=options.emr_poll_interval,
        deadline_minutes=timeout_minutes,
        on_poll=cb.on_poll,
    )
