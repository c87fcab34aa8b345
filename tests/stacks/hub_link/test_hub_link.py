"""A spoke (the spoke variant: dev with hub, the hub's name and its secret for this account, in an existing VPC,
with EMR Serverless): the hub link stack and what the others then build, and do not."""

from __future__ import annotations

import copy
import json

import aws_cdk as cdk
import pytest
from aws_cdk.assertions import Template

import app as cdk_app
from emr_lineage.aws import parameters
from emr_lineage.aws.stacks import stack_name, tool_parameters
from emr_lineage.gateway.config import FORWARD_HANDLER, INGEST_HANDLER
from emr_lineage.settings.hub import SPOKE_HTTP_PORT, SPOKE_HTTPS_PORT
from emr_lineage.settings.loader import settings_from_context
from stacks.hub_link import HubLinkStack
from stacks.network import NetworkStack
from tests.stacks.templates import as_list, by_type, export_name, logical_id, one, published, statements
from tests.stacks.variants import EXISTING_VPC, HUB, HUB_API_KEY_SECRET_ARN, HUB_HOSTNAME, HUB_SERVICE_NAME, as_spoke

HUB_KEYS = "arn:aws:kms:eu-west-1:123456789012:key/*"  # any key of the secret's account and region


def _imported(synth, stack: str, value: dict) -> dict:
    return {"Fn::ImportValue": export_name(synth.template_json(stack), value)}


def test_the_endpoint_connects_to_the_hubs_service_from_the_private_subnets(spoke_synth):
    link = spoke_synth.template_json("hub_link")
    _, endpoint = one(link, "AWS::EC2::VPCEndpoint")
    props = endpoint["Properties"]
    assert (props["ServiceName"], props["VpcEndpointType"]) == (HUB_SERVICE_NAME, "Interface")
    assert (props["VpcId"], props["SubnetIds"]) == (EXISTING_VPC["vpc_id"], EXISTING_VPC["private_subnet_ids"])
    assert props["PrivateDnsEnabled"] is False  # the hub's name has a zone of its own
    # Environment-agnostic: a cross-region endpoint only where the deploy's region is not the hub's.
    assert props["ServiceRegion"] == {"Fn::If": ["HubInThisRegion", {"Ref": "AWS::NoValue"}, HUB["region"]]}
    assert link["Conditions"]["HubInThisRegion"] == {"Fn::Equals": [{"Ref": "AWS::Region"}, HUB["region"]]}


def test_only_the_lineage_clients_reach_the_endpoint_and_only_on_the_hubs_https_port(spoke_synth):
    link = spoke_synth.template_json("hub_link")
    (endpoint_id, endpoint) = one(link, "AWS::EC2::VPCEndpoint")
    clients = {"Fn::GetAtt": [logical_id(link, "ClientsSecurityGroup", "AWS::EC2::SecurityGroup"), "GroupId"]}
    group = {"Fn::GetAtt": [logical_id(link, "EndpointSecurityGroup", "AWS::EC2::SecurityGroup"), "GroupId"]}
    assert endpoint["Properties"]["SecurityGroupIds"] == [group]
    (_, ingress) = one(link, "AWS::EC2::SecurityGroupIngress")
    (_, egress) = one(link, "AWS::EC2::SecurityGroupEgress")
    assert {k: ingress["Properties"][k] for k in ("GroupId", "SourceSecurityGroupId", "FromPort", "ToPort")} == {
        "GroupId": group,
        "SourceSecurityGroupId": clients,
        "FromPort": SPOKE_HTTPS_PORT,
        "ToPort": SPOKE_HTTPS_PORT,
    }
    assert {k: egress["Properties"][k] for k in ("GroupId", "DestinationSecurityGroupId", "FromPort", "ToPort")} == {
        "GroupId": clients,
        "DestinationSecurityGroupId": group,
        "FromPort": SPOKE_HTTPS_PORT,
        "ToPort": SPOKE_HTTPS_PORT,
    }
    endpoint_group = link["Resources"][group["Fn::GetAtt"][0]]["Properties"]
    assert "SecurityGroupIngress" not in endpoint_group  # nothing else gets in
    assert [r["CidrIp"] for r in endpoint_group["SecurityGroupEgress"]] == ["255.255.255.255/32"]  # CDK's none


