"""Deploys after the first: every settings switch a user makes, deployed over the stacks and back, and a
destroy followed by a redeploy, meet nothing CloudFormation refuses (tests/stacks/update_safety.py)."""

from __future__ import annotations

import copy

import pytest

from tests.stacks.update_safety import Problem, replaced, retained_names, update_problems
from tests.stacks.variants import ONE_WAY, SWITCH_BASE, SWITCHES


def _directions() -> list[tuple[str, bool]]:
    return [(name, back) for name in SWITCHES for back in (False, True) if not (back and name in ONE_WAY)]


def _id(value) -> str:
    return {False: "switched", True: "switched-back"}.get(value, value)


@pytest.mark.parametrize(("switch", "back"), _directions(), ids=_id)
def test_a_settings_switch_deploys_over_the_stacks(switch, back, synths, switch_synths) -> None:
    base, switched = synths[SWITCH_BASE].templates, switch_synths[switch].templates
    before, after = (switched, base) if back else (base, switched)
    assert [str(p) for p in update_problems(before, after)] == []


@pytest.mark.parametrize("env", ["dev", "prod"])
def test_a_redeploy_after_destroy_meets_no_retained_name(env, synths) -> None:
    assert [str(p) for p in retained_names(synths[env].templates)] == []


# The checker itself, on small templates.
def _tpl(**resources) -> dict:
    return {"Resources": resources}


def _queue(name=None, fifo=False, retain=False) -> dict:
    props = {"FifoQueue": fifo} | ({"QueueName": name} if name else {})
    return {"Type": "AWS::SQS::Queue", "Properties": props} | ({"DeletionPolicy": "Retain"} if retain else {})


def test_a_changed_create_only_property_replaces_and_a_kept_name_refuses() -> None:
    before, after = _tpl(Q=_queue("q.fifo", fifo=True)), _tpl(Q=_queue("q.fifo", fifo=False))
    assert replaced(before, after) == {"Q": "create-only FifoQueue changed"}
    (problem,) = update_problems({"s": before}, {"s": after})
    assert (
        problem.why == 'replaced (create-only FifoQueue changed) but keeps its identity ["AWS::SQS::Queue", "q.fifo"]'
    )
    assert update_problems({"s": _tpl(Q=_queue(fifo=True))}, {"s": _tpl(Q=_queue())}) == []


def test_a_replacement_spreads_to_what_names_it_in_a_create_only_property() -> None:
    target_group = {"Type": "AWS::ElasticLoadBalancingV2::TargetGroup", "Properties": {"VpcId": {"Ref": "Vpc"}}}
    vpc = {"Type": "AWS::EC2::VPC", "Properties": {"CidrBlock": "10.0.0.0/16"}}
    moved = copy.deepcopy(vpc)
    moved["Properties"]["CidrBlock"] = "10.1.0.0/16"
    assert replaced(_tpl(Vpc=vpc, Tg=target_group), _tpl(Vpc=moved, Tg=target_group)).keys() == {"Vpc", "Tg"}


def test_an_imported_export_may_not_go_change_or_name_a_replaced_resource() -> None:
    def producer(value) -> dict:
        return _tpl(Q=_queue()) | {"Outputs": {"O": {"Value": value, "Export": {"Name": "p:Q"}}}}

    consumer = _tpl(T={"Type": "AWS::SNS::Topic", "Properties": {"DisplayName": {"Fn::ImportValue": "p:Q"}}})
    before = {"p": producer({"Ref": "Q"}), "c": consumer}
    gone = {"p": _tpl(Q=_queue()), "c": _tpl()}
    assert [p.why for p in update_problems(before, gone)] == ["export removed while c imports it"]
    changed = {"p": producer({"Fn::GetAtt": ["Q", "Arn"]}), "c": consumer}
    assert [p.why for p in update_problems(before, changed)] == ["export changes value while c imports it"]
    swapped = {"p": producer({"Ref": "Q"}) | {"Resources": {"Q": _queue(fifo=True)}}, "c": consumer}
    assert [p.why for p in update_problems(before, swapped)] == ["export names replaced Q while c imports it"]
    # A stack the new app lacks stays deployed, and so do its imports.
    assert [p.why for p in update_problems(before, {"c": consumer})] == []


def test_a_listener_may_take_a_port_only_after_the_one_holding_it_moves_off() -> None:
    def listener(port, **extra) -> dict:
        return {
            "Type": "AWS::ElasticLoadBalancingV2::Listener",
            "Properties": {"LoadBalancerArn": "lb", "Port": port},
        } | extra

    before = {"s": _tpl(Serving=listener(80))}
    unordered = {"s": _tpl(Serving=listener(443), Redirect=listener(80))}
    (problem,) = update_problems(before, unordered)
    assert problem == Problem("s", "Redirect", problem.why) and "Serving" in problem.why
    ordered = {"s": _tpl(Serving=listener(443), Redirect=listener(80, DependsOn=["Serving"]))}
    assert update_problems(before, ordered) == []
    # Back again: the port-80 listener is deleted only after the serving one wants port 80.
    assert len(update_problems(ordered, before)) == 1


def test_a_retained_resource_with_a_custom_name_blocks_a_redeploy() -> None:
    unique = {"Fn::Join": ["-", ["d", {"Ref": "AWS::StackId"}]]}
    templates = {
        "s": _tpl(A=_queue(retain=True), B=_queue("b", retain=True), C=_queue("c"), D=_queue(unique, retain=True))
    }
    # D's name holds the stack's id, another for the stack made again.
    assert retained_names(templates) == [
        Problem("s", "B", 'retained on delete under the custom name ["AWS::SQS::Queue", "b"]')
    ]


def test_a_holder_that_is_replaced_keeps_its_name_until_the_cleanup() -> None:
    """A renamed queue is a new queue: the old one, still named x, goes last, whatever waits for it."""
    before = {"s": _tpl(A=_queue("x"))}
    after = {"s": _tpl(A=_queue("y"), B=_queue("x") | {"DependsOn": ["A"]})}
    assert [p.where for p in update_problems(before, after)] == ["B"]


def test_a_grant_replaced_for_the_same_principal_and_resource_would_be_revoked() -> None:
    def grant(permissions: list[str]) -> dict:
        props = {"Catalog": "1", "Principal": {"P": "r"}, "Resource": {"Database": "d"}, "Permissions": permissions}
        return {"Type": "AWS::LakeFormation::PrincipalPermissions", "Properties": props}

    (problem,) = update_problems({"s": _tpl(G=grant(["DESCRIBE"]))}, {"s": _tpl(G=grant(["DESCRIBE", "ALTER"]))})
    assert problem.why.startswith("replaced (create-only Permissions changed) but keeps its identity")


def test_resources_identified_with_a_generated_part_may_share_the_rest() -> None:
    def permission(principal: str) -> dict:
        props = {"FunctionName": "f", "Action": "lambda:InvokeFunction", "Principal": principal}
        return {"Type": "AWS::Lambda::Permission", "Properties": props}

    before = {"s": _tpl(P1=permission("a.amazonaws.com"))}
    assert (
        update_problems(before, {"s": _tpl(P1=permission("a.amazonaws.com"), P2=permission("b.amazonaws.com"))}) == []
    )
