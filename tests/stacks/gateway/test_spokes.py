"""gateway.spoke_accounts (prod+optional: two spokes, HTTPS): the ingest published to those accounts as a
VPC endpoint service, an NLB passing TCP to a listener of the lineage load balancer that takes lineage
posts only; and one API key per spoke, which that account may read and the ingest knows it by."""

from __future__ import annotations

import json

import pytest

from emr_lineage.aws import parameters
from emr_lineage.aws.stacks import GATEWAY, tool_parameters
from emr_lineage.gateway import config as gateway_env
from emr_lineage.settings.hub import SPOKE_HTTP_PORT, SPOKE_HTTPS_PORT
from emr_lineage.settings.loader import ConfigError, load_settings, settings_from_context
from stacks.gateway.routing import LINEAGE_PATHS
from stacks.gateway.spokes import SPOKE_HEALTH_PATH
from tests.stacks.templates import as_list, by_type, logical_id, statements
from tests.stacks.update_safety import retained_names
from tests.stacks.variants import CERTIFICATE_ARN, OPTIONAL, SPOKE_ACCOUNTS, SPOKE_REGIONS


def one(template: dict, kind: str) -> dict:
    (resource,) = by_type(template, kind).values()
    return resource["Properties"]


def test_only_the_spoke_accounts_may_connect_without_a_manual_step(optional_synth, render):
    gateway = optional_synth.template_json("gateway")
    assert one(gateway, "AWS::EC2::VPCEndpointService")["AcceptanceRequired"] is False
    principals = one(gateway, "AWS::EC2::VPCEndpointServicePermissions")["AllowedPrincipals"]
    assert [render(p) for p in principals] == [f"arn:{{Ref:AWS::Partition}}:iam::{a}:root" for a in SPOKE_ACCOUNTS]


def test_the_service_is_an_internal_nlb_passing_tcp_to_the_lineage_load_balancer(optional_synth):
    gateway = optional_synth.template_json("gateway")
    nlb = one(gateway, "AWS::ElasticLoadBalancingV2::LoadBalancer")
    assert (nlb["Type"], nlb["Scheme"]) == ("network", "internal")
    (listener,) = [
        r["Properties"]
        for r in by_type(gateway, "AWS::ElasticLoadBalancingV2::Listener").values()
        if r["Properties"].get("Protocol") == "TCP"
    ]
    assert listener["Port"] == SPOKE_HTTPS_PORT
    groups = [r["Properties"] for r in by_type(gateway, "AWS::ElasticLoadBalancingV2::TargetGroup").values()]
    (alb_target,) = [g for g in groups if g.get("TargetType") == "alb"]
    assert (alb_target["Port"], alb_target["Protocol"]) == (SPOKE_HTTPS_PORT, "TCP")
    assert (alb_target["HealthCheckProtocol"], alb_target["HealthCheckPath"]) == ("HTTPS", SPOKE_HEALTH_PATH)


def test_the_spokes_listener_takes_lineage_posts_only(optional_synth):
    gateway = optional_synth.template_json("gateway")
    ((listener_id, listener),) = [
        (k, r["Properties"])
        for k, r in by_type(gateway, "AWS::ElasticLoadBalancingV2::Listener").items()
        if r["Properties"].get("Port") == SPOKE_HTTPS_PORT and r["Properties"].get("Protocol") == "HTTPS"
    ]
    assert listener["Certificates"] == [{"CertificateArn": CERTIFICATE_ARN}]
    (default,) = listener["DefaultActions"]
    assert default["Type"] == "fixed-response" and default["FixedResponseConfig"]["StatusCode"] == "404"
    rules = {
        r["Properties"]["Priority"]: r["Properties"]
        for r in by_type(gateway, "AWS::ElasticLoadBalancingV2::ListenerRule").values()
        if r["Properties"]["ListenerArn"] == {"Ref": listener_id}
    }
    assert sorted(rules) == [1, 2]
    posts = {c["Field"]: c for c in rules[1]["Conditions"]}
    assert posts["path-pattern"]["PathPatternConfig"]["Values"] == list(LINEAGE_PATHS)
    assert posts["http-request-method"]["HttpRequestMethodConfig"]["Values"] == ["POST"]
    (forward,) = rules[1]["Actions"]
    groups = by_type(gateway, "AWS::ElasticLoadBalancingV2::TargetGroup")
    (ingest,) = [k for k, r in groups.items() if r["Properties"].get("TargetType") == "lambda"]
    assert forward == {"Type": "forward", "TargetGroupArn": {"Ref": ingest}}
    assert rules[2]["Actions"][0]["FixedResponseConfig"]["StatusCode"] == "200"


def test_the_lineage_load_balancer_admits_the_nlb_from_the_vpc(optional_synth):
    gateway = optional_synth.template_json("gateway")
    ingress = [
        r["Properties"]
        for r in by_type(gateway, "AWS::EC2::SecurityGroupIngress").values()
        if r["Properties"].get("FromPort") == SPOKE_HTTPS_PORT
    ]
    assert [rule["CidrIp"] for rule in ingress] == [load_settings("prod").network.cidr]


