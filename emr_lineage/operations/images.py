"""The doctor's checks of the Marquez images, as ``marquez.image_registry`` says where they come from
(emr_lineage/settings/images.py).

Through the ECR pull-through cache: before the deploy, the Docker Hub credentials secret exists and
holds ``username`` and ``accessToken`` (creating the rule checks the secret, so a missing one fails
the deploy); after it, the rule exists for the environment's prefix, caches Docker Hub with that
secret, and ECR signs in to Docker Hub with it (``ecr:ValidatePullThroughCacheRule``). Then whether
each image's tag is in ECR: a tag not cached yet is pulled from Docker Hub by the first task, so
whether Docker Hub has it shows only then. Direct from Docker Hub: anonymous pulls, rate-limited per
IP address, a warning. An explicit ECR mirror: the tag must be there.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass

from emr_lineage.operations.checks import CheckResult, DoctorClients, Status, aws_call
from emr_lineage.settings.images import (
    ECR_REPOSITORY,
    EcrPullThroughCache,
    cached_repository,
    docker_hub_repository,
)
from emr_lineage.settings.model import EnvironmentSettings

SECRET_CHECK, SECRET_TITLE = "marquez-image-credentials", "Docker Hub credentials secret (ECR pull-through cache)"
RULE_CHECK, RULE_TITLE = "marquez-image-cache", "ECR pull-through cache rule"
IMAGES_CHECK, IMAGES_TITLE = "marquez-images", "Marquez images"
CREDENTIAL_KEYS = ("username", "accessToken")
DOCS = "docs/operations.md#marquez-images-through-an-ecr-pull-through-cache"
SECRET_VALUE = """'{"username":"<Docker Hub user>","accessToken":"<Docker Hub access token>"}'"""
READ_FIX = "doctor reads the secret's value (it never prints it): give its identity secretsmanager:GetSecretValue on it"
# Docker Hub's limit for unauthenticated pulls (https://docs.docker.com/docker-hub/usage/).
ANONYMOUS_PULLS = (
    "anonymous pulls are limited to 10 per hour per IPv4 address (the NAT gateways'), so a crash loop or a "
    "scale-out can stall"
)
# What describe_images answers for a repository or tag that is not there.
MISSING = {"RepositoryNotFoundException": "no such repository", "ImageNotFoundException": "no such tag"}
# Worst first: the row takes the first of these among its images.
_ORDER = (Status.FAIL, Status.WARN, Status.PASS, Status.SKIP)


def create_secret_command(name: str) -> str:
    return f"aws secretsmanager create-secret --name {name} --secret-string {SECRET_VALUE}"


def credentials_secret(clients: DoctorClients, cache: EcrPullThroughCache) -> CheckResult:
    """The secret exists, is not being deleted, and holds a JSON object with both credentials."""
    secret = cache.credentials_secret
    described, problem = aws_call(lambda: clients.secretsmanager.describe_secret(SecretId=secret))
    if problem:
        if not problem.startswith("ResourceNotFoundException"):
            return CheckResult(SECRET_CHECK, SECRET_TITLE, Status.FAIL, f"{secret}: {problem}")
        detail = f"no secret {secret} in {clients.region}: creating the cache rule (the deploy) would fail"
        return CheckResult(SECRET_CHECK, SECRET_TITLE, Status.FAIL, detail, create_secret_command(cache.secret_name))
    arn = described["ARN"]
    if described.get("DeletedDate"):
        fix = f"aws secretsmanager restore-secret --secret-id {arn}"
        return CheckResult(SECRET_CHECK, SECRET_TITLE, Status.FAIL, f"{arn} is scheduled for deletion", fix)
    value, problem = aws_call(lambda: clients.secretsmanager.get_secret_value(SecretId=arn))
    if problem:
        return CheckResult(SECRET_CHECK, SECRET_TITLE, Status.FAIL, f"{arn}: reading its value: {problem}", READ_FIX)
    missing = _missing_credentials(value.get("SecretString"))
    if missing:
        detail = f"{arn} has no {' or '.join(missing)}: ECR reads a JSON object with both"
        fix = f"aws secretsmanager put-secret-value --secret-id {arn} --secret-string {SECRET_VALUE}"
        return CheckResult(SECRET_CHECK, SECRET_TITLE, Status.FAIL, detail, fix)
    return CheckResult(SECRET_CHECK, SECRET_TITLE, Status.PASS, f"{arn} holds {' and '.join(CREDENTIAL_KEYS)}")


def _missing_credentials(text: str | None) -> list[str]:
    try:
        document = json.loads(text or "")
    except json.JSONDecodeError:
        document = None
    if not isinstance(document, dict):
        return list(CREDENTIAL_KEYS)
    return [key for key in CREDENTIAL_KEYS if not (isinstance(document.get(key), str) and document[key])]


def cache_rule(clients: DoctorClients, settings: EnvironmentSettings, cache: EcrPullThroughCache) -> CheckResult:
    """The environment's rule caches Docker Hub with the configured secret, and Docker Hub takes it."""
    prefix, deploy = settings.image_cache_prefix, f"make deploy ENV={settings.name}"
    reply, problem = aws_call(lambda: clients.ecr.describe_pull_through_cache_rules(ecrRepositoryPrefixes=[prefix]))
    if problem:
        if problem.startswith("PullThroughCacheRuleNotFoundException"):
            detail, fix = (
                f"no rule for prefix {prefix}/ in {clients.region}",
                f"deploy the LineageService stack: {deploy}",
            )
            return CheckResult(RULE_CHECK, RULE_TITLE, Status.FAIL, detail, fix)
        return CheckResult(RULE_CHECK, RULE_TITLE, Status.FAIL, f"prefix {prefix}/: {problem}")
    rule = reply["pullThroughCacheRules"][0]
    upstream, credential = rule.get("upstreamRegistryUrl", "?"), rule.get("credentialArn", "none")
    if upstream != cache.upstream_registry_url:
        detail = f"the rule for {prefix}/ caches {upstream}, not Docker Hub ({cache.upstream_registry_url})"
        fix = f"aws ecr delete-pull-through-cache-rule --ecr-repository-prefix {prefix}, then {deploy}"
        return CheckResult(RULE_CHECK, RULE_TITLE, Status.FAIL, detail, fix)
    if not _names_secret(credential, cache):
        detail = (
            f"the rule for {prefix}/ reads {credential}, but marquez.image_registry names {cache.credentials_secret}"
        )
        fix = f"put the credentials into the rule's secret, or change the secret in two deploys ({DOCS})"
        return CheckResult(RULE_CHECK, RULE_TITLE, Status.FAIL, detail, fix)
    validation, problem = aws_call(lambda: clients.ecr.validate_pull_through_cache_rule(ecrRepositoryPrefix=prefix))
    if problem:
        return CheckResult(RULE_CHECK, RULE_TITLE, Status.FAIL, f"validating the rule for {prefix}/: {problem}")
    if not validation.get("isValid"):
        detail = f"ECR cannot sign in to Docker Hub with {credential}: {validation.get('failure') or 'no reason given'}"
        fix = f"put a working user and access token: aws secretsmanager put-secret-value --secret-id {credential} "
        return CheckResult(RULE_CHECK, RULE_TITLE, Status.FAIL, detail, fix + f"--secret-string {SECRET_VALUE}")
    detail = f"{prefix}/ caches {upstream}; ECR signs in to it with {credential} (ecr:ValidatePullThroughCacheRule)"
    return CheckResult(RULE_CHECK, RULE_TITLE, Status.PASS, detail)


