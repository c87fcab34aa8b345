"""What CloudFormation would refuse when an app deployed from one set of templates is deployed from another.

Read from the templates alone, with the resource provider schemas cfn-lint ships (their
``createOnlyProperties``: a change to one replaces the resource):

- a *replacement that keeps its identity*: CloudFormation creates the new resource before it deletes the
  old one, so a replaced resource that keeps its name fails ("cannot update a stack when a custom-named
  resource requires replacing"), and a Lake Formation grant that keeps its principal and resource is
  made again, then revoked;
- a *name taken twice*: a resource created (new, or replaced) under a name a resource of the same type
  had elsewhere before, which still exists while the new one is created;
- a *changed import*: an export another stack imported before that disappears, changes its value or
  names a resource that is replaced ("Export ... cannot be deleted as it is in use" / "cannot update
  export ... as it is in use"). Stacks the new app no longer has stay deployed with their imports
  (``cdk deploy --all`` deletes no stack).

Plain functions of template dicts (stack name -> template), no pytest.
"""

from __future__ import annotations

import functools
import json
from collections.abc import Iterator, Mapping
from dataclasses import dataclass

from cfnlint.schema.manager import PROVIDER_SCHEMA_MANAGER

# The schemas differ by region only in which types exist; every type used here exists in us-east-1.
SCHEMA_REGION = "us-east-1"
# Names that are labels, not identities: two EMR clusters may have one name.
NAMES_MAY_REPEAT = frozenset({"AWS::EMR::Cluster"})
# What identifies a resource where the schema's primary identifier does not say (or CDK writes it
# elsewhere): one listener per port of a load balancer, one rule per priority of a listener, one grant
# per principal and resource, a Glue database by the name CDK puts in DatabaseInput.
IDENTIFIED_BY = {
    "AWS::ElasticLoadBalancingV2::Listener": (("LoadBalancerArn",), ("Port",)),
    "AWS::ElasticLoadBalancingV2::ListenerRule": (("ListenerArn",), ("Priority",)),
    "AWS::LakeFormation::PrincipalPermissions": (("Catalog",), ("Principal",), ("Resource",)),
    "AWS::Glue::Database": (("CatalogId",), ("DatabaseInput", "Name")),
}
_MISSING = object()
STACK_ID = '{"Ref": "AWS::StackId"}'


@dataclass(frozen=True, order=True)
class Problem:
    stack: str
    where: str
    why: str

    def __str__(self) -> str:
        return f"{self.stack} {self.where}: {self.why}"


@functools.cache
def _schema(kind: str) -> dict:
    return PROVIDER_SCHEMA_MANAGER.get_resource_schema(SCHEMA_REGION, kind).schema


def _paths(kind: str, key: str) -> list[tuple[str, ...]]:
    """The property paths a schema lists under ``key`` (``/properties/A/B`` -> ``("A", "B")``)."""
    return [tuple(p.split("/")[2:]) for p in _schema(kind).get(key, []) if p.startswith("/properties/")]


@functools.cache
def create_only(kind: str) -> tuple[tuple[str, ...], ...]:
    return tuple(_paths(kind, "createOnlyProperties"))


@functools.cache
def identity_paths(kind: str) -> tuple[tuple[str, ...], ...]:
    """The properties that together identify a resource of ``kind`` in its account: IDENTIFIED_BY's, else
    its primary identifier where the template sets every part (a bucket's BucketName), else a create-only
    ``Name`` or ``<Type>Name`` (a queue's QueueName); none where names may repeat."""
    if kind in NAMES_MAY_REPEAT:
        return ()
    if kind in IDENTIFIED_BY:
        return IDENTIFIED_BY[kind]
    read_only = set(_paths(kind, "readOnlyProperties"))
    primary = _paths(kind, "primaryIdentifier")
    if primary and not read_only & set(primary):
        return tuple(primary)
    names = {"Name", f"{kind.rsplit('::', 1)[-1]}Name"}
    return tuple(p for p in create_only(kind) if len(p) == 1 and p[0] in names)[:1]


