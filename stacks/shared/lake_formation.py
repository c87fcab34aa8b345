"""Lake Formation permissions created one at a time within a stack.

CloudFormation creates independent resources in parallel, and Lake Formation loses track of
``AWS::LakeFormation::PrincipalPermissions`` made together: the stack fails with "already exists" on a
grant it just made, or with ConcurrentModificationException
(https://github.com/aws-cloudformation/cloudformation-coverage-roadmap/issues/2500, #2432). Each grant
of a stack waits for the one before it (construct order), so a deploy makes or revokes one at a time.
"""

from __future__ import annotations

import jsii
from aws_cdk import AspectPriority, Aspects, IAspect, Stack
from aws_cdk import aws_lakeformation as lakeformation
from constructs import IConstruct


@jsii.implements(IAspect)
class _OneAtATime:
    def __init__(self) -> None:
        self._last: lakeformation.CfnPrincipalPermissions | None = None

    def visit(self, node: IConstruct) -> None:
        if isinstance(node, lakeformation.CfnPrincipalPermissions):
            if self._last is not None:
                node.node.add_dependency(self._last)
            self._last = node


def grant_one_at_a_time(stack: Stack) -> None:
    """Every PrincipalPermissions of ``stack``, including ones added later, depends on the one before it."""
    Aspects.of(stack).add(_OneAtATime(), priority=AspectPriority.MUTATING)
