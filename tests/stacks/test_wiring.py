"""Cross-stack wiring: what app.py hands from stack to stack arrives as CloudFormation imports.

No stack reads another's values back from SSM (those parameters exist for the CLI tools only).
"""

from __future__ import annotations

import json
import re

from emr_lineage.aws import parameters
from tests.stacks.templates import by_type, export_name, lake_bucket_id, one


def _imports(template: dict) -> set[str]:
    return set(re.findall(r'"Fn::ImportValue": "([^"]+)"', json.dumps(template)))


def test_no_stack_reads_ssm_parameters_back(any_synth):
    for name in any_synth.stack_names:
        template = any_synth.template_json(name)
        ssm_reads = [
            p["Default"]
            for p in template.get("Parameters", {}).values()
            if p["Type"].startswith("AWS::SSM::Parameter::Value") and not p["Default"].startswith("/cdk-bootstrap/")
        ]
        assert ssm_reads == [], f"{name} reads SSM parameters {ssm_reads}"
        assert "{{resolve:ssm" not in json.dumps(template)


def test_launch_spec_takes_the_marquez_url_from_the_lineage_stack(synths):
    """The Marquez API URL is the lineage stack's load balancer, passed as a prop (it was an SSM read)."""
    synth = synths["dev"]
    lineage, emr = synth.template_json("lineage"), synth.template_json("emr")
    alb_id, _ = one(lineage, "AWS::ElasticLoadBalancingV2::LoadBalancer")
    dns_export = export_name(lineage, {"Fn::GetAtt": [alb_id, "DNSName"]})
    (launch_spec,) = [
        p["Properties"]["Value"]
        for p in by_type(emr, "AWS::SSM::Parameter").values()
        if p["Properties"]["Name"] == parameters.emr_launch_spec("dev")
    ]
    assert {"Fn::ImportValue": dns_export} in launch_spec["Fn::Join"][1]
    # The lineage stack publishes the same URL for the tools.
    params = {
        p["Properties"]["Name"]: p["Properties"]["Value"] for p in by_type(lineage, "AWS::SSM::Parameter").values()
    }
    assert params[parameters.marquez_api_url("dev")] == {
        "Fn::Join": ["", ["http://", {"Fn::GetAtt": [alb_id, "DNSName"]}]]
    }


def test_emr_stack_uses_the_data_lake_stacks_bucket_and_key(synth):
    data_lake, emr = synth.template_json("data_lake"), synth.template_json("emr")
    bucket_id = lake_bucket_id(data_lake, synth.env)
    key_id, _ = one(data_lake, "AWS::KMS::Key")
    imports = _imports(emr)
    assert export_name(data_lake, {"Fn::GetAtt": [bucket_id, "Arn"]}) in imports
    assert export_name(data_lake, {"Fn::GetAtt": [key_id, "Arn"]}) in imports
    # Nothing names the lake bucket by a rebuilt name any more.
    assert "data-lake" not in json.dumps(emr["Resources"])


def test_lineage_clients_group_is_exposed_for_the_emr_stack(synths):
    lineage, emr = synths["dev"].template_json("lineage"), synths["dev"].template_json("emr")
    clients = [
        k for k in by_type(lineage, "AWS::EC2::SecurityGroup") if k.startswith("LoadBalancerClientsSecurityGroup")
    ]
    assert len(clients) == 1
    assert export_name(lineage, {"Fn::GetAtt": [clients[0], "GroupId"]}) in _imports(emr)


def test_data_lake_stack_depends_on_no_other_stack(synth):
    """The EMR stack imports from the data lake stack; the reverse would be a dependency cycle."""
    assert _imports(synth.template_json("data_lake")) == set()
    manifest = json.loads((synth.outdir / "manifest.json").read_text())
    data_lake = manifest["artifacts"][synth.stack_names["data_lake"]]
    assert [d for d in data_lake.get("dependencies", []) if not d.endswith(".assets")] == []


def test_gateway_stack_builds_on_the_lineage_stack_and_only_emr_and_monitoring_read_it(synth):
    """The gateway adds its rule, listener and ingress to the lineage load balancer from its own
    stack: it imports the listener, load balancer, API target group and security group. The EMR
    stack imports the API key secret and its KMS key (the nodes' bootstrap reads the key); the
    monitoring stack imports what its alarms and dashboard watch; nothing else imports from it, and
    it imports nothing from either (that would be a dependency cycle)."""
    lineage, gateway = synth.template_json("lineage"), synth.template_json("gateway")
    listener_id, _ = one(lineage, "AWS::ElasticLoadBalancingV2::Listener")
    alb_id, _ = one(lineage, "AWS::ElasticLoadBalancingV2::LoadBalancer")
    imports = _imports(gateway)
    assert export_name(lineage, {"Ref": listener_id}) in imports
    assert export_name(lineage, {"Ref": alb_id}) in imports
    secret_id, _ = one(gateway, "AWS::SecretsManager::Secret")
    key_id, _ = one(gateway, "AWS::KMS::Key")
    gateway_exports = {o["Export"]["Name"] for o in gateway.get("Outputs", {}).values() if "Export" in o}
    emr_imports = _imports(synth.template_json("emr"))
    monitoring_imports = _imports(synth.template_json("monitoring"))
    assert {
        export_name(gateway, {"Ref": secret_id}),
        export_name(gateway, {"Fn::GetAtt": [key_id, "Arn"]}),
    } <= emr_imports
    assert gateway_exports <= emr_imports | monitoring_imports
    assert gateway_exports & monitoring_imports, "the monitoring stack watches the gateway"
    for other in ("emr", "monitoring"):
        assert not any(i.startswith(synth.stack_names[other] + ":") for i in imports), other
    manifest = json.loads((synth.outdir / "manifest.json").read_text())
    gateway_name = synth.stack_names["gateway"]
    for name, stack in synth.stack_names.items():
        depends = gateway_name in manifest["artifacts"][stack].get("dependencies", [])
        assert depends == (name in ("emr", "monitoring")), name


def test_only_the_emr_stack_depends_on_the_monitoring_stack_and_only_for_its_topic(any_synth):
    """Alarms change without touching what they watch; the serverless rule notifies the topic from the EMR stack."""
    monitoring = any_synth.template_json("monitoring")
    exports = [o["Value"] for o in monitoring.get("Outputs", {}).values() if "Export" in o]
    (topic_id, _) = one(monitoring, "AWS::SNS::Topic")
    assert exports == [{"Ref": topic_id}]
    manifest = json.loads((any_synth.outdir / "manifest.json").read_text())
    name = any_synth.stack_names["monitoring"]
    dependents = [s for s, a in manifest["artifacts"].items() if name in a.get("dependencies", [])]
    assert dependents in ([], [any_synth.stack_names["emr"]])


def test_the_tools_expect_the_stacks_the_app_builds(any_synth, variants):
    """doctor and the other tools find stacks by emr_lineage.aws.stacks; app.py builds them by it too."""
    from emr_lineage.aws.stacks import stack_name, stack_parts
    from emr_lineage.settings.loader import settings_from_context

    env = any_synth.env
    settings = settings_from_context(variants[any_synth.name]["emr-lineage"], env)
    assert sorted(stack_name(env, part) for part in stack_parts(settings)) == sorted(any_synth.stack_names.values())
