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
AWS_REGION = r"^[a-z]{2}(-[a-z]+)+-\d$"
EMAIL = r"^[^@\s]+@[^@\s]+\.[^@\s]+$"


class MarquezImage(Strict):
    """The Marquez API and web images (repositories; both tagged ``versions.marquez``). A team can
    point them at a maintained fork or a private mirror (ECR pull-through cache)."""

    api: Annotated[
        str,
        Field(
            pattern=IMAGE_REPOSITORY,
            description="Repository (no tag) of the Marquez API image: `marquezproject/marquez` on Docker Hub, or a "
            "mirror; an Amazon ECR repository URL (`<account>.dkr.ecr.<region>.amazonaws.com/<name>`) gets pull "
            "permissions for the tasks. Where each environment pulls it from: `marquez.image_registry`.",
        ),
    ]
    web: Annotated[
        str,
        Field(
            pattern=IMAGE_REPOSITORY,
            description="Repository (no tag) of the Marquez web UI image: `marquezproject/marquez-web` on Docker Hub, "
            "or a mirror, as for `api`.",
        ),
    ]


class CognitoUiAuth(Strict):
    """Sign-in on the web UI through an existing Cognito user pool (ALB ``authenticate-cognito``)."""

    type: Literal["cognito"] = Field(description="Sign-in through an existing Cognito user pool.")
    user_pool_arn: Annotated[str, Field(pattern=USER_POOL_ARN, description="The user pool's ARN.")]
    user_pool_client_id: Annotated[
        str, Field(pattern=r"^[\w+]{1,128}$", description="The user pool's app client for the web UI.")
    ]
    user_pool_domain: Annotated[
        str,
        Field(
            pattern=r"^[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?$",
            description="The user pool's domain prefix (its hosted sign-in page).",
        ),
    ]


class OidcUiAuth(Strict):
    """Sign-in on the web UI through an OpenID Connect provider (ALB ``authenticate-oidc``); the
    client secret stays in Secrets Manager (a dynamic reference, never in the template)."""

    type: Literal["oidc"] = Field(description="Sign-in through an OpenID Connect provider.")
    issuer: Annotated[str, Field(pattern=HTTPS_URL, description="The provider's issuer URL.")]
    authorization_endpoint: Annotated[str, Field(pattern=HTTPS_URL, description="Its authorization endpoint.")]
    token_endpoint: Annotated[str, Field(pattern=HTTPS_URL, description="Its token endpoint.")]
    user_info_endpoint: Annotated[str, Field(pattern=HTTPS_URL, description="Its user info endpoint.")]
    client_id: Annotated[str, Field(min_length=1, max_length=256, description="The web UI's client id there.")]
    client_secret_arn: Annotated[
        str,
        Field(
            pattern=SECRET_ARN,
            description="The Secrets Manager secret holding the client secret (it stays there: the template "
            "names it by a dynamic reference).",
        ),
    ]


UiAuth = Annotated[CognitoUiAuth | OidcUiAuth, Field(discriminator="type")]


class AutoscalingSettings(Strict):
    """Target-tracking scaling of the Marquez service on CPU, between two bounds."""

    min_tasks: Annotated[int, Field(ge=1, le=10, description="Fewest Marquez tasks.")]
    max_tasks: Annotated[int, Field(ge=1, le=20, description="Most Marquez tasks, at least `min_tasks`.")]
    target_cpu_percent: Annotated[
        int, Field(ge=10, le=90, description="The service's average CPU that target tracking keeps (percent).")
    ]

    @model_validator(mode="after")
    def _bounds(self) -> AutoscalingSettings:
        if self.max_tasks < self.min_tasks:
            raise ValueError(f"max_tasks ({self.max_tasks}) must be >= min_tasks ({self.min_tasks})")
        return self


class AlarmSettings(Strict):
    """Where alarms go and when they fire. Structural alarms (unhealthy targets, fewer running tasks
    than desired, Lambda throttles, EMR cluster and step failures) need no threshold."""

    email: Annotated[str, Field(pattern=EMAIL)] | None = Field(
        default=None,
        description="An address subscribed to the environment's alarm topic (it must confirm); null: subscribe "
        "later, by hand.",
    )
    alb_5xx_per_5_minutes: Annotated[
        int,
        Field(ge=1, le=100000, description="Alarm at this many 5xx answers of the Marquez load balancer in 5 minutes."),
    ]
    rds_cpu_percent: Annotated[
        int, Field(ge=10, le=100, description="Alarm at this database CPU (percent, average over 15 minutes) or above.")
    ]
    rds_free_storage_gib: Annotated[
        int, Field(ge=1, le=1000, description="Alarm when the database's free storage falls below this (GiB).")
    ]
    rds_connections: Annotated[
        int, Field(ge=1, le=10000, description="Alarm at this many database connections or more.")
    ]
    dead_letter_messages: Annotated[
        int,
        Field(
            ge=1,
            le=100000,
            description="Alarm at this many events in the gateway's dead-letter queue (undelivered to Marquez).",
        ),
    ]
    dead_letter_oldest_age_minutes: Annotated[
        int, Field(ge=1, le=20160, description="Alarm when an undelivered event has waited this long (minutes).")
    ]
    lambda_errors_per_5_minutes: Annotated[
        int, Field(ge=1, le=100000, description="Alarm at this many errors of a gateway function in 5 minutes.")
    ]
