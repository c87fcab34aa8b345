"""ServerAccessLogsBucket: destination of S3 server access logs for the stacks' buckets."""

from __future__ import annotations

from aws_cdk import Duration, RemovalPolicy
from aws_cdk import aws_s3 as s3
from constructs import Construct

from stacks.shared.nag import acknowledge


class ServerAccessLogsBucket(Construct):
    """SSL-only private bucket with expiring logs. SSE-S3: S3 log delivery cannot write SSE-KMS.

    Retained on stack deletion (logs are evidence). Exposes ``bucket``; other buckets pass it
    as ``server_access_logs_bucket`` and CDK adds the logging service's permission.
    """

    def __init__(self, scope: Construct, construct_id: str, *, retention_days: int) -> None:
        super().__init__(scope, construct_id)
        self.bucket = s3.Bucket(
            self,
            "Bucket",
            encryption=s3.BucketEncryption.S3_MANAGED,
            enforce_ssl=True,
            block_public_access=s3.BlockPublicAccess.BLOCK_ALL,
            object_ownership=s3.ObjectOwnership.BUCKET_OWNER_ENFORCED,
            lifecycle_rules=[s3.LifecycleRule(expiration=Duration.days(retention_days))],
            removal_policy=RemovalPolicy.RETAIN,
        )
        acknowledge(
            self.bucket,
            "AwsSolutions-S1",
            "This bucket is the server-access-log destination itself; logging it into itself would loop.",
        )
