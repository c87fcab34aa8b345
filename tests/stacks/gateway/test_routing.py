"""The gateway's rules on the lineage load balancer (stacks/gateway/routing.py): lineage posts, single and
batch, to the ingest function, which only the load balancer's target groups may invoke; every other
write refused; reads still to Marquez; on the listener that serves clients, ahead of the API rule."""

from __future__ import annotations

import fnmatch

import pytest

from stacks.gateway.routing import DENY_WRITES_RULE_PRIORITY, INGEST_RULE_PRIORITY
from stacks.lineage_service.load_balancer import HTTP_PORT, HTTPS_PORT
from stacks.lineage_service.marquez import API_PORT
from tests.stacks.templates import by_type, export_name, logical_id, refusal
from tests.stacks.variants import COGNITO, ENVS, OPTIONAL

RULE = "AWS::ElasticLoadBalancingV2::ListenerRule"
LISTENER = "AWS::ElasticLoadBalancingV2::Listener"
WRITES = ["POST", "PUT", "PATCH", "DELETE"]


def serving_listener(lineage: dict) -> str:
    """The lineage listener clients use: 443 with a certificate (80 then redirects reads, refuses writes), else 80."""
    listeners = {v["Properties"]["Port"]: k for k, v in by_type(lineage, LISTENER).items()}
    return listeners.get(HTTPS_PORT, listeners[HTTP_PORT])


def _rules_of(gateway: dict, lineage: dict, listener_id: str) -> list[dict]:
    """Every rule of a lineage listener, the lineage stack's and the gateway's (imported), by priority."""
    imported = {"Fn::ImportValue": export_name(lineage, {"Ref": listener_id})}
    found = [
        r["Properties"]
        for r in by_type(lineage, RULE).values()
        if r["Properties"]["ListenerArn"] == {"Ref": listener_id}
    ]
    found += [r["Properties"] for r in by_type(gateway, RULE).values() if r["Properties"]["ListenerArn"] == imported]
    return sorted(found, key=lambda r: r["Priority"])


def _matches(condition: dict, method: str, path: str) -> bool:
    if condition["Field"] == "http-request-method":
        return method in condition["HttpRequestMethodConfig"]["Values"]
    assert condition["Field"] == "path-pattern", condition
    # ALB path patterns: case-sensitive, * any characters (slashes too), ? one (fnmatchcase's rules).
    return any(fnmatch.fnmatchcase(path, p) for p in condition["PathPatternConfig"]["Values"])


def _route(gateway: dict, lineage: dict, method: str, path: str) -> str:
    """What the serving listener does with a request: 'ingest', 'api', 'web' or the fixed response's status."""
    listener_id = serving_listener(lineage)
    for rule in _rules_of(gateway, lineage, listener_id):
        if all(_matches(c, method, path) for c in rule["Conditions"]):
            (action,) = [a for a in rule["Actions"] if not a["Type"].startswith("authenticate-")]
            break
    else:
        action = lineage["Resources"][listener_id]["Properties"]["DefaultActions"][-1]  # after any sign-in
    if action["Type"] == "fixed-response":
        return action["FixedResponseConfig"]["StatusCode"]
    group = action["TargetGroupArn"]
    if group == {"Ref": logical_id(gateway, "IngestTarget", "AWS::ElasticLoadBalancingV2::TargetGroup")}:
        return "ingest"
    port = lineage["Resources"][group["Ref"]]["Properties"]["Port"]
    return "api" if port == API_PORT else "web"


ROUTES = [
    ("POST", "/api/v1/lineage", "ingest"),
    ("POST", "/api/v1/lineage/", "ingest"),  # the trailing slash no longer falls through to Marquez
    ("POST", "/api/v1/lineage/batch", "ingest"),  # the OpenLineage batch endpoint (Marquez has none)
    ("POST", "/api/v1/lineage/batch/", "ingest"),
    ("POST", "/api/v1/lineage/batches", "403"),
    ("PUT", "/api/v1/lineage/batch", "403"),
    ("POST", "/API/v1/lineage", "403"),
    ("POST", "//api/v1/lineage", "403"),
    ("PUT", "/api/v1/lineage", "403"),
    ("PUT", "/api/v1/namespaces/ns", "403"),
    ("POST", "/api/v1/namespaces/ns/datasets/d/tags/pii", "403"),
    ("DELETE", "/api/v1/namespaces/ns/jobs/j", "403"),
    ("PATCH", "/api/v1/jobs/runs/r", "403"),
    ("POST", "/api/v1/search", "403"),
    ("DELETE", "/", "403"),  # the web UI's own proxy to the API too
    ("GET", "/api/v1/namespaces", "api"),
    ("GET", "/api/v1/lineage", "api"),
    ("HEAD", "/api/v1/namespaces", "api"),
    ("GET", "/", "web"),
    ("GET", "/datasets", "web"),
]


