"""The Marquez container images (``versions.marquez_image`` tagged ``versions.marquez``) and what a
task needs to pull them, as ``marquez.image_registry`` says (emr_lineage/settings/images.py).

``direct``: Docker Hub (the default names) or any public registry is pulled as is. An Amazon ECR
repository URL in the same partition (a private mirror, e.g.
``123456789012.dkr.ecr.eu-west-1.amazonaws.com/mirror/marquezproject/marquez``) is referenced as
one, so the task's execution role gets exactly the pull permissions on that repository.

``ecr_pull_through_cache``: an ECR pull-through cache rule for Docker Hub under the environment's
prefix, whose credentials ECR reads from the named secret (which must exist before the deploy:
creating the rule checks it). The tasks pull ``<prefix>/<Docker Hub path>`` from ECR; the first pull
of a tag imports it from Docker Hub and creates the repository, so the execution role also gets
``ecr:BatchImportUpstreamImage`` and ``ecr:CreateRepository`` on exactly those repositories
(https://docs.aws.amazon.com/AmazonECR/latest/userguide/pull-through-cache-iam.html).
"""

from __future__ import annotations

from aws_cdk import ArnFormat, Stack
from aws_cdk import aws_ecr as ecr
from aws_cdk import aws_ecs as ecs
from aws_cdk import aws_iam as iam
from constructs import Construct

from emr_lineage.settings.images import (
    DOCKER_HUB_UPSTREAM,
    ECR_REPOSITORY,
    EcrPullThroughCache,
    cached_repository,
)
from emr_lineage.settings.model import EnvironmentSettings
from stacks.shared.nag import acknowledge

# What a first pull through the cache does besides pulling: import the tag, create its repository.
CACHE_IMPORT_ACTIONS = ("ecr:BatchImportUpstreamImage", "ecr:CreateRepository")


def ecr_repository_arn(repository: str) -> str | None:
    """The ARN of an ECR repository URL, or None for any other registry."""
    match = ECR_REPOSITORY.match(repository)
    if match is None:
        return None
    partition = "aws-cn" if match["china"] else "aws"
    return f"arn:{partition}:ecr:{match['region']}:{match['account']}:repository/{match['name']}"


def credentials_arn(scope: Construct, cache: EcrPullThroughCache) -> str:
    """The secret's ARN for the rule: as given, or built from its name in the stack's account and region
    (without the 6-character suffix, which only exists once the secret does)."""
    if cache.secret_arn:
        return cache.secret_arn
    return Stack.of(scope).format_arn(
        service="secretsmanager",
        resource="secret",
        resource_name=cache.secret_name,
        arn_format=ArnFormat.COLON_RESOURCE_NAME,
    )


class MarquezImages(Construct):
    """The API and web images: ``api`` and ``web`` (``ecs.ContainerImage``), and ``cache_rule`` (the
    ``CfnPullThroughCacheRule``, None unless ``ecr_pull_through_cache``). A task that runs one of them
    calls :meth:`pulled_by`."""

    def __init__(self, scope: Construct, construct_id: str, *, settings: EnvironmentSettings) -> None:
        super().__init__(scope, construct_id)
        registry = settings.marquez.image_registry
        self.cache_rule: ecr.CfnPullThroughCacheRule | None = None
        self._prefix = settings.image_cache_prefix
        if isinstance(registry, EcrPullThroughCache):
            self.cache_rule = ecr.CfnPullThroughCacheRule(
                self,
                "PullThroughCacheRule",
                ecr_repository_prefix=self._prefix,
                upstream_registry=DOCKER_HUB_UPSTREAM,
                upstream_registry_url=registry.upstream_registry_url,
                credential_arn=credentials_arn(self, registry),
            )
        self._from_ecr: set[str] = set()  # "api"/"web" pulled from an ECR repository (cache or mirror)
        self._imports: dict[str, str] = {}  # "api"/"web" -> the ARN of its cached repository (a first pull creates it)
        names, tag = settings.versions.marquez_image, settings.versions.marquez
        self.api = self._image("api", "ApiImage", names.api, tag)
        self.web = self._image("web", "WebImage", names.web, tag)

    def _image(self, key: str, construct_id: str, repository: str, tag: str) -> ecs.ContainerImage:
        if self.cache_rule is not None:
            in_ecr = ecr.Repository.from_repository_name(
                self, construct_id, cached_repository(self._prefix, repository)
            )
            self._imports[key] = in_ecr.repository_arn
        else:
            arn = ecr_repository_arn(repository)
            if arn is None:
                return ecs.ContainerImage.from_registry(f"{repository}:{tag}")
            name = ECR_REPOSITORY.match(repository)["name"]
            in_ecr = ecr.Repository.from_repository_attributes(
                self, construct_id, repository_arn=arn, repository_name=name
            )
        self._from_ecr.add(key)
        return ecs.ContainerImage.from_ecr_repository(in_ecr, tag)

    def pulled_by(self, task: ecs.TaskDefinition, *images: str) -> None:
        """What ``task`` needs to pull ``images`` ("api", "web") beyond the image's own pull grant: through
        the cache, the import of a first pull and the rule itself before the task."""
        imports = [self._imports[image] for image in images if image in self._imports]
        if imports and self.cache_rule is not None:
            task.add_to_execution_role_policy(
                iam.PolicyStatement(actions=list(CACHE_IMPORT_ACTIONS), resources=imports)
            )
            task.node.add_dependency(self.cache_rule)
        if any(image in self._from_ecr for image in images) and task.execution_role is not None:
            acknowledge(
                task.execution_role,
                "AwsSolutions-IAM5[Resource::*]",
                "ecr:GetAuthorizationToken has no resource-level permissions; the image pull itself is "
                "scoped to the Marquez ECR repositories.",
            )
