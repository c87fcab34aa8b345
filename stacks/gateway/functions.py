"""The gateway's two Lambda functions, the ingest and the forwarder: same runtime, architecture, code,
memory and logging; their permissions on the bucket, queues and secret are granted by GatewayStack."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from aws_cdk import Aws, Duration, Stack
from aws_cdk import aws_ec2 as ec2
from aws_cdk import aws_kms as kms
from aws_cdk import aws_lambda as lambda_
from constructs import Construct

from emr_lineage.gateway import config as gateway_env
from emr_lineage.settings.model import EnvironmentSettings
from stacks.gateway.routing import LINEAGE_PATH
from stacks.shared.logical_ids import keep_logical_ids
from stacks.shared.nag import acknowledge, acknowledge_cfn_lint, acknowledge_checkov
from stacks.shared.storage import encrypted_log_group

FORWARD_BATCH_SIZE = 10  # the most an SQS FIFO event source takes
FORWARD_TIMEOUT_SECONDS = int(gateway_env.DEFAULT_FORWARD_TIMEOUT_SECONDS)
LAMBDA_MAX_TIMEOUT_SECONDS = 900
INGEST_TIMEOUT_SECONDS = 30
RUNTIME = getattr(lambda_.Runtime, "PYTHON_" + gateway_env.LAMBDA_PYTHON.replace(".", "_"))
ARCHITECTURE = {"arm64": lambda_.Architecture.ARM_64, "x86_64": lambda_.Architecture.X86_64}[
    gateway_env.LAMBDA_ARCHITECTURE
]
HTTPS_PORT = 443  # the forwarder's SQS calls (dead-letter sends, visibility changes)

# checkov's findings on the functions that would be wrong to fix here. Lambda's dead-letter queue takes
# failed asynchronous invocations only (https://docs.aws.amazon.com/lambda/latest/dg/invocation-async-retain-records.html);
# a reserved concurrency caps the function too, and Lambda keeps 100 of the account's concurrency unreserved
# (https://docs.aws.amazon.com/lambda/latest/dg/configuring-concurrency.html); an SQS event source throttled by
# it returns batches to the queue (https://docs.aws.amazon.com/lambda/latest/dg/services-sqs-scaling.html).
INGEST_CHECKOV_REASONS = {
    "CKV_AWS_116": "The ALB invokes the ingest synchronously and hands its answer to the client; there are no "
    "asynchronous invocations for a Lambda dead-letter queue to catch.",
    "CKV_AWS_115": "A reserved concurrency would cap the ingest (a burst above it gets 503s: lineage lost for "
    "clients that do not retry) and cannot be deployed in accounts with a low concurrency quota.",
    "CKV_AWS_117": "The ingest reaches nothing in the VPC: it calls S3, SQS and Secrets Manager, scoped by its role; "
    "in the VPC it would need NAT or endpoints for them and gain no control.",
}
FORWARD_CHECKOV_REASONS = {
    "CKV_AWS_116": "An SQS event source invokes the forwarder synchronously; undelivered events go to the queue's own "
    "FIFO dead-letter queue (its redrive policy), which a Lambda dead-letter queue would not see.",
    "CKV_AWS_115": "A reserved concurrency below the event source's scaling throttles its batches back to the queue, "
    "counting toward maxReceiveCount (events dead-lettered early); FIFO message groups already bound it.",
}


def forwarder_timeout_seconds(retries: int) -> int:
    """Room for a full batch of events, each tried ``retries + 1`` times (capped at Lambda's 15 min)."""
    return min(LAMBDA_MAX_TIMEOUT_SECONDS, FORWARD_BATCH_SIZE * (retries + 1) * FORWARD_TIMEOUT_SECONDS + 30)


def gateway_function(
    scope: Construct,
    construct_id: str,
    *,
    settings: EnvironmentSettings,
    code: lambda_.Code,
    key: kms.IKey,
    timeout: int,
    **props: Any,
) -> lambda_.Function:
    """One of the gateway's two functions: same runtime, architecture, code, memory and logging."""
    function = lambda_.Function(
        scope,
        construct_id,
        runtime=RUNTIME,
        architecture=ARCHITECTURE,
        code=code,
        memory_size=256,
        timeout=Duration.seconds(timeout),
        log_group=encrypted_log_group(
            scope, f"{construct_id}Logs", key=key, settings=settings, retention_days=settings.log_retention_days
        ),
        # Nothing secret in either environment (the API key stays in Secrets Manager), but the key is
        # there: only principals allowed to use it can read the functions' settings.
        environment_encryption=key,
        **props,
    )
    # Lambda decrypts the environment with the execution role's rights on the key.
    key.grant_decrypt(function)
    acknowledge_cfn_lint(
        function, "W3005", "CDK makes the function DependsOn its role, which its GetAtt already implies"
    )
    return function


def acknowledge_managed_policy(function: lambda_.Function, policy: str, what: str) -> None:
    """cdk-nag's findings on AWS's managed policy ``policy`` of a gateway function and on its runtime."""
    acknowledge(
        function,
        f"AwsSolutions-IAM4[Policy::arn:<AWS::Partition>:iam::aws:policy/{policy}]",
        f"AWS's managed policy for a Lambda function's {what}; the gateway's own permissions are "
        "separate statements scoped to its bucket, queue, key and secret.",
    )
    acknowledge(
        function,
        "AwsSolutions-L1",
        f"The gateway runs on Python {gateway_env.LAMBDA_PYTHON} (Amazon Linux 2023), the version its "
        "packages are downloaded for (stacks/gateway/packages.py); a runtime upgrade goes with theirs.",
    )


class IngestFunction(Construct):
    """The ingest Lambda behind the load balancer's lineage route; exposes ``function``."""

    def __init__(
        self,
        scope: Construct,
        construct_id: str,
        *,
        settings: EnvironmentSettings,
        code: lambda_.Code,
        key: kms.IKey,
        archive_bucket_name: str,
        queue_url: str,
        api_key_secret_arn: str,
        spoke_key_secret_arns: Mapping[str, str],
    ) -> None:
        super().__init__(scope, construct_id)
        keep_logical_ids(self)  # first deployed directly in the stack
        self.function = gateway_function(
            self,
            "Ingest",
            settings=settings,
            code=code,
            key=key,
            description=f"{settings.resource_prefix} lineage gateway ingest (ALB POST {LINEAGE_PATH})",
            handler=gateway_env.INGEST_HANDLER,
            timeout=INGEST_TIMEOUT_SECONDS,
            environment={
                gateway_env.ARCHIVE_BUCKET: archive_bucket_name,
                gateway_env.QUEUE_URL: queue_url,
                gateway_env.API_KEY_SECRET_ARN: api_key_secret_arn,
                gateway_env.MAX_EVENT_BYTES: str(settings.gateway.max_event_bytes),
                gateway_env.GATEWAY_ACCOUNT: Aws.ACCOUNT_ID,
                gateway_env.SPOKE_KEY_SECRETS: Stack.of(self).to_json_string(dict(spoke_key_secret_arns)),
            },
        )
        for check, reason in INGEST_CHECKOV_REASONS.items():
            acknowledge_checkov(self.function, check, reason)
        acknowledge_managed_policy(self.function, "service-role/AWSLambdaBasicExecutionRole", "logs")


class ForwardFunction(Construct):
    """The forwarder Lambda (SQS FIFO -> Marquez) in the VPC with its security group; exposes ``function``
    and ``security_group``."""

    def __init__(
        self,
        scope: Construct,
        construct_id: str,
        *,
        settings: EnvironmentSettings,
        code: lambda_.Code,
        key: kms.IKey,
        vpc: ec2.IVpc,
        marquez_url: str,
        queue_url: str,
        dead_letter_queue_url: str,
    ) -> None:
        super().__init__(scope, construct_id)
        keep_logical_ids(self)  # first deployed directly in the stack
        prefix = settings.resource_prefix
        self.security_group = ec2.SecurityGroup(
            self,
            "ForwardSecurityGroup",
            vpc=vpc,
            allow_all_outbound=False,
            description=f"{prefix} lineage gateway forwarder: the Marquez API listener and the SQS API",
        )
        # SQS has no VPC prefix list and the network stack no SQS endpoint: its regional endpoint
        # over HTTPS (TLS, IAM-signed), through the NAT gateway.
        self.security_group.add_egress_rule(
            ec2.Peer.any_ipv4(), ec2.Port.tcp(HTTPS_PORT), "Gateway forwarder to the SQS API (HTTPS)"
        )
        self.function = gateway_function(
            self,
            "Forward",
            settings=settings,
            code=code,
            key=key,
            description=f"{prefix} lineage gateway forwarder (SQS FIFO -> Marquez)",
            handler=gateway_env.FORWARD_HANDLER,
            timeout=forwarder_timeout_seconds(settings.gateway.forward_retries),
            vpc=vpc,
            vpc_subnets=ec2.SubnetSelection(subnet_type=ec2.SubnetType.PRIVATE_WITH_EGRESS),
            security_groups=[self.security_group],
            environment={
                gateway_env.MARQUEZ_URL: marquez_url,
                gateway_env.FORWARD_RETRIES: str(settings.gateway.forward_retries),
                gateway_env.FORWARD_TIMEOUT_SECONDS: str(FORWARD_TIMEOUT_SECONDS),
                gateway_env.QUEUE_URL: queue_url,
                gateway_env.DEAD_LETTER_QUEUE_URL: dead_letter_queue_url,
            },
        )
        for check, reason in FORWARD_CHECKOV_REASONS.items():
            acknowledge_checkov(self.function, check, reason)
        acknowledge_managed_policy(self.function, "service-role/AWSLambdaBasicExecutionRole", "logs")
        acknowledge_managed_policy(self.function, "service-role/AWSLambdaVPCAccessExecutionRole", "network interfaces")
