"""AlbAccessLogsBucket: where the load balancer writes its access logs, in any region.

CDK's ``log_access_logs`` needs the region at synth time to pick the ELB log-delivery
principal, but emr-lineage stacks stay environment-agnostic when no region is configured.
So the bucket policy decides at deploy time: regions that predate August 2022 grant the
regional ELB account (from CDK's region table), newer ones the
``logdelivery.elasticloadbalancing.amazonaws.com`` service principal (ELB user guide).
"""

from __future__ import annotations

from aws_cdk import Aws, CfnCondition, CfnMapping, Fn
from aws_cdk import aws_elasticloadbalancingv2 as elbv2
from aws_cdk import aws_s3 as s3
from aws_cdk.region_info import RegionInfo
from constructs import Construct

from stacks.shared.server_access_logs_bucket import log_destination_bucket

NO_ELB_ACCOUNT = "none"
ELB_SERVICE_PRINCIPAL = "logdelivery.elasticloadbalancing.amazonaws.com"


class AlbAccessLogsBucket(Construct):
    """SSL-only private bucket (SSE-S3: ALB log delivery does not support SSE-KMS) with expiring logs.

    Retained on stack deletion: logs are evidence, and CloudFormation cannot delete a non-empty
    bucket anyway. Exposes ``bucket``; call :meth:`enable_for` once per load balancer.
    """

    def __init__(self, scope: Construct, construct_id: str, *, retention_days: int) -> None:
        super().__init__(scope, construct_id)
        # Its TLS-only statement is part of the bucket policy below (written at deploy time).
        self.bucket = log_destination_bucket(self, retention_days=retention_days, enforce_ssl=False, what="access-log")
        self._policy: s3.CfnBucketPolicy | None = None
        self._elb_principal = self._regional_elb_principal()

    def _regional_elb_principal(self) -> dict:
        mapping = CfnMapping(
            self,
            "ElbLogDeliveryAccount",
            mapping={region.name: {"account": region.elbv2_account or NO_ELB_ACCOUNT} for region in RegionInfo.regions},
        )
        account = mapping.find_in_map(Aws.REGION, "account")
        legacy_region = CfnCondition(
            self, "RegionHasElbAccount", expression=Fn.condition_not(Fn.condition_equals(account, NO_ELB_ACCOUNT))
        )
        account_root = Fn.join("", ["arn:", Aws.PARTITION, ":iam::", account, ":root"])
        return Fn.condition_if(legacy_region.logical_id, {"AWS": account_root}, {"Service": ELB_SERVICE_PRINCIPAL})

    def enable_for(self, load_balancer: elbv2.ApplicationLoadBalancer, *, prefix: str) -> None:
        """Turn on access logs of ``load_balancer`` into ``<prefix>/`` (one load balancer per bucket)."""
        if self._policy is not None:
            raise ValueError("AlbAccessLogsBucket serves one load balancer; create another bucket")
        statements = [
            {
                "Sid": "DenyInsecureTransport",
                "Effect": "Deny",
                "Principal": {"AWS": "*"},
                "Action": "s3:*",
                "Resource": [self.bucket.bucket_arn, self.bucket.arn_for_objects("*")],
                "Condition": {"Bool": {"aws:SecureTransport": "false"}},
            },
            {
                "Sid": "AllowElbLogDelivery",
                "Effect": "Allow",
                "Principal": self._elb_principal,
                "Action": "s3:PutObject",
                "Resource": self.bucket.arn_for_objects(f"{prefix}/AWSLogs/{Aws.ACCOUNT_ID}/*"),
            },
        ]
        self._policy = s3.CfnBucketPolicy(
            self,
            "Policy",
            bucket=self.bucket.bucket_name,
            policy_document={"Version": "2012-10-17", "Statement": statements},
        )
        load_balancer.set_attribute("access_logs.s3.enabled", "true")
        load_balancer.set_attribute("access_logs.s3.bucket", self.bucket.bucket_name)
        load_balancer.set_attribute("access_logs.s3.prefix", prefix)
        # The ALB checks it may write before it accepts the attributes.
        load_balancer.node.add_dependency(self._policy)
