"""cdk-nag acknowledgements: one helper so every one carries a real reason.

cdk-nag 3 uses CDK's native validations API (FACTS.md): findings are acknowledged one by
one on the construct that raises them, e.g. ``AwsSolutions-IAM5[Action::s3:*]``.
"""

from __future__ import annotations

from aws_cdk import Acknowledgment, Validations
from constructs import IConstruct

MIN_REASON_LENGTH = 40


def acknowledge(construct: IConstruct, rule_id: str, reason: str) -> None:
    """Acknowledge ``rule_id`` on ``construct`` (and its children) with a specific reason."""
    if not rule_id.startswith("AwsSolutions-"):
        raise ValueError(f"{rule_id!r}: only AwsSolutions rules are acknowledged here")
    if len(reason.strip()) < MIN_REASON_LENGTH:
        raise ValueError(f"acknowledgement of {rule_id} needs a specific reason, got {reason!r}")
    Validations.of(construct).acknowledge(Acknowledgment(id=rule_id, reason=reason))
