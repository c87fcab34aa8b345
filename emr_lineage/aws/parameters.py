"""Names of the SSM parameters the stacks publish and the tools read: one place for all.

Stacks write them (``aws_ssm.StringParameter``); ``emr-lineage`` reads them with boto3.
"""

from __future__ import annotations

PREFIX = "/emr-lineage"


def _name(env: str, leaf: str) -> str:
    return f"{PREFIX}/{env}/{leaf}"


def marquez_api_url(env: str) -> str:
    """Base URL of the Marquez API (what the OpenLineage HTTP transport uses)."""
    return _name(env, "marquez/api-url")


def marquez_web_url(env: str) -> str:
    """URL of the Marquez web UI."""
    return _name(env, "marquez/web-url")


def emr_launch_spec(env: str) -> str:
    """JSON RunJobFlow request (minus Steps) for ephemeral clusters."""
    return _name(env, "emr/launch-spec")


def artifacts_bucket(env: str) -> str:
    """Name of the EMR artifacts bucket (bootstrap scripts, jobs, listener jar)."""
    return _name(env, "emr/artifacts-bucket")


def data_lake_bucket(env: str) -> str:
    """Name of the data lake bucket (raw, clean, curated and models zones)."""
    return _name(env, "datalake/bucket")
