"""cdk-nag acknowledgements: one helper so every one carries a real reason.

cdk-nag 3 uses CDK's native validations API: findings are acknowledged one by one on the
construct that raises them, e.g. ``AwsSolutions-IAM5[Action::s3:*]`` (cdk-nag README, "Migrating
from v2": https://github.com/cdklabs/cdk-nag#readme).

Acknowledge next to the resource a finding concerns, in the construct that creates it.
"""

from __future__ import annotations

from aws_cdk import Acknowledgment, Reference, Stack, Token, Tokenization, Validations
from constructs import IConstruct

MIN_REASON_LENGTH = 40


def acknowledge(construct: IConstruct, rule_id: str, reason: str) -> None:
    """Acknowledge ``rule_id`` on ``construct`` (and its children) with a specific reason."""
    if not rule_id.startswith("AwsSolutions-"):
        raise ValueError(f"{rule_id!r}: only AwsSolutions rules are acknowledged here")
    if len(reason.strip()) < MIN_REASON_LENGTH:
        raise ValueError(f"acknowledgement of {rule_id} needs a specific reason, got {reason!r}")
    Validations.of(construct).acknowledge(Acknowledgment(id=rule_id, reason=reason))


def _nag_text(value) -> str:
    """Render a resolved CloudFormation value the way cdk-nag names it in finding ids."""
    if isinstance(value, str):
        return value
    if isinstance(value, dict) and len(value) == 1:
        ((fn, arg),) = value.items()
        if fn == "Ref":
            return f"<{arg}>"
        if fn == "Fn::GetAtt":
            return f"<{arg[0]}.{arg[1]}>"
        if fn == "Fn::ImportValue":
            return _nag_text(arg)
        if fn == "Fn::Join":
            return arg[0].join(_nag_text(part) for part in arg[1])
    raise ValueError(f"cannot render {value!r} as a cdk-nag finding id")


def _as_imported_into(stack: Stack, value: str) -> str:
    """``value`` with each reference to another stack's resource replaced by the import CDK makes of it.

    Cross-stack references become ``Fn::ImportValue`` only at synth, after acknowledgements are
    recorded; ``export_value`` names the very export that synth will use.
    """
    for token in Tokenization.reverse_string(value).tokens:
        if Reference.is_reference(token):
            producer = Stack.of(token.target)
            if producer.node.path != stack.node.path:
                value = value.replace(Token.as_string(token), producer.export_value(token))
    return value


def wildcard_resource_finding(scope: IConstruct, resource_arn: str) -> str:
    """cdk-nag's finding id for a wildcard resource ARN as used in ``scope``'s stack."""
    stack = Stack.of(scope)
    return f"AwsSolutions-IAM5[Resource::{_nag_text(stack.resolve(_as_imported_into(stack, resource_arn)))}]"