def test_the_hubs_name_resolves_to_the_endpoint_inside_the_spokes_vpc(spoke_synth):
    link = spoke_synth.template_json("hub_link")
    (endpoint_id, _) = one(link, "AWS::EC2::VPCEndpoint")
    (zone_id, zone) = one(link, "AWS::Route53::HostedZone")
    (_, record) = one(link, "AWS::Route53::RecordSet")
    assert zone["Properties"]["Name"] == f"{HUB_HOSTNAME}."
    assert zone["Properties"]["VPCs"] == [{"VPCId": EXISTING_VPC["vpc_id"], "VPCRegion": {"Ref": "AWS::Region"}}]
    first_entry = {"Fn::Select": [0, {"Fn::GetAtt": [endpoint_id, "DnsEntries"]}]}
    assert record["Properties"] == {
        "HostedZoneId": {"Ref": zone_id},
        "Name": f"{HUB_HOSTNAME}.",
        "Type": "A",
        "AliasTarget": {
            "DNSName": {"Fn::Select": [1, {"Fn::Split": [":", first_entry]}]},
            "HostedZoneId": {"Fn::Select": [0, {"Fn::Split": [":", first_entry]}]},
        },
    }


def test_emr_sends_to_the_hub_by_its_name_from_the_hub_links_clients_group(spoke_synth):
    link, emr = spoke_synth.template_json("hub_link"), spoke_synth.template_json("emr")
    spec = json.dumps(published(emr, parameters.emr_launch_spec(spoke_synth.env)))
    assert f"https://{HUB_HOSTNAME}:{SPOKE_HTTPS_PORT}" in spec
    assert HUB_API_KEY_SECRET_ARN in spec  # the bootstrap's --api-key-secret
    clients = logical_id(link, "ClientsSecurityGroup", "AWS::EC2::SecurityGroup")
    imported = _imported(spoke_synth, "hub_link", {"Fn::GetAtt": [clients, "GroupId"]})
    assert json.dumps(imported) in spec
    (_, application) = one(emr, "AWS::EMRServerless::Application")
    assert imported in application["Properties"]["NetworkConfiguration"]["SecurityGroupIds"]


@pytest.mark.parametrize("role", ["RolesInstanceRole", "ServerlessJobRole"])
def test_the_bootstrap_and_job_runs_read_the_hubs_secret_and_decrypt_it_through_its_secrets_manager(spoke_synth, role):
    emr = spoke_synth.template_json("emr")
    by_sid = {s.get("Sid"): s for s in statements(emr, logical_id(emr, role, "AWS::IAM::Role"))}
    read, decrypt = by_sid["ReadGatewayApiKey"], by_sid["DecryptGatewayApiKey"]
    assert read["Resource"] == HUB_API_KEY_SECRET_ARN
    assert read["Action"] == ["secretsmanager:GetSecretValue", "secretsmanager:DescribeSecret"]
    assert (decrypt["Action"], decrypt["Resource"]) == ("kms:Decrypt", HUB_KEYS)
    assert decrypt["Condition"] == {"StringEquals": {"kms:ViaService": "secretsmanager.eu-west-1.amazonaws.com"}}
    # No archive in a spoke: the graph job reads none.
    assert not {"ListGatewayArchive", "ReadGatewayArchive", "DecryptGatewayArchive"} & set(by_sid)


