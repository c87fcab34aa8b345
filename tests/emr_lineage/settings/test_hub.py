"""hub: a spoke's settings, each contradiction or malformed value refused with one line naming its fix."""

from __future__ import annotations

import copy
import json

import pytest

from emr_lineage.settings.hub import SPOKE_HTTP_PORT, SPOKE_HTTPS_PORT
from emr_lineage.settings.loader import ConfigError, settings_from_context
from tests.stacks.variants import HUB, HUB_API_KEY_SECRET_ARN, HUB_HOSTNAME, SPOKE_ACCOUNTS, TRUSTED_CA_BUNDLE, as_spoke

WHERE = "emr-lineage.environments"


@pytest.fixture(scope="module")
def block(repo_root):
    return json.loads((repo_root / "cdk.json").read_text())["context"]["emr-lineage"]


def spoke(block: dict, env: str = "dev", *, hub: dict = HUB, change=None) -> dict:
    """``block`` with ``env`` made a spoke of ``hub``, then ``change(env_settings)`` applied."""
    data = copy.deepcopy(block)
    settings = data["environments"][env]
    as_spoke(settings, hub)
    if change:
        change(settings)
    return data


def refusal(data: dict, env: str = "dev") -> str:
    with pytest.raises(ConfigError) as refused:
        settings_from_context(data, env)
    (line,) = str(refused.value).splitlines()[1:]
    return line.strip()


def test_a_spoke_with_the_hubs_name_sends_https_to_its_spoke_port(block) -> None:
    settings = settings_from_context(spoke(block), "dev")
    assert settings.hub.endpoint_service_name == HUB["endpoint_service_name"]
    assert (settings.hub.hostname, settings.hub.port) == (HUB_HOSTNAME, SPOKE_HTTPS_PORT)
    assert settings.lineage_over_https and settings.sends_api_key
    assert settings.hub.secret_arn_parts == ("aws", "eu-west-1", "123456789012")


def test_a_spoke_without_a_name_and_a_secret_sends_plain_http_where_allowed(block) -> None:
    hub = {"endpoint_service_name": HUB["endpoint_service_name"], "region": HUB["region"]}
    settings = settings_from_context(spoke(block, hub=hub), "dev")
    assert (settings.hub.hostname, settings.hub.api_key_secret_arn, settings.hub.port) == (None, None, SPOKE_HTTP_PORT)
    assert settings.hub.secret_arn_parts is None
    assert not settings.lineage_over_https and settings.sends_api_key


def test_an_environment_without_hub_is_no_spoke(block) -> None:
    settings = settings_from_context(block, "dev")
    assert settings.hub is None
    assert settings.sends_api_key is settings.gateway.enabled


def test_a_spoke_in_another_region_than_the_hub_is_allowed(block) -> None:
    def in_us_east_1(env: dict) -> None:
        env.update(account="210987654321", region="us-east-1")

    settings = settings_from_context(spoke(block, change=in_us_east_1), "dev")
    assert (settings.region, settings.hub.region) == ("us-east-1", "eu-west-1")


def test_prod_as_a_spoke_without_the_hubs_name_is_refused_unless_plain_http_is_allowed(block) -> None:
    def no_name_no_plain_http(env: dict) -> None:
        env["hub"] = {k: v for k, v in HUB.items() if k != "hostname"}
        env["marquez"].pop("allow_plain_http", None)

    assert refusal(spoke(block, "prod", change=no_name_no_plain_http), "prod") == (
        f"{WHERE}.prod: no hub.hostname, so lineage would go to the hub over plain HTTP: set hub.hostname (the hub's "
        "marquez.domain_name; HTTPS), or marquez.allow_plain_http: true"
    )


def test_prod_as_a_spoke_with_the_hubs_name_needs_no_certificate_of_its_own(block) -> None:
    real_prod = spoke(block, "prod", change=lambda env: env["marquez"].pop("allow_plain_http"))
    settings = settings_from_context(real_prod, "prod")
    assert settings.marquez.certificate_arn is None and settings.lineage_over_https


def _trusted_ca_without_hostname(env: dict) -> None:
    env["hub"] = {**HUB, "hostname": None}
    env["openlineage"]["trusted_ca"] = TRUSTED_CA_BUNDLE


@pytest.mark.parametrize(
    ("change", "expected"),
    [
        (
            lambda env: env["gateway"].update(spoke_accounts=SPOKE_ACCOUNTS, enabled=True),
            "a spoke (hub) takes no spokes of its own: remove gateway.spoke_accounts, or hub",
        ),
        (
            lambda env: env["gateway"].update(enabled=True),
            "a spoke (hub) deploys no gateway, its lineage goes to the hub's: set gateway.enabled false, or remove hub",
        ),
        (
            lambda env: env["marquez"].update(
                certificate_arn="arn:aws:acm:eu-west-1:210987654321:certificate/0f1e2d3c-4b5a-6978-8a9b-0c1d2e3f4a5b",
                domain_name="lineage.spoke.example.com",
            ),
            "a spoke (hub) has no load balancer of its own: remove marquez.certificate_arn and domain_name (the hub's "
            "name goes in hub.hostname)",
        ),
        (
            _trusted_ca_without_hostname,
            "openlineage.trusted_ca names the CA of the hub's certificate, but it is not used (no hub.hostname: plain "
            "HTTP): set hub.hostname, or remove trusted_ca",
        ),
    ],
    ids=["spoke-accounts", "gateway", "certificate", "trusted-ca-without-hostname"],
)
def test_a_contradiction_in_a_spoke_is_one_line_with_its_fix(block, change, expected) -> None:
    assert refusal(spoke(block, change=change)) == f"{WHERE}.dev: {expected}"


@pytest.mark.parametrize(
    ("hub", "expected"),
    [
        (
            {**HUB, "endpoint_service_name": "vpce-svc-0a1b2c3d4e5f60789"},
            "hub.endpoint_service_name: 'vpce-svc-0a1b2c3d4e5f60789' is not a VPC endpoint service name "
            "(com.amazonaws.vpce.<region>.vpce-svc-<hex>): copy the hub's GatewayEndpointServiceName output",
        ),
        (
            {**HUB, "region": "us-east-1"},
            "hub: endpoint_service_name is a service of eu-west-1, but region is us-east-1: set region eu-west-1",
        ),
        ({**HUB, "region": "Ireland"}, "hub.region: String should match pattern"),
        ({**HUB, "hostname": "https://lineage.prod.example.com"}, "hub.hostname: String should match pattern"),
        ({**HUB, "api_key_secret_arn": "emr-lineage-prod/gateway"}, "hub.api_key_secret_arn: String should match"),
        ({**HUB, "hostnme": HUB_HOSTNAME}, "hub.hostnme: unknown key (did you mean 'hostname'?)"),
        ({k: v for k, v in HUB.items() if k != "region"}, "hub.region: missing required key"),
    ],
    ids=["service-name", "service-region", "region", "hostname", "secret-arn", "typo", "missing-region"],
)
def test_a_malformed_hub_is_one_line_naming_its_key(block, hub, expected) -> None:
    assert refusal(spoke(block, hub=hub)).startswith(f"{WHERE}.dev.{expected}")


def test_the_secret_arn_is_taken_as_given(block) -> None:
    assert settings_from_context(spoke(block), "dev").hub.api_key_secret_arn == HUB_API_KEY_SECRET_ARN
