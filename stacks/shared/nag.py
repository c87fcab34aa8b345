"""Acknowledgements of the two template scanners, cdk-nag and checkov: one helper each, so every one
carries a real reason.

cdk-nag 3 uses CDK's native validations API: findings are acknowledged one by one on the
construct that raises them, e.g. ``AwsSolutions-IAM5[Action::s3:*]`` (cdk-nag README, "Migrating
from v2": https://github.com/cdklabs/cdk-nag#readme).

checkov reads its acknowledgements from the template itself: a resource's ``Metadata.checkov.skip``
list of ``{"id": "CKV_AWS_...", "comment": "..."}`` (checkov docs, "Suppressing and Skipping Policies",
CloudFormation: https://www.checkov.io/2.Basics/Suppressing%20and%20Skipping%20Policies.html).

Acknowledge next to the resource a finding concerns, in the construct that creates it.
"""

from __future__ import annotations

import re

from aws_cdk import Acknowledgment, CfnResource, Reference, Stack, Token, Tokenization, Validations
from constructs import IConstruct

MIN_REASON_LENGTH = 40
CHECKOV_METADATA = "checkov"
CFN_LINT_METADATA, CFN_LINT_REASONS_METADATA = "cfn-lint", "cfn-lint-reasons"
_CHECKOV_ID = re.compile(r"^CKV2?_AWS_\d+$")


def _require_reason(finding: str, reason: str) -> None:
    if len(reason.strip()) < MIN_REASON_LENGTH:
        raise ValueError(f"acknowledgement of {finding} needs a specific reason, got {reason!r}")


def acknowledge(construct: IConstruct, rule_id: str, reason: str) -> None:
    """Acknowledge cdk-nag's ``rule_id`` on ``construct`` (and its children) with a specific reason."""
    if not rule_id.startswith("AwsSolutions-"):
        raise ValueError(f"{rule_id!r}: only AwsSolutions rules are acknowledged here")
    _require_reason(rule_id, reason)
    Validations.of(construct).acknowledge(Acknowledgment(id=rule_id, reason=reason))


def acknowledge_checkov(construct: IConstruct, check_id: str, reason: str) -> None:
    """Acknowledge checkov's ``check_id`` on the CloudFormation resource of ``construct`` (the construct
    itself if it is one, else its default child) with a specific reason, in its ``Metadata.checkov.skip``."""
    if not _CHECKOV_ID.match(check_id):
        raise ValueError(f"{check_id!r}: not a checkov AWS check id (CKV_AWS_<n>)")
    _require_reason(check_id, reason)
    resource = construct if isinstance(construct, CfnResource) else construct.node.default_child
    if not isinstance(resource, CfnResource):
        raise ValueError(f"{construct.node.path}: no CloudFormation resource to acknowledge {check_id} on")
    skips = list((resource.get_metadata(CHECKOV_METADATA) or {}).get("skip", []))
    if any(skip["id"] == check_id for skip in skips):
        raise ValueError(f"{resource.node.path}: {check_id} is acknowledged twice")
    resource.add_metadata(CHECKOV_METADATA, {"skip": [*skips, {"id": check_id, "comment": reason}]})


def acknowledge_cfn_lint(construct: IConstruct, check: str, reason: str) -> None:
    """Have cfn-lint ignore ``check`` on the CloudFormation resource of ``construct`` (its
    ``Metadata.cfn-lint.config.ignore_checks``, which takes no reason), the reason kept beside it in
    ``Metadata.cfn-lint-reasons`` for docs/compliance.md."""
    _require_reason(check, reason)
    resource = construct if isinstance(construct, CfnResource) else construct.node.default_child
    if not isinstance(resource, CfnResource):
        raise ValueError(f"{construct.node.path}: no CloudFormation resource to acknowledge {check} on")
    checks = list((resource.get_metadata(CFN_LINT_METADATA) or {}).get("config", {}).get("ignore_checks", []))
    resource.add_metadata(CFN_LINT_METADATA, {"config": {"ignore_checks": [*checks, check]}})
    resource.add_metadata(
        CFN_LINT_REASONS_METADATA, {**(resource.get_metadata(CFN_LINT_REASONS_METADATA) or {}), check: reason}
    )


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


def acknowledge_cdk_provider(provider: IConstruct, *, name: str, does: str) -> None:
    """The findings on a Lambda function CDK makes for itself (``name``: BucketDeployment,
    AwsCustomResource), a stack-level singleton that CloudFormation calls during deploys only."""
    acknowledge(
        provider,
        "AwsSolutions-L1",
        f"CDK pins the runtime of its {name} provider; it moves with aws-cdk-lib upgrades.",
    )
    acknowledge_cfn_lint(
        provider, "W3005", f"CDK makes its {name} function DependsOn its role, which its GetAtt already implies"
    )
    reasons = {
        "CKV_AWS_116": "CloudFormation calls it during deploys only: a failure fails the deployment, which "
        "reports it, and a dead-letter queue would hold a request nobody replays.",
        "CKV_AWS_117": f"it {does} and reaches nothing inside the VPC.",
        "CKV_AWS_115": "it runs during deploys only; a reserved concurrency would only withhold capacity from "
        "the account's other functions.",
        "CKV_AWS_173": "its environment holds no secret, and Lambda encrypts it at rest with its AWS managed key.",
    }
    for check, reason in reasons.items():
        acknowledge_checkov(provider, check, f"CDK's own {name} provider: {reason}")
