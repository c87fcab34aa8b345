"""keep_logical_ids: resources moved into a construct keep the logical IDs CDK gave them in its scope."""

from __future__ import annotations

import aws_cdk as cdk
import pytest
from aws_cdk import aws_iam as iam
from aws_cdk import aws_sqs as sqs
from constructs import Construct

from stacks.shared.logical_ids import keep_logical_ids, unique_id


def _resources(build) -> dict[str, str]:
    """Logical id -> type of every resource ``build(stack)`` adds."""
    app = cdk.App()
    stack = cdk.Stack(app, "Stack")
    build(stack)
    template = app.synth().get_stack_by_name("Stack").template
    return {k: v["Type"] for k, v in template["Resources"].items() if k != "CDKMetadata"}


def _queue_and_role(scope: Construct) -> None:
    sqs.Queue(scope, "Queue", enforce_ssl=True)
    role = iam.Role(scope, "Some-Role", assumed_by=iam.ServicePrincipal("lambda.amazonaws.com"))
    role.add_to_policy(iam.PolicyStatement(actions=["sqs:SendMessage"], resources=["*"]))


def _in_kept_construct(stack: cdk.Stack) -> None:
    group = Construct(stack, "Group")
    keep_logical_ids(group)
    _queue_and_role(group)


def test_a_kept_construct_leaves_logical_ids_as_in_its_scope() -> None:
    assert _resources(_in_kept_construct) == _resources(_queue_and_role)


def test_resources_added_after_the_construct_keep_their_ids_too() -> None:
    def later(stack: cdk.Stack) -> None:
        group = Construct(stack, "Group")
        keep_logical_ids(group)
        iam.Role(group, "Role", assumed_by=iam.AccountRootPrincipal()).add_to_policy(
            iam.PolicyStatement(actions=["s3:GetObject"], resources=["*"])
        )

    def direct(stack: cdk.Stack) -> None:
        iam.Role(stack, "Role", assumed_by=iam.AccountRootPrincipal()).add_to_policy(
            iam.PolicyStatement(actions=["s3:GetObject"], resources=["*"])
        )

    assert _resources(later) == _resources(direct)


@pytest.mark.parametrize(
    "path",
    [["Queue"], ["Queue", "Resource"], ["Queue", "Policy", "Resource"], ["Api", "ApiKey", "Resource"], ["A-b", "c_d"]],
    ids="/".join,
)
def test_unique_id_is_cdks(path: list[str]) -> None:
    app = cdk.App()
    scope: Construct = cdk.Stack(app, "Stack")
    for component in path[:-1]:
        scope = Construct(scope, component)
    element = cdk.CfnWaitConditionHandle(scope, path[-1])
    assert unique_id(path) == cdk.Stack.of(element).resolve(element.logical_id)