def test_every_parameter_the_tools_read_is_published_by_the_stack_they_name(spoke_synth, variants):
    settings = settings_from_context(variants["spoke"]["emr-lineage"], spoke_synth.env)
    by_stack_name = {name: short for short, name in spoke_synth.stack_names.items()}
    for parameter, part in tool_parameters(settings).items():
        template = spoke_synth.template_json(by_stack_name[stack_name(settings.name, part)])
        assert published(template, parameter), parameter
    link = spoke_synth.template_json("hub_link")
    (endpoint_id, _) = one(link, "AWS::EC2::VPCEndpoint")
    assert published(link, parameters.gateway_api_key_secret(settings.name)) == HUB_API_KEY_SECRET_ARN
    assert published(link, parameters.hub_endpoint_id(settings.name)) == {"Ref": endpoint_id}
    assert parameters.marquez_api_url(settings.name) not in tool_parameters(settings)


def test_a_spoke_deploys_no_lineage_service_no_gateway_and_no_vpc(spoke_synth):
    templates = spoke_synth.templates
    assert "lineage" not in templates and "gateway" not in templates
    kinds = {resource["Type"] for template in templates.values() for resource in template["Resources"].values()}
    for kind in (
        "AWS::ECS::Service",
        "AWS::RDS::DBInstance",
        "AWS::ElasticLoadBalancingV2::LoadBalancer",
        "AWS::SQS::Queue",
        "AWS::EC2::VPC",
        "AWS::EC2::Subnet",
        "AWS::EC2::NatGateway",
        "AWS::CloudWatch::Alarm",
        "AWS::CloudWatch::Dashboard",
    ):
        assert kind not in kinds, kind
    handlers = {
        function["Properties"].get("Handler")
        for template in templates.values()
        for function in by_type(template, "AWS::Lambda::Function").values()
    }
    assert not handlers & {INGEST_HANDLER, FORWARD_HANDLER}


def test_a_spokes_monitoring_is_its_topic_and_emrs_failure_events(spoke_synth):
    monitoring = spoke_synth.template_json("monitoring")
    (topic_id, _) = one(monitoring, "AWS::SNS::Topic")
    rules = by_type(monitoring, "AWS::Events::Rule").values()
    assert rules and all(r["Properties"]["Targets"][0]["Arn"] == {"Ref": topic_id} for r in rules)
    assert {json.dumps(r["Properties"]["EventPattern"]["source"]) for r in rules} == {'["aws.emr"]'}
    assert "DashboardName" not in monitoring["Outputs"]


# A spoke without the hub's name and without a secret ARN, in another region than the hub: built, not synthesized
# as a whole (the hub link alone is).
@pytest.fixture(scope="module")
def plain_spoke(cdk_context) -> dict[str, cdk.Stack]:
    context = copy.deepcopy(cdk_context)
    dev = context["emr-lineage"]["environments"]["dev"]
    as_spoke(dev, {"endpoint_service_name": HUB_SERVICE_NAME, "region": HUB["region"]})
    dev.update(account="210987654321", region="us-east-1")
    dev["emr_serverless"]["enabled"] = True
    return cdk_app.build_app(cdk.App(context={**context, "env": "dev"}))


@pytest.fixture(scope="module")
def plain_link(plain_spoke) -> dict:
    """The hub link's template, synthesized on its own (without the app's cdk-nag plugin)."""
    settings = settings_from_context(plain_spoke["hub_link"].node.try_get_context("emr-lineage"), "dev")
    app = cdk.App()
    env = cdk.Environment(account=settings.account, region=settings.region)
    network = NetworkStack(app, "Network", settings=settings, env=env)
    return Template.from_stack(HubLinkStack(app, "HubLink", settings=settings, vpc=network.vpc, env=env)).to_json()


