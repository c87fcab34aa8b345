"""AWS clients of the tools: the region comes from cdk.json, AWS_REGION or AWS_DEFAULT_REGION."""

from __future__ import annotations

from types import SimpleNamespace

import pytest
from botocore.exceptions import NoCredentialsError, NoRegionError

from emr_lineage.aws.clients import (
    RETRY_POLICY,
    AwsClients,
    AwsError,
    aws_client,
    aws_message,
    read_parameter,
    regional_client_maker,
)
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


def _regional_client(settings):
    return regional_client_maker(settings, "s3")("eu-west-1")


@pytest.mark.parametrize(
    "make",
    [
        lambda settings: aws_client("s3"),
        lambda settings: AwsClients.for_settings(settings),
        _regional_client,
    ],
    ids=["environment", "cdk-json", "other-region"],
)
def test_an_endpoint_without_its_scheme_names_the_variable_and_the_fix(
    no_region, monkeypatch: pytest.MonkeyPatch, make
) -> None:
    monkeypatch.setenv("AWS_REGION", "eu-central-1")
    monkeypatch.setenv("AWS_ENDPOINT_URL", "127.0.0.1:5000")
    with pytest.raises(AwsError) as caught:
        make(load_settings("dev", CDK_JSON))
    message = str(caught.value)
    assert "AWS_ENDPOINT_URL=127.0.0.1:5000" in message and "http://127.0.0.1:5000" in message
    assert "ValueError" not in message and "Invalid endpoint" not in message


def test_a_region_variable_set_but_empty_is_named_not_the_endpoint_it_makes(
    no_region, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("AWS_DEFAULT_REGION", "")
    with pytest.raises(AwsError) as caught:
        aws_client("s3")
    assert str(caught.value).startswith("AWS_DEFAULT_REGION is set but empty: set AWS_REGION")


def test_no_region_for_a_regional_service_says_where_to_set_one(no_region) -> None:
    with pytest.raises(AwsError) as caught:
        aws_client("sqs")
    assert str(caught.value) == aws_message(NoRegionError())
    assert "AWS_REGION" in str(caught.value) and "AWS_DEFAULT_REGION" in str(caught.value)


def test_missing_credentials_and_region_are_worded_with_their_fix() -> None:
    credentials, region = aws_message(NoCredentialsError()), aws_message(NoRegionError())
    assert credentials.startswith("no AWS credentials: ") and "AWS_PROFILE" in credentials
    assert "aws configure" in credentials and "Unable to locate" not in credentials
    assert region.startswith("no AWS region: ") and "AWS_DEFAULT_REGION" in region


def test_an_ssm_parameter_read_without_credentials_says_how_to_give_them() -> None:
    def no_credentials(**_: object) -> None:
        raise NoCredentialsError()

    with pytest.raises(AwsError) as caught:
        read_parameter(
            SimpleNamespace(get_parameter=no_credentials), "/p", env="dev", published_by="EmrLineage-dev-Emr"
        )
    assert str(caught.value) == f"cannot read SSM parameter /p ({aws_message(NoCredentialsError())})"
    assert "AWS_PROFILE" in str(caught.value)
