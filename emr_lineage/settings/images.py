"""Where the Marquez tasks pull their images from: ``marquez.image_registry``.

``direct``: the repositories ``versions.marquez_image`` names, pulled as they are: Docker Hub for
the stock names (anonymously, so rate-limited per IP address), or the registry a repository names
(an ECR mirror, say). ``ecr_pull_through_cache``: an Amazon ECR pull-through cache rule of the
environment (prefix :func:`cache_prefix`) pulls them from Docker Hub with the user's Docker Hub
credentials, kept in a Secrets Manager secret, and the tasks pull from ECR
(https://docs.aws.amazon.com/AmazonECR/latest/userguide/pull-through-cache.html).
"""

from __future__ import annotations

import re
from typing import Annotated, ClassVar, Literal

from pydantic import Field, field_validator

from emr_lineage.settings.base import Strict

# The upstream URL ECR takes for Docker Hub (CreatePullThroughCacheRule's upstreamRegistryUrl):
# https://docs.aws.amazon.com/AmazonECR/latest/APIReference/API_CreatePullThroughCacheRule.html
DOCKER_HUB_REGISTRY_URL = "registry-1.docker.io"
DOCKER_HUB_UPSTREAM = "docker-hub"  # the rule's upstreamRegistry name for it
# A repository's first part names its registry when it has a dot or a port, or is localhost (Docker's rule).
DOCKER_HUB_HOSTS = frozenset({"docker.io", "index.docker.io", DOCKER_HUB_REGISTRY_URL})
# Docker Hub's official images live under library/, and a pull through the cache must say so:
# https://docs.aws.amazon.com/AmazonECR/latest/userguide/pull-through-cache-working-pulling.html
DOCKER_HUB_OFFICIAL = "library"
# ECR reads upstream credentials only from secrets named so, in the rule's account and region:
# https://docs.aws.amazon.com/AmazonECR/latest/userguide/pull-through-cache-creating-rule.html
CACHE_SECRET_PREFIX = "ecr-pullthroughcache/"
_SECRET_NAME = rf"{re.escape(CACHE_SECRET_PREFIX)}[A-Za-z0-9/_+=.@-]+"
# A full ARN ends in '-' and the six characters Secrets Manager adds to the name.
_SECRET_SUFFIX = r"-[A-Za-z0-9]{6}"
CACHE_SECRET_NAME = re.compile(rf"^{_SECRET_NAME}$")
CACHE_SECRET_ARN = re.compile(
    rf"^arn:aws[a-z-]*:secretsmanager:[a-z0-9-]+:\d{{12}}:secret:(?P<name>{_SECRET_NAME}){_SECRET_SUFFIX}$"
)
# A rule's ecrRepositoryPrefix: 2-30 characters of this pattern (the API reference above).
ECR_PREFIX = re.compile(r"^(?:[a-z0-9]+(?:[._-][a-z0-9]+)*/)*[a-z0-9]+(?:[._-][a-z0-9]+)*$")
ECR_PREFIX_LENGTH = range(2, 31)
# <account>.dkr.ecr.<region>.amazonaws.com[.cn]/<repository name>
ECR_REPOSITORY = re.compile(
    r"^(?P<account>\d{12})\.dkr\.ecr\.(?P<region>[a-z0-9-]+)\.amazonaws\.com(?P<china>\.cn)?/(?P<name>.+)$"
)


class DirectImages(Strict):
    """The tasks pull ``versions.marquez_image`` as written (Docker Hub: anonymous, rate-limited)."""

    type: Literal["direct"] = Field(
        description="The tasks pull `versions.marquez_image` as named: Docker Hub anonymously, or the registry a "
        "repository URL names."
    )


