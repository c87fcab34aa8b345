"""ArtifactsBucket: bootstrap scripts, job code, the listener jar and EMR logs, in one bucket."""

from __future__ import annotations

from pathlib import Path

from aws_cdk import Aws, Duration, RemovalPolicy, Stack
from aws_cdk import aws_s3 as s3
from aws_cdk import aws_s3_deployment as s3deploy
from constructs import Construct

from emr_lineage.aws.artifacts import BOOTSTRAP_PREFIX, JOBS_PREFIX, LOGS_PREFIX
from stacks.shared.nag import acknowledge, acknowledge_cdk_provider, wildcard_resource_finding
from stacks.shared.storage import private_bucket

# stacks/emr/artifacts_bucket.py -> the checkout, whose bootstrap/ and jobs/ are uploaded.
REPO_ROOT = Path(__file__).resolve().parents[2]


class ArtifactsBucket(Construct):
    """Private, SSL-only, versioned bucket; the stack uploads ``bootstrap/`` and ``jobs/`` into it.

    Exposes ``bucket``. Retained on deletion: it holds the EMR logs of past runs.
    """

    def __init__(
        self, scope: Construct, construct_id: str, *, access_logs_bucket: s3.IBucket, log_retention_days: int
    ) -> None:
        super().__init__(scope, construct_id)
        self.bucket = private_bucket(
            self,
            "Bucket",
            access_logs_bucket=access_logs_bucket,
            access_logs_prefix="emr-artifacts/",
            encryption=s3.BucketEncryption.S3_MANAGED,
            lifecycle_rules=[
                s3.LifecycleRule(prefix=LOGS_PREFIX, expiration=Duration.days(log_retention_days)),
                s3.LifecycleRule(noncurrent_version_expiration=Duration.days(30)),
            ],
            removal_policy=RemovalPolicy.RETAIN,
        )
        for prefix, folder in ((BOOTSTRAP_PREFIX, "bootstrap"), (JOBS_PREFIX, "jobs")):
            s3deploy.BucketDeployment(
                self,
                f"Deploy-{folder}",
                sources=[s3deploy.Source.asset(str(REPO_ROOT / folder), exclude=["__pycache__", "*.pyc"])],
                destination_bucket=self.bucket,
                destination_key_prefix=prefix,
                # Only this prefix is synchronised; the listener and logs are never touched.
                prune=True,
                retain_on_delete=False,
            )
        self._acknowledge_deployment_provider()

    def _acknowledge_deployment_provider(self) -> None:
        """BucketDeployment's Lambda is a stack-level singleton that CDK owns; its findings are CDK's."""
        stack = Stack.of(self)
        provider = next(c for c in stack.node.children if c.node.id.startswith("Custom::CDKBucketDeployment"))
        acknowledge(
            provider,
            "AwsSolutions-IAM4[Policy::arn:<AWS::Partition>:iam::aws:policy/service-role/AWSLambdaBasicExecutionRole]",
            "CDK's BucketDeployment provider logs through the basic execution managed policy; CDK owns this role.",
        )
        for action in ("s3:GetObject*", "s3:GetBucket*", "s3:List*", "s3:DeleteObject*", "s3:Abort*"):
            acknowledge(
                provider,
                f"AwsSolutions-IAM5[Action::{action}]",
                "CDK's BucketDeployment copies and prunes asset files; it grants itself these actions on the "
                "CDK assets bucket and the artifacts bucket only.",
            )
        acknowledge(
            provider,
            # The bootstrap bucket's name holds the account and region: literal in a stack with an environment.
            wildcard_resource_finding(
                self, f"arn:{Aws.PARTITION}:s3:::cdk-hnb659fds-assets-{stack.account}-{stack.region}/*"
            ),
            "CDK's BucketDeployment reads the zipped bootstrap/ and jobs/ assets from the CDK bootstrap bucket.",
        )
        acknowledge(
            provider,
            wildcard_resource_finding(self, self.bucket.arn_for_objects("*")),
            "CDK's BucketDeployment writes and prunes the bootstrap/ and jobs/ prefixes of the artifacts bucket.",
        )
        acknowledge_cdk_provider(
            provider, name="BucketDeployment", does="copies the bootstrap/ and jobs/ assets between two S3 buckets"
        )
