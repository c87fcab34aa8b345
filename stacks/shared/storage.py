"""The project's storage defaults, written once: KMS keys that rotate, private versioned buckets,
log groups encrypted with the stack's key.

Every bucket that holds data (the lake, the EMR artifacts, the gateway archive) is TLS-only,
blocks public access, enforces bucket-owner object ownership, is versioned and logs its access
to the server-access-logs bucket under its own prefix; callers add encryption and lifecycle.
"""

from __future__ import annotations

from typing import Any

from aws_cdk import Aws
from aws_cdk import aws_iam as iam
from aws_cdk import aws_kms as kms
from aws_cdk import aws_logs as logs
from aws_cdk import aws_s3 as s3
from constructs import Construct

from emr_lineage.settings.model import EnvironmentSettings
from stacks.shared.settings_mapping import log_retention, removal_policy

# What CloudWatch Logs needs of a key to encrypt a log group with it, for the log groups of this account
# and region only: AWS's key policy statement, from "Encrypt log data in CloudWatch Logs using AWS KMS"
# (https://docs.aws.amazon.com/AmazonCloudWatch/latest/logs/encrypt-log-data-kms.html, step 2).
LOGS_KEY_ACTIONS = ("kms:Encrypt*", "kms:Decrypt*", "kms:ReEncrypt*", "kms:GenerateDataKey*", "kms:Describe*")


def rotating_key(
    scope: Construct,
    construct_id: str,
    *,
    settings: EnvironmentSettings,
    alias: str,
    description: str,
    log_groups: bool = False,
) -> kms.Key:
    """A customer-managed key with yearly rotation, aliased ``alias/<prefix>/<alias>``; with ``log_groups``,
    CloudWatch Logs may use it for this account's log groups in this region (:func:`encrypted_log_group`)."""
    key = kms.Key(
        scope,
        construct_id,
        alias=f"alias/{settings.resource_prefix}/{alias}",
        description=description,
        enable_key_rotation=True,
        removal_policy=removal_policy(settings),
    )
    if log_groups:
        key.add_to_resource_policy(
            iam.PolicyStatement(
                sid="CloudWatchLogsLogGroups",
                principals=[iam.ServicePrincipal(f"logs.{Aws.REGION}.amazonaws.com")],
                actions=list(LOGS_KEY_ACTIONS),
                resources=["*"],
                conditions={
                    "ArnLike": {
                        "kms:EncryptionContext:aws:logs:arn": (
                            f"arn:{Aws.PARTITION}:logs:{Aws.REGION}:{Aws.ACCOUNT_ID}:log-group:*"
                        )
                    }
                },
            )
        )
    return key


def encrypted_log_group(
    scope: Construct,
    construct_id: str,
    *,
    key: kms.IKey,
    settings: EnvironmentSettings,
    retention_days: int,
    **props: Any,
) -> logs.LogGroup:
    """A log group encrypted with ``key`` (made with ``log_groups=True``), kept ``retention_days`` and
    removed as the settings say; ``props`` add its name."""
    return logs.LogGroup(
        scope,
        construct_id,
        encryption_key=key,
        retention=log_retention(retention_days),
        removal_policy=removal_policy(settings),
        **props,
    )


def private_bucket(
    scope: Construct, construct_id: str, *, access_logs_bucket: s3.IBucket, access_logs_prefix: str, **props: Any
) -> s3.Bucket:
    """A versioned, TLS-only, private bucket logging its access; ``props`` add encryption, lifecycle..."""
    return s3.Bucket(
        scope,
        construct_id,
        enforce_ssl=True,
        versioned=True,
        block_public_access=s3.BlockPublicAccess.BLOCK_ALL,
        object_ownership=s3.ObjectOwnership.BUCKET_OWNER_ENFORCED,
        server_access_logs_bucket=access_logs_bucket,
        server_access_logs_prefix=access_logs_prefix,
        **props,
    )
