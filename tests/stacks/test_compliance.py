"""cdk-nag (AwsSolutions) and cfn-lint over every synthesized template of both environments."""

from __future__ import annotations

from pathlib import Path

import pytest
from aws_cdk import Stack
from cdk_nag import AwsSolutionsChecks
from cfnlint.api import lint_file

from stacks.nag import acknowledge

# Rules cfn-lint may not apply to our templates, with the reason. Keep this empty unless a
# finding is a false positive that cannot be fixed in the construct; see README "Linting".
CFN_LINT_RULES_IGNORED_EVERYWHERE: dict[str, str] = {}


def test_cdk_nag_finds_nothing_unacknowledged(any_synth):
    synth = any_synth
    for name, stack in synth.stacks.items():
        report = AwsSolutionsChecks().validate_scope(stack)
        findings = [
            f"{v.rule_name}: {', '.join(r.resource_logical_id for r in v.violating_resources)}"
            for v in report.violations
        ]
        assert report.success, f"{synth.env}/{name}: " + "; ".join(findings)
        assert findings == []


def test_cfn_lint_has_no_errors_or_warnings(any_synth):
    synth = any_synth
    templates = sorted(Path(synth.outdir).glob("*.template.json"))
    assert len(templates) == len(synth.stacks)
    for template in templates:
        matches = [m for m in lint_file(template) if m.rule.id not in CFN_LINT_RULES_IGNORED_EVERYWHERE]
        assert matches == [], f"{template.name}:\n" + "\n".join(str(m) for m in matches)


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
