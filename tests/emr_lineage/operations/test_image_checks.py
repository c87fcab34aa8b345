"""doctor's rows of the Marquez images: Docker Hub as named (a warning), an ECR mirror (moto), and the
ECR pull-through cache: its credentials secret (moto), its rule and the cached tags (botocore's Stubber
on the ECR client: moto 5.2.5 has no pull-through cache calls, so the requests are checked against
ECR's service model instead)."""

from __future__ import annotations

import datetime as dt
import json
from collections.abc import Iterator
from pathlib import Path

import boto3
import pytest
from botocore.stub import Stubber

from emr_lineage.aws.clients import AwsError
from emr_lineage.operations.checks import DoctorClients, Status
from emr_lineage.operations.doctor import DoctorOptions, run_doctor
from emr_lineage.operations.images import RULE_CHECK, SECRET_CHECK, SECRET_VALUE
from emr_lineage.settings.loader import load_settings
from emr_lineage.settings.model import EnvironmentSettings
from tests.emr_lineage.operations.prepared_account import (
    ENV,
    REGION,
    cdk_json_copy,
    client,
    doctor_clients,
    moto_account,
)

ACCOUNT = "123456789012"  # moto's
SECRET = "ecr-pullthroughcache/emr-lineage/docker-hub"
SECRET_ARN = f"arn:aws:secretsmanager:{REGION}:{ACCOUNT}:secret:{SECRET}-AbC123"
# What the stack writes for a secret it knows by name: no 6-character suffix.
RULE_CREDENTIAL = f"arn:aws:secretsmanager:{REGION}:{ACCOUNT}:secret:{SECRET}"
OTHER_SECRET_ARN = f"arn:aws:secretsmanager:{REGION}:{ACCOUNT}:secret:ecr-pullthroughcache/other-XyZ789"
PREFIX = "emr-lineage-dev"
TAG = "0.51.1"
API, WEB = f"{PREFIX}/marquezproject/marquez", f"{PREFIX}/marquezproject/marquez-web"
IMAGES = "marquez-images"
CREDENTIALS = json.dumps({"username": "platform-bot", "accessToken": "dckr_pat_example"})