@pytest.mark.parametrize("variant", [*ENVS, OPTIONAL, COGNITO])
def test_lineage_posts_reach_the_ingest_and_every_other_write_is_refused(
    synths, optional_synth, cognito_synth, variant
):
    synth = {OPTIONAL: optional_synth, COGNITO: cognito_synth}.get(variant) or synths[variant]
    gateway, lineage = synth.template_json("gateway"), synth.template_json("lineage")
    routed = [(method, path, _route(gateway, lineage, method, path)) for method, path, _ in ROUTES]
    assert routed == ROUTES


@pytest.mark.parametrize("variant", [*ENVS, OPTIONAL, COGNITO])
def test_ingest_and_deny_rules_sit_on_the_serving_listener_ahead_of_the_api_rule(
    synths, optional_synth, cognito_synth, variant
):
    synth = {OPTIONAL: optional_synth, COGNITO: cognito_synth}.get(variant) or synths[variant]
    gateway, lineage = synth.template_json("gateway"), synth.template_json("lineage")
    listener_id = serving_listener(lineage)
    # The variants with a certificate serve HTTPS on 443; their port 80 redirects reads and refuses writes
    # itself (tests/stacks/lineage_service/test_https.py), so the gateway adds no rule there.
    https = variant in (OPTIONAL, COGNITO)
    serving = lineage["Resources"][listener_id]["Properties"]
    assert (serving["Port"], serving["Protocol"]) == ((HTTPS_PORT, "HTTPS") if https else (HTTP_PORT, "HTTP"))
    rules = _rules_of(gateway, lineage, listener_id)
    ingest, deny, api = rules
    assert (ingest["Priority"], deny["Priority"]) == (INGEST_RULE_PRIORITY, DENY_WRITES_RULE_PRIORITY)
    assert ingest["Priority"] < deny["Priority"] < api["Priority"]
    paths = ["/api/v1/lineage", "/api/v1/lineage/", "/api/v1/lineage/batch", "/api/v1/lineage/batch/"]
    assert ingest["Conditions"] == [
        {"Field": "path-pattern", "PathPatternConfig": {"Values": paths}},
        {"Field": "http-request-method", "HttpRequestMethodConfig": {"Values": ["POST"]}},
    ]
    assert deny["Conditions"] == [{"Field": "http-request-method", "HttpRequestMethodConfig": {"Values": WRITES}}]
    (action,) = deny["Actions"]
    body = refusal(action)
    assert "only through POST /api/v1/lineage or /api/v1/lineage/batch" in body["error"]
    # Neither rule is on the port-80 redirect listener (with HTTPS) nor anywhere else of the lineage stack's
    # (the gateway's own listener for spoke accounts has rules of its own: test_spokes.py).
    imported = [r for r in by_type(gateway, RULE).values() if "Fn::ImportValue" in r["Properties"]["ListenerArn"]]
    assert len(imported) == 2


def test_lineage_posts_go_to_the_ingest_function(synth, render):
    gateway = synth.template_json("gateway")
    (props,) = [
        r["Properties"] for r in by_type(gateway, RULE).values() if r["Properties"]["Priority"] == INGEST_RULE_PRIORITY
    ]
    (action,) = props["Actions"]
    target_group = gateway["Resources"][action["TargetGroupArn"]["Ref"]]["Properties"]
    ingest_id = logical_id(gateway, "Ingest", "AWS::Lambda::Function")
    assert target_group["TargetType"] == "lambda"
    assert target_group["Targets"] == [{"Id": {"Fn::GetAtt": [ingest_id, "Arn"]}}]
    (permission,) = by_type(gateway, "AWS::Lambda::Permission").values()
    assert permission["Properties"]["Principal"] == "elasticloadbalancing.amazonaws.com"
    assert permission["Properties"]["FunctionName"] == {"Fn::GetAtt": [ingest_id, "Arn"]}
    # Only target groups of this account and region may invoke it (Lambda matches SourceArn as ArnLike).
    assert render(permission["Properties"]["SourceArn"]) == (
        "arn:{Ref:AWS::Partition}:elasticloadbalancing:{Ref:AWS::Region}:{Ref:AWS::AccountId}:targetgroup/*"
    )
