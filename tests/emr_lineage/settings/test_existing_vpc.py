"""network.existing_vpc: an estate's VPC named by its ids, refused with one line per problem when half given."""

from __future__ import annotations

import copy
import json

import pytest

from emr_lineage.settings.loader import ConfigError, settings_from_context
from tests.stacks.variants import EXISTING_VPC


@pytest.fixture(scope="module")
def block(repo_root):
    return json.loads((repo_root / "cdk.json").read_text())["context"]["emr-lineage"]


def with_network(block: dict, network: dict) -> dict:
    data = copy.deepcopy(block)
    data["environments"]["dev"]["network"] = network
    return data


def existing(**changes) -> dict:
    vpc = {**EXISTING_VPC, **changes}
    return {"existing_vpc": {k: v for k, v in vpc.items() if v is not ...}, "create_endpoints": False}


def refusal(block: dict, network: dict) -> str:
    with pytest.raises(ConfigError) as refused:
        settings_from_context(with_network(block, network), "dev")
    return str(refused.value)


def test_an_existing_vpc_needs_no_sizing_keys_and_no_endpoints(block) -> None:
    network = settings_from_context(with_network(block, existing()), "dev").network
    assert network.existing_vpc.private_subnet_ids == EXISTING_VPC["private_subnet_ids"]
    assert (network.max_azs, network.vpc_cidr, network.nat_gateways, network.flow_logs_retention_days) == (None,) * 4
    assert network.create_endpoints is False and network.interface_endpoints == []


def test_the_database_may_share_the_private_subnets(block) -> None:
    shared = existing(isolated_subnet_ids=EXISTING_VPC["private_subnet_ids"])
    network = settings_from_context(with_network(block, shared), "dev").network
    assert network.existing_vpc.isolated_subnet_ids == network.existing_vpc.private_subnet_ids


@pytest.mark.parametrize(
    ("network", "expected"),
    [
        (
            existing(isolated_subnet_ids=..., cidr=...),
            [
                "emr-lineage.environments.dev.network.existing_vpc.cidr: missing required key",
                "emr-lineage.environments.dev.network.existing_vpc.isolated_subnet_ids: missing required key",
            ],
        ),
        (
            existing(private_subnet_ids=["subnet-0a1b2c3d4e5f60711", "sub-12"]),
            [
                "emr-lineage.environments.dev.network.existing_vpc.private_subnet_ids.1: 'sub-12' is not a subnet id "
                "(subnet- and 8 or 17 hex digits)"
            ],
        ),
        (
            existing(vpc_id="vpc-XYZ"),
            ["emr-lineage.environments.dev.network.existing_vpc.vpc_id: 'vpc-XYZ' is not a VPC id (vpc- and 8 "],
        ),
        (
            existing(private_subnet_ids=["subnet-0a1b2c3d4e5f60711"]),
            [
                "emr-lineage.environments.dev.network.existing_vpc: private_subnet_ids lists 1 subnets for 2 "
                "availability_zones: give one per zone, in their order"
            ],
        ),
        (
            {**existing(), "max_azs": 2, "nat_gateways": 1},
            [
                "emr-lineage.environments.dev.network: existing_vpc names the VPC to use: remove max_azs, "
                "nat_gateways (they size a created one)"
            ],
        ),
        (
            {**existing(route_table_ids=...), "create_endpoints": True},
            [
                "emr-lineage.environments.dev.network: create_endpoints needs existing_vpc.route_table_ids for the "
                "S3 gateway endpoint's routes; set create_endpoints false if the VPC has its endpoints"
            ],
        ),
        (
            {**existing(), "interface_endpoints": ["sts"]},
            [
                "emr-lineage.environments.dev.network: interface_endpoints lists endpoints, but create_endpoints is "
                "false: remove one of them"
            ],
        ),
        (
            {"interface_endpoints": []},
            [
                "emr-lineage.environments.dev.network: missing max_azs, vpc_cidr, nat_gateways, "
                "flow_logs_retention_days: they size the VPC the stacks create (or name an existing one with "
                "existing_vpc)"
            ],
        ),
    ],
)
def test_each_problem_is_one_line_naming_the_key(block, network: dict, expected: list[str]) -> None:
    lines = refusal(block, network).splitlines()[1:]
    assert len(lines) == len(expected)
    for line, start in zip(lines, expected, strict=True):
        assert line.strip().startswith(start), line
