"""HTTPS on the lineage load balancer and sign-in on the web UI (the "prod+optional" and "dev+cognito" variants)."""

from __future__ import annotations

import json

import pytest

from emr_lineage.aws import parameters
from stacks.lineage_service.marquez import API_PORT, WEB_PORT
from tests.stacks.templates import by_type, export_name, one, refusal
from tests.stacks.templates import ingress as _ingress
from tests.stacks.templates import security_group_id as _group_id
from tests.stacks.variants import CERTIFICATE_ARN, COGNITO_UI_AUTH, OIDC_SECRET_ARN, OIDC_UI_AUTH

DOMAINS = {"optional_synth": "lineage.prod.example.com", "cognito_synth": "lineage.dev.example.com"}
MODERN_TLS_POLICIES = ("ELBSecurityPolicy-TLS13-1-2-2021-06", "ELBSecurityPolicy-TLS13-1-3-2021-06")


@pytest.fixture(params=sorted(DOMAINS))
def https_synth(request: pytest.FixtureRequest):
    """Each variant with a certificate, with the domain name it is for."""
    return request.getfixturevalue(request.param), DOMAINS[request.param]


def _listeners(tpl: dict) -> dict[int, tuple[str, dict]]:
    return {
        r["Properties"]["Port"]: (k, r["Properties"])
        for k, r in by_type(tpl, "AWS::ElasticLoadBalancingV2::Listener").items()
    }


def _target_group(tpl: dict, port: int) -> str:
    (group_id,) = [
        k
        for k, g in by_type(tpl, "AWS::ElasticLoadBalancingV2::TargetGroup").items()
        if g["Properties"]["Port"] == port
    ]
    return group_id


def test_https_listener_uses_the_certificate_and_a_modern_tls_policy(https_synth):
    synth, _ = https_synth
    listeners = _listeners(synth.template_json("lineage"))
    assert sorted(listeners) == [80, 443]
    _, https = listeners[443]
    assert https["Protocol"] == "HTTPS"
    assert https["Certificates"] == [{"CertificateArn": CERTIFICATE_ARN}]
    assert https["SslPolicy"] in MODERN_TLS_POLICIES


def _rules_on(tpl: dict, listener_id: str) -> list[dict]:
    return [
        r["Properties"]
        for r in by_type(tpl, "AWS::ElasticLoadBalancingV2::ListenerRule").values()
        if r["Properties"]["ListenerArn"] == {"Ref": listener_id}
    ]


def test_port_80_redirects_reads_and_refuses_writes_naming_the_https_url(https_synth):
    """A 301 would turn a POST into a GET without its body (events lost in silence): writes get a 403 instead."""
    synth, domain = https_synth
    tpl = synth.template_json("lineage")
    redirect_id, http = _listeners(tpl)[80]
    assert http["Protocol"] == "HTTP"
    assert http["DefaultActions"] == [
        {"Type": "redirect", "RedirectConfig": {"Protocol": "HTTPS", "Port": "443", "StatusCode": "HTTP_301"}}
    ]
    (rule,) = _rules_on(tpl, redirect_id)
    assert rule["Conditions"] == [
        {"Field": "http-request-method", "HttpRequestMethodConfig": {"Values": ["POST", "PUT", "PATCH", "DELETE"]}}
    ]
    (action,) = rule["Actions"]
    body = refusal(action)
    assert body["error"].startswith(f"use https://{domain}/api/v1/lineage: ")
    # With HTTPS the port-80 listener passes checkov (a redirect to HTTPS): nothing to acknowledge on it.
    assert "checkov" not in tpl["Resources"][redirect_id].get("Metadata", {})


def test_urls_are_https_on_the_certificate_name(https_synth):
    synth, domain = https_synth
    tpl = synth.template_json("lineage")
    params = {p["Properties"]["Name"]: p["Properties"]["Value"] for p in by_type(tpl, "AWS::SSM::Parameter").values()}
    assert params[parameters.marquez_api_url(synth.env)] == f"https://{domain}"
    assert params[parameters.marquez_web_url(synth.env)] == f"https://{domain}/"
    assert tpl["Outputs"]["MarquezApiUrl"]["Value"] == f"https://{domain}"
    # Where the domain's DNS record must point.
    alb_id, _ = one(tpl, "AWS::ElasticLoadBalancingV2::LoadBalancer")
    assert tpl["Outputs"]["MarquezLoadBalancerDnsName"]["Value"] == {"Fn::GetAtt": [alb_id, "DNSName"]}


def test_emr_launch_spec_reports_lineage_over_https(https_synth, render):
    synth, domain = https_synth
    (param,) = [
        p["Properties"]
        for p in by_type(synth.template_json("emr"), "AWS::SSM::Parameter").values()
        if p["Properties"]["Name"] == parameters.emr_launch_spec(synth.env)
    ]
    spec = json.loads(render(param["Value"]))
    defaults = {c["Classification"]: c["Properties"] for c in spec["Configurations"]}["spark-defaults"]
    assert defaults["spark.openlineage.transport.url"] == f"https://{domain}"


