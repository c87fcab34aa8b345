"""NetworkStack: subnet tiers, NAT per environment, endpoints, flow logs, EMR tags."""

from __future__ import annotations

from aws_cdk.assertions import Match

from emr_lineage.aws.tags import EMR_MANAGED_TAG
from emr_lineage.settings.loader import load_settings
from tests.stacks.templates import by_type as _resources


def _tags(resource: dict) -> dict[str, str]:
    return {t["Key"]: t["Value"] for t in resource["Properties"].get("Tags", [])}


def test_vpc_uses_the_configured_cidr(synth):
    settings = load_settings(synth.env)
    synth.template("network").has_resource_properties(
        "AWS::EC2::VPC", {"CidrBlock": settings.network.vpc_cidr, "EnableDnsHostnames": True}
    )


def test_three_subnet_tiers_across_at_least_two_azs(synth):
    subnets = _resources(synth.template_json("network"), "AWS::EC2::Subnet").values()
    tiers: dict[str, list] = {}
    for subnet in subnets:
        tiers.setdefault(_tags(subnet)["aws-cdk:subnet-type"], []).append(subnet["Properties"]["AvailabilityZone"])
    assert set(tiers) == {"Public", "Private", "Isolated"}
    for azs in tiers.values():
        assert len(azs) >= 2
        assert len({str(az) for az in azs}) == len(azs), "each tier has one subnet per AZ"


def test_nat_gateways_follow_config_one_in_dev_one_per_az_in_prod(synth):
    settings = load_settings(synth.env)
    nats = _resources(synth.template_json("network"), "AWS::EC2::NatGateway")
    assert len(nats) == settings.network.nat_gateways
    if synth.env == "dev":
        assert len(nats) == 1
    else:
        assert len(nats) == settings.network.max_azs


def test_private_subnets_route_to_nat_and_isolated_ones_do_not(synth):
    tpl = synth.template_json("network")
    subnets = _resources(tpl, "AWS::EC2::Subnet")
    tier_of = {k: _tags(v)["aws-cdk:subnet-type"] for k, v in subnets.items()}
    assocs = _resources(tpl, "AWS::EC2::SubnetRouteTableAssociation").values()
    table_tier = {a["Properties"]["RouteTableId"]["Ref"]: tier_of[a["Properties"]["SubnetId"]["Ref"]] for a in assocs}
    default_routes = [
        r["Properties"]
        for r in _resources(tpl, "AWS::EC2::Route").values()
        if r["Properties"].get("DestinationCidrBlock") == "0.0.0.0/0"
    ]
    nat_tables = {r["RouteTableId"]["Ref"] for r in default_routes if "NatGatewayId" in r}
    igw_tables = {r["RouteTableId"]["Ref"] for r in default_routes if "GatewayId" in r}
    assert {table_tier[t] for t in nat_tables} == {"Private"}
    assert {table_tier[t] for t in igw_tables} == {"Public"}
    isolated_tables = {t for t, tier in table_tier.items() if tier == "Isolated"}
    assert not isolated_tables & (nat_tables | igw_tables)


def test_private_subnets_carry_the_emr_managed_policy_tag(synth):
    key, value = EMR_MANAGED_TAG
    for subnet in _resources(synth.template_json("network"), "AWS::EC2::Subnet").values():
        tags = _tags(subnet)
        if tags["aws-cdk:subnet-type"] == "Private":
            assert tags.get(key) == value
        else:
            assert key not in tags


def test_s3_gateway_endpoint(synth):
    synth.template("network").has_resource_properties(
        "AWS::EC2::VPCEndpoint",
        {
            "VpcEndpointType": "Gateway",
            "ServiceName": Match.object_like({"Fn::Join": Match.array_with([Match.array_with([".s3"])])}),
        },
    )


def test_interface_endpoints_match_config(synth):
    settings = load_settings(synth.env)
    tpl = synth.template_json("network")
    interface = [
        e["Properties"]
        for e in _resources(tpl, "AWS::EC2::VPCEndpoint").values()
        if e["Properties"].get("VpcEndpointType") == "Interface"
    ]
    services = sorted(str(p["ServiceName"]["Fn::Join"][1][-1]).lstrip(".") for p in interface)
    expected = {
        "sts": ["sts"],
        "glue": ["glue"],
        "logs": ["logs"],
        "ssm": ["ssm"],
        "ecr": ["ecr.api", "ecr.dkr"],
        "secretsmanager": ["secretsmanager"],
    }
    assert services == sorted(s for name in settings.network.interface_endpoints for s in expected[name])
    assert all(p["PrivateDnsEnabled"] for p in interface)
    if interface:
        groups = _resources(tpl, "AWS::EC2::SecurityGroup")
        endpoint_groups = [g for k, g in groups.items() if k.startswith("EndpointSecurityGroup")]
        assert len(endpoint_groups) == 1
        assert endpoint_groups[0]["Properties"]["SecurityGroupIngress"] == [
            {
                "CidrIp": settings.network.vpc_cidr,
                "Description": "AWS API calls from the VPC",
                "FromPort": 443,
                "IpProtocol": "tcp",
                "ToPort": 443,
            }
        ]


def test_flow_logs_capture_all_traffic_with_retention(synth):
    settings = load_settings(synth.env)
    template = synth.template("network")
    template.has_resource_properties(
        "AWS::EC2::FlowLog",
        {
            "ResourceType": "VPC",
            "TrafficType": "ALL",
            "LogDestinationType": "cloud-watch-logs",
        },
    )
    template.has_resource_properties(
        "AWS::Logs::LogGroup",
        {
            "RetentionInDays": settings.network.flow_logs_retention_days,
        },
    )
