"""Conditions on a KMS key's use, spelled once."""

from __future__ import annotations

from aws_cdk import Aws

# What reading a secret's value takes.
SECRET_READ_ACTIONS = ("secretsmanager:GetSecretValue", "secretsmanager:DescribeSecret")


def via_service(service: str, region: str = Aws.REGION) -> dict:
    """The key is used only through ``service`` (``s3``, ``secretsmanager``) in ``region`` (default: this one)."""
    return {"kms:ViaService": f"{service}.{region}.amazonaws.com"}