def test_without_a_certificate_the_spokes_listener_is_plain_http_on_its_own_port(switch_synths):
    gateway = switch_synths["spoke-accounts"].template_json("gateway")  # prod as shipped: plain HTTP
    listeners = [r["Properties"] for r in by_type(gateway, "AWS::ElasticLoadBalancingV2::Listener").values()]
    assert {(lst["Port"], lst["Protocol"]) for lst in listeners} >= {
        (SPOKE_HTTP_PORT, "HTTP"),
        (SPOKE_HTTP_PORT, "TCP"),
    }
    groups = [r["Properties"] for r in by_type(gateway, "AWS::ElasticLoadBalancingV2::TargetGroup").values()]
    (alb_target,) = [g for g in groups if g.get("TargetType") == "alb"]
    assert (alb_target["Port"], alb_target["HealthCheckProtocol"]) == (SPOKE_HTTP_PORT, "HTTP")


def test_the_service_name_is_published_for_the_spokes(optional_synth):
    gateway = optional_synth.template_json("gateway")
    names = [r["Properties"]["Name"] for r in by_type(gateway, "AWS::SSM::Parameter").values()]
    assert parameters.gateway_endpoint_service_name("prod") in names


def test_without_spokes_there_is_no_endpoint_service(synth):
    gateway = synth.template_json("gateway")
    assert not by_type(gateway, "AWS::EC2::VPCEndpointService")
    assert len(by_type(gateway, "AWS::ElasticLoadBalancingV2::LoadBalancer")) == 0


@pytest.mark.parametrize(
    ("gateway", "account", "expected"),
    [
        ({"spoke_accounts": ["12345"]}, None, "gateway.spoke_accounts.0: String should match pattern"),
        ({"spoke_accounts": ["210987654321"] * 2}, None, "spoke_accounts lists 210987654321 twice"),
        ({"spoke_accounts": ["210987654321"], "enabled": False}, None, "spoke_accounts needs the gateway"),
        ({"spoke_accounts": ["123456789012"]}, "123456789012", "lists the environment's own account 123456789012"),
        ({"spoke_accounts": ["210987654321"], "spoke_regions": ["mars-1"]}, None, "spoke_regions.0: String should"),
        ({"spoke_regions": ["eu-central-1"]}, None, "spoke_regions without spoke_accounts"),
        (
            {"spoke_accounts": ["210987654321"], "spoke_regions": ["eu-west-1"]},
            "123456789012",
            "spoke_regions lists the environment's own region eu-west-1",
        ),
    ],
)
def test_bad_spoke_accounts_are_refused_naming_the_key(repo_root, gateway, account, expected):
    block = json.loads((repo_root / "cdk.json").read_text())["context"]["emr-lineage"]
    dev = block["environments"]["dev"]
    dev["gateway"].update(gateway)
    if account:
        dev.update(account=account, region="eu-west-1")
    with pytest.raises(ConfigError, match=expected):
        settings_from_context(block, "dev")


# --- one API key per spoke -------------------------------------------------------------------------

SECRET = "AWS::SecretsManager::Secret"


def spoke_secrets(template: dict) -> dict[str, str]:
    """Spoke account -> the logical id of its key's secret, by the secret's name."""
    prefix = load_settings("prod").resource_prefix
    return {
        account: secret_id
        for account in SPOKE_ACCOUNTS
        for secret_id, secret in by_type(template, SECRET).items()
        if secret["Properties"].get("Name") == f"{prefix}/gateway/spokes/{account}"
    }


def test_each_spoke_has_a_key_generated_as_the_gateways_own_under_the_gateway_key(optional_synth):
    gateway = optional_synth.template_json("gateway")
    secrets = spoke_secrets(gateway)
    assert sorted(secrets) == sorted(SPOKE_ACCOUNTS)
    (key_id,) = by_type(gateway, "AWS::KMS::Key")
    own = gateway["Resources"][logical_id(gateway, "ApiKey", SECRET)]["Properties"]
    for secret_id in secrets.values():
        secret = gateway["Resources"][secret_id]
        assert secret["Properties"]["GenerateSecretString"] == own["GenerateSecretString"]
        assert secret["Properties"]["KmsKeyId"] == {"Fn::GetAtt": [key_id, "Arn"]}
        # Named for the spoke's team, so not retained: a retained one would block its name at the next deploy.
        assert secret["DeletionPolicy"] == "Delete"
    assert retained_names(optional_synth.templates) == []


def test_each_spoke_account_may_read_its_own_key_only(optional_synth, render):
    gateway = optional_synth.template_json("gateway")
    secrets = spoke_secrets(gateway)
    policies = {
        p["Properties"]["SecretId"]["Ref"]: p["Properties"]["ResourcePolicy"]["Statement"]
        for p in by_type(gateway, "AWS::SecretsManager::ResourcePolicy").values()
    }
    for account, secret_id in secrets.items():
        (read,) = [s for s in policies[secret_id] if "AWS" in s["Principal"]]
        assert render(read["Principal"]["AWS"]) == f"arn:{{Ref:AWS::Partition}}:iam::{account}:root"
        assert (read["Effect"], read["Action"]) == (
            "Allow",
            ["secretsmanager:GetSecretValue", "secretsmanager:DescribeSecret"],
        )


