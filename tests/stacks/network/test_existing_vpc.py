"""An existing VPC (network.existing_vpc, the dev+cognito variant): nothing of it is created, every stack
runs in the subnets the settings name, and only the endpoints asked for are made."""

from __future__ import annotations

import json

import aws_cdk as cdk
from aws_cdk.assertions import Template

from emr_lineage.aws.stacks import NETWORK, stack_parts
from emr_lineage.settings.loader import settings_from_context
from stacks.network import NetworkStack
from tests.stacks.templates import by_type
from tests.stacks.variants import EXISTING_VPC, EXISTING_VPC_ENDPOINTS

PRIVATE, ISOLATED = EXISTING_VPC["private_subnet_ids"], EXISTING_VPC["isolated_subnet_ids"]
CREATED_NETWORK = ("AWS::EC2::VPC", "AWS::EC2::Subnet", "AWS::EC2::NatGateway", "AWS::EC2::FlowLog", "AWS::EC2::EIP")


def test_no_stack_creates_a_vpc_subnet_nat_gateway_or_flow_log(cognito_synth):
    for name, template in cognito_synth.templates.items():
        assert not [t for t in CREATED_NETWORK if by_type(template, t)], name
        assert not by_type(template, "AWS::KMS::Key") or name != "network"


def test_every_workload_runs_in_the_named_subnets(cognito_synth):
    text = {name: json.dumps(template) for name, template in cognito_synth.templates.items()}
    for stack in ("lineage", "gateway"):
        assert all(subnet in text[stack] for subnet in PRIVATE), stack
    assert f'\\"Ec2SubnetId\\":\\"{PRIVATE[0]}\\"' in text["emr"]  # clusters: the first (the launch spec)
    database = cognito_synth.template_json("lineage")
    (group,) = by_type(database, "AWS::RDS::DBSubnetGroup").values()
    assert group["Properties"]["SubnetIds"] == ISOLATED
    for template in cognito_synth.templates.values():
        for sg in by_type(template, "AWS::EC2::SecurityGroup").values():
            assert sg["Properties"]["VpcId"] == EXISTING_VPC["vpc_id"]


def test_the_endpoints_asked_for_are_made_in_the_private_subnets(cognito_synth):
    network = cognito_synth.template_json("network")
    endpoints = list(by_type(network, "AWS::EC2::VPCEndpoint").values())
    (gateway,) = [e["Properties"] for e in endpoints if e["Properties"].get("VpcEndpointType") == "Gateway"]
    assert gateway["RouteTableIds"] == ["rtb-0a1b2c3d4e5f60731", "rtb-0a1b2c3d4e5f60732"]  # each once
    assert gateway["VpcId"] == EXISTING_VPC["vpc_id"]
    interfaces = [e["Properties"] for e in endpoints if e["Properties"].get("VpcEndpointType") == "Interface"]
    assert len(interfaces) == len(EXISTING_VPC_ENDPOINTS)
    assert all(e["SubnetIds"] == PRIVATE and e["VpcId"] == EXISTING_VPC["vpc_id"] for e in interfaces)
    (group,) = by_type(network, "AWS::EC2::SecurityGroup").values()
    assert [rule["CidrIp"] for rule in group["Properties"]["SecurityGroupIngress"]] == [EXISTING_VPC["cidr"]]


def test_the_stacks_in_the_vpc_deploy_after_its_endpoints(cognito_synth):
    manifest = json.loads((cognito_synth.outdir / "manifest.json").read_text())["artifacts"]
    network = cognito_synth.stack_names["network"]
    for stack in ("lineage", "gateway", "emr"):
        assert network in manifest[cognito_synth.stack_names[stack]]["dependencies"], stack


def test_without_endpoints_the_network_stack_creates_nothing(repo_root):
    context = json.loads((repo_root / "cdk.json").read_text())["context"]["emr-lineage"]
    context["environments"]["dev"]["network"] = {"existing_vpc": EXISTING_VPC, "create_endpoints": False}
    settings = settings_from_context(context, "dev")
    app = cdk.App(analytics_reporting=False)
    stack = NetworkStack(app, "Network", settings=settings)
    assert Template.from_stack(stack).to_json().get("Resources", {}) == {}
    assert stack.vpc.vpc_id == EXISTING_VPC["vpc_id"]
    assert [s.subnet_id for s in stack.vpc.private_subnets] == PRIVATE
    assert [s.subnet_id for s in stack.vpc.isolated_subnets] == ISOLATED
    assert NETWORK not in stack_parts(settings)  # doctor does not look for a stack cdk deploy may skip
