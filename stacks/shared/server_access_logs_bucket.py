"""ServerAccessLogsBucket: destination of S3 server access logs for the stacks' buckets."""

from __future__ import annotations

from aws_cdk import Duration, RemovalPolicy
from aws_cdk import aws_s3 as s3
from constructs import Construct

from stacks.shared.nag import acknowledge, acknowledge_checkov

# Versioned, so a log deleted or overwritten (by hand or by an intruder covering tracks) stays
# recoverable this long; a log that expires after its retention is gone this long after too.
DELETED_LOGS_KEPT_DAYS = 30


def log_destination_bucket(scope: Construct, *, retention_days: int, enforce_ssl: bool, what: str) -> s3.Bucket:
    """A private, versioned bucket that receives ``what`` logs: SSE-S3 (log delivery cannot write SSE-KMS),
    expiring after ``retention_days``, retained on stack deletion (logs are evidence)."""
    bucket = s3.Bucket(
        scope,
        "Bucket",
        encryption=s3.BucketEncryption.S3_MANAGED,
        enforce_ssl=enforce_ssl,
        block_public_access=s3.BlockPublicAccess.BLOCK_ALL,
        object_ownership=s3.ObjectOwnership.BUCKET_OWNER_ENFORCED,
        versioned=True,
        lifecycle_rules=[
            s3.LifecycleRule(
                expiration=Duration.days(retention_days),
                noncurrent_version_expiration=Duration.days(DELETED_LOGS_KEPT_DAYS),
            )
        ],
        removal_policy=RemovalPolicy.RETAIN,
    )
    loop = f"This bucket is the {what} destination itself; logging it into itself would loop."
    acknowledge(bucket, "AwsSolutions-S1", loop)
    acknowledge_checkov(bucket, "CKV_AWS_18", loop)
    return bucket


class ServerAccessLogsBucket(Construct):
    """SSL-only private bucket with expiring logs. SSE-S3: S3 log delivery cannot write SSE-KMS.

    Retained on stack deletion (logs are evidence). Exposes ``bucket``; other buckets pass it
    as ``server_access_logs_bucket`` and CDK adds the logging service's permission.
    """

    def __init__(self, scope: Construct, construct_id: str, *, retention_days: int) -> None:
        super().__init__(scope, construct_id)
        self.bucket = log_destination_bucket(
            self, retention_days=retention_days, enforce_ssl=True, what="server-access-log"
        )
