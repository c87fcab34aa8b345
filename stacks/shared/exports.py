"""Exports kept for consumers that come and go with a setting.

CloudFormation refuses to remove or change an export another stack imports, and ``cdk deploy`` updates
the exporting stack first: a consumer that a settings switch removes (the gateway stack, the EMR
Serverless application's rule, the retention alarm) would block the exporter's update, and a stack the
app no longer has stays deployed with its imports until it is deleted. So an exporter exports what its
optional consumers take whether or not they exist now (tests/stacks/test_update_safety.py).
"""

from __future__ import annotations

from aws_cdk import Stack


def export_for_optional_consumers(stack: Stack, *values: str) -> None:
    """Export each of ``values`` under the name a reference to it would get (CDK keeps one per value)."""
    for value in values:
        stack.export_value(value)