def test_each_spoke_accounts_emr_serverless_job_runs_may_read_its_key_in_any_region(optional_synth, render):
    gateway = optional_synth.template_json("gateway")
    policies = {
        p["Properties"]["SecretId"]["Ref"]: p["Properties"]["ResourcePolicy"]["Statement"]
        for p in by_type(gateway, "AWS::SecretsManager::ResourcePolicy").values()
    }
    for account, secret_id in spoke_secrets(gateway).items():
        (service,) = [s for s in policies[secret_id] if "Service" in s["Principal"]]
        assert service["Principal"]["Service"] == "emr-serverless.amazonaws.com"
        assert service["Condition"]["StringEquals"] == {"aws:SourceAccount": account}
        assert render(service["Condition"]["ArnLike"]["aws:SourceArn"]) == (
            f"arn:{{Ref:AWS::Partition}}:emr-serverless:*:{account}:/applications/*"
        )
    (key,) = by_type(gateway, "AWS::KMS::Key").values()
    decrypts = [s for s in key["Properties"]["KeyPolicy"]["Statement"] if s.get("Sid") == "EmrServerlessJobRunsApiKey"]
    assert len(decrypts) == 1  # one statement for the gateway's own key and every spoke's


def test_spokes_in_another_region_may_connect_across_regions(optional_synth, synth):
    service = one(optional_synth.template_json("gateway"), "AWS::EC2::VPCEndpointService")
    assert service["SupportedRegions"] == SPOKE_REGIONS


def test_the_spoke_accounts_may_decrypt_with_the_gateway_key_through_secrets_manager_only(optional_synth, render):
    gateway = optional_synth.template_json("gateway")
    (key,) = by_type(gateway, "AWS::KMS::Key").values()
    (decrypt,) = [
        s for s in key["Properties"]["KeyPolicy"]["Statement"] if s.get("Sid") == "SpokeAccountsDecryptTheirKeys"
    ]
    assert [render(p) for p in as_list(decrypt["Principal"]["AWS"])] == [
        f"arn:{{Ref:AWS::Partition}}:iam::{a}:root" for a in SPOKE_ACCOUNTS
    ]
    assert decrypt["Action"] == ["kms:Decrypt", "kms:DescribeKey"]
    (via,) = decrypt["Condition"]["StringEquals"].values()
    assert list(decrypt["Condition"]) == ["StringEquals"]
    assert render(via) == "secretsmanager.{Ref:AWS::Region}.amazonaws.com"


def test_the_ingest_knows_each_spokes_secret_and_may_read_it(optional_synth, render):
    gateway = optional_synth.template_json("gateway")
    secrets = spoke_secrets(gateway)
    ingest = gateway["Resources"][logical_id(gateway, "Ingest", "AWS::Lambda::Function")]["Properties"]
    variables = ingest["Environment"]["Variables"]
    assert variables[gateway_env.GATEWAY_ACCOUNT] == {"Ref": "AWS::AccountId"}
    expected = {account: f"{{Ref:{secret_id}}}" for account, secret_id in secrets.items()}
    assert json.loads(render(variables[gateway_env.SPOKE_KEY_SECRETS])) == expected
    role = ingest["Role"]["Fn::GetAtt"][0]
    readable = {
        json.dumps(s["Resource"])
        for s in statements(gateway, role)
        if "secretsmanager:GetSecretValue" in as_list(s["Action"])
    }
    assert {json.dumps({"Ref": secret_id}) for secret_id in secrets.values()} <= readable


def test_each_spokes_key_arn_is_published_for_the_spokes_team_and_doctor(optional_synth, variants):
    gateway = optional_synth.template_json("gateway")
    published = {
        p["Properties"]["Name"]: p["Properties"]["Value"] for p in by_type(gateway, "AWS::SSM::Parameter").values()
    }
    wanted = tool_parameters(settings_from_context(variants[OPTIONAL]["emr-lineage"], "prod"))  # what doctor reads
    for account, secret_id in spoke_secrets(gateway).items():
        name = parameters.gateway_spoke_key_secret("prod", account)
        assert published[name] == {"Ref": secret_id} and wanted[name] == GATEWAY
        assert gateway["Outputs"][f"GatewaySpokeKeySecretArn{account}"]["Value"] == {"Ref": secret_id}


def test_without_spokes_there_is_no_spoke_key(synth):
    gateway = synth.template_json("gateway")
    assert len(by_type(gateway, SECRET)) == 1  # the gateway's own
    ingest_id = logical_id(gateway, "Ingest", "AWS::Lambda::Function")
    assert (
        gateway["Resources"][ingest_id]["Properties"]["Environment"]["Variables"][gateway_env.SPOKE_KEY_SECRETS] == "{}"
    )
