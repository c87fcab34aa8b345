"""``marquez.image_registry``: as named, or through an ECR pull-through cache of Docker Hub whose
credentials secret ECR can read; bad values fail on one line naming the key."""

from __future__ import annotations

import copy
import json

import pytest

from emr_lineage.settings.images import cached_repository, docker_hub_repository
from emr_lineage.settings.loader import ConfigError, settings_from_context
from tests.emr_lineage.settings.test_config import _with

KEY = "marquez.image_registry"
SECRET = "ecr-pullthroughcache/emr-lineage/docker-hub"
SECRET_ARN = f"arn:aws:secretsmanager:eu-west-1:123456789012:secret:{SECRET}-AbC123"


@pytest.fixture
def block(repo_root):
    return json.loads((repo_root / "cdk.json").read_text())["context"]["emr-lineage"]


def cache(secret: str = SECRET) -> dict:
    return {"type": "ecr_pull_through_cache", "credentials_secret": secret}


def test_dev_pulls_as_named_and_prod_through_its_cache(block):
    dev, prod = settings_from_context(block, "dev"), settings_from_context(block, "prod")
    assert dev.marquez.image_registry.type == "direct"
    registry = prod.marquez.image_registry
    assert registry.type == "ecr_pull_through_cache"
    assert (registry.secret_name, registry.secret_arn) == (SECRET, None)
    assert prod.image_cache_prefix == "emr-lineage-prod" != dev.image_cache_prefix


def test_without_the_key_the_images_are_pulled_as_named(block):
    assert settings_from_context(_with(block, KEY, ...), "dev").marquez.image_registry.type == "direct"


def test_a_full_secret_arn_is_taken_as_it_is(block):
    registry = settings_from_context(_with(block, KEY, cache(SECRET_ARN)), "dev").marquez.image_registry
    assert (registry.secret_arn, registry.secret_name) == (SECRET_ARN, SECRET)


@pytest.mark.parametrize(
    ("value", "message"),
    [
        (
            cache("docker-hub"),
            r"marquez\.image_registry\.ecr_pull_through_cache\.credentials_secret: 'docker-hub': ECR reads upstream "
            r"credentials only from a secret whose name starts with 'ecr-pullthroughcache/'",
        ),
        (
            cache("ecr-pullthroughcache/docker-hub-AbC123"),
            r"credentials_secret: ecr-pullthroughcache/docker-hub-AbC123: a name ending in '-' and six characters "
            r"reads as a full ARN's suffix",
        ),
        (
            cache(f"arn:aws:secretsmanager:eu-west-1:123456789012:secret:{SECRET}"),
            r"credentials_secret: arn:.*:secret:ecr-pullthroughcache/emr-lineage/docker-hub is not the full ARN",
        ),
        (
            {"type": "ecr_pull_through_cache", "credential_secret": SECRET},
            r"ecr_pull_through_cache\.credential_secret: unknown key \(did you mean 'credentials_secret'\?\)",
        ),
        ({"type": "docker_hub"}, r"marquez\.image_registry: .*'direct', 'ecr_pull_through_cache'"),
        ("direct", r"marquez\.image_registry: "),
    ],
    ids=["not-the-ecr-prefix", "suffix-like-name", "partial-arn", "mistyped-key", "unknown-type", "not-an-object"],
)
def test_bad_registries_fail_naming_the_key(block, value, message):
    with pytest.raises(ConfigError, match=message):
        settings_from_context(_with(block, KEY, value), "dev")


def test_the_cache_takes_docker_hub_repositories_only(block):
    data = _with(block, KEY, cache())
    data["versions"]["marquez_image"]["web"] = "ghcr.io/example/marquez-web"
    with pytest.raises(ConfigError) as excinfo:
        settings_from_context(data, "dev")
    assert str(excinfo.value).splitlines()[1].strip() == (
        "emr-lineage.environments.dev: marquez.image_registry ecr_pull_through_cache caches Docker Hub, but "
        "versions.marquez_image.web is ghcr.io/example/marquez-web; use type direct for another registry"
    )


def test_an_environment_name_ecr_refuses_as_a_prefix_fails_with_the_cache_only(block):
    data = copy.deepcopy(block)
    data["environments"]["dev-"] = copy.deepcopy(data["environments"]["dev"])
    data["environments"]["dev-"]["marquez"]["allow_plain_http"] = True  # only "dev" allows it by default
    assert settings_from_context(data, "dev-").image_cache_prefix == "emr-lineage-dev-"  # fine while direct
    data["environments"]["dev-"]["marquez"]["image_registry"] = cache()
    with pytest.raises(ConfigError, match=r"the ECR repository prefix 'emr-lineage-dev-' .* rename the environment"):
        settings_from_context(data, "dev-")


@pytest.mark.parametrize(
    ("repository", "path"),
    [
        ("marquezproject/marquez", "marquezproject/marquez"),
        ("postgres", "library/postgres"),  # official images live under library/ on Docker Hub
        ("docker.io/marquezproject/marquez-web", "marquezproject/marquez-web"),
        ("docker.io/postgres", "library/postgres"),
        ("ghcr.io/example/marquez", None),
        ("localhost:5000/marquez", None),
        ("123456789012.dkr.ecr.eu-west-1.amazonaws.com/mirror/marquez", None),
    ],
)
def test_docker_hub_paths_of_image_repositories(repository, path):
    assert docker_hub_repository(repository) == path
    if path:
        assert cached_repository("emr-lineage-prod", repository) == f"emr-lineage-prod/{path}"