class EcrPullThroughCache(Strict):
    """The tasks pull from an ECR pull-through cache of Docker Hub that the LineageService stack creates;
    ECR authenticates to Docker Hub with the secret's ``username`` and ``accessToken``."""

    type: Literal["ecr_pull_through_cache"] = Field(
        description="The LineageService stack creates an ECR pull-through cache rule for Docker Hub with repository "
        "prefix `emr-lineage-<env>`, and the tasks pull `<account>.dkr.ecr.<region>.amazonaws.com/emr-lineage-<env>/"
        "<Docker Hub path>`; `versions.marquez_image` must then name Docker Hub repositories."
    )
    # By name, the stack writes its ARN without the 6-character suffix.
    credentials_secret: Annotated[
        str,
        Field(
            max_length=612,
            description='The Secrets Manager secret holding `{"username", "accessToken"}` of a Docker Hub account, '
            "by name (`ecr-pullthroughcache/...`, as ECR requires; not ending in `-` and six characters) or full "
            "ARN, in the environment's account and region. **Create it before the first deploy** "
            "([how](operations.md#marquez-images-through-an-ecr-pull-through-cache)).",
        ),
    ]

    upstream_registry_url: ClassVar[str] = DOCKER_HUB_REGISTRY_URL

    @field_validator("credentials_secret")
    @classmethod
    def _secret(cls, value: str) -> str:
        if value.startswith("arn:"):
            if not CACHE_SECRET_ARN.match(value):
                raise ValueError(
                    f"{value} is not the full ARN of a Secrets Manager secret named {CACHE_SECRET_PREFIX}... "
                    "(ending in its 6-character suffix); or give the secret's name"
                )
            return value
        if not CACHE_SECRET_NAME.match(value) or len(value) > 512:
            raise ValueError(
                f"{value!r}: ECR reads upstream credentials only from a secret whose name starts with "
                f"{CACHE_SECRET_PREFIX!r} (then letters, digits and /_+=.@-)"
            )
        if re.search(f"{_SECRET_SUFFIX}$", value):
            # https://docs.aws.amazon.com/secretsmanager/latest/apireference/API_DescribeSecret.html
            raise ValueError(
                f"{value}: a name ending in '-' and six characters reads as a full ARN's suffix to Secrets "
                "Manager, so the ARN the stack writes would not find it; rename the secret or give its full ARN"
            )
        return value

    @property
    def secret_name(self) -> str:
        """The secret's name, also when the setting gives its full ARN."""
        match = CACHE_SECRET_ARN.match(self.credentials_secret)
        return match["name"] if match else self.credentials_secret

    @property
    def secret_arn(self) -> str | None:
        """The full ARN when the setting gives it (None: a name, whose ARN depends on account and region)."""
        return self.credentials_secret if self.credentials_secret.startswith("arn:") else None


ImageRegistry = Annotated[DirectImages | EcrPullThroughCache, Field(discriminator="type")]


def cache_prefix(resource_prefix: str) -> str:
    """The pull-through cache's repository prefix: the environment's resource prefix, so that the
    environments of one account and region (a rule per prefix) never share one."""
    return resource_prefix


def docker_hub_repository(repository: str) -> str | None:
    """The Docker Hub path of an image repository (``library/x`` for an official image ``x``), or None
    when the repository names another registry."""
    first, _, rest = repository.partition("/")
    if rest and (first in DOCKER_HUB_HOSTS):
        return docker_hub_repository(rest)
    if rest and ("." in first or ":" in first or first == "localhost"):
        return None
    return repository if rest else f"{DOCKER_HUB_OFFICIAL}/{repository}"


def cached_repository(prefix: str, repository: str) -> str:
    """The ECR repository under ``prefix`` that caches the Docker Hub ``repository``."""
    path = docker_hub_repository(repository)
    if path is None:
        raise ValueError(f"{repository} is not on Docker Hub")
    return f"{prefix}/{path}"


def cache_problem(prefix: str, repositories: dict[str, str]) -> str | None:
    """Why an environment cannot cache these ``versions.marquez_image`` repositories under ``prefix``
    (None when it can)."""
    if not ECR_PREFIX.match(prefix) or len(prefix) not in ECR_PREFIX_LENGTH:
        return (
            f"the ECR repository prefix {prefix!r} (emr-lineage-<environment>) is not one ECR takes (2-30 lowercase "
            "letters and digits, single separators); rename the environment"
        )
    for key, repository in repositories.items():
        if docker_hub_repository(repository) is None:
            return (
                f"marquez.image_registry ecr_pull_through_cache caches Docker Hub, but versions.marquez_image.{key} "
                f"is {repository}; use type direct for another registry"
            )
    return None
