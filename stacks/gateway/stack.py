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

from aws_cdk import Stack
from aws_cdk import aws_ec2 as ec2
from aws_cdk import aws_elasticloadbalancingv2 as elbv2
from aws_cdk import aws_iam as iam
from aws_cdk import aws_lambda as lambda_
from aws_cdk import aws_lambda_event_sources as event_sources
from aws_cdk import aws_s3 as s3
from constructs import Construct

from emr_lineage.aws import parameters
from emr_lineage.settings.model import EnvironmentSettings
from stacks.gateway.archive_catalog import ArchiveCatalog
from stacks.gateway.asset import gateway_code
from stacks.gateway.functions import FORWARD_BATCH_SIZE, ForwardFunction, IngestFunction, forwarder_timeout_seconds
from stacks.gateway.routing import FORWARD_LISTENER_PORT, forward_listener, route_lineage_posts
from stacks.gateway.spokes import SpokeIngest
from stacks.gateway.storage import (
    api_key_secret,
    archive_bucket,
    dead_letter_queue,
    event_queue,
    let_emr_serverless_decrypt,
    let_emr_serverless_read,
    let_spokes_read,
    spoke_key_secrets,
)
from stacks.shared.lake_formation import grant_one_at_a_time
from stacks.shared.nag import acknowledge, wildcard_resource_finding
from stacks.shared.published import publish
from stacks.shared.storage import rotating_key

# AWS: a queue's visibility timeout at least six times the consuming function's timeout
# (https://docs.aws.amazon.com/lambda/latest/dg/services-sqs-configure.html).
VISIBILITY_TIMEOUT_FACTOR = 6


