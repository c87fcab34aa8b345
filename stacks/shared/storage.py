"""The project's storage defaults, written once: KMS keys that rotate, private versioned buckets.

Every bucket that holds data (the lake, the EMR artifacts, the gateway archive) is TLS-only,
blocks public access, enforces bucket-owner object ownership, is versioned and logs its access
to the server-access-logs bucket under its own prefix; callers add encryption and lifecycle.
"""

from __future__ import annotations

from typing import Any

from aws_cdk import aws_kms as kms
from aws_cdk import aws_s3 as s3
from constructs import Construct

from emr_lineage.settings.model import EnvironmentSettings
from stacks.shared.settings_mapping import removal_policy


def rotating_key(
    scope: Construct, construct_id: str, *, settings: EnvironmentSettings, alias: str, description: str
) -> kms.Key:
    """A customer-managed key with yearly rotation, aliased ``alias/<prefix>/<alias>``."""
    return kms.Key(
        scope,
        construct_id,
        alias=f"alias/{settings.resource_prefix}/{alias}",
        description=description,
        enable_key_rotation=True,
        removal_policy=removal_policy(settings),
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
