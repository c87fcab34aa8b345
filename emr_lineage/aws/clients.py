"""AWS access for the tools: clients for one environment and readable errors."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import boto3
from botocore.exceptions import BotoCoreError, ClientError

from emr_lineage.errors import EmrLineageError
from emr_lineage.settings.model import EnvironmentSettings


class AwsError(EmrLineageError):
    """AWS could not do what a command needs (missing parameter, bucket or credentials, a refused
    call, a malformed launch spec): the command cannot do its job (exit 2)."""


@dataclass(frozen=True)
class AwsClients:
    ssm: Any
    s3: Any
    emr: Any

    @classmethod
    def for_settings(cls, settings: EnvironmentSettings) -> AwsClients:
        """Clients in the environment's region (or the default chain's when cdk.json has none)."""
        try:
            session = boto3.session.Session(region_name=settings.region)
            return cls(ssm=session.client("ssm"), s3=session.client("s3"), emr=session.client("emr"))
        except BotoCoreError as exc:  # e.g. NoRegionError
            raise AwsError(f"AWS client setup failed: {exc} (set AWS_REGION, or region in cdk.json)") from None


def _aws_message(exc: Exception) -> str:
    if isinstance(exc, ClientError):
        err = exc.response.get("Error", {})
        return f"{err.get('Code', 'error')}: {err.get('Message', exc)}"
    return str(exc)


def read_parameter(ssm: Any, name: str, *, env: str, published_by: str) -> str:
    """Value of one SSM parameter; a missing one says which stack publishes it."""
    try:
        return ssm.get_parameter(Name=name)["Parameter"]["Value"]
    except ClientError as exc:
        if exc.response.get("Error", {}).get("Code") == "ParameterNotFound":
            raise AwsError(
                f"SSM parameter {name} not found: deploy the {published_by} for env {env!r} first "
                f"(make deploy ENV={env})"
            ) from None
        raise AwsError(f"cannot read SSM parameter {name} ({_aws_message(exc)})") from None
    except BotoCoreError as exc:
        raise AwsError(f"cannot read SSM parameter {name} ({exc})") from None
