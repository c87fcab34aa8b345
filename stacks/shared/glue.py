"""ARNs of this account's Glue Data Catalog, built once."""

from __future__ import annotations

from aws_cdk import Aws


def glue_arn(resource: str) -> str:
    """``arn:<partition>:glue:<region>:<account>:<resource>``: ``catalog``, ``database/<name>``,
    ``table/<database>/<name>``."""
    return f"arn:{Aws.PARTITION}:glue:{Aws.REGION}:{Aws.ACCOUNT_ID}:{resource}"