def test_without_the_hubs_name_spark_sends_plain_http_to_the_endpoints_own_name(plain_spoke, plain_link):
    link = plain_spoke["hub_link"]
    assert link.lineage_url.startswith("http://") and link.lineage_url.endswith(f":{SPOKE_HTTP_PORT}")
    template = plain_link
    (endpoint_id, endpoint) = one(template, "AWS::EC2::VPCEndpoint")
    assert endpoint["Properties"]["ServiceRegion"] == HUB["region"]  # us-east-1 to eu-west-1: cross-region
    assert not by_type(template, "AWS::Route53::HostedZone")
    (_, ingress) = one(template, "AWS::EC2::SecurityGroupIngress")
    assert ingress["Properties"]["FromPort"] == ingress["Properties"]["ToPort"] == SPOKE_HTTP_PORT
    url = template["Outputs"]["HubLineageUrl"]["Value"]
    first_entry = {"Fn::Select": [0, {"Fn::GetAtt": [endpoint_id, "DnsEntries"]}]}
    assert url == {"Fn::Join": ["", ["http://", {"Fn::Select": [1, {"Fn::Split": [":", first_entry]}]}, ":8080"]]}


def test_without_a_secret_arn_the_spoke_makes_an_empty_secret_the_operator_fills(plain_link):
    template = plain_link
    (secret_id, secret) = one(template, "AWS::SecretsManager::Secret")
    (key_id, _) = one(template, "AWS::KMS::Key")
    props = secret["Properties"]
    assert props["Name"] == "emr-lineage-dev/hub/api-key"
    assert props["KmsKeyId"] == {"Fn::GetAtt": [key_id, "Arn"]}
    assert "GenerateSecretString" not in props and "SecretString" not in props
    assert published(template, parameters.gateway_api_key_secret("dev")) == {"Ref": secret_id}
    # EMR Serverless reads it when a job run that names it starts.
    (_, policy) = one(template, "AWS::SecretsManager::ResourcePolicy")
    (statement,) = policy["Properties"]["ResourcePolicy"]["Statement"]
    assert statement["Principal"] == {"Service": "emr-serverless.amazonaws.com"}


def test_without_a_secret_arn_the_roles_decrypt_with_the_spokes_own_key(plain_spoke, plain_link):
    emr = plain_spoke["emr"]
    policy = emr.resolve(emr.roles.instance_role.node.find_child("DefaultPolicy").document)
    by_sid = {s.get("Sid"): s for s in policy["Statement"]}
    link = plain_spoke["hub_link"]
    (key_id, _) = one(plain_link, "AWS::KMS::Key")
    (secret_id, _) = one(plain_link, "AWS::SecretsManager::Secret")
    # References to the hub link stack (imports once the app is synthesized).
    assert by_sid["DecryptGatewayApiKey"]["Resource"] == link.resolve(link.api_key_kms_key_arn)
    assert by_sid["DecryptGatewayApiKey"]["Resource"] == {"Fn::GetAtt": [key_id, "Arn"]}
    assert by_sid["ReadGatewayApiKey"]["Resource"] == {"Ref": secret_id}
    this_region = {"Fn::Join": ["", ["secretsmanager.", {"Ref": "AWS::Region"}, ".amazonaws.com"]]}
    assert by_sid["DecryptGatewayApiKey"]["Condition"] == {"StringEquals": {"kms:ViaService": this_region}}
    assert as_list(by_sid["ReadGatewayApiKey"]["Action"]) == [
        "secretsmanager:GetSecretValue",
        "secretsmanager:DescribeSecret",
    ]


def test_a_spoke_in_its_hubs_region_makes_a_regional_endpoint(cdk_context):
    context = copy.deepcopy(cdk_context)
    dev = context["emr-lineage"]["environments"]["dev"]
    as_spoke(dev)
    dev.update(account="210987654321", region=HUB["region"])
    settings = settings_from_context(context["emr-lineage"], "dev")
    app = cdk.App()
    env = cdk.Environment(account=settings.account, region=settings.region)
    network = NetworkStack(app, "Network", settings=settings, env=env)
    link = HubLinkStack(app, "HubLink", settings=settings, vpc=network.vpc, env=env)
    assert link.endpoint.node.default_child.service_region is None
    assert link.node.try_find_child("HubInThisRegion") is None
