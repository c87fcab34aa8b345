"""Constructs carved out of a stack that keep the logical IDs their resources were deployed with.

CloudFormation identifies a resource by its logical ID, which CDK derives from the construct path.
Moving resources into a new construct adds a path component, so every logical ID would change and
CloudFormation would replace the resources: data lost for buckets, queues and keys, and a renamed
listener rule or listener created before the old one is deleted (they collide on priority or port).

:func:`keep_logical_ids` makes a construct transparent to logical IDs: every CloudFormation element
under it, including ones added later (grants, policies), gets the ID CDK would give it without that
path component. The algorithm is CDK's own (``makeUniqueId``, aws-cdk-lib core/lib/private/uniqueid.ts):
the path components below the stack, ``Default`` dropped; a single component is its own ID; otherwise
the components (a repeat of the one before and every ``Resource`` dropped, non-alphanumerics removed) and
the first 8 hex digits of the MD5 of the path. tests/stacks/test_logical_ids.py checks it against CDK.
Only logical IDs: a name CDK derives from the full path (an ECS task definition's family, for one)
still changes, so leave such a resource where it is (stacks/lineage_service/marquez.py).
"""

from __future__ import annotations

import hashlib
import re

import jsii
from aws_cdk import AspectPriority, Aspects, CfnElement, IAspect, Stack
from constructs import Construct, IConstruct

HIDDEN_ID = "Default"
HIDDEN_FROM_HUMAN_ID = "Resource"
HASH_LEN = 8
MAX_HUMAN_LEN = 240
MAX_ID_LEN = 255
_NON_ALPHANUMERIC = re.compile(r"[^A-Za-z0-9]")


def unique_id(components: list[str]) -> str:
    """CDK's logical ID of a construct at the path ``components`` below its stack."""
    components = [c for c in components if c != HIDDEN_ID]
    if len(components) == 1 and len(_NON_ALPHANUMERIC.sub("", components[0])) <= MAX_ID_LEN:
        return _NON_ALPHANUMERIC.sub("", components[0])
    digest = hashlib.md5("/".join(components).encode(), usedforsecurity=False).hexdigest()[:HASH_LEN].upper()
    human: list[str] = []
    for component in components:
        if not human or not human[-1].endswith(component):
            human.append(component)
    return "".join(_NON_ALPHANUMERIC.sub("", c) for c in human if c != HIDDEN_FROM_HUMAN_ID)[:MAX_HUMAN_LEN] + digest


def _is_transparent(construct: IConstruct) -> bool:
    return any(isinstance(aspect, _KeepLogicalIds) for aspect in Aspects.of(construct).all)


@jsii.implements(IAspect)
class _KeepLogicalIds:
    """Gives each CloudFormation element its logical ID without the transparent constructs' path components."""

    def visit(self, node: IConstruct) -> None:
        if not isinstance(node, CfnElement):
            return
        scopes = node.node.scopes
        depth = len(Stack.of(node).node.scopes)
        node.override_logical_id(unique_id([s.node.id for s in scopes[depth:] if not _is_transparent(s)]))


def keep_logical_ids(construct: Construct) -> None:
    """Resources under ``construct`` keep the logical IDs they had when created directly in its scope."""
    Aspects.of(construct).add(_KeepLogicalIds(), priority=AspectPriority.MUTATING)