def test_load_balancer_admits_https_and_the_redirect_from_allowed_networks_and_clients(https_synth):
    synth, _ = https_synth
    tpl = synth.template_json("lineage")
    rules = _ingress(tpl, _group_id(tpl, "LoadBalancerSecurityGroup"))
    clients = {"Fn::GetAtt": [_group_id(tpl, "LoadBalancerClientsSecurityGroup"), "GroupId"]}
    sources = {(r.get("CidrIp") or json.dumps(r["SourceSecurityGroupId"]), r["FromPort"], r["ToPort"]) for r in rules}
    cidr = next(r["CidrIp"] for r in rules if "CidrIp" in r)
    assert {(cidr, 443, 443), (cidr, 80, 80), (json.dumps(clients), 443, 443), (json.dumps(clients), 80, 80)} <= sources
    assert all(port in (80, 443) for _, port, _ in sources)
    assert "0.0.0.0/0" not in {r.get("CidrIp") for r in rules}


def test_load_balancer_may_reach_the_identity_provider_over_https(https_synth):
    synth, _ = https_synth
    tpl = synth.template_json("lineage")
    group = tpl["Resources"][_group_id(tpl, "LoadBalancerSecurityGroup")]["Properties"]
    assert [(e["CidrIp"], e["FromPort"], e["ToPort"]) for e in group["SecurityGroupEgress"]] == [
        ("0.0.0.0/0", 443, 443)
    ]


def test_api_routes_skip_the_sign_in(https_synth):
    """/api/* (lineage stack) and POST /api/v1/lineage (gateway stack) forward straight to their targets."""
    synth, _ = https_synth
    lineage, gateway = synth.template_json("lineage"), synth.template_json("gateway")
    https_id, _ = _listeners(lineage)[443]
    (api_rule,) = _rules_on(lineage, https_id)
    assert api_rule["Actions"] == [{"Type": "forward", "TargetGroupArn": {"Ref": _target_group(lineage, API_PORT)}}]
    # The gateway's rules (ingest, then the refusal of other writes) land on the HTTPS listener,
    # ahead of /api/*, without sign-in.
    gateway_rules = [  # not those of the gateway's own listener for spoke accounts (a Ref, not an import)
        rule
        for rule in by_type(gateway, "AWS::ElasticLoadBalancingV2::ListenerRule").values()
        if "Fn::ImportValue" in rule["Properties"]["ListenerArn"]
    ]
    ingest_rule, refuse_rule = sorted(gateway_rules, key=lambda rule: rule["Properties"]["Priority"])
    for rule in (ingest_rule, refuse_rule):
        assert rule["Properties"]["ListenerArn"] == {"Fn::ImportValue": export_name(lineage, {"Ref": https_id})}
        assert rule["Properties"]["Priority"] < api_rule["Priority"]
    assert [a["Type"] for a in ingest_rule["Properties"]["Actions"]] == ["forward"]
    assert [a["Type"] for a in refuse_rule["Properties"]["Actions"]] == ["fixed-response"]


def _web_actions(synth) -> list[dict]:
    tpl = synth.template_json("lineage")
    _, https = _listeners(tpl)[443]
    actions = sorted(https["DefaultActions"], key=lambda a: a["Order"])
    assert actions[-1] == {"Order": 2, "Type": "forward", "TargetGroupArn": {"Ref": _target_group(tpl, WEB_PORT)}}
    return actions


def test_web_ui_signs_in_with_oidc_then_forwards(optional_synth):
    first, _ = _web_actions(optional_synth)
    assert first["Type"] == "authenticate-oidc" and first["Order"] == 1
    config = first["AuthenticateOidcConfig"]
    for key, setting in [
        ("Issuer", "issuer"),
        ("AuthorizationEndpoint", "authorization_endpoint"),
        ("TokenEndpoint", "token_endpoint"),
        ("UserInfoEndpoint", "user_info_endpoint"),
        ("ClientId", "client_id"),
    ]:
        assert config[key] == OIDC_UI_AUTH[setting]
    # A dynamic reference: CloudFormation resolves it at deploy time, the template never holds the secret.
    assert config["ClientSecret"] == f"{{{{resolve:secretsmanager:{OIDC_SECRET_ARN}:SecretString:::}}}}"


def test_web_ui_signs_in_with_cognito_then_forwards(cognito_synth):
    first, _ = _web_actions(cognito_synth)
    assert first["Type"] == "authenticate-cognito" and first["Order"] == 1
    assert first["AuthenticateCognitoConfig"] == {
        "UserPoolArn": COGNITO_UI_AUTH["user_pool_arn"],
        "UserPoolClientId": COGNITO_UI_AUTH["user_pool_client_id"],
        "UserPoolDomain": COGNITO_UI_AUTH["user_pool_domain"],
    }


def test_http_only_without_a_certificate(synth):
    tpl = synth.template_json("lineage")
    listeners = _listeners(tpl)
    assert sorted(listeners) == [80]
    http_id, http = listeners[80]
    assert http["Protocol"] == "HTTP" and "Certificates" not in http
    assert http["DefaultActions"] == [{"Type": "forward", "TargetGroupArn": {"Ref": _target_group(tpl, WEB_PORT)}}]
    # Allowed by the settings (dev's default, prod's allow_plain_http), so checkov's plain-HTTP findings are
    # acknowledged on this listener, saying so; the HTTPS variants' port 80 needs none (above).
    skips = tpl["Resources"][http_id]["Metadata"]["checkov"]["skip"]
    assert sorted(s["id"] for s in skips) == ["CKV_AWS_103", "CKV_AWS_2"]
    assert all("allow_plain_http" in s["comment"] for s in skips)
    group = tpl["Resources"][_group_id(tpl, "LoadBalancerSecurityGroup")]["Properties"]
    assert "SecurityGroupEgress" not in group or all(
        e.get("CidrIp") != "0.0.0.0/0" for e in group["SecurityGroupEgress"]
    )
