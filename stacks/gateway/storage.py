"""The gateway's stateful resources: the archive bucket, the FIFO queue and its dead-letter queue, the API
key, and one API key per spoke account.

Functions on the stack's scope, not constructs, so they keep the logical ids they were first deployed
with (a bucket, queue or secret renamed would be replaced, and its content lost). Their names are
CloudFormation's: what a destroy retains would otherwise block the next deploy ("already exists").
The spokes' secrets are the exception: named, since another account's team configures them, and so
deleted with the stack (a redeploy issues new keys under the same names).
"""

from __future__ import annotations

from aws_cdk import Aws, Duration, RemovalPolicy
from aws_cdk import aws_iam as iam
from aws_cdk import aws_kms as kms
from aws_cdk import aws_s3 as s3
from aws_cdk import aws_secretsmanager as secretsmanager
from aws_cdk import aws_sqs as sqs
from constructs import Construct

from emr_lineage.gateway import config as gateway_env
from emr_lineage.settings.limits import SQS_MAX_MESSAGE_BYTES
from emr_lineage.settings.model import EnvironmentSettings
from stacks.shared import emr_serverless
from stacks.shared.kms import SECRET_READ_ACTIONS, via_service
from stacks.shared.nag import acknowledge
from stacks.shared.settings_mapping import removal_policy
from stacks.shared.storage import private_bucket

API_KEY_LENGTH = 48
ARCHIVE_IA_AFTER_DAYS = 30
ARCHIVE_NONCURRENT_EXPIRATION_DAYS = 30
ATHENA_RESULTS_PREFIX = "athena-results/"
ATHENA_RESULTS_EXPIRATION_DAYS = 7


def max_receive_count(dead_letter_after_hours: int) -> int:
    """Receives before SQS dead-letters an event: enough for the forwarder's redelivery backoff
    (emr_lineage/gateway/config.py) to span ``dead_letter_after_hours`` of Marquez outage."""
    return gateway_env.receives_to_outlast(dead_letter_after_hours * 3600)


def archive_bucket(
    scope: Construct, *, settings: EnvironmentSettings, key: kms.IKey, access_logs_bucket: s3.IBucket
) -> s3.Bucket:
    """The raw events, under ``key``; infrequent access after a month, old versions expire."""
    return private_bucket(
        scope,
        "Archive",
        access_logs_bucket=access_logs_bucket,
        access_logs_prefix="gateway-archive/",
        encryption=s3.BucketEncryption.KMS,
        encryption_key=key,
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
            ),
            # Athena's query results (the archive workgroup's, stacks/gateway/archive_catalog.py) are copies.
            s3.LifecycleRule(prefix=ATHENA_RESULTS_PREFIX, expiration=Duration.days(ATHENA_RESULTS_EXPIRATION_DAYS)),
        ],
        # Never auto-emptied: CloudFormation refuses to delete a non-empty bucket.
        removal_policy=removal_policy(settings),
    )


def dead_letter_queue(scope: Construct, *, settings: EnvironmentSettings, key: kms.IKey) -> sqs.Queue:
    """The FIFO queue of events Marquez refused for good or that stayed undelivered too long."""
    return sqs.Queue(
        scope,
        "DeadLetterQueue",
        fifo=True,
        content_based_deduplication=False,
        encryption=sqs.QueueEncryption.KMS,
        encryption_master_key=key,
        enforce_ssl=True,
        retention_period=Duration.days(settings.gateway.dead_letter_retention_days),
        # As large as the queue's: a dead-lettered event is the queued one, plus a few attributes.
        max_message_size_bytes=SQS_MAX_MESSAGE_BYTES,
        removal_policy=removal_policy(settings),
    )


def event_queue(
    scope: Construct,
    *,
    settings: EnvironmentSettings,
    key: kms.IKey,
    dead_letters: sqs.IQueue,
    visibility_timeout_seconds: int,
) -> sqs.Queue:
    """The FIFO queue between the ingest and the forwarder, ordered per run (message group)."""
    return sqs.Queue(
        scope,
        "Queue",
        fifo=True,
        # The ingest sets MessageDeduplicationId (a hash of the canonical event).
        content_based_deduplication=False,
        # High-throughput FIFO: order and deduplication per run (message group), not per queue.
        deduplication_scope=sqs.DeduplicationScope.MESSAGE_GROUP,
        fifo_throughput_limit=sqs.FifoThroughputLimit.PER_MESSAGE_GROUP_ID,
        encryption=sqs.QueueEncryption.KMS,
        encryption_master_key=key,
        enforce_ssl=True,
        # Set, not left to the default: the ingest accepts events up to max_event_bytes, which the
        # settings keep within this (SQS's largest message since 2025, limits.py).
        max_message_size_bytes=SQS_MAX_MESSAGE_BYTES,
        # Only when the forwarder itself dies or times out: otherwise it sets a shorter backoff.
        visibility_timeout=Duration.seconds(visibility_timeout_seconds),
        dead_letter_queue=sqs.DeadLetterQueue(
            queue=dead_letters, max_receive_count=max_receive_count(settings.gateway.dead_letter_after_hours)
        ),
        removal_policy=removal_policy(settings),
    )