def _names_secret(credential: str, cache: EcrPullThroughCache) -> bool:
    """Whether the rule's ARN is the configured secret's (the full ARN, or the name with or without suffix)."""
    if cache.secret_arn:
        return credential == cache.secret_arn
    return re.search(rf":secret:{re.escape(cache.secret_name)}(-[A-Za-z0-9]{{6}})?$", credential) is not None


def needs_aws(settings: EnvironmentSettings) -> bool:
    """Whether the images row reads AWS: through the cache or from an ECR mirror (not for Docker Hub alone)."""
    images = settings.versions.marquez_image
    cached = isinstance(settings.marquez.image_registry, EcrPullThroughCache)
    return cached or any(ECR_REPOSITORY.match(r) for r in (images.api, images.web))


@dataclass(frozen=True)
class _Finding:
    status: Status
    text: str
    fix: str = ""


def marquez_images(clients: DoctorClients | None, settings: EnvironmentSettings) -> CheckResult:
    """Each image where the tasks pull it; ``clients`` may be None when :func:`needs_aws` is false."""
    names, tag = settings.versions.marquez_image, settings.versions.marquez
    findings = [_image(clients, settings, repository, tag) for repository in (names.api, names.web)]
    status = next(s for s in _ORDER if any(f.status is s for f in findings))
    detail = "; ".join(f.text for f in findings)
    if any(docker_hub_repository(r) for r in (names.api, names.web)) and not isinstance(
        settings.marquez.image_registry, EcrPullThroughCache
    ):
        detail += f" ({ANONYMOUS_PULLS}; the tag is checked only by a pull)"
    fix = "; ".join(dict.fromkeys(f.fix for f in findings if f.fix))
    return CheckResult(IMAGES_CHECK, IMAGES_TITLE, status, detail, fix)