def _at(value: object, path: tuple[str, ...]) -> object:
    """The value at ``path`` (``*`` for every item of a list), or _MISSING."""
    for i, part in enumerate(path):
        if part == "*":
            if not isinstance(value, list):
                return _MISSING
            return [_at(item, path[i + 1 :]) for item in value]
        if not isinstance(value, dict) or part not in value:
            return _MISSING
        value = value[part]
    return value


def _calls(value: object) -> Iterator[tuple[str, object]]:
    """Every (key, argument) of every object in a template value, depth first: its intrinsic calls."""
    if isinstance(value, dict):
        for key, arg in value.items():
            yield key, arg
            yield from _calls(arg)
    elif isinstance(value, list):
        for item in value:
            yield from _calls(item)


def _references(value: object) -> Iterator[str]:
    """The logical ids a template value refers to (Ref, Fn::GetAtt, Fn::Sub's ${Id})."""
    for fn, arg in _calls(value):
        if fn == "Ref" and isinstance(arg, str):
            yield arg
        elif fn == "Fn::GetAtt":
            yield arg[0] if isinstance(arg, list) else arg.split(".")[0]
        elif fn == "Fn::Sub":
            text = arg[0] if isinstance(arg, list) else arg
            yield from (part.split("}")[0].split(".")[0] for part in text.split("${")[1:])


def _props(resource: Mapping) -> dict:
    return resource.get("Properties", {})


def replaced(before: Mapping, after: Mapping) -> dict[str, str]:
    """Logical id -> why, for every resource of one stack that the update from ``before`` to ``after``
    replaces: its type changed, a create-only property changed, or one refers to a replaced resource."""
    old, new = before.get("Resources", {}), after.get("Resources", {})
    found: dict[str, str] = {}
    for lid in old.keys() & new.keys():
        kind = new[lid]["Type"]
        if old[lid]["Type"] != kind:
            found[lid] = f"type {old[lid]['Type']} -> {kind}"
            continue
        for path in create_only(kind):
            if _at(_props(old[lid]), path) != _at(_props(new[lid]), path):
                found[lid] = f"create-only {'.'.join(path)} changed"
                break
    changed = True
    while changed:  # a create-only property that refers to a replaced resource changes with it
        changed = False
        for lid in (old.keys() & new.keys()) - found.keys():
            for path in create_only(new[lid]["Type"]):
                hit = set(_references(_at(_props(new[lid]), path))) & found.keys()
                if hit:
                    found[lid] = f"create-only {'.'.join(path)} refers to replaced {min(hit)}"
                    changed = True
                    break
    return found


def _key(resource: Mapping) -> str | None:
    """What no two resources may share (JSON text of the type and its identity_paths' values; they may hold
    intrinsics), or None where the template leaves the identity to CloudFormation."""
    paths = identity_paths(resource["Type"])
    values = [_at(_props(resource), path) for path in paths]
    if not paths or _MISSING in values:
        return None
    return json.dumps([resource["Type"], *values], sort_keys=True)


def _exports(templates: Mapping[str, Mapping]) -> dict[str, tuple[str, object]]:
    """Export name -> (stack, value) of every stack."""
    return {
        output["Export"]["Name"]: (stack, output["Value"])
        for stack, tpl in templates.items()
        for output in tpl.get("Outputs", {}).values()
        if "Export" in output
    }


def _imports(value: object) -> Iterator[str]:
    return (arg for fn, arg in _calls(value) if fn == "Fn::ImportValue" and isinstance(arg, str))


def update_problems(before: Mapping[str, Mapping], after: Mapping[str, Mapping]) -> list[Problem]:
    """Everything CloudFormation would refuse on ``cdk deploy --all`` of ``after`` over a deployed ``before``
    (stack name -> template each)."""
    swaps = {stack: replaced(before[stack], after[stack]) for stack in before.keys() & after.keys()}
    problems = _renamed_replacements(before, after, swaps) + _keys_taken(before, after, swaps)
    return sorted(problems + _changed_imports(before, after, swaps))


