"""doctor's row for an existing VPC's private subnets: EMR's managed-policy tag, which the stacks cannot
put on subnets they do not own (moto's EC2)."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from emr_lineage.aws.tags import EMR_MANAGED_TAG
from emr_lineage.operations.checks import DoctorClients, Status
from emr_lineage.operations.network import emr_subnet_tags
from emr_lineage.settings.network import ExistingVpc
from tests.emr_lineage.operations.prepared_account import REGION, client, moto_account


@pytest.fixture
def network(monkeypatch: pytest.MonkeyPatch) -> Iterator[dict[str, str]]:
    """A VPC with two private subnets (the first tagged) and a subnet of another VPC."""
    for _ in moto_account(monkeypatch):
        ec2 = client("ec2")
        vpc = ec2.create_vpc(CidrBlock="10.90.0.0/16")["Vpc"]["VpcId"]
        other = ec2.create_vpc(CidrBlock="10.91.0.0/16")["Vpc"]["VpcId"]
        ids = {"vpc": vpc, "other-vpc": other}
        for name, (owner, cidr, zone) in {
            "tagged": (vpc, "10.90.0.0/20", "a"),
            "untagged": (vpc, "10.90.16.0/20", "b"),
            "elsewhere": (other, "10.91.0.0/20", "b"),
        }.items():
            subnet = ec2.create_subnet(VpcId=owner, CidrBlock=cidr, AvailabilityZone=f"{REGION}{zone}")["Subnet"]
            ids[name] = subnet["SubnetId"]
        key, value = EMR_MANAGED_TAG
        ec2.create_tags(Resources=[ids["tagged"]], Tags=[{"Key": key, "Value": value}])
        yield ids


def check(ids: dict[str, str], first: str, second: str):
    existing = ExistingVpc(
        vpc_id=ids["vpc"],
        cidr="10.90.0.0/16",
        availability_zones=[f"{REGION}a", f"{REGION}b"],
        private_subnet_ids=[ids[first], ids[second]],
        isolated_subnet_ids=[ids[first], ids[second]],
    )
    return emr_subnet_tags(DoctorClients(client), existing)


def test_tagged_subnets_of_the_vpc_pass(network) -> None:
    key, value = EMR_MANAGED_TAG
    client("ec2").create_tags(Resources=[network["untagged"]], Tags=[{"Key": key, "Value": value}])
    result = check(network, "tagged", "untagged")
    assert result.status is Status.PASS
    assert result.detail == f"{network['tagged']}, {network['untagged']}: {key}={value}"


def test_an_untagged_subnet_fails_with_the_command_that_tags_it(network) -> None:
    key, value = EMR_MANAGED_TAG
    result = check(network, "tagged", "untagged")
    assert result.status is Status.FAIL
    assert result.detail.startswith(f"{network['untagged']} without the tag {key}={value}")
    assert result.fix == f"aws ec2 create-tags --resources {network['untagged']} --tags Key={key},Value={value}"


def test_a_subnet_of_another_vpc_fails_naming_its_vpc(network) -> None:
    result = check(network, "tagged", "elsewhere")
    assert result.status is Status.FAIL
    assert result.detail == f"{network['elsewhere']} is in {network['other-vpc']}, not {network['vpc']}"
    assert "private_subnet_ids" in result.fix


def test_a_subnet_that_does_not_exist_fails_with_ec2s_reason(network) -> None:
    network["missing"] = "subnet-0123456789abcdef0"
    result = check(network, "tagged", "missing")
    assert result.status is Status.FAIL
    assert result.detail.startswith("EC2 DescribeSubnets: InvalidSubnetID.NotFound")
