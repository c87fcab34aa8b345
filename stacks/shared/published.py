"""What a stack publishes for the CLI tools: an SSM parameter (names from ``emr_lineage.aws.parameters``)
and the stack output that shows it. No stack reads them back (app.py passes values as props)."""

from __future__ import annotations

from aws_cdk import CfnOutput
from aws_cdk import aws_ssm as ssm
from constructs import Construct


def publish(
    scope: Construct,
    *,
    parameter_id: str,
    parameter_name: str,
    value: str,
    description: str,
    output_id: str,
    output_description: str | None = None,
    output_value: str | None = None,
    tier: ssm.ParameterTier | None = None,
) -> ssm.StringParameter:
    """The SSM parameter ``parameter_name`` holding ``value``, and the output ``output_id`` showing
    ``output_value`` (default: ``value``; e.g. the parameter's name when the value is a document)."""
    parameter = ssm.StringParameter(
        scope, parameter_id, parameter_name=parameter_name, string_value=value, description=description, tier=tier
    )
    CfnOutput(scope, output_id, value=value if output_value is None else output_value, description=output_description)
    return parameter
