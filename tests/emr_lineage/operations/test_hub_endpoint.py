"""doctor for a spoke (hub): its interface endpoint to the hub is there and available (a botocore Stubber for
each state EC2 reports, moto for the whole run), and the rows of what only a hub runs are not needed."""

from __future__ import annotations

import datetime as dt
import json
from collections.abc import Iterator
from pathlib import Path

import boto3
import pytest
from botocore.stub import Stubber

from emr_lineage.aws import parameters
from emr_lineage.operations.checks import DoctorClients, Status
from emr_lineage.operations.doctor import DoctorOptions, run_doctor
from emr_lineage.operations.hub import CHECK, hub_endpoint
from emr_lineage.settings.loader import load_settings
from emr_lineage.settings.model import EnvironmentSettings
from tests.emr_lineage.operations.prepared_account import (
    ENV,
    REGION,
    cdk_json_copy,
    client,
    doctor_clients,
    moto_account,
    prepare_account,
)
from tests.stacks.variants import HUB_SERVICE_NAME, as_spoke

NOW = dt.datetime(2026, 11, 23, 12, 0, tzinfo=dt.UTC)
ENDPOINT = "vpce-0a1b2c3d4e5f60789"
SPOKE_ACCOUNT = "210987654321"
ACCEPT = (
    f"the hub must list this account ({SPOKE_ACCOUNT}) in its gateway.spoke_accounts and deploy its Gateway stack: "
    "its endpoint service accepts those accounts' connections, and no other"
)


def spoke_cdk_json(tmp_path: Path, account: str | None = SPOKE_ACCOUNT) -> Path:
    """cdk.json with dev a spoke of HUB in ``account`` (None: moto's, as doctor finds it)."""
    path = cdk_json_copy(tmp_path, gateway=False)
    document = json.loads(path.read_text())
    environment = document["context"]["emr-lineage"]["environments"][ENV]
    as_spoke(environment)
    environment["account"], environment["region"] = account, REGION
    path.write_text(json.dumps(document))
    return path


@pytest.fixture
def spoke(tmp_path: Path) -> EnvironmentSettings:
    return load_settings(ENV, spoke_cdk_json(tmp_path))


def stubbed(answer: dict | None = None, error: str | None = None) -> DoctorClients:
    ec2 = boto3.client("ec2", region_name=REGION, aws_access_key_id="testing", aws_secret_access_key="testing")
    stubber = Stubber(ec2)
    wanted = {"VpcEndpointIds": [ENDPOINT]}
    if error:
        stubber.add_client_error("describe_vpc_endpoints", error, f"{error} for {ENDPOINT}", expected_params=wanted)
    else:
        stubber.add_response("describe_vpc_endpoints", {"VpcEndpoints": [answer]}, wanted)
    stubber.activate()
    return DoctorClients(lambda service: {"ec2": ec2}[service])


def endpoint(state: str, service: str = HUB_SERVICE_NAME) -> dict:
    return {"VpcEndpointId": ENDPOINT, "ServiceName": service, "State": state}


def test_an_available_endpoint_to_the_hubs_service_passes(spoke) -> None:
    result = hub_endpoint(stubbed(endpoint("available")), spoke, ENDPOINT)
    assert (result.check, result.status) == (CHECK, Status.PASS)
    assert result.detail == f"{ENDPOINT} to {HUB_SERVICE_NAME}: available"


@pytest.mark.parametrize("state", ["pendingAcceptance", "rejected", "PendingAcceptance"])
def test_an_endpoint_the_hub_has_not_accepted_fails_with_the_hubs_fix(spoke, state) -> None:
    result = hub_endpoint(stubbed(endpoint(state)), spoke, ENDPOINT)
    assert result.status is Status.FAIL
    assert result.detail == (
        f"{ENDPOINT} to {HUB_SERVICE_NAME} is {state}: lineage does not reach the hub (the hub has not accepted it)"
    )
    assert result.fix == ACCEPT


def test_a_missing_endpoint_fails_with_the_deploy_and_the_hubs_fix(spoke) -> None:
    result = hub_endpoint(stubbed(error="InvalidVpcEndpointId.NotFound"), spoke, ENDPOINT)
    assert (result.status, result.detail) == (
        Status.FAIL,
        f"no endpoint {ENDPOINT}: Spark's lineage has no way to the hub",
    )
    assert result.fix == f"deploy the HubLink stack (make deploy ENV={ENV}); {ACCEPT}"


