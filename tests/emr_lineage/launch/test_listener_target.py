"""resolve_listener_target: the lineage URL and the API key secret a spoke's launch, serverless launch and attach
read as an environment with the gateway does (moto in-process)."""

from __future__ import annotations

import copy
import json

import boto3
import pytest

from emr_lineage.aws import parameters
from emr_lineage.aws.clients import AwsError
from emr_lineage.aws.upload import SHA256_METADATA_KEY
from emr_lineage.launch.listener_target import Listener, resolve_listener_target
from emr_lineage.settings.loader import settings_from_context
from emr_lineage.spark.conf import ListenerConfig, emr_configurations
from tests.emr_lineage.launch_support import launch_spec
from tests.helpers import fake_aws_credentials
from tests.stacks.variants import HUB_API_KEY_SECRET_ARN, HUB_HOSTNAME, as_spoke

REGION = "eu-west-1"
BUCKET = "emr-lineage-dev-artifacts-210987654321"
JAR_KEY = "listener/openlineage-spark.jar"
HUB_URL = f"https://{HUB_HOSTNAME}:8443"


@pytest.fixture(scope="module")
def block(repo_root) -> dict:
    return json.loads((repo_root / "cdk.json").read_text())["context"]["emr-lineage"]


def spoke(block: dict):
    data = copy.deepcopy(block)
    as_spoke(data["environments"]["dev"])
    return settings_from_context(data, "dev")


@pytest.fixture
def published(monkeypatch: pytest.MonkeyPatch, block: dict):
    """moto with what the EMR stack publishes (a launch spec sending to the hub) and the staged, pinned jar."""
    from moto import mock_aws

    fake_aws_credentials(monkeypatch, REGION)
    sha256 = settings_from_context(block, "dev").versions.openlineage_spark.sha256
    with mock_aws():
        ssm, s3 = boto3.client("ssm", region_name=REGION), boto3.client("s3", region_name=REGION)
        listener = ListenerConfig(api_url=HUB_URL, namespace="emr-lineage-dev", timeout_ms=5000)
        spec = {
            **launch_spec(),
            "Configurations": emr_configurations(
                listener, glue_catalog_id="210987654321", warehouse="s3://lake/curated/"
            ),
        }
        ssm.put_parameter(Name=parameters.emr_launch_spec("dev"), Value=json.dumps(spec), Type="String")
        ssm.put_parameter(Name=parameters.artifacts_bucket("dev"), Value=BUCKET, Type="String")
        s3.create_bucket(Bucket=BUCKET, CreateBucketConfiguration={"LocationConstraint": REGION})
        s3.put_object(Bucket=BUCKET, Key=JAR_KEY, Body=b"jar", Metadata={SHA256_METADATA_KEY: sha256})
        yield ssm, s3


def test_a_spoke_sends_to_the_hub_with_the_key_secret_its_hub_link_published(published, block) -> None:
    ssm, s3 = published
    ssm.put_parameter(Name=parameters.gateway_api_key_secret("dev"), Value=HUB_API_KEY_SECRET_ARN, Type="String")
    target = resolve_listener_target(ssm, s3, spoke(block), Listener(JAR_KEY))
    assert (target.lineage_url, target.api_key_secret) == (HUB_URL, HUB_API_KEY_SECRET_ARN)
    assert target.jar_uri == f"s3://{BUCKET}/{JAR_KEY}"


def test_a_spoke_without_its_key_secret_published_names_the_hub_link_stack(published, block) -> None:
    ssm, s3 = published
    with pytest.raises(AwsError, match="deploy the hub link stack for env 'dev' first"):
        resolve_listener_target(ssm, s3, spoke(block), Listener(JAR_KEY))


def test_without_the_gateway_and_without_a_hub_no_key_secret_is_read(published, block) -> None:
    ssm, s3 = published
    data = copy.deepcopy(block)
    data["environments"]["dev"]["gateway"]["enabled"] = False
    target = resolve_listener_target(ssm, s3, settings_from_context(data, "dev"), Listener(JAR_KEY))
    assert target.api_key_secret is None