def _generated_key(
    scope: Construct, construct_id: str, *, key: kms.IKey, description: str, **props: object
) -> secretsmanager.Secret:
    """A secret holding a key that clients send as a Bearer token, generated by Secrets Manager."""
    return secretsmanager.Secret(
        scope,
        construct_id,
        description=description,
        encryption_key=key,
        # Letters and digits only: it travels in an Authorization header. No template (JSON): EMR
        # Serverless job runs get the secret's whole string as the key.
        generate_secret_string=secretsmanager.SecretStringGenerator(
            password_length=API_KEY_LENGTH, exclude_punctuation=True, include_space=False
        ),
        **props,
    )


def api_key_secret(scope: Construct, *, settings: EnvironmentSettings, key: kms.IKey) -> secretsmanager.Secret:
    """The key clients send as a Bearer token: letters and digits, rotated on purpose only."""
    secret = _generated_key(
        scope,
        "ApiKey",
        key=key,
        description=f"{settings.resource_prefix} lineage gateway API key (clients send it as a Bearer token)",
        removal_policy=removal_policy(settings),
    )
    acknowledge(
        secret,
        "AwsSolutions-SMG4",
        "The API key is shared with the OpenLineage clients' configuration; rotating it means "
        "updating every client, so it is rotated on purpose (put a new value), not on a schedule.",
    )
    return secret


def spoke_key_secret_name(settings: EnvironmentSettings, account: str) -> str:
    """``<resource prefix>/gateway/spokes/<account>``: the name of a spoke account's key."""
    return f"{settings.resource_prefix}/gateway/spokes/{account}"


def spoke_key_secrets(
    scope: Construct, *, settings: EnvironmentSettings, key: kms.IKey
) -> dict[str, secretsmanager.Secret]:
    """Each spoke account's key (``gateway.spoke_accounts``), by account: generated as the gateway's own,
    under ``key`` (a customer-managed key: the only kind another account may decrypt with)."""
    secrets = {}
    for account in settings.gateway.spoke_accounts:
        secret = _generated_key(
            scope,
            f"SpokeKey{account}",
            key=key,
            description=f"{settings.resource_prefix} lineage gateway API key of spoke account {account}",
            secret_name=spoke_key_secret_name(settings, account),
            # Named: retained, it would block that name at the next deploy; a new deploy issues new keys.
            removal_policy=RemovalPolicy.DESTROY,
        )
        acknowledge(
            secret,
            "AwsSolutions-SMG4",
            "A spoke account's key is in that account's OpenLineage clients' configuration; rotating it means "
            "updating them, so it is rotated on purpose (put a new value), not on a schedule.",
        )
        secrets[account] = secret
    return secrets


def let_spokes_read(secrets: dict[str, secretsmanager.Secret], key: kms.Key) -> None:
    """Each spoke account may read its own key's secret, cross-account as
    https://docs.aws.amazon.com/secretsmanager/latest/userguide/auth-and-access_examples_cross.html asks:
    the secret's policy lets that account's principals read it, and the key's policy lets the spoke
    accounts decrypt through Secrets Manager only (so only what a secret's policy lets them read: their
    own key). Their own IAM policies must allow both too."""
    principals = {account: iam.ArnPrincipal(f"arn:{Aws.PARTITION}:iam::{account}:root") for account in secrets}
    for account, secret in secrets.items():
        secret.add_to_resource_policy(
            iam.PolicyStatement(
                sid="SpokeAccountReadsItsKey",
                principals=[principals[account]],
                actions=list(SECRET_READ_ACTIONS),
                resources=["*"],
            )
        )
    if principals:
        key.add_to_resource_policy(
            iam.PolicyStatement(
                sid="SpokeAccountsDecryptTheirKeys",
                principals=list(principals.values()),
                actions=["kms:Decrypt", "kms:DescribeKey"],
                resources=["*"],
                conditions={"StringEquals": via_service("secretsmanager")},
            )
        )


def let_emr_serverless_read(
    secret: secretsmanager.Secret, *, account: str = Aws.ACCOUNT_ID, region: str = Aws.REGION
) -> None:
    """EMR Serverless reads the secret itself when a job run that names it (``EMR.secret@<ARN>``) starts:
    the secret's policy lets ``account``'s applications in ``region`` read it (default: this account's and
    region's; a spoke account's in any region, for its key), as
    https://docs.aws.amazon.com/emr/latest/EMR-Serverless-UserGuide/secrets-manager.html asks; with
    :func:`let_emr_serverless_decrypt` on its key. Any application of the account: naming the EMR stack's
    would make it a gateway -> EMR reference."""
    secret.add_to_resource_policy(
        iam.PolicyStatement(
            sid="EmrServerlessJobRuns",
            principals=[iam.ServicePrincipal(emr_serverless.SERVICE_PRINCIPAL)],
            actions=list(SECRET_READ_ACTIONS),
            resources=["*"],
            conditions={
                "StringEquals": {"aws:SourceAccount": account},
                "ArnLike": {"aws:SourceArn": emr_serverless.applications_arn(account, region)},
            },
        )
    )


def let_emr_serverless_decrypt(key: kms.Key) -> None:
    """Once per key: EMR Serverless may decrypt through Secrets Manager only; the secrets' policies decide
    which (naming a secret in the key's policy would be a cycle: the secret is encrypted with the key)."""
    key.add_to_resource_policy(
        iam.PolicyStatement(
            sid="EmrServerlessJobRunsApiKey",
            principals=[iam.ServicePrincipal(emr_serverless.SERVICE_PRINCIPAL)],
            actions=["kms:Decrypt", "kms:DescribeKey"],
            resources=["*"],
            conditions={"StringEquals": via_service("secretsmanager")},
        )
    )
