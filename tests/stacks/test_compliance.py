"""cdk-nag (AwsSolutions), cfn-lint and checkov over every synthesized template of both environments."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from aws_cdk import Stack
from cdk_nag import AwsSolutionsChecks
from cfnlint.api import lint_file

from stacks.shared.nag import acknowledge, acknowledge_checkov
from tests.stacks import compliance_doc
from tests.stacks.cfn_lint import lint_template
from tests.stacks.checkov_scan import PROBE, PROBE_CHECK
from tests.stacks.variants import ENVS, SPOKE

# Rules cfn-lint may not apply to our templates, with the reason. Keep this empty unless a
# finding is a false positive that cannot be fixed in the construct; see docs/compliance.md.
CFN_LINT_RULES_IGNORED_EVERYWHERE: dict[str, str] = {}
# The stacks of every environment, by the short names app.build_app gives them; a spoke's instead.
STACKS = ("network", "lineage", "data_lake", "emr", "gateway", "monitoring")
SPOKE_STACKS = ("network", "data_lake", "hub_link", "emr", "monitoring")


def test_cdk_nag_finds_nothing_unacknowledged(any_synth):
    """cdk-nag ran on each live stack right after its synth (tests/stacks/synth_cache.py)."""
    synth = any_synth
    assert sorted(synth.nag_findings) == sorted(synth.stack_names)
    for name, findings in synth.nag_findings.items():
        assert findings == [], f"{synth.env}/{name}: " + "; ".join(findings)


def test_assembly_holds_one_template_per_stack(any_synth):
    templates = sorted(Path(any_synth.outdir).glob("*.template.json"))
    assert [t.name for t in templates] == sorted(f"{name}.template.json" for name in any_synth.stack_names.values())
    assert sorted(any_synth.stack_names) == sorted(SPOKE_STACKS if any_synth.name == SPOKE else STACKS)


# One test per template: cfn-lint takes about a second each, and xdist can then spread them.
@pytest.mark.parametrize("stack", sorted(set(STACKS) | set(SPOKE_STACKS)))
def test_cfn_lint_has_no_errors_or_warnings(any_synth, synths, stack):
    base = synths[any_synth.env]
    if stack not in any_synth.stack_names:
        return  # a stack this variant does not build (a spoke's hub link, a hub's lineage service)
    if (
        any_synth is not base
        and stack in base.stack_names
        and any_synth.template_json(stack) == base.template_json(stack)
    ):
        # The variant left this stack as its environment has it: the same template, linted in the
        # environment's own case of this test (cfn-lint costs about a second per template).
        return
    template = Path(any_synth.outdir) / f"{any_synth.stack_names[stack]}.template.json"
    matches = [m for m in lint_template(template) if m.rule.id not in CFN_LINT_RULES_IGNORED_EVERYWHERE]
    assert matches == [], f"{template.name}:\n" + "\n".join(str(m) for m in matches)


def test_cfn_lint_with_rules_loaded_once_finds_what_its_api_finds(tmp_path):
    """tests/stacks/cfn_lint.py against cfn-lint's own lint_file: errors, warnings and metadata ignores alike."""
    redundant = {"Type": "AWS::S3::Bucket", "DependsOn": "Queue", "Properties": {"BucketName": {"Ref": "Queue"}}}
    ignored = {**redundant, "Metadata": {"cfn-lint": {"config": {"ignore_checks": ["W3005"]}}}}
    template = {
        "Resources": {
            "Queue": {"Type": "AWS::SQS::Queue", "Properties": {"Bogus": 1}},
            "Redundant": redundant,
            "Ignored": ignored,
        }
    }
    path = tmp_path / "probe.template.json"
    path.write_text(json.dumps(template))
    matches = lint_template(path)
    assert sorted(map(str, matches)) == sorted(map(str, lint_file(path)))
    found = {(m.rule.id, m.path[1]) for m in matches}
    assert {("E3002", "Queue"), ("W3005", "Redundant")} <= found
    assert ("W3005", "Ignored") not in found


