"""EmrFailureEvents: EMR clusters that end in error and steps that fail, as readable notifications.

EMR sends "EMR Cluster State Change" and "EMR Step Status Change" events to EventBridge; their
``detail`` carries ``state``, ``name``, ``clusterId`` and ``message`` (plus ``stepId`` for steps)
(https://docs.aws.amazon.com/eventbridge/latest/ref/events-ref-emr.html,
https://docs.aws.amazon.com/emr/latest/ManagementGuide/emr-manage-cloudwatch-events.html).
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
        self, scope: Construct, construct_id: str, *, settings: EnvironmentSettings, topic: sns.ITopic
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
