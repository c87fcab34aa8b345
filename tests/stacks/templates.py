"""Small readers of synthesized CloudFormation templates (plain dicts), shared by the stack tests."""

from __future__ import annotations

import json

from emr_lineage.aws import parameters


def by_type(tpl: dict, kind: str) -> dict[str, dict]:
    """Resources of one type, by logical id."""
    return {k: v for k, v in tpl["Resources"].items() if v["Type"] == kind}


def one(tpl: dict, kind: str) -> tuple[str, dict]:
    """The only resource of a type, as (logical id, resource)."""
    found = list(by_type(tpl, kind).items())
    assert len(found) == 1, f"expected one {kind}, found {len(found)}"
    return found[0]


def logical_id(tpl: dict, prefix: str, kind: str) -> str:
    """The logical id of the only resource of ``kind`` whose id starts with ``prefix``."""
    (found,) = [k for k in by_type(tpl, kind) if k.startswith(prefix)]
    return found


def published(tpl: dict, parameter_name: str):
    """The value of the SSM parameter ``parameter_name`` a template publishes (e.g. ``{"Ref": id}``)."""
    (value,) = [
        p["Properties"]["Value"]
        for p in by_type(tpl, "AWS::SSM::Parameter").values()
        if p["Properties"]["Name"] == parameter_name
    ]
    return value


def lake_bucket_id(data_lake: dict, env: str) -> str:
    """The logical id of the data lake bucket: the one the data lake stack publishes for the tools."""
    return published(data_lake, parameters.data_lake_bucket(env))["Ref"]


def as_list(value) -> list:
    return value if isinstance(value, list) else [value]


def statements(tpl: dict, role_id: str) -> list[dict]:
    """Every statement of the IAM policies attached to a role of the template."""
    return [
        s
        for p in by_type(tpl, "AWS::IAM::Policy").values()
        if {"Ref": role_id} in p["Properties"]["Roles"]
        for s in p["Properties"]["PolicyDocument"]["Statement"]
    ]


def security_group_id(tpl: dict, prefix: str) -> str:
    matches = [k for k in by_type(tpl, "AWS::EC2::SecurityGroup") if k.startswith(prefix)]
    assert len(matches) == 1, (prefix, matches)
    return matches[0]


def ingress(tpl: dict, group_id: str) -> list[dict]:
    """Every ingress rule of a group, inline or standalone."""
    rules = list(tpl["Resources"][group_id]["Properties"].get("SecurityGroupIngress", []))
    for res in by_type(tpl, "AWS::EC2::SecurityGroupIngress").values():
        props = res["Properties"]
        if props["GroupId"] == {"Fn::GetAtt": [group_id, "GroupId"]}:
            rules.append(props)
    return rules


def export_name(tpl: dict, value: dict) -> str:
    """The name under which a template exports ``value`` (e.g. ``{"Fn::GetAtt": [id, "Arn"]}``)."""
    (name,) = [o["Export"]["Name"] for o in tpl.get("Outputs", {}).values() if "Export" in o and o["Value"] == value]
    return name


def refusal(action: dict) -> dict:
    """The JSON body of a listener rule's action that refuses with 403 by itself (a fixed response
    within the ALB's 1,024 characters), with its ``status`` checked."""
    assert action["Type"] == "fixed-response"
    config = action["FixedResponseConfig"]
    assert (config["StatusCode"], config["ContentType"]) == ("403", "application/json")
    assert len(config["MessageBody"]) <= 1024  # the ALB's limit on a fixed response body
    body = json.loads(config["MessageBody"])
    assert body["status"] == "rejected"
    return body
