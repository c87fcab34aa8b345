"""Translate validated settings values into CDK enums (one mapping each)."""

from __future__ import annotations

from aws_cdk import RemovalPolicy
from aws_cdk import aws_logs as logs

from emr_lineage.settings.limits import LOG_RETENTION_DAYS
from emr_lineage.settings.model import EnvironmentSettings, RemovalPolicyName

_REMOVAL = {
    RemovalPolicyName.DESTROY: RemovalPolicy.DESTROY,
    RemovalPolicyName.RETAIN: RemovalPolicy.RETAIN,
    RemovalPolicyName.SNAPSHOT: RemovalPolicy.SNAPSHOT,
}

# jsii enums carry names, not day counts; CDK lists them in CloudWatch's order.
_RETENTION = dict(
    zip(LOG_RETENTION_DAYS, [d for d in logs.RetentionDays if d is not logs.RetentionDays.INFINITE], strict=True)
)


def removal_policy(settings: EnvironmentSettings, *, snapshot_capable: bool = False) -> RemovalPolicy:
    """Removal policy for stateful resources; SNAPSHOT only where the resource supports it."""
    policy = _REMOVAL[settings.removal_policy]
    if policy is RemovalPolicy.SNAPSHOT and not snapshot_capable:
        return RemovalPolicy.RETAIN
    return policy


def log_retention(days: int) -> logs.RetentionDays:
    return _RETENTION[days]