def _renamed_replacements(before, after, swaps) -> list[Problem]:
    """A replacement is made before the old resource goes: one that keeps its key (a custom name, a grant's
    principal and resource) fails, or for a grant makes a copy and then revokes it."""
    problems = []
    for stack, found in swaps.items():
        for lid, why in found.items():
            key = _key(after[stack]["Resources"][lid])
            if key is not None and key == _key(before[stack]["Resources"][lid]):
                problems.append(Problem(stack, lid, f"replaced ({why}) but keeps its identity {key}"))
    return problems


def _depends_on(resource: Mapping, lid: str) -> bool:
    depends = resource.get("DependsOn", [])
    return lid in ([depends] if isinstance(depends, str) else depends) or lid in set(_references(resource))


def _keys_taken(before, after, swaps) -> list[Problem]:
    """A resource that takes a key (a name, a listener's port) another resource held before, which still
    holds it when the new one is made: removals and replaced resources go last, and updates run in
    dependency order. (Conservative: a holder in another stack counts as holding it, whatever the order.)"""
    held: dict[str, set[tuple[str, str]]] = {}
    for stack, tpl in before.items():
        for lid, resource in tpl.get("Resources", {}).items():
            if (key := _key(resource)) is not None:
                held.setdefault(key, set()).add((stack, lid))
    problems = []
    for stack, tpl in after.items():
        old = before.get(stack, {}).get("Resources", {})
        for lid, resource in tpl.get("Resources", {}).items():
            key = _key(resource)
            if key is None or (lid in old and lid not in swaps.get(stack, {}) and _key(old[lid]) == key):
                continue
            holders = {
                (s, other)
                for s, other in held.get(key, set()) - {(stack, lid)}
                if not _moves_off_first(tpl, swaps.get(s, {}), resource, key, s == stack, other)
            }
            if holders:
                where = ", ".join(f"{s} {i}" for s, i in sorted(holders))
                problems.append(Problem(stack, lid, f"takes {key}, which {where} holds until later"))
    return problems


def _moves_off_first(tpl, stack_swaps, resource, key, same_stack: bool, other: str) -> bool:
    """The holder is updated in place off ``key`` before ``resource`` is made (it depends on the holder)."""
    if not same_stack or other not in tpl["Resources"] or other in stack_swaps:
        return False
    return _key(tpl["Resources"][other]) != key and _depends_on(resource, other)


def _changed_imports(before, after, swaps) -> list[Problem]:
    # cdk deploy --all deletes no stack: one the new app lacks stays deployed, its imports with it.
    old, new = _exports(before), _exports({**before, **after})
    imported = sorted(
        (name, stack)
        for stack, tpl in before.items()
        for name in set(_imports(tpl.get("Resources", {}))) | set(_imports(tpl.get("Outputs", {})))
    )
    problems = []
    for name, consumer in imported:
        producer, value = old.get(name, (None, None))
        if producer is None or producer == consumer:
            continue
        if name not in new:
            problems.append(Problem(producer, name, f"export removed while {consumer} imports it"))
        elif new[name][1] != value:
            problems.append(Problem(producer, name, f"export changes value while {consumer} imports it"))
        else:
            hit = set(_references(value)) & swaps.get(producer, {}).keys()
            if hit:
                problems.append(
                    Problem(producer, name, f"export names replaced {min(hit)} while {consumer} imports it")
                )
    return problems


def retained_names(templates: Mapping[str, Mapping]) -> list[Problem]:
    """Resources ``cdk destroy`` leaves behind (DeletionPolicy Retain) under a name the next deploy
    creates again: "already exists". A name made of the stack's id is another for a stack made anew."""
    return sorted(
        Problem(stack, lid, f"retained on delete under the custom name {key}")
        for stack, tpl in templates.items()
        for lid, resource in tpl.get("Resources", {}).items()
        if resource.get("DeletionPolicy") in ("Retain", "RetainExceptOnCreate")
        and (key := _key(resource)) is not None
        and STACK_ID not in key
    )
