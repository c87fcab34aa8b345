"""The Marquez container images: ``versions.marquez_image`` repositories tagged ``versions.marquez``.

Docker Hub (the default, ``marquezproject/marquez``) or any public registry is pulled as is. An
Amazon ECR repository in the same partition (a private mirror or a pull-through cache, e.g.
``123456789012.dkr.ecr.eu-west-1.amazonaws.com/docker-hub/marquezproject/marquez``) is referenced
as one, so the task's execution role gets exactly the pull permissions on that repository.
"""

from __future__ import annotations

import re

from aws_cdk import aws_ecr as ecr
from aws_cdk import aws_ecs as ecs
from constructs import Construct

from stacks.shared.nag import acknowledge

# <account>.dkr.ecr.<region>.amazonaws.com[.cn]/<repository name>
ECR_REPOSITORY = re.compile(
    r"^(?P<account>\d{12})\.dkr\.ecr\.(?P<region>[a-z0-9-]+)\.amazonaws\.com(?P<china>\.cn)?/(?P<name>.+)$"
)


def ecr_repository_arn(repository: str) -> str | None:
    """The ARN of an ECR repository URL, or None for any other registry."""
    match = ECR_REPOSITORY.match(repository)
    if match is None:
        return None
    partition = "aws-cn" if match["china"] else "aws"
    return f"arn:{partition}:ecr:{match['region']}:{match['account']}:repository/{match['name']}"


def container_image(scope: Construct, construct_id: str, *, repository: str, tag: str) -> ecs.ContainerImage:
    """``repository:tag`` as an ECS image; an ECR repository grants its pull to the task's execution role."""
    arn = ecr_repository_arn(repository)
    if arn is None:
        return ecs.ContainerImage.from_registry(f"{repository}:{tag}")
    name = ECR_REPOSITORY.match(repository)["name"]
    repo = ecr.Repository.from_repository_attributes(scope, construct_id, repository_arn=arn, repository_name=name)
    return ecs.ContainerImage.from_ecr_repository(repo, tag)


def acknowledge_ecr_token(task: ecs.TaskDefinition, repositories: list[str]) -> None:
    """ECR's pull grant includes ``ecr:GetAuthorizationToken`` on ``*`` (the action has no resource)."""
    if any(ecr_repository_arn(r) for r in repositories) and task.execution_role is not None:
        acknowledge(
            task.execution_role,
            "AwsSolutions-IAM5[Resource::*]",
            "ecr:GetAuthorizationToken has no resource-level permissions; the image pull itself is "
            "scoped to the configured Marquez ECR repositories.",
        )
