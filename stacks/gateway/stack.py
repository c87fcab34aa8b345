"""GatewayStack: the lineage gateway between OpenLineage clients and Marquez.

The lineage load balancer's listener sends ``POST /api/v1/lineage`` (path and method) to the
ingest Lambda and refuses every other write; reads still go to Marquez, so clients keep their
URL (the routes: stacks/gateway/routing.py). The ingest function checks the API key (Secrets
Manager), size and shape, archives the raw body to a
KMS-encrypted, versioned bucket and enqueues the event on an SQS FIFO queue. The forwarder Lambda
consumes the queue (batches of 10, partial batch failures) and posts to Marquez; an event Marquez
refuses for good it sends to the FIFO dead-letter queue itself, and what it could not deliver
comes back after a backoff it sets; an event still undelivered after ``dead_letter_after_hours``
of that lands in the dead-letter queue too (its alarms, like every alarm, live in the monitoring
stack: stacks/monitoring).

The forwarder does not go through the lineage listener (its ``POST /api/v1/lineage`` rule would
loop back to the ingest): it calls a second listener of the same internal load balancer, on
:data:`FORWARD_LISTENER_PORT`, whose only action forwards to the Marquez API target group and
which only the forwarder's security group may reach. Marquez tasks have no stable address of
their own (Fargate, no service discovery); the load balancer's API target group is their one.

A stack of its own, after the network, lineage and data lake stacks: everything it adds to the
load balancer (listener rules, listener, security group ingress) lives here, so the lineage stack
never depends on it. Names of what the tools need are SSM parameters and outputs.
"""

from __future__ import annotations

from typing import Any

from aws_cdk import CfnOutput, Duration, Stack
from aws_cdk import aws_ec2 as ec2
from aws_cdk import aws_elasticloadbalancingv2 as elbv2
from aws_cdk import aws_iam as iam
from aws_cdk import aws_lambda as lambda_
from aws_cdk import aws_lambda_event_sources as event_sources
from aws_cdk import aws_s3 as s3
from aws_cdk import aws_secretsmanager as secretsmanager
from aws_cdk import aws_sqs as sqs
from aws_cdk import aws_ssm as ssm
from constructs import Construct

from emr_lineage.aws import parameters
from emr_lineage.gateway import config as gateway_env
from emr_lineage.settings.limits import SQS_MAX_MESSAGE_BYTES
from emr_lineage.settings.model import EnvironmentSettings
from stacks.gateway.asset import gateway_code
from stacks.gateway.routing import FORWARD_LISTENER_PORT, LINEAGE_PATH, forward_listener, route_lineage_posts
from stacks.shared.nag import acknowledge, acknowledge_checkov, wildcard_resource_finding
from stacks.shared.settings_mapping import removal_policy
from stacks.shared.storage import encrypted_log_group, private_bucket, rotating_key

FORWARD_BATCH_SIZE = 10  # the most an SQS FIFO event source takes
FORWARD_TIMEOUT_SECONDS = int(gateway_env.DEFAULT_FORWARD_TIMEOUT_SECONDS)
LAMBDA_MAX_TIMEOUT_SECONDS = 900
# AWS: a queue's visibility timeout at least six times the consuming function's timeout
# (https://docs.aws.amazon.com/lambda/latest/dg/services-sqs-configure.html).
VISIBILITY_TIMEOUT_FACTOR = 6
INGEST_TIMEOUT_SECONDS = 30
API_KEY_LENGTH = 48
ARCHIVE_IA_AFTER_DAYS = 30
ARCHIVE_NONCURRENT_EXPIRATION_DAYS = 30
RUNTIME = lambda_.Runtime.PYTHON_3_11


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


def max_receive_count(dead_letter_after_hours: int) -> int:
    """Receives before SQS dead-letters an event: enough for the forwarder's redelivery backoff
    (emr_lineage/gateway/config.py) to span ``dead_letter_after_hours`` of Marquez outage."""
    return gateway_env.receives_to_outlast(dead_letter_after_hours * 3600)


