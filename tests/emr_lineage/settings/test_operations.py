"""The operations settings (alarms, HTTPS, UI sign-in, retention, scaling, images): good values load, bad ones
fail naming the key."""

from __future__ import annotations

import copy
import json

import pytest

from emr_lineage.settings.loader import ConfigError, settings_from_context
from tests.emr_lineage.settings.test_config import _with

CERTIFICATE = "arn:aws:acm:eu-west-1:123456789012:certificate/0b1c2d3e-4f50-6172-8394-a5b6c7d8e9f0"
COGNITO = {
    "type": "cognito",
    "user_pool_arn": "arn:aws:cognito-idp:eu-west-1:123456789012:userpool/eu-west-1_AbCdEf123",
    "user_pool_client_id": "4hq0example0client0id",
    "user_pool_domain": "lineage-sign-in",
}
OIDC = {
    "type": "oidc",
    "issuer": "https://login.example.com",
    "authorization_endpoint": "https://login.example.com/authorize",
    "token_endpoint": "https://login.example.com/token",
    "user_info_endpoint": "https://login.example.com/userinfo",
    "client_id": "emr-lineage",
    "client_secret_arn": "arn:aws:secretsmanager:eu-west-1:123456789012:secret:lineage-oidc-AbCdEf",
}


@pytest.fixture
def block(repo_root):
    return json.loads((repo_root / "cdk.json").read_text())["context"]["emr-lineage"]


def _https(block: dict, **marquez) -> dict:
    data = copy.deepcopy(block)
    data["environments"]["dev"]["marquez"].update(
        certificate_arn=CERTIFICATE, domain_name="lineage.dev.example.com", **marquez
    )
    return data


def test_the_shipped_defaults(block):
    dev, prod = settings_from_context(block, "dev"), settings_from_context(block, "prod")
    for settings in (dev, prod):
        assert settings.marquez.certificate_arn is None and settings.marquez.ui_auth is None
        assert settings.alarms.email is None and settings.alarms.dead_letter_messages == 1
        assert settings.marquez.retention_days is not None
    assert dev.marquez.autoscaling is None
    assert prod.marquez.autoscaling.min_tasks <= prod.marquez.desired_count <= prod.marquez.autoscaling.max_tasks
    assert dev.versions.marquez_image.api == "marquezproject/marquez"


@pytest.mark.parametrize("ui_auth", [COGNITO, OIDC], ids=["cognito", "oidc"])
def test_https_with_sign_in_loads(block, ui_auth):
    marquez = settings_from_context(_https(block, ui_auth=ui_auth), "dev").marquez
    assert marquez.certificate_arn == CERTIFICATE and marquez.domain_name == "lineage.dev.example.com"
    assert marquez.ui_auth.type == ui_auth["type"]


def test_an_image_mirror_and_an_email_load(block):
    data = copy.deepcopy(block)
    data["versions"]["marquez_image"]["api"] = (
        "123456789012.dkr.ecr.eu-west-1.amazonaws.com/docker-hub/marquezproject/marquez"
    )
    data["environments"]["dev"]["alarms"]["email"] = "platform-oncall@example.com"
    settings = settings_from_context(data, "dev")
    assert settings.versions.marquez_image.api.startswith("123456789012.dkr.ecr.")
    assert settings.alarms.email == "platform-oncall@example.com"


@pytest.mark.parametrize(
    ("path", "value", "message"),
    [
        ("marquez.ui_auth", COGNITO, r"marquez: ui_auth needs certificate_arn"),
        ("marquez.certificate_arn", CERTIFICATE, r"marquez: certificate_arn and domain_name go together"),
        ("marquez.domain_name", "lineage.example.com", r"marquez: certificate_arn and domain_name go together"),
        ("marquez.certificate_arn", "arn:aws:iam::123456789012:server-certificate/x", r"marquez\.certificate_arn"),
        ("marquez.retention_days", 0, r"marquez\.retention_days: Input should be greater than or equal to 1"),
        (
            "marquez.autoscaling",
            {"min_tasks": 3, "max_tasks": 2, "target_cpu_percent": 60},
            r"marquez\.autoscaling: max_tasks \(2\) must be >= min_tasks \(3\)",
        ),
        (
            "marquez.autoscaling",
            {"min_tasks": 2, "max_tasks": 4, "target_cpu_percent": 60},
            r"marquez: desired_count \(1\) must be within autoscaling min_tasks\.\.max_tasks \(2\.\.4\)",
        ),
        (
            "marquez.autoscaling",
            {"min_tasks": 1, "max_task": 4, "target_cpu_percent": 60},
            r"marquez\.autoscaling\.max_task: unknown key \(did you mean 'max_tasks'\?\)",
        ),
        ("alarms.email", "oncall", r"alarms\.email: String should match pattern"),
        ("alarms.rds_cpu_percent", 101, r"alarms\.rds_cpu_percent: Input should be less than or equal to 100"),
        ("alarms.dead_letter_messages", ..., r"alarms\.dead_letter_messages: missing required key"),
        ("alarms", ..., r"environments\.dev\.alarms: missing required key"),
    ],
)
def test_bad_values_fail_naming_the_key(block, path, value, message):
    with pytest.raises(ConfigError, match=message):
        settings_from_context(_with(block, path, value), "dev")


