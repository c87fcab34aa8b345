"""AWS access for the tools: clients for one environment and readable errors."""

from __future__ import annotations

import os
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import boto3
from botocore.config import Config
from botocore.exceptions import BotoCoreError, ClientError, NoCredentialsError, NoRegionError

from emr_lineage.aws.session import RETRY_POLICY, boto_session, new_client
from emr_lineage.errors import EmrLineageError
from emr_lineage.settings.model import EnvironmentSettings

ENDPOINT_ENV_VAR = "AWS_ENDPOINT_URL"
CREDENTIALS_FIX = (
    "set AWS_PROFILE, or AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY, or run aws configure or aws sso login"
)
REGION_FIX = "set AWS_REGION or AWS_DEFAULT_REGION, or a region in the profile that AWS_PROFILE names"
# botocore refuses an endpoint URL it cannot use (no scheme) with a plain ValueError of this text.
_INVALID_ENDPOINT = "Invalid endpoint: "


class AwsError(EmrLineageError):
    """AWS could not do what a command needs (missing parameter, bucket or credentials, a refused
    call, a malformed launch spec): the command cannot do its job (exit 2)."""


def aws_client(service: str, session: boto3.session.Session | None = None) -> Any:
    """A client of ``service`` from ``session``, by default from the environment (``AWS_REGION``/
    ``AWS_DEFAULT_REGION``, ``AWS_ENDPOINT_URL``, the profile), with the tools' retry policy: for
    commands that need no environment of cdk.json (the archive's readers, the local gateway). A setup
    failure is an :class:`AwsError`."""
    return _made(lambda: new_client(service, session=session))


def _made(make: Callable[[], Any]) -> Any:
    """What ``make`` returns; a client it cannot set up (no region, a bad endpoint or profile) is an
    :class:`AwsError` saying why and the fix."""
    try:
        return make()
    except NoRegionError as exc:
        raise AwsError(aws_message(exc)) from None
    except BotoCoreError as exc:
        raise AwsError(f"AWS client setup failed: {aws_message(exc)}") from None
    except ValueError as exc:
        if not str(exc).startswith(_INVALID_ENDPOINT):
            raise
        raise AwsError(_invalid_endpoint(str(exc).removeprefix(_INVALID_ENDPOINT))) from None


def _invalid_endpoint(url: str) -> str:
    """Why the endpoint URL ``url`` is refused, naming the variable (or the config file) that gives it, and the fix."""
    empty = [name for name in ("AWS_REGION", "AWS_DEFAULT_REGION") if os.environ.get(name) == ""]
    if empty:  # botocore then makes AWS's own endpoint without a region (https://s3..amazonaws.com)
        return f"{empty[0]} is set but empty: {REGION_FIX}, or unset it"
    # AWS_ENDPOINT_URL, or a service's own AWS_ENDPOINT_URL_<SERVICE>; else the profile's endpoint_url
    names = sorted(name for name, value in os.environ.items() if name.startswith(ENDPOINT_ENV_VAR) and value == url)
    where = f"{names[0]}={url}" if names else f"endpoint_url = {url} in the AWS config file"
    example = f"http://{url}" if url and "://" not in url else "http://127.0.0.1:5000"
    return f"{where} is not an endpoint URL: give it with its scheme and host, e.g. {example}"


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
            f"no AWS region: {REGION_FIX}, or region in cdk.json (emr-lineage.environments.{settings.name}.region)"
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
        return _made(lambda: new_client(service, session=session, config=config))

    return make


def regional_client_maker(
    settings: EnvironmentSettings, service: str, config: Config = RETRY_POLICY
) -> Callable[[str], Any]:
    """What makes the ``service`` client of a given region from one session of the environment: for a
    resource another region may hold (an AWS Private CA, whose ARN names its region)."""
    session = aws_session(settings)

    def make(region: str) -> Any:
        return _made(lambda: new_client(service, session=session, config=config.merge(Config(region_name=region))))

    return make


def aws_message(exc: Exception) -> str:
    """An AWS failure on one line, in AWS's words (``Code: Message``); no credentials or no region
    with the fix, as every command says them."""
    if isinstance(exc, ClientError):
        err = exc.response.get("Error", {})
        text = f"{err.get('Code', 'error')}: {err.get('Message', exc)}"
    elif isinstance(exc, NoCredentialsError):
        text = f"no AWS credentials: {CREDENTIALS_FIX}"
    elif isinstance(exc, NoRegionError):
        text = f"no AWS region: {REGION_FIX}"
    else:
        text = str(exc)
    return " ".join(text.split())


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
        raise AwsError(f"cannot read SSM parameter {name} ({aws_message(exc)})") from None