class GatewayStack(Stack):
    """Exposes ``key``, ``archive_bucket``, ``queue``, ``dead_letter_queue``, ``api_key``,
    ``ingest_function``, ``ingest_target_group``, ``ingest_rule``, ``deny_writes_rule``,
    ``forward_function``, ``forward_security_group`` and ``forward_listener``."""

    def __init__(
        self,
        scope: Construct,
        construct_id: str,
        *,
        settings: EnvironmentSettings,
        vpc: ec2.IVpc,
        listener: elbv2.IApplicationListener,
        load_balancer: elbv2.IApplicationLoadBalancer,
        marquez_api_target_group: elbv2.IApplicationTargetGroup,
        access_logs_bucket: s3.IBucket,
        **kwargs: Any,
    ) -> None:
        super().__init__(scope, construct_id, **kwargs)
        gateway = settings.gateway
        prefix = settings.resource_prefix

        self.key = rotating_key(
            self,
            "Key",
            settings=settings,
            alias="gateway",
            description=f"{prefix} lineage gateway: archive, queues, API key and logs",
            log_groups=True,
        )
        self.archive_bucket = private_bucket(
            self,
            "Archive",
            access_logs_bucket=access_logs_bucket,
            access_logs_prefix="gateway-archive/",
            encryption=s3.BucketEncryption.KMS,
            encryption_key=self.key,
            bucket_key_enabled=True,
            lifecycle_rules=[
                s3.LifecycleRule(
                    # S3 skips objects under 128 KiB by default (IA would bill them as 128 KiB).
                    transitions=[
                        s3.Transition(
                            storage_class=s3.StorageClass.INFREQUENT_ACCESS,
                            transition_after=Duration.days(ARCHIVE_IA_AFTER_DAYS),
                        )
                    ],
                    noncurrent_version_expiration=Duration.days(ARCHIVE_NONCURRENT_EXPIRATION_DAYS),
                    abort_incomplete_multipart_upload_after=Duration.days(7),
                )
            ],
            # Never auto-emptied: CloudFormation refuses to delete a non-empty bucket.
            removal_policy=removal_policy(settings),
        )

        forward_timeout = forwarder_timeout_seconds(gateway.forward_retries)
        self.dead_letter_queue = sqs.Queue(
            self,
            "DeadLetterQueue",
            queue_name=f"{prefix}-gateway-dlq.fifo",
            fifo=True,
            content_based_deduplication=False,
            encryption=sqs.QueueEncryption.KMS,
            encryption_master_key=self.key,
            enforce_ssl=True,
            retention_period=Duration.days(gateway.dead_letter_retention_days),
            # As large as the queue's: a dead-lettered event is the queued one, plus a few attributes.
            max_message_size_bytes=SQS_MAX_MESSAGE_BYTES,
            removal_policy=removal_policy(settings),
        )
        self.queue = sqs.Queue(
            self,
            "Queue",
            queue_name=f"{prefix}-gateway.fifo",
            fifo=True,
            # The ingest sets MessageDeduplicationId (a hash of the canonical event).
            content_based_deduplication=False,
            # High-throughput FIFO: order and deduplication per run (message group), not per queue.
            deduplication_scope=sqs.DeduplicationScope.MESSAGE_GROUP,
            fifo_throughput_limit=sqs.FifoThroughputLimit.PER_MESSAGE_GROUP_ID,
            encryption=sqs.QueueEncryption.KMS,
            encryption_master_key=self.key,
            enforce_ssl=True,
            # Set, not left to the default: the ingest accepts events up to max_event_bytes, which the
            # settings keep within this (SQS's largest message since 2025, limits.py).
            max_message_size_bytes=SQS_MAX_MESSAGE_BYTES,
            # Only when the forwarder itself dies or times out: otherwise it sets a shorter backoff.
            visibility_timeout=Duration.seconds(VISIBILITY_TIMEOUT_FACTOR * forward_timeout),
            dead_letter_queue=sqs.DeadLetterQueue(
                queue=self.dead_letter_queue, max_receive_count=max_receive_count(gateway.dead_letter_after_hours)
            ),
            removal_policy=removal_policy(settings),
        )
        self.api_key = secretsmanager.Secret(
            self,
            "ApiKey",
            description=f"{prefix} lineage gateway API key (clients send it as a Bearer token)",
            encryption_key=self.key,
            # Letters and digits only: it travels in an Authorization header.
            generate_secret_string=secretsmanager.SecretStringGenerator(
                password_length=API_KEY_LENGTH, exclude_punctuation=True, include_space=False
            ),
            removal_policy=removal_policy(settings),
        )
        acknowledge(
            self.api_key,
            "AwsSolutions-SMG4",
            "The API key is shared with the OpenLineage clients' configuration; rotating it means "
            "updating every client, so it is rotated on purpose (put a new value), not on a schedule.",
        )

        code = gateway_code()
        self.ingest_function = self._function(
            "Ingest",
            settings,
            code,
            description=f"{prefix} lineage gateway ingest (ALB POST {LINEAGE_PATH})",
            handler=gateway_env.INGEST_HANDLER,
            timeout=INGEST_TIMEOUT_SECONDS,
            environment={
                gateway_env.ARCHIVE_BUCKET: self.archive_bucket.bucket_name,
                gateway_env.QUEUE_URL: self.queue.queue_url,
                gateway_env.API_KEY_SECRET_ARN: self.api_key.secret_arn,
                gateway_env.MAX_EVENT_BYTES: str(gateway.max_event_bytes),
            },
        )
        self._grant_ingest(self.ingest_function)
        for check, reason in INGEST_CHECKOV_REASONS.items():
            acknowledge_checkov(self.ingest_function, check, reason)

        self.forward_security_group = ec2.SecurityGroup(
            self,
            "ForwardSecurityGroup",
            vpc=vpc,
            allow_all_outbound=False,
            description=f"{prefix} lineage gateway forwarder: the Marquez API listener and the SQS API",
        )
        # SQS has no VPC prefix list and the network stack no SQS endpoint: its regional endpoint
        # over HTTPS (TLS, IAM-signed), through the NAT gateway.
        self.forward_security_group.add_egress_rule(
            ec2.Peer.any_ipv4(), ec2.Port.tcp(HTTPS_PORT), "Gateway forwarder to the SQS API (HTTPS)"
        )
        self.forward_function = self._function(
            "Forward",
            settings,
            code,
            description=f"{prefix} lineage gateway forwarder (SQS FIFO -> Marquez)",
            handler=gateway_env.FORWARD_HANDLER,
            timeout=forward_timeout,
            vpc=vpc,
            vpc_subnets=ec2.SubnetSelection(subnet_type=ec2.SubnetType.PRIVATE_WITH_EGRESS),
            security_groups=[self.forward_security_group],
            environment={
                gateway_env.MARQUEZ_URL: f"http://{load_balancer.load_balancer_dns_name}:{FORWARD_LISTENER_PORT}",
                gateway_env.FORWARD_RETRIES: str(gateway.forward_retries),
                gateway_env.FORWARD_TIMEOUT_SECONDS: str(FORWARD_TIMEOUT_SECONDS),
                gateway_env.QUEUE_URL: self.queue.queue_url,
                gateway_env.DEAD_LETTER_QUEUE_URL: self.dead_letter_queue.queue_url,
            },
        )
        # Grants the function sqs:ReceiveMessage/DeleteMessage/ChangeMessageVisibility/... on the queue
        # and kms:Decrypt (the forwarder's backoff changes the visibility of what it could not deliver).
        self.forward_function.add_event_source(
            event_sources.SqsEventSource(self.queue, batch_size=FORWARD_BATCH_SIZE, report_batch_item_failures=True)
        )
        # It sends events Marquez refuses for good to the dead-letter queue (SSE-KMS: a data key to encrypt).
        self.forward_function.add_to_role_policy(
            iam.PolicyStatement(
                sid="DeadLetterRefusedEvents",
                actions=["sqs:SendMessage"],
                resources=[self.dead_letter_queue.queue_arn],
            )
        )
        self.forward_function.add_to_role_policy(
            iam.PolicyStatement(sid="EncryptDeadLetters", actions=["kms:GenerateDataKey"], resources=[self.key.key_arn])
        )
        for check, reason in FORWARD_CHECKOV_REASONS.items():
            acknowledge_checkov(self.forward_function, check, reason)
        self._acknowledge_lambda(self.forward_function, "service-role/AWSLambdaBasicExecutionRole", "its logs")
        self._acknowledge_lambda(
            self.forward_function, "service-role/AWSLambdaVPCAccessExecutionRole", "its network interfaces"
        )

        routes = route_lineage_posts(self, listener=listener, ingest_function=self.ingest_function)
        self.ingest_target_group = routes.ingest_target_group
        self.ingest_rule, self.deny_writes_rule = routes.ingest_rule, routes.deny_writes_rule
        self.forward_listener = forward_listener(
            self,
            load_balancer=load_balancer,
            api_target_group=marquez_api_target_group,
            security_group=self.forward_security_group,
        )
        self._publish(settings)

    @staticmethod
    def _lint_role_dependency(function: lambda_.Function) -> None:
        # CDK makes the function DependsOn its role, which its GetAtt already implies; cfn-lint W3005
        # flags that redundancy. Silenced on this one resource, as on the Marquez service (README, "Linting").
        function.node.default_child.add_metadata("cfn-lint", {"config": {"ignore_checks": ["W3005"]}})

    def _grant_ingest(self, function: lambda_.Function) -> None:
        """Exactly what the ingest does: put archive objects, send to the queue, read the API key."""
        function.add_to_role_policy(
            iam.PolicyStatement(
                sid="ArchiveEvents", actions=["s3:PutObject"], resources=[self.archive_bucket.arn_for_objects("*")]
            )
        )
        function.add_to_role_policy(
            iam.PolicyStatement(sid="EnqueueEvents", actions=["sqs:SendMessage"], resources=[self.queue.queue_arn])
        )
        # SSE-KMS objects and messages: a data key to encrypt with (Decrypt too, S3 multipart uploads).
        function.add_to_role_policy(
            iam.PolicyStatement(
                sid="EncryptEvents", actions=["kms:GenerateDataKey", "kms:Decrypt"], resources=[self.key.key_arn]
            )
        )
        self.api_key.grant_read(function)
        acknowledge(
            function,
            wildcard_resource_finding(function, self.archive_bucket.arn_for_objects("*")),
            "The ingest writes each event under a key of its date, hour and run, not known in advance; "
            "it may only put objects (no read, no delete) into the gateway's own archive bucket.",
        )
        self._acknowledge_lambda(function, "service-role/AWSLambdaBasicExecutionRole", "its logs")

    def _function(
        self, construct_id: str, settings: EnvironmentSettings, code: lambda_.Code, *, timeout: int, **props: Any
    ) -> lambda_.Function:
        """One of the gateway's two functions: same runtime, architecture, code, memory and logging."""
        function = lambda_.Function(
            self,
            construct_id,
            runtime=RUNTIME,
            architecture=lambda_.Architecture.ARM_64,
            code=code,
            memory_size=256,
            timeout=Duration.seconds(timeout),
            log_group=encrypted_log_group(
                self, f"{construct_id}Logs", key=self.key, settings=settings, retention_days=settings.log_retention_days
            ),
            # Nothing secret in either environment (the API key stays in Secrets Manager), but the key is
            # there: only principals allowed to use it can read the functions' settings.
            environment_encryption=self.key,
            **props,
        )
        # Lambda decrypts the environment with the execution role's rights on the key.
        self.key.grant_decrypt(function)
        self._lint_role_dependency(function)
        return function

    def _acknowledge_lambda(self, function: lambda_.Function, policy: str, what: str) -> None:
        acknowledge(
            function,
            f"AwsSolutions-IAM4[Policy::arn:<AWS::Partition>:iam::aws:policy/{policy}]",
            f"AWS's managed policy for a Lambda function's {what}; the gateway's own permissions are "
            "separate statements scoped to its bucket, queue, key and secret.",
        )
        acknowledge(
            function,
            "AwsSolutions-L1",
            "The gateway code is written and tested for Python 3.11, the project's runtime (pyproject, "
            "Makefile); a runtime upgrade goes with the project's.",
        )

    def _publish(self, settings: EnvironmentSettings) -> None:
        published = (
            ("ArchiveBucket", parameters.gateway_archive_bucket, self.archive_bucket.bucket_name, "archive bucket"),
            ("QueueUrl", parameters.gateway_queue_url, self.queue.queue_url, "FIFO queue URL"),
            (
                "DeadLetterQueueUrl",
                parameters.gateway_dead_letter_queue_url,
                self.dead_letter_queue.queue_url,
                "dead-letter queue URL",
            ),
            ("ApiKeySecretArn", parameters.gateway_api_key_secret, self.api_key.secret_arn, "API key secret ARN"),
        )
        for construct_id, name, value, what in published:
            ssm.StringParameter(
                self,
                f"{construct_id}Parameter",
                parameter_name=name(settings.name),
                string_value=value,
                description=f"emr-lineage lineage gateway {what}",
            )
            CfnOutput(self, f"Gateway{construct_id}", value=value, description=f"Lineage gateway {what}")
