"""The lake bucket and its key: made by the stack, or an existing bucket (``data_lake.existing_bucket``) imported
by name and never changed.

An imported bucket has no bucket policy CDK may write (``add_to_resource_policy`` adds nothing): every grant on
it goes to the grantee roles' identity policies, as the stacks write them anyway (stacks/emr/roles.py).
"""

from __future__ import annotations

from aws_cdk import Duration
from aws_cdk import aws_kms as kms
from aws_cdk import aws_s3 as s3
from constructs import Construct

from emr_lineage.settings.model import EnvironmentSettings
from stacks.shared.settings_mapping import removal_policy
from stacks.shared.storage import private_bucket, rotating_key


def lake_key(scope: Construct, *, settings: EnvironmentSettings) -> kms.IKey | None:
    """The key the lake's objects are encrypted with: a rotating key of the stack's, the existing bucket's
    key, or None (an existing bucket with SSE-S3)."""
    existing = settings.data_lake.existing_bucket
    if existing is None:
        return rotating_key(
            scope,
            "Key",
            settings=settings,
            alias="data-lake",
            description=f"{settings.resource_prefix} data lake encryption",
        )
    if existing.kms_key_arn is None:
        return None
    return kms.Key.from_key_arn(scope, "ExistingKey", existing.kms_key_arn)


def lake_bucket(
    scope: Construct, *, settings: EnvironmentSettings, key: kms.IKey | None, access_logs_bucket: s3.IBucket
) -> s3.IBucket:
    """The lake bucket: a new one encrypted with ``key``, logging to ``access_logs_bucket``, or the existing one."""
    lake = settings.data_lake
    if lake.existing_bucket is not None:
        return s3.Bucket.from_bucket_attributes(
            scope, "ExistingBucket", bucket_name=lake.existing_bucket.name, encryption_key=key
        )
    if key is None or lake.noncurrent_version_expiration_days is None:
        raise ValueError("the lake bucket the stack makes needs its key and noncurrent_version_expiration_days")
    return private_bucket(
        scope,
        "Bucket",
        access_logs_bucket=access_logs_bucket,
        access_logs_prefix="data-lake/",
        # CloudFormation's name: a bucket a destroy retains would block the next deploy under a fixed one.
        encryption=s3.BucketEncryption.KMS,
        encryption_key=key,
        bucket_key_enabled=True,
        lifecycle_rules=[
            s3.LifecycleRule(
                noncurrent_version_expiration=Duration.days(lake.noncurrent_version_expiration_days),
                abort_incomplete_multipart_upload_after=Duration.days(7),
            )
        ],
        # Never auto-emptied: CloudFormation refuses to delete a non-empty bucket, so data
        # survives even a `destroy` policy until someone empties it on purpose.
        removal_policy=removal_policy(settings),
    )
