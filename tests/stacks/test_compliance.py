"""cdk-nag (AwsSolutions) and cfn-lint over every synthesized template of both environments."""

from __future__ import annotations

from pathlib import Path

import pytest
from aws_cdk import Stack
from cdk_nag import AwsSolutionsChecks
from cfnlint.api import lint_file

from stacks.shared.nag import acknowledge

# Rules cfn-lint may not apply to our templates, with the reason. Keep this empty unless a
# finding is a false positive that cannot be fixed in the construct; see README "Linting".
CFN_LINT_RULES_IGNORED_EVERYWHERE: dict[str, str] = {}
# The stacks of every environment, by the short names app.build_app gives them.
STACKS = ("network", "lineage", "data_lake", "emr", "gateway", "monitoring")


def test_cdk_nag_finds_nothing_unacknowledged(any_synth):
    """cdk-nag ran on each live stack right after its synth (tests/stacks/synth_cache.py)."""
    synth = any_synth
    assert sorted(synth.nag_findings) == sorted(synth.stack_names)
    for name, findings in synth.nag_findings.items():
        assert findings == [], f"{synth.env}/{name}: " + "; ".join(findings)


def test_assembly_holds_one_template_per_stack(any_synth):
    templates = sorted(Path(any_synth.outdir).glob("*.template.json"))
    assert [t.name for t in templates] == sorted(f"{name}.template.json" for name in any_synth.stack_names.values())
    assert sorted(any_synth.stack_names) == sorted(STACKS)


# One test per template: cfn-lint takes about a second each, and xdist can then spread them.
@pytest.mark.parametrize("stack", STACKS)
def test_cfn_lint_has_no_errors_or_warnings(any_synth, synths, stack):
    base = synths[any_synth.env]
    if any_synth is not base and any_synth.template_json(stack) == base.template_json(stack):
        # The variant left this stack as its environment has it: the same template, linted in the
        # environment's own case of this test (cfn-lint costs about a second per template).
        return
    template = Path(any_synth.outdir) / f"{any_synth.stack_names[stack]}.template.json"
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
