"""Settings for running the bundle for years: alarms, sign-in, scaling and the Marquez image.

Part of the typed cdk.json model (:mod:`emr_lineage.settings.model` composes these); kept apart
so each module stays readable. Same rules: every key is required, unknown keys are errors, and
``null`` is the only way to leave an optional feature off.
"""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import Field, model_validator

from emr_lineage.settings.base import Strict

# A Docker image repository without a tag (the tag is versions.marquez): registry/path or path.
IMAGE_REPOSITORY = r"^[a-z0-9]+([._-][a-z0-9]+)*(:[0-9]+)?(/[a-z0-9]+([._-][a-z0-9]+)*)+$|^[a-z0-9]+([._-][a-z0-9]+)*$"
ACM_CERTIFICATE_ARN = r"^arn:aws[a-z-]*:acm:[a-z0-9-]+:\d{12}:certificate/[0-9a-f-]{36}$"
SECRET_ARN = r"^arn:aws[a-z-]*:secretsmanager:[a-z0-9-]+:\d{12}:secret:.+$"
USER_POOL_ARN = r"^arn:aws[a-z-]*:cognito-idp:[a-z0-9-]+:\d{12}:userpool/[\w-]+_[0-9a-zA-Z]+$"
DOMAIN_NAME = r"^([a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?\.)+[a-z]{2,63}$"
HTTPS_URL = r"^https://[^\s/]+(/\S*)?$"
EMAIL = r"^[^@\s]+@[^@\s]+\.[^@\s]+$"


class MarquezImage(Strict):
    """The Marquez API and web images (repositories; both tagged ``versions.marquez``). A team can
    point them at a maintained fork or a private mirror (ECR pull-through cache)."""

    api: Annotated[str, Field(pattern=IMAGE_REPOSITORY)]
    web: Annotated[str, Field(pattern=IMAGE_REPOSITORY)]


class CognitoUiAuth(Strict):
    """Sign-in on the web UI through an existing Cognito user pool (ALB ``authenticate-cognito``)."""

    type: Literal["cognito"]
    user_pool_arn: Annotated[str, Field(pattern=USER_POOL_ARN)]
    user_pool_client_id: Annotated[str, Field(pattern=r"^[\w+]{1,128}$")]
    user_pool_domain: Annotated[str, Field(pattern=r"^[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?$")]


class OidcUiAuth(Strict):
    """Sign-in on the web UI through an OpenID Connect provider (ALB ``authenticate-oidc``); the
    client secret stays in Secrets Manager (a dynamic reference, never in the template)."""

    type: Literal["oidc"]
    issuer: Annotated[str, Field(pattern=HTTPS_URL)]
    authorization_endpoint: Annotated[str, Field(pattern=HTTPS_URL)]
    token_endpoint: Annotated[str, Field(pattern=HTTPS_URL)]
    user_info_endpoint: Annotated[str, Field(pattern=HTTPS_URL)]
    client_id: Annotated[str, Field(min_length=1, max_length=256)]
    client_secret_arn: Annotated[str, Field(pattern=SECRET_ARN)]


UiAuth = Annotated[CognitoUiAuth | OidcUiAuth, Field(discriminator="type")]


class AutoscalingSettings(Strict):
    """Target-tracking scaling of the Marquez service on CPU, between two bounds."""

    min_tasks: Annotated[int, Field(ge=1, le=10)]
    max_tasks: Annotated[int, Field(ge=1, le=20)]
    target_cpu_percent: Annotated[int, Field(ge=10, le=90)]

    @model_validator(mode="after")
    def _bounds(self) -> AutoscalingSettings:
        if self.max_tasks < self.min_tasks:
            raise ValueError(f"max_tasks ({self.max_tasks}) must be >= min_tasks ({self.min_tasks})")
        return self


class AlarmSettings(Strict):
    """Where alarms go and when they fire. Structural alarms (unhealthy targets, fewer running tasks
    than desired, Lambda throttles, EMR cluster and step failures) need no threshold."""

    # An address subscribed to the alarm topic (it must confirm); null: subscribe later, by hand.
    email: Annotated[str, Field(pattern=EMAIL)] | None = None
    alb_5xx_per_5_minutes: Annotated[int, Field(ge=1, le=100000)]
    rds_cpu_percent: Annotated[int, Field(ge=10, le=100)]
    rds_free_storage_gib: Annotated[int, Field(ge=1, le=1000)]
    rds_connections: Annotated[int, Field(ge=1, le=10000)]
    dead_letter_messages: Annotated[int, Field(ge=1, le=100000)]
    dead_letter_oldest_age_minutes: Annotated[int, Field(ge=1, le=20160)]
    lambda_errors_per_5_minutes: Annotated[int, Field(ge=1, le=100000)]
