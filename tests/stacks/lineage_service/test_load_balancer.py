"""LineageLoadBalancer and LineageServiceStack outputs: the internal ALB, its access logs, who may reach it."""

from __future__ import annotations

import json

from emr_lineage.aws import parameters
from emr_lineage.settings.loader import load_settings
from stacks.lineage_service.marquez import ADMIN_PORT, API_PORT, WEB_PORT
from tests.stacks.templates import by_type as _all
from tests.stacks.templates import ingress as _ingress
from tests.stacks.templates import one as _one
from tests.stacks.templates import security_group_id as _group_id


def test_load_balancer_is_internal_with_access_logs(synth):
    _, alb = _one(synth.template_json("lineage"), "AWS::ElasticLoadBalancingV2::LoadBalancer")
    props = alb["Properties"]
    assert props["Scheme"] == "internal"
    attributes = {a["Key"]: a["Value"] for a in props["LoadBalancerAttributes"]}
    assert attributes["access_logs.s3.enabled"] == "true"
    assert attributes["access_logs.s3.prefix"] == "marquez-alb"
    assert attributes["routing.http.drop_invalid_header_fields.enabled"] == "true"


def test_access_log_bucket_is_ssl_only_and_lets_elb_deliver_in_any_region(synth):
    tpl = synth.template_json("lineage")
    _, policy = _one(tpl, "AWS::S3::BucketPolicy")
    statements = {s["Sid"]: s for s in policy["Properties"]["PolicyDocument"]["Statement"]}
    deny = statements["DenyInsecureTransport"]
    assert deny["Effect"] == "Deny" and deny["Condition"] == {"Bool": {"aws:SecureTransport": "false"}}
    principal = statements["AllowElbLogDelivery"]["Principal"]["Fn::If"]
    assert principal[2] == {"Service": "logdelivery.elasticloadbalancing.amazonaws.com"}
    mapping = next(iter(tpl["Mappings"].values()))
    assert mapping["us-east-1"]["account"] == "127311923021"  # ELB's account there (ELB user guide)
    assert mapping["me-central-1"]["account"] == "none"  # newer region: service principal instead
    _, bucket = _one(tpl, "AWS::S3::Bucket")
    assert bucket["Properties"]["PublicAccessBlockConfiguration"] == {
        "BlockPublicAcls": True,
        "BlockPublicPolicy": True,
        "IgnorePublicAcls": True,
        "RestrictPublicBuckets": True,
    }


def test_routes_api_paths_to_the_api_and_the_rest_to_the_web(synth):
    tpl = synth.template_json("lineage")
    groups = _all(tpl, "AWS::ElasticLoadBalancingV2::TargetGroup")
    by_port = {g["Properties"]["Port"]: (k, g["Properties"]) for k, g in groups.items()}
    api_id, api = by_port[API_PORT]
    web_id, web = by_port[WEB_PORT]
    assert (api["HealthCheckPath"], api["HealthCheckPort"]) == ("/healthcheck", str(ADMIN_PORT))
    assert (web["HealthCheckPath"], web["HealthCheckPort"]) == ("/healthcheck", str(WEB_PORT))
    _, listener = _one(tpl, "AWS::ElasticLoadBalancingV2::Listener")
    assert listener["Properties"]["Port"] == 80
    assert listener["Properties"]["DefaultActions"] == [{"TargetGroupArn": {"Ref": web_id}, "Type": "forward"}]
    _, rule = _one(tpl, "AWS::ElasticLoadBalancingV2::ListenerRule")
    assert rule["Properties"]["Conditions"] == [{"Field": "path-pattern", "PathPatternConfig": {"Values": ["/api/*"]}}]
    assert rule["Properties"]["Actions"] == [{"TargetGroupArn": {"Ref": api_id}, "Type": "forward"}]


def test_load_balancer_admits_only_allowed_cidrs_and_lineage_clients(synth):
    settings = load_settings(synth.env)
    tpl = synth.template_json("lineage")
    rules = _ingress(tpl, _group_id(tpl, "LoadBalancerSecurityGroup"))
    cidrs = sorted(r["CidrIp"] for r in rules if "CidrIp" in r)
    assert cidrs == sorted(settings.marquez.web_allowed_cidrs)
    assert "0.0.0.0/0" not in cidrs
    clients = _group_id(tpl, "LoadBalancerClientsSecurityGroup")
    sources = [r["SourceSecurityGroupId"] for r in rules if "SourceSecurityGroupId" in r]
    assert sources == [{"Fn::GetAtt": [clients, "GroupId"]}]
    assert all((r["FromPort"], r["ToPort"]) == (80, 80) for r in rules)


def test_marquez_tasks_admit_only_the_load_balancer(synth):
    tpl = synth.template_json("lineage")
    rules = _ingress(tpl, _group_id(tpl, "MarquezSecurityGroup"))
    alb_group = _group_id(tpl, "LoadBalancerSecurityGroup")
    assert {r["SourceSecurityGroupId"]["Fn::GetAtt"][0] for r in rules} == {alb_group}
    assert sorted(r["FromPort"] for r in rules) == sorted([API_PORT, ADMIN_PORT, WEB_PORT])


# --- outputs ------------------------------------------------------------------------------------


def test_urls_are_published_as_outputs_and_ssm_parameters(synth):
    tpl = synth.template_json("lineage")
    _, alb = _one(tpl, "AWS::ElasticLoadBalancingV2::LoadBalancer")
    params = {p["Properties"]["Name"]: p["Properties"]["Value"] for p in _all(tpl, "AWS::SSM::Parameter").values()}
    api_url = params[parameters.marquez_api_url(synth.env)]
    web_url = params[parameters.marquez_web_url(synth.env)]
    assert api_url["Fn::Join"][1][0] == "http://" and "DNSName" in json.dumps(api_url)
    assert web_url["Fn::Join"][1][-1] == "/"
    outputs = tpl["Outputs"]
    assert outputs["MarquezApiUrl"]["Value"] == api_url
    assert outputs["MarquezWebUrl"]["Value"] == web_url
    assert "LineageClientsSecurityGroupId" in outputs
