"""EmrFailureEvents: EMR clusters that end in error, steps and EMR Serverless job runs that fail, as
readable notifications.

EMR sends "EMR Cluster State Change" and "EMR Step Status Change" events to EventBridge; their
``detail`` carries ``state``, ``name``, ``clusterId`` and ``message`` (plus ``stepId`` for steps)
(https://docs.aws.amazon.com/eventbridge/latest/ref/events-ref-emr.html,
https://docs.aws.amazon.com/emr/latest/ManagementGuide/emr-manage-cloudwatch-events.html).

EMR Serverless sends "EMR Serverless Job Run State Change" (source ``aws.emr-serverless``); its
``detail`` carries ``applicationId``, ``jobRunId``, ``jobRunName``, ``state`` and ``previousState``,
and its ``resources`` list is empty, so the rule matches the application by ``detail.applicationId``
(https://docs.aws.amazon.com/eventbridge/latest/ref/events-ref-emr-serverless.html); the event names
no application name. That rule lives in the EMR stack beside the application
(:class:`ServerlessJobRunFailures`): imported here, the application's id would be an export in use
when ``emr_serverless`` is switched off, which CloudFormation cannot remove. A run that
failed ends FAILED; one that ran past its deadline (``emr_serverless.job_timeout_minutes``) or was
cancelled ends CANCELLED: both notify, since a cancelled run wrote no (or partial) output too.
The reason is not in the event: ``aws emr-serverless get-job-run`` shows it (``stateDetails``).
"""

from __future__ import annotations

from aws_cdk import aws_events as events
from aws_cdk import aws_events_targets as targets
from aws_cdk import aws_sns as sns
from constructs import Construct

from emr_lineage.settings.model import EnvironmentSettings

SOURCE = "aws.emr"
CLUSTER_STATE_CHANGE = "EMR Cluster State Change"
STEP_STATUS_CHANGE = "EMR Step Status Change"
CLUSTER_FAILED = "TERMINATED_WITH_ERRORS"
STEP_FAILED = "FAILED"
SERVERLESS_SOURCE = "aws.emr-serverless"
SERVERLESS_JOB_RUN_STATE_CHANGE = "EMR Serverless Job Run State Change"
SERVERLESS_JOB_RUN_ENDED_BADLY = ("FAILED", "CANCELLED")


def _field(name: str) -> str:
    return events.EventField.from_path(f"$.detail.{name}")


class EmrFailureEvents(Construct):
    """Two rules to ``topic``: this environment's clusters terminated with errors, and failed steps.

    Clusters are this environment's by name (the launch spec and the long-running cluster are
    named ``<resource prefix>-...``, stacks/emr/cluster_spec.py). Step events carry the step's name,
    not the cluster's, so failed steps are reported for every cluster of the account and region.
    Exposes ``cluster_rule`` and ``step_rule``.
    """

    def __init__(
        self,
        scope: Construct,
        construct_id: str,
        *,
        settings: EnvironmentSettings,
        topic: sns.ITopic,
    ) -> None:
        super().__init__(scope, construct_id)
        prefix = settings.resource_prefix

        self.cluster_rule = events.Rule(
            self,
            "ClusterFailed",
            description=f"{prefix}: EMR clusters of this environment that terminated with errors",
            event_pattern=events.EventPattern(
                source=[SOURCE],
                detail_type=[CLUSTER_STATE_CHANGE],
                detail={"state": [CLUSTER_FAILED], "name": events.Match.prefix(f"{prefix}-")},
            ),
        )
        self.cluster_rule.add_target(
            targets.SnsTopic(
                topic,
                message=events.RuleTargetInput.from_text(
                    # ``message`` names the reason; ``stateChangeReason`` is JSON text (quotes) and stays out.
                    f"[{prefix}] EMR cluster {_field('name')} ({_field('clusterId')}) terminated with errors: "
                    f"{_field('message')}"
                ),
            )
        )

        self.step_rule = events.Rule(
            self,
            "StepFailed",
            description=f"{prefix}: failed EMR steps (any cluster of the account and region)",
            event_pattern=events.EventPattern(
                source=[SOURCE], detail_type=[STEP_STATUS_CHANGE], detail={"state": [STEP_FAILED]}
            ),
        )
        self.step_rule.add_target(
            targets.SnsTopic(
                topic,
                message=events.RuleTargetInput.from_text(
                    f"[{prefix}] EMR step {_field('name')} ({_field('stepId')}) failed on cluster "
                    f"{_field('clusterId')} (action on failure: {_field('actionOnFailure')}): {_field('message')}"
                ),
            )
        )


class ServerlessJobRunFailures(Construct):
    """A rule to ``topic``: job runs of the EMR Serverless application ``application_id`` that failed or were
    cancelled. Exposes ``rule``."""

    def __init__(
        self,
        scope: Construct,
        construct_id: str,
        *,
        settings: EnvironmentSettings,
        topic: sns.ITopic,
        application_id: str,
    ) -> None:
        super().__init__(scope, construct_id)
        prefix = settings.resource_prefix
        self.rule = events.Rule(
            self,
            "Rule",
            description=f"{prefix}: EMR Serverless job runs of this environment's application that failed or "
            "were cancelled (deadline included)",
            event_pattern=events.EventPattern(
                source=[SERVERLESS_SOURCE],
                detail_type=[SERVERLESS_JOB_RUN_STATE_CHANGE],
                detail={"applicationId": [application_id], "state": list(SERVERLESS_JOB_RUN_ENDED_BADLY)},
            ),
        )
        self.rule.add_target(
            targets.SnsTopic(
                topic,
                message=events.RuleTargetInput.from_text(
                    f"[{prefix}] EMR Serverless job run {_field('jobRunName')} ({_field('jobRunId')}) of application "
                    f"{_field('applicationId')} ended {_field('state')} (was {_field('previousState')}); its reason: "
                    f"aws emr-serverless get-job-run --application-id {_field('applicationId')} "
                    f"--job-run-id {_field('jobRunId')}"
                ),
            )
        )