def _image(clients: DoctorClients | None, settings: EnvironmentSettings, repository: str, tag: str) -> _Finding:
    registry = settings.marquez.image_registry
    if isinstance(registry, EcrPullThroughCache):
        cached = cached_repository(settings.image_cache_prefix, repository)
        return _cached_tag(clients, cached, tag) if clients else _Finding(Status.SKIP, f"{cached}: not checked")
    mirror = ECR_REPOSITORY.match(repository)
    if mirror and clients and mirror["region"] == clients.region:
        return _mirrored_tag(clients, mirror["account"], mirror["name"], tag)
    if mirror:
        return _Finding(Status.SKIP, f"{repository}:{tag}: not checked (doctor reads ECR in its own region)")
    if docker_hub_repository(repository):
        fix = f"pull through an ECR cache: marquez.image_registry type ecr_pull_through_cache ({DOCS})"
        return _Finding(Status.WARN, f"{repository}:{tag} from Docker Hub, anonymously", fix)
    return _Finding(Status.SKIP, f"{repository}:{tag}: not checked (another registry)")


def _cached_tag(clients: DoctorClients, repository: str, tag: str) -> _Finding:
    found, problem = _tag_in_ecr(clients, repository, tag)
    if found:
        return _Finding(Status.PASS, f"{repository}:{tag} cached ({found})")
    if problem in MISSING:
        text = f"{repository}:{tag} not cached yet: the first task pulls it from Docker Hub (a missing tag shows then)"
        pull = f"aws ecr batch-get-image --repository-name {repository} --image-ids imageTag={tag} --query failures"
        fix = f"pull it now: {pull}"
        return _Finding(Status.WARN, text, fix)
    return _Finding(Status.FAIL, f"{repository}:{tag}: {problem}")


def _mirrored_tag(clients: DoctorClients, account: str, repository: str, tag: str) -> _Finding:
    found, problem = _tag_in_ecr(clients, repository, tag, account)
    if found:
        return _Finding(Status.PASS, f"{repository}:{tag} in ECR account {account} ({found})")
    fix = f"push {tag} to {repository} (or pull it once through the mirror's own cache) before deploying"
    return _Finding(Status.FAIL, f"{repository}:{tag} in ECR account {account}: {MISSING.get(problem, problem)}", fix)


def _tag_in_ecr(clients: DoctorClients, repository: str, tag: str, account: str | None = None) -> tuple[str, str]:
    """(what ECR says of the tag, "") or ("", the error: its code alone when the repository or tag is missing)."""
    registry = {"registryId": account} if account else {}
    reply, problem = aws_call(
        lambda: clients.ecr.describe_images(repositoryName=repository, imageIds=[{"imageTag": tag}], **registry)
    )
    if problem:
        code = problem.split(":", 1)[0]
        return "", code if code in MISSING else problem
    (image,) = reply["imageDetails"]
    pushed = image.get("imagePushedAt")
    return f"{image['imageDigest'][:19]}…" + (f", since {pushed:%Y-%m-%d}" if pushed else ""), ""
