"""AlarmTopic: the one SNS topic every alarm and EMR failure event of an environment goes to."""

from __future__ import annotations

from aws_cdk import Aws
from aws_cdk import aws_iam as iam
from aws_cdk import aws_sns as sns
from aws_cdk import aws_sns_subscriptions as subscriptions
from constructs import Construct

from emr_lineage.settings.model import EnvironmentSettings
from stacks.shared.storage import rotating_key

CLOUDWATCH = "cloudwatch.amazonaws.com"
# What a service needs on the key of an encrypted topic to publish to it (SNS, "Enable
# compatibility between event sources from AWS services and encrypted topics":
# https://docs.aws.amazon.com/sns/latest/dg/sns-key-management.html#compatibility-with-aws-services).
# AWS's own key for SNS (alias/aws/sns) cannot grant this, hence a customer-managed key.
PUBLISHER_KEY_ACTIONS = ["kms:Decrypt", "kms:GenerateDataKey*"]


class AlarmTopic(Construct):
    """KMS-encrypted, TLS-only SNS topic that CloudWatch alarms and EventBridge rules of this
    account may publish to; ``email`` (optional) is subscribed and must confirm.

    Exposes ``topic`` and ``key``.
    """

    def __init__(self, scope: Construct, construct_id: str, *, settings: EnvironmentSettings) -> None:
        super().__init__(scope, construct_id)
        prefix = settings.resource_prefix

        self.key = rotating_key(
            self, "Key", settings=settings, alias="alarms", description=f"{prefix} alarm topic (SNS)"
        )
        # EventBridge gets the same from each rule's SnsTopic target (grantPublish covers the key too).
        self.key.add_to_resource_policy(
            iam.PolicyStatement(
                sid="CloudWatchAlarmsPublishToEncryptedTopic",
                principals=[iam.ServicePrincipal(CLOUDWATCH)],
                actions=PUBLISHER_KEY_ACTIONS,
                resources=["*"],  # in a key policy, "*" is this key
            )
        )

        self.topic = sns.Topic(
            self,
            "Topic",
            topic_name=f"{prefix}-alarms",
            display_name=f"{prefix} alarms",
            master_key=self.key,
            enforce_ssl=True,  # cdk-nag SNS3
        )
        # The topic policy CDK creates replaces SNS's default one (which let this account's
        # services publish): CloudWatch alarms need their own statement
        # (https://repost.aws/knowledge-center/cloudwatch-receive-sns-for-alarm-trigger), scoped to
        # this account's alarms; EventBridge rules get theirs from the rule targets.
        self.topic.add_to_resource_policy(
            iam.PolicyStatement(
                sid="CloudWatchAlarmsPublish",
                principals=[iam.ServicePrincipal(CLOUDWATCH)],
                actions=["sns:Publish"],
                resources=[self.topic.topic_arn],
                conditions={
                    "ArnLike": {
                        "aws:SourceArn": f"arn:{Aws.PARTITION}:cloudwatch:{Aws.REGION}:{Aws.ACCOUNT_ID}:alarm:*"
                    }
                },
            )
        )
        if settings.alarms.email:
            self.topic.add_subscription(subscriptions.EmailSubscription(settings.alarms.email))
