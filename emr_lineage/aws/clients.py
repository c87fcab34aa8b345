"""AWS access for the tools: clients for one environment and readable errors."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import boto3
from botocore.config import Config
from botocore.exceptions import BotoCoreError, ClientError, NoRegionError

from emr_lineage.aws.session import RETRY_POLICY, boto_session, new_client
from emr_lineage.errors import EmrLineageError
from emr_lineage.settings.model import EnvironmentSettings


class AwsError(EmrLineageError):
    """AWS could not do what a command needs (missing parameter, bucket or credentials, a refused
    call, a malformed launch spec): the command cannot do its job (exit 2)."""


def aws_client(service: str) -> Any:
    """A client of ``service`` from the environment (``AWS_REGION``/``AWS_DEFAULT_REGION``,
    ``AWS_ENDPOINT_URL``, the profile) with the tools' retry policy: for commands that need no
    environment of cdk.json (the archive's readers). A setup failure is an :class:`AwsError`."""
    try:
        return new_client(service)
    except BotoCoreError as exc:
        raise AwsError(f"AWS client setup failed: {aws_message(exc)}") from None


def aws_session(settings: EnvironmentSettings) -> boto3.session.Session:
    """A boto3 session in the environment's region.

    The region is cdk.json's, else ``AWS_REGION`` (which the AWS CLI v2 and SDKs read but boto3
    does not), else boto3's own chain (``AWS_DEFAULT_REGION``, the profile). No region at all is
    an :class:`AwsError` naming the three ways to give one.
    """
    try:
        session = boto_session(settings.region)
        region = session.region_name  # reads the profile: an unknown one fails here
    except BotoCoreError as exc:  # e.g. an unknown AWS_PROFILE
        raise AwsError(f"AWS client setup failed: {aws_message(exc)}") from None
    if not region:
        raise AwsError(
            "no AWS region: set AWS_REGION or AWS_DEFAULT_REGION, "
            f"or region in cdk.json (emr-lineage.environments.{settings.name}.region)"
        )
    return session


@dataclass(frozen=True)
class AwsClients:
    ssm: Any
    s3: Any
    emr: Any

    @classmethod
    def for_settings(cls, settings: EnvironmentSettings) -> AwsClients:
        """Clients of one boto3 session (:func:`aws_session`) with one retry policy."""
        return cls(**clients_for(settings, ("ssm", "s3", "emr")))


def clients_for(
    settings: EnvironmentSettings, services: tuple[str, ...], config: Config = RETRY_POLICY
) -> dict[str, Any]:
    """Clients of ``services`` from one session of the environment (:func:`aws_session`); a setup
    failure is an :class:`AwsError`."""
    make = client_maker(settings, config)
    return {name: make(name) for name in services}


def client_maker(settings: EnvironmentSettings, config: Config = RETRY_POLICY) -> Callable[[str], Any]:
    """What makes the client of a service from one session of the environment (:func:`aws_session`,
    resolved now); a setup failure is an :class:`AwsError`."""
    session = aws_session(settings)

    def make(service: str) -> Any:
        try:
            return new_client(service, session=session, config=config)
        except NoRegionError:  # a region the session accepted but botocore cannot resolve
            raise AwsError(f"no AWS region for {settings.name}: set AWS_REGION") from None
        except BotoCoreError as exc:
            raise AwsError(f"AWS client setup failed: {aws_message(exc)}") from None

    return make


def regional_client_maker(
    settings: EnvironmentSettings, service: str, config: Config = RETRY_POLICY
) -> Callable[[str], Any]:
    """What makes the ``service`` client of a given region from one session of the environment: for a
    resource another region may hold (an AWS Private CA, whose ARN names its region)."""
    session = aws_session(settings)

    def make(region: str) -> Any:
        try:
            return new_client(service, session=session, config=config.merge(Config(region_name=region)))
        except BotoCoreError as exc:
            raise AwsError(f"AWS client setup failed: {aws_message(exc)}") from None

    return make


def aws_message(exc: Exception) -> str:
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
        raise AwsError(f"cannot read SSM parameter {name} ({aws_message(exc)})") from None
    except BotoCoreError as exc:
        raise AwsError(f"cannot read SSM parameter {name} ({exc})") from None