@pytest.fixture
def aws(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    yield from moto_account(monkeypatch)


def settings_with(tmp_path: Path, registry: dict | None = None, **images: str) -> EnvironmentSettings:
    """dev with ``marquez.image_registry`` and ``versions.marquez_image`` repositories as given."""
    path = cdk_json_copy(tmp_path)
    document = json.loads(path.read_text())
    block = document["context"]["emr-lineage"]
    if registry is not None:
        block["environments"][ENV]["marquez"]["image_registry"] = registry
    block["versions"]["marquez_image"].update(images)
    path.write_text(json.dumps(document))
    return load_settings(ENV, path)


def cached(tmp_path: Path, secret: str = SECRET) -> EnvironmentSettings:
    return settings_with(tmp_path, {"type": "ecr_pull_through_cache", "credentials_secret": secret})


def rows(settings: EnvironmentSettings, ecr: object | None = None) -> dict[str, tuple[Status, str, str]]:
    """doctor's rows, with ``ecr`` (a stubbed client) in place of moto's."""

    def connect(settings: EnvironmentSettings, timeout: float) -> DoctorClients:
        clients = doctor_clients(settings, timeout)
        if ecr is None:
            return clients
        return DoctorClients(lambda service: ecr if service == "ecr" else clients.of(service))

    report = run_doctor(settings, DoctorOptions(timeout=2), connect)
    return {r.check: (r.status, r.detail, r.fix) for r in report.results}


@pytest.fixture
def ecr() -> Iterator[tuple[object, Stubber]]:
    """An ECR client whose every call is a stubbed answer, in order; none may be left unanswered."""
    stubbed = boto3.client("ecr", region_name=REGION, aws_access_key_id="x", aws_secret_access_key="x")
    with Stubber(stubbed) as stubber:
        yield stubbed, stubber
        stubber.assert_no_pending_responses()


def answer_rule(stubber: Stubber, *, credential: str = RULE_CREDENTIAL, upstream: str = "registry-1.docker.io") -> None:
    rule = {"ecrRepositoryPrefix": PREFIX, "upstreamRegistryUrl": upstream, "credentialArn": credential}
    rule |= {"registryId": ACCOUNT, "upstreamRegistry": "docker-hub"}
    stubber.add_response(
        "describe_pull_through_cache_rules", {"pullThroughCacheRules": [rule]}, {"ecrRepositoryPrefixes": [PREFIX]}
    )


def answer_validation(stubber: Stubber, *, valid: bool = True, failure: str = "") -> None:
    reply = {"ecrRepositoryPrefix": PREFIX, "upstreamRegistryUrl": "registry-1.docker.io", "isValid": valid}
    stubber.add_response(
        "validate_pull_through_cache_rule",
        reply | ({"failure": failure} if failure else {}),
        {"ecrRepositoryPrefix": PREFIX},
    )


def answer_image(stubber: Stubber, repository: str, *, cached: bool) -> None:
    expected = {"repositoryName": repository, "imageIds": [{"imageTag": TAG}]}
    if not cached:
        stubber.add_client_error(
            "describe_images", "RepositoryNotFoundException", "no repository", 400, expected_params=expected
        )
        return
    image = {
        "repositoryName": repository,
        "imageDigest": "sha256:" + "ab" * 32,
        "imageTags": [TAG],
        "imagePushedAt": dt.datetime(2026, 11, 2, 8, 0, tzinfo=dt.UTC),
    }
    stubber.add_response("describe_images", {"imageDetails": [image]}, expected)


def answer_not_deployed(stubber: Stubber) -> None:
    """ECR before the deploy: no rule, nothing cached."""
    stubber.add_client_error("describe_pull_through_cache_rules", "PullThroughCacheRuleNotFoundException", "none")
    answer_image(stubber, API, cached=False)
    answer_image(stubber, WEB, cached=False)


# --- Docker Hub as named, and an ECR mirror ----------------------------------------------------------


def test_docker_hub_as_named_is_a_warning_that_needs_no_aws(tmp_path: Path) -> None:
    def no_aws(settings: EnvironmentSettings, timeout: float) -> DoctorClients:
        raise AwsError("no AWS region")

    settings = load_settings(ENV, cdk_json_copy(tmp_path))
    report = run_doctor(settings, DoctorOptions(timeout=2), no_aws)
    found = {r.check: r for r in report.results}
    row = found[IMAGES]
    assert row.status is Status.WARN
    assert row.detail == (
        f"marquezproject/marquez:{TAG} from Docker Hub, anonymously; marquezproject/marquez-web:{TAG} from Docker Hub, "
        "anonymously (anonymous pulls are limited to 10 per hour per IPv4 address (the NAT gateways'), so a crash "
        "loop or a scale-out can stall; the tag is checked only by a pull)"
    )
    assert "marquez.image_registry type ecr_pull_through_cache" in row.fix
    for check in (SECRET_CHECK, RULE_CHECK):
        assert found[check].detail == "not needed: marquez.image_registry is direct"


def test_an_ecr_mirror_passes_with_the_tag_and_fails_without(aws, tmp_path: Path) -> None:
    mirror = f"{ACCOUNT}.dkr.ecr.{REGION}.amazonaws.com/mirror/marquezproject"
    settings = settings_with(tmp_path, api=f"{mirror}/marquez", web=f"{mirror}/marquez-web")
    ecr = client("ecr")
    for name in ("marquez", "marquez-web"):
        ecr.create_repository(repositoryName=f"mirror/marquezproject/{name}")
    manifest = json.dumps({"schemaVersion": 2, "mediaType": "application/vnd.docker.distribution.manifest.v2+json"})
    ecr.put_image(repositoryName="mirror/marquezproject/marquez", imageManifest=manifest, imageTag=TAG)
    status, detail, fix = rows(settings)[IMAGES]
    assert status is Status.FAIL
    assert detail.startswith(f"mirror/marquezproject/marquez:{TAG} in ECR account {ACCOUNT} (sha256:")
    assert detail.endswith(f"; mirror/marquezproject/marquez-web:{TAG} in ECR account {ACCOUNT}: no such tag")
    assert fix.startswith(f"push {TAG} to mirror/marquezproject/marquez-web (or pull it once through the mirror's")
    ecr.put_image(repositoryName="mirror/marquezproject/marquez-web", imageManifest=manifest, imageTag=TAG)
    assert rows(settings)[IMAGES][0] is Status.PASS


def test_a_mirror_in_another_region_is_not_checked(aws, tmp_path: Path) -> None:
    mirror = f"{ACCOUNT}.dkr.ecr.us-east-1.amazonaws.com/mirror"
    settings = settings_with(tmp_path, api=f"{mirror}/marquez", web=f"{mirror}/marquez-web")
    status, detail, _ = rows(settings)[IMAGES]
    assert status is Status.SKIP and detail.count("not checked (doctor reads ECR in its own region)") == 2


# --- the pull-through cache: the credentials secret, before the deploy ------------------------------------


def test_a_missing_secret_fails_with_the_command_that_creates_it(aws, tmp_path: Path, ecr) -> None:
    stubbed, stubber = ecr
    answer_not_deployed(stubber)
    found = rows(cached(tmp_path), stubbed)
    assert found[SECRET_CHECK] == (
        Status.FAIL,
        f"no secret {SECRET} in {REGION}: creating the cache rule (the deploy) would fail",
        f"aws secretsmanager create-secret --name {SECRET} --secret-string "
        """'{"username":"<Docker Hub user>","accessToken":"<Docker Hub access token>"}'""",
    )
    assert found[RULE_CHECK] == (
        Status.FAIL,
        f"no rule for prefix {PREFIX}/ in {REGION}",
        f"deploy the LineageService stack: make deploy ENV={ENV}",
    )
    status, detail, fix = found[IMAGES]
    assert status is Status.WARN and detail.startswith(f"{API}:{TAG} not cached yet: the first task pulls it from")
    assert (
        fix
        == f"pull it now: aws ecr batch-get-image --repository-name {API} --image-ids imageTag={TAG} --query failures; "
        + (f"pull it now: aws ecr batch-get-image --repository-name {WEB} --image-ids imageTag={TAG} --query failures")
    )


@pytest.mark.parametrize(
    ("value", "missing"),
    [('{"username": "platform-bot"}', "accessToken"), ("dckr_pat_example", "username or accessToken")],
)
def test_a_secret_without_both_credentials_fails_with_the_put(aws, tmp_path: Path, ecr, value, missing) -> None:
    arn = client("secretsmanager").create_secret(Name=SECRET, SecretString=value)["ARN"]
    answer_not_deployed(ecr[1])
    status, detail, fix = rows(cached(tmp_path), ecr[0])[SECRET_CHECK]
    assert (status, detail) == (Status.FAIL, f"{arn} has no {missing}: ECR reads a JSON object with both")
    assert fix == f"aws secretsmanager put-secret-value --secret-id {arn} --secret-string {SECRET_VALUE}"


def test_a_secret_with_both_credentials_passes_and_is_never_printed(aws, tmp_path: Path, ecr) -> None:
    arn = client("secretsmanager").create_secret(Name=SECRET, SecretString=CREDENTIALS)["ARN"]
    answer_not_deployed(ecr[1])
    found = rows(cached(tmp_path), ecr[0])
    assert found[SECRET_CHECK] == (Status.PASS, f"{arn} holds username and accessToken", "")
    assert not any("dckr_pat_example" in detail + fix for _, detail, fix in found.values())


def test_a_secret_scheduled_for_deletion_fails_with_the_restore(aws, tmp_path: Path, ecr) -> None:
    secrets = client("secretsmanager")
    arn = secrets.create_secret(Name=SECRET, SecretString=CREDENTIALS)["ARN"]
    secrets.delete_secret(SecretId=arn, RecoveryWindowInDays=7)
    answer_not_deployed(ecr[1])
    assert rows(cached(tmp_path), ecr[0])[SECRET_CHECK] == (
        Status.FAIL,
        f"{arn} is scheduled for deletion",
        f"aws secretsmanager restore-secret --secret-id {arn}",
    )


# --- the pull-through cache: the rule and the cached tags, after the deploy -----------------------------


def test_a_rule_docker_hub_accepts_and_cached_tags_pass(aws, tmp_path: Path, ecr) -> None:
    stubbed, stubber = ecr
    answer_rule(stubber)
    answer_validation(stubber)
    answer_image(stubber, API, cached=True)
    answer_image(stubber, WEB, cached=True)
    found = rows(cached(tmp_path), stubbed)
    signed_in = f"ECR signs in to it with {RULE_CREDENTIAL} (ecr:ValidatePullThroughCacheRule)"
    assert found[RULE_CHECK] == (Status.PASS, f"{PREFIX}/ caches registry-1.docker.io; {signed_in}", "")
    digest = "sha256:" + "ab" * 6 + "…"
    assert found[IMAGES] == (
        Status.PASS,
        f"{API}:{TAG} cached ({digest}, since 2026-11-02); {WEB}:{TAG} cached ({digest}, since 2026-11-02)",
        "",
    )


@pytest.mark.parametrize(
    ("credential", "upstream", "valid", "detail", "fix"),
    [
        (
            RULE_CREDENTIAL,
            "registry-1.docker.io",
            False,
            f"ECR cannot sign in to Docker Hub with {RULE_CREDENTIAL}: Invalid credentials",
            f"put a working user and access token: aws secretsmanager put-secret-value --secret-id {RULE_CREDENTIAL} "
            f"--secret-string {SECRET_VALUE}",
        ),
        (
            OTHER_SECRET_ARN,
            "registry-1.docker.io",
            True,
            f"the rule for {PREFIX}/ reads {OTHER_SECRET_ARN}, but marquez.image_registry names {SECRET}",
            "put the credentials into the rule's secret, or change the secret in two deploys "
            "(docs/operations.md#marquez-images-through-an-ecr-pull-through-cache)",
        ),
        (
            RULE_CREDENTIAL,
            "quay.io",
            True,
            f"the rule for {PREFIX}/ caches quay.io, not Docker Hub (registry-1.docker.io)",
            f"aws ecr delete-pull-through-cache-rule --ecr-repository-prefix {PREFIX}, then make deploy ENV={ENV}",
        ),
    ],
    ids=["docker-hub-refuses", "another-secret", "another-upstream"],
)
def test_a_rule_that_cannot_pull_fails_with_its_fix(aws, tmp_path: Path, ecr, credential, upstream, valid, detail, fix):
    stubbed, stubber = ecr
    answer_rule(stubber, credential=credential, upstream=upstream)
    if credential == RULE_CREDENTIAL and upstream == "registry-1.docker.io":  # only then does doctor ask ECR to sign in
        answer_validation(stubber, valid=valid, failure="" if valid else "Invalid credentials")
    answer_image(stubber, API, cached=True)
    answer_image(stubber, WEB, cached=True)
    assert rows(cached(tmp_path), stubbed)[RULE_CHECK] == (Status.FAIL, detail, fix)


@pytest.mark.parametrize(
    ("setting", "credential", "status"),
    [
        (SECRET, SECRET_ARN, Status.PASS),  # a rule made with the full ARN names the same secret
        (SECRET_ARN, SECRET_ARN, Status.PASS),
        (SECRET_ARN, RULE_CREDENTIAL, Status.FAIL),  # the setting names one secret exactly; the rule may not
    ],
    ids=["name-and-full-arn", "full-arns", "full-arn-and-name"],
)
def test_the_rule_must_name_the_configured_secret(aws, tmp_path: Path, ecr, setting, credential, status) -> None:
    stubbed, stubber = ecr
    answer_rule(stubber, credential=credential)
    if status is Status.PASS:
        answer_validation(stubber)
    answer_image(stubber, API, cached=True)
    answer_image(stubber, WEB, cached=True)
    assert rows(cached(tmp_path, setting), stubbed)[RULE_CHECK][0] is status
