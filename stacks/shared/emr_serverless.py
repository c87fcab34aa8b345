"""EMR Serverless as a principal: its service principal and the ARNs of this account's applications
(the EMR stack's job runtime role trusts them; the gateway stack lets them read its API key secret)."""

from __future__ import annotations

from aws_cdk import Aws

SERVICE_PRINCIPAL = "emr-serverless.amazonaws.com"


def applications_arn(account: str = Aws.ACCOUNT_ID, region: str = Aws.REGION) -> str:
    """The ARN pattern of every EMR Serverless application of ``account`` in ``region`` (default: this
    stack's; ``*``: any region)."""
    return f"arn:{Aws.PARTITION}:emr-serverless:{region}:{account}:/applications/*"
