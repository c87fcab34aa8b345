"""Every VPC CIDR the configuration accepts is one the network stack can build.

For each allowed AZ count, the smallest VPC the configuration accepts is synthesized with that
many AZs (account and region set, AZ lookup answered from context, as the CDK CLI would).
"""

from __future__ import annotations

import copy
import ipaddress

import aws_cdk as cdk
import pytest

from emr_lineage.settings.loader import CONTEXT_KEY, ConfigError, settings_from_context
from emr_lineage.settings.model import EnvironmentSettings
from stacks.network import NetworkStack
from tests.stacks.templates import by_type

ACCOUNT = "111111111111"
REGION = "us-east-1"
REGION_AZS = [f"{REGION}{letter}" for letter in "abcdef"]


def _settings(block: dict, *, max_azs: int, prefix: int) -> EnvironmentSettings:
    data = copy.deepcopy(block)
    environment = data["environments"]["dev"]
    environment.update(account=ACCOUNT, region=REGION)
    network = environment["network"]
    network.update(max_azs=max_azs, vpc_cidr=f"10.0.0.0/{prefix}")
    network["nat_gateways"] = min(network["nat_gateways"], max_azs)
    return settings_from_context(data, "dev")


def _smallest_accepted(block: dict, max_azs: int) -> tuple[int, str]:
    """The longest VPC prefix the configuration accepts for ``max_azs``, and why the next one is refused."""
    accepted = []
    refusal = ""
    for prefix in range(8, 29):
        try:
            _settings(block, max_azs=max_azs, prefix=prefix)
        except ConfigError as exc:
            if accepted and not refusal:
                refusal = str(exc)
        else:
            accepted.append(prefix)
    assert accepted == list(range(accepted[0], accepted[-1] + 1)), "accepted prefixes are one range"
    return accepted[-1], refusal


@pytest.mark.parametrize("max_azs", range(2, 7))
def test_smallest_accepted_vpc_cidr_synthesizes(max_azs, cdk_context, tmp_path):
    block = cdk_context[CONTEXT_KEY]
    prefix, refusal = _smallest_accepted(block, max_azs)
    assert "emr-lineage.environments.dev.network.vpc_cidr: " in refusal
    assert f"to hold {max_azs} AZs (max_azs)" in refusal
    settings = _settings(block, max_azs=max_azs, prefix=prefix)

    app = cdk.App(
        context={f"availability-zones:account={ACCOUNT}:region={REGION}": REGION_AZS},
        outdir=str(tmp_path),
    )
    stack = NetworkStack(app, "Network", settings=settings, env=cdk.Environment(account=ACCOUNT, region=REGION))
    template = app.synth().get_stack_by_name(stack.stack_name).template
    vpc = ipaddress.ip_network(settings.network.vpc_cidr)
    subnets = [
        ipaddress.ip_network(s["Properties"]["CidrBlock"]) for s in by_type(template, "AWS::EC2::Subnet").values()
    ]
    assert len(subnets) == 3 * max_azs, "three tiers, one subnet per AZ"
    assert all(subnet.subnet_of(vpc) for subnet in subnets)
    for i, subnet in enumerate(subnets):
        assert not any(subnet.overlaps(other) for other in subnets[i + 1 :])