def test_an_unacknowledged_finding_fails_the_check():
    """The checks above can fail: an open security group is reported."""
    from aws_cdk import App
    from aws_cdk import aws_ec2 as ec2

    stack = Stack(App(), "Probe")
    vpc = ec2.Vpc(stack, "Vpc", max_azs=2, nat_gateways=0, restrict_default_security_group=False)
    group = ec2.SecurityGroup(stack, "Open", vpc=vpc)
    group.add_ingress_rule(ec2.Peer.any_ipv4(), ec2.Port.tcp(22))
    report = AwsSolutionsChecks().validate_scope(stack)
    assert not report.success
    assert any(v.rule_name.endswith("AwsSolutions-EC23") for v in report.violations)


@pytest.mark.parametrize("reason", ["", "because", "needed for reasons"])
def test_acknowledgements_need_a_specific_reason(reason):
    from aws_cdk import App

    with pytest.raises(ValueError, match="specific reason"):
        acknowledge(Stack(App(), "Probe"), "AwsSolutions-S1", reason)


def test_checkov_finds_nothing_unacknowledged(checkov):
    """Every finding is fixed in the construct or acknowledged on its resource with a reason
    (stacks/shared/nag.py, ``acknowledge_checkov``); the probe's own finding is the next tests' business."""
    found = [str(f) for f in checkov.findings if f.template != PROBE]
    assert found == [], "\n".join(found)


def _checkov_skips(template: dict) -> list[dict]:
    return [
        skip
        for resource in template["Resources"].values()
        for skip in resource.get("Metadata", {}).get("checkov", {}).get("skip", [])
    ]


def test_checkov_scanned_every_resource_and_applied_every_acknowledgement(checkov):
    assert {f"{env}/{stack}" for env in ENVS for stack in STACKS} <= set(checkov.templates)
    templates = [json.loads(path.read_text()) for path in checkov.templates.values()]
    summary = checkov.summary
    assert summary["parsing_errors"] == 0
    assert summary["resource_count"] == sum(len(t["Resources"]) for t in templates)
    # checkov counts an acknowledgement only where its check applies to the resource: a mistyped id, or one
    # left on a resource that no longer has that check, would be missing here.
    assert summary["skipped"] == sum(len(_checkov_skips(t)) for t in templates)


def test_the_compliance_doc_lists_every_acknowledgement_with_its_reason(variants, assemblies, repo_root):
    """docs/compliance.md's tables are what tests/stacks/compliance_doc.py reads from the assemblies."""
    committed = (repo_root / "docs" / "compliance.md").read_text(encoding="utf-8")
    current = compliance_doc.fill(committed, compliance_doc.render(assemblies.ensure(variants)))
    assert committed == current, f"docs/compliance.md is stale: run .venv/bin/{compliance_doc.COMMAND}"


def test_an_unacknowledged_checkov_finding_fails_the_check(checkov):
    """The probe has two log groups without a KMS key, the second acknowledged: only the first is reported."""
    assert [(f.resource, f.check) for f in checkov.findings if f.template == PROBE] == [("Unacknowledged", PROBE_CHECK)]


@pytest.mark.parametrize(
    ("check", "reason", "message"),
    [
        ("CKV_AWS_158", "needed for reasons", "specific reason"),
        ("AwsSolutions-S1", "The bucket is the log destination; logging it into itself would loop.", "checkov"),
        ("CKV_AWS_15B", "The bucket is the log destination; logging it into itself would loop.", "checkov"),
    ],
)
def test_checkov_acknowledgements_need_a_check_id_and_a_specific_reason(check, reason, message):
    from aws_cdk import App
    from aws_cdk import aws_logs as logs

    group = logs.CfnLogGroup(Stack(App(), "Probe"), "Group")
    with pytest.raises(ValueError, match=message):
        acknowledge_checkov(group, check, reason)


def test_a_checkov_finding_is_acknowledged_once_per_resource():
    from aws_cdk import App
    from aws_cdk import aws_logs as logs

    group = logs.LogGroup(Stack(App(), "Probe"), "Group")
    reason = "A probe reason that is long enough to count as a specific one."
    acknowledge_checkov(group, "CKV_AWS_158", reason)
    acknowledge_checkov(group, "CKV_AWS_66", reason)
    # On the L2's CloudFormation resource, both in one list (a second add_metadata would replace the first).
    assert group.node.default_child.get_metadata("checkov") == {
        "skip": [{"id": "CKV_AWS_158", "comment": reason}, {"id": "CKV_AWS_66", "comment": reason}]
    }
    with pytest.raises(ValueError, match="acknowledged twice"):
        acknowledge_checkov(group, "CKV_AWS_158", reason)