def test_an_oidc_secret_must_be_a_secrets_manager_arn(block):
    with pytest.raises(ConfigError, match=r"marquez\.ui_auth\.oidc\.client_secret_arn: String should match pattern"):
        settings_from_context(_https(block, ui_auth={**OIDC, "client_secret_arn": "plain-text-secret"}), "dev")


def test_a_mistyped_sign_in_key_gets_a_suggestion(block):
    with pytest.raises(
        ConfigError, match=r"marquez\.ui_auth\.oidc\.client_secret: unknown key \(did you mean 'client_secret_arn'\?\)"
    ):
        settings_from_context(_https(block, ui_auth={**OIDC, "client_secret": "x"}), "dev")


def test_an_unknown_sign_in_type_names_the_choices(block):
    with pytest.raises(ConfigError, match=r"marquez\.ui_auth: .*'cognito', 'oidc'"):
        settings_from_context(_https(block, ui_auth={**OIDC, "type": "saml"}), "dev")


def test_a_malformed_image_repository_is_refused(block):
    data = copy.deepcopy(block)
    data["versions"]["marquez_image"]["web"] = "marquezproject/marquez-web:0.51.1"
    with pytest.raises(ConfigError, match=r"versions\.marquez_image\.web: String should match pattern"):
        settings_from_context(data, "dev")


def _plain_http_refusal(data: dict, env: str) -> str:
    """The one line of the error an environment without a certificate gets when plain HTTP is not allowed."""
    with pytest.raises(ConfigError) as excinfo:
        settings_from_context(data, env)
    (line,) = str(excinfo.value).splitlines()[1:]
    return line.strip()


def test_plain_http_is_the_default_of_the_development_environment_only(block):
    dev = settings_from_context(block, "dev").marquez
    assert dev.certificate_arn is None and dev.allow_plain_http is None  # the shipped dev leaves it unsaid
    # The same block under another name is refused: one line naming the environment and both fixes.
    data = copy.deepcopy(block)
    data["environments"]["staging"] = copy.deepcopy(data["environments"]["dev"])
    assert _plain_http_refusal(data, "staging") == (
        "emr-lineage.environments.staging: no marquez.certificate_arn, so the load balancer would serve lineage "
        "over plain HTTP: set marquez.certificate_arn and marquez.domain_name (HTTPS), "
        "or marquez.allow_plain_http: true"
    )
    # dev may refuse it too.
    assert _plain_http_refusal(_with(block, "marquez.allow_plain_http", False), "dev").startswith(
        "emr-lineage.environments.dev: no marquez.certificate_arn"
    )


@pytest.mark.parametrize("allowed", [..., None, False], ids=["absent", "null", "false"])
def test_prod_without_a_certificate_is_refused_unless_it_allows_plain_http(block, allowed):
    assert settings_from_context(block, "prod").marquez.allow_plain_http is True  # said in the shipped cdk.json
    line = _plain_http_refusal(_with(block, "marquez.allow_plain_http", allowed, env="prod"), "prod")
    assert line.startswith("emr-lineage.environments.prod: no marquez.certificate_arn")


def test_with_a_certificate_prod_needs_no_allowance(block):
    data = _with(block, "marquez.allow_plain_http", ..., env="prod")
    data["environments"]["prod"]["marquez"].update(certificate_arn=CERTIFICATE, domain_name="lineage.example.com")
    marquez = settings_from_context(data, "prod").marquez
    assert marquez.certificate_arn == CERTIFICATE and marquez.allow_plain_http is None