def test_an_endpoint_being_made_says_to_wait(spoke) -> None:
    result = hub_endpoint(stubbed(endpoint("pending")), spoke, ENDPOINT)
    assert (result.status, result.fix) == (Status.FAIL, "wait a few minutes: EC2 is making the endpoint")


def test_an_endpoint_to_another_service_fails(spoke) -> None:
    other = "com.amazonaws.vpce.eu-west-1.vpce-svc-0ffffffffffffffff"
    result = hub_endpoint(stubbed(endpoint("available", other)), spoke, ENDPOINT)
    assert result.status is Status.FAIL
    assert result.detail == f"{ENDPOINT} connects to {other}, not to hub.endpoint_service_name {HUB_SERVICE_NAME}"


def test_an_endpoint_doctor_may_not_read_fails_with_the_permission(spoke) -> None:
    result = hub_endpoint(stubbed(error="UnauthorizedOperation"), spoke, ENDPOINT)
    assert result.status is Status.FAIL
    assert result.detail.startswith("EC2 DescribeVpcEndpoints: UnauthorizedOperation")
    assert result.fix == "doctor reads the endpoint: give its identity ec2:DescribeVpcEndpoints"


# --- the whole run, against moto --------------------------------------------------------------------------


@pytest.fixture
def aws(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    yield from moto_account(monkeypatch)


def rows(settings: EnvironmentSettings) -> dict[str, tuple[Status, str, str]]:
    report = run_doctor(settings, DoctorOptions(timeout=2, clock=lambda: NOW), doctor_clients)
    return {r.check: (r.status, r.detail, r.fix) for r in report.results}


def test_a_deployed_spoke_reaches_its_hub_and_needs_no_marquez_of_its_own(aws, tmp_path, closed_port_url) -> None:
    settings = prepare_account(spoke_cdk_json(tmp_path, account=None), closed_port_url, now=NOW).settings
    ec2 = client("ec2")
    vpc = ec2.create_vpc(CidrBlock="10.90.0.0/16")["Vpc"]["VpcId"]
    made = ec2.create_vpc_endpoint(VpcId=vpc, ServiceName=HUB_SERVICE_NAME, VpcEndpointType="Interface")
    endpoint_id = made["VpcEndpoint"]["VpcEndpointId"]
    client("ssm").put_parameter(Name=parameters.hub_endpoint_id(ENV), Value=endpoint_id, Type="String")
    found = rows(settings)
    assert found[CHECK] == (Status.PASS, f"{endpoint_id} to {HUB_SERVICE_NAME}: available", "")
    assert found["ssm-parameters"][0] is Status.PASS
    assert found["gateway-api-key"][0] is Status.PASS
    assert "to the hub, which rotates it" in found["gateway-api-key"][1]
    for check in ("database", "marquez-image-credentials", "marquez-image-cache", "marquez-images", "marquez"):
        assert found[check] == (Status.SKIP, "not needed: a spoke (hub) runs no Marquez of its own", ""), check
    for check in ("dead-letter-queue", "gateway-spoke-keys"):
        assert found[check] == (Status.SKIP, "not needed: a spoke (hub) sends to the hub's gateway", ""), check
    assert found["gateway"][0] is Status.SKIP and "--gateway URL" in found["gateway"][1]


def test_a_spokes_own_key_secret_without_a_value_fails_with_the_command_that_puts_it(
    aws, tmp_path, closed_port_url
) -> None:
    settings = prepare_account(spoke_cdk_json(tmp_path, account=None), closed_port_url, now=NOW).settings
    empty = client("secretsmanager").create_secret(Name=f"{settings.resource_prefix}/hub/api-key")["ARN"]
    client("ssm").put_parameter(Name=parameters.gateway_api_key_secret(ENV), Value=empty, Overwrite=True)
    status, detail, fix = rows(settings)["gateway-api-key"]
    assert status is Status.FAIL
    assert detail == f"no key in {empty}: new clusters fail at boot, and the hub would refuse their lineage (401)"
    assert fix.startswith(
        f"put the hub's key for this account: aws secretsmanager put-secret-value --secret-id {empty}"
    )


def test_an_environment_without_hub_needs_no_hub_endpoint(aws, tmp_path, closed_port_url) -> None:
    settings = prepare_account(cdk_json_copy(tmp_path), closed_port_url, now=NOW).settings
    assert rows(settings)[CHECK] == (
        Status.SKIP,
        "not needed: no hub: this environment runs its own lineage service",
        "",
    )
