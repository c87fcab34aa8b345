"""AWS clients of the tools: the region comes from cdk.json, AWS_REGION or AWS_DEFAULT_REGION."""

from __future__ import annotations

import pytest

from emr_lineage.aws.clients import RETRY_POLICY, AwsClients, AwsError
from emr_lineage.settings.loader import load_settings
from tests.paths import CDK_JSON


@pytest.fixture
def no_region(monkeypatch: pytest.MonkeyPatch, tmp_path) -> None:
    for name in ("AWS_REGION", "AWS_DEFAULT_REGION", "AWS_PROFILE"):
        monkeypatch.delenv(name, raising=False)
    # No ~/.aws/config region either.
    monkeypatch.setenv("AWS_CONFIG_FILE", str(tmp_path / "none"))


@pytest.mark.parametrize("variable", ["AWS_REGION", "AWS_DEFAULT_REGION"])
def test_either_region_variable_works(no_region, monkeypatch: pytest.MonkeyPatch, variable: str) -> None:
    monkeypatch.setenv(variable, "eu-central-1")
    clients = AwsClients.for_settings(load_settings("dev", CDK_JSON))
    assert {c.meta.region_name for c in (clients.ssm, clients.s3, clients.emr)} == {"eu-central-1"}


def test_the_region_in_cdk_json_wins(no_region, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("AWS_REGION", "eu-central-1")
    settings = load_settings("dev", CDK_JSON).model_copy(update={"region": "ap-south-1"})
    assert AwsClients.for_settings(settings).emr.meta.region_name == "ap-south-1"


def test_no_region_names_both_variables_and_the_key(no_region) -> None:
    with pytest.raises(AwsError) as caught:
        AwsClients.for_settings(load_settings("dev", CDK_JSON))
    message = str(caught.value)
    assert "AWS_REGION" in message and "AWS_DEFAULT_REGION" in message
    assert "emr-lineage.environments.dev.region" in message


def test_every_client_shares_one_retry_policy(no_region, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("AWS_REGION", "eu-central-1")
    clients = AwsClients.for_settings(load_settings("dev", CDK_JSON))
    for client in (clients.ssm, clients.s3, clients.emr):
        assert client.meta.config.retries == RETRY_POLICY.retries


def test_an_unknown_profile_is_not_called_a_missing_region(no_region, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("AWS_PROFILE", "no-such-profile")
    with pytest.raises(AwsError, match="AWS client setup failed: .*no-such-profile") as caught:
        AwsClients.for_settings(load_settings("dev", CDK_JSON))
    assert "region" not in str(caught.value)