class GatewayStack(Stack):
    """Exposes ``key``, ``archive_bucket``, ``archive_catalog`` (its Athena tables, workgroup and queries),
    ``queue``, ``dead_letter_queue``, ``api_key``, ``spoke_keys`` (spoke account -> its key's secret),
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
        grant_one_at_a_time(self)
        self.key = rotating_key(
            self,
            "Key",
            settings=settings,
            alias="gateway",
            description=f"{settings.resource_prefix} lineage gateway: archive, queues, API key and logs",
            log_groups=True,
        )
        self.archive_bucket = archive_bucket(
            self, settings=settings, key=self.key, access_logs_bucket=access_logs_bucket
        )
        self.dead_letter_queue = dead_letter_queue(self, settings=settings, key=self.key)
        self.queue = event_queue(
            self,
            settings=settings,
            key=self.key,
            dead_letters=self.dead_letter_queue,
            visibility_timeout_seconds=VISIBILITY_TIMEOUT_FACTOR
            * forwarder_timeout_seconds(settings.gateway.forward_retries),
        )
        self._api_keys(settings)
        # The archive as Athena tables, its workgroup and named queries, Lake Formation for its readers.
        self.archive_catalog = ArchiveCatalog(
            self, "ArchiveCatalog", settings=settings, bucket=self.archive_bucket, key=self.key
        )

        code = gateway_code()
        self.ingest_function = IngestFunction(
            self,
            "IngestFunction",
            settings=settings,
            code=code,
            key=self.key,
            archive_bucket_name=self.archive_bucket.bucket_name,
            queue_url=self.queue.queue_url,
            api_key_secret_arn=self.api_key.secret_arn,
            spoke_key_secret_arns={account: secret.secret_arn for account, secret in self.spoke_keys.items()},
        ).function
        self._grant_ingest(self.ingest_function)
        forwarder = ForwardFunction(
            self,
            "ForwardFunction",
            settings=settings,
            code=code,
            key=self.key,
            vpc=vpc,
            marquez_url=f"http://{load_balancer.load_balancer_dns_name}:{FORWARD_LISTENER_PORT}",
            queue_url=self.queue.queue_url,
            dead_letter_queue_url=self.dead_letter_queue.queue_url,
        )
        self.forward_function, self.forward_security_group = forwarder.function, forwarder.security_group
        self._grant_forward(self.forward_function)

        routes = route_lineage_posts(self, listener=listener, ingest_function=self.ingest_function)
        self.ingest_target_group = routes.ingest_target_group
        self.ingest_rule, self.deny_writes_rule = routes.ingest_rule, routes.deny_writes_rule
        self.forward_listener = forward_listener(
            self,
            load_balancer=load_balancer,
            api_target_group=marquez_api_target_group,
            security_group=self.forward_security_group,
        )
        self.spoke_ingest = self._spoke_ingest(settings, vpc, load_balancer)
        self._publish(settings)

    def _api_keys(self, settings: EnvironmentSettings) -> None:
        """The gateway's API key and one per spoke account, and who may read them besides the ingest."""
        self.api_key = api_key_secret(self, settings=settings, key=self.key)
        if settings.emr_serverless.enabled:
            let_emr_serverless_read(self.api_key)
        # Each spoke account reads its own (its ARN is published: _publish), and so do its EMR Serverless
        # job runs, in whatever region the spoke is.
        self.spoke_keys = spoke_key_secrets(self, settings=settings, key=self.key)
        let_spokes_read(self.spoke_keys, self.key)
        for account, secret in self.spoke_keys.items():
            let_emr_serverless_read(secret, account=account, region="*")
        if settings.emr_serverless.enabled or self.spoke_keys:
            let_emr_serverless_decrypt(self.key)

    def _spoke_ingest(
        self, settings: EnvironmentSettings, vpc: ec2.IVpc, load_balancer: elbv2.IApplicationLoadBalancer
    ) -> SpokeIngest | None:
        """The ingest published to gateway.spoke_accounts (PrivateLink), when there are any."""
        if not settings.gateway.spoke_accounts:
            return None
        return SpokeIngest(
            self,
            "SpokeIngest",
            settings=settings,
            vpc=vpc,
            load_balancer=load_balancer,
            load_balancer_security_group_id=load_balancer.connections.security_groups[0].security_group_id,
            ingest_target_group=self.ingest_target_group,
        )

    def _grant_ingest(self, function: lambda_.Function) -> None:
        """Exactly what the ingest does: put archive objects, send to the queue, read the API keys."""
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
        for secret in self.spoke_keys.values():
            secret.grant_read(function)
        acknowledge(
            function,
            wildcard_resource_finding(function, self.archive_bucket.arn_for_objects("*")),
            "The ingest writes each event under a key of its date, hour and run, not known in advance; "
            "it may only put objects (no read, no delete) into the gateway's own archive bucket.",
        )

    def _grant_forward(self, function: lambda_.Function) -> None:
        """Exactly what the forwarder does: consume the queue, send refused events to the dead-letter queue."""
        # Grants the function sqs:ReceiveMessage/DeleteMessage/ChangeMessageVisibility/... on the queue
        # and kms:Decrypt (the forwarder's backoff changes the visibility of what it could not deliver).
        function.add_event_source(
            event_sources.SqsEventSource(self.queue, batch_size=FORWARD_BATCH_SIZE, report_batch_item_failures=True)
        )
        # It sends events Marquez refuses for good to the dead-letter queue (SSE-KMS: a data key to encrypt).
        function.add_to_role_policy(
            iam.PolicyStatement(
                sid="DeadLetterRefusedEvents",
                actions=["sqs:SendMessage"],
                resources=[self.dead_letter_queue.queue_arn],
            )
        )
        function.add_to_role_policy(
            iam.PolicyStatement(sid="EncryptDeadLetters", actions=["kms:GenerateDataKey"], resources=[self.key.key_arn])
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
            (
                "AthenaWorkgroup",
                parameters.gateway_athena_workgroup,
                self.archive_catalog.workgroup.ref,
                "archive's Athena workgroup",
            ),
            (
                "ArchiveDatabase",
                parameters.gateway_archive_database,
                self.archive_catalog.database_name,
                "archive's Glue database",
            ),
            (
                "AthenaResults",
                parameters.gateway_athena_results,
                self.archive_catalog.results_location,
                "archive's Athena results location",
            ),
        )
        if self.spoke_ingest:
            service = self.spoke_ingest.service.vpc_endpoint_service_name
            published += (
                (
                    "EndpointServiceName",
                    parameters.gateway_endpoint_service_name,
                    service,
                    "endpoint service for spokes",
                ),
            )
        for account, secret in self.spoke_keys.items():
            published += (
                (
                    f"SpokeKeySecretArn{account}",
                    lambda env, account=account: parameters.gateway_spoke_key_secret(env, account),
                    secret.secret_arn,
                    f"API key secret ARN of spoke account {account}",
                ),
            )
        for construct_id, name, value, what in published:
            publish(
                self,
                parameter_id=f"{construct_id}Parameter",
                parameter_name=name(settings.name),
                value=value,
                description=f"emr-lineage lineage gateway {what}",
                output_id=f"Gateway{construct_id}",
                output_description=f"Lineage gateway {what}",
            )
