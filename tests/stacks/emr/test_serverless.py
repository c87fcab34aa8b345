"""ServerlessApplication (prod has ``emr_serverless.enabled``, dev not): the application, its network, its
job role (the clusters' job role's data lake access and Lake Formation grants, the gateway's API key) and
what the stack publishes. The monitoring rule for its failed job runs is tested in
tests/stacks/monitoring/test_monitoring.py."""

from __future__ import annotations

import copy
import json

import aws_cdk as cdk
import pytest

import app as cdk_app
from emr_lineage.aws import parameters
from emr_lineage.settings.loader import load_settings
from emr_lineage.spark import catalogs
from tests.stacks.templates import as_list, by_type, export_name, lake_bucket_id, one, statements
from tests.stacks.templates import logical_id as _id

APPLICATION = "AWS::EMRServerless::Application"
ROLE = "AWS::IAM::Role"
# The statements only the artifacts bucket concerns: a job run reads other prefixes and writes other logs.
ARTIFACT_SIDS = {"ReadArtifacts", "WriteLogs", "ListArtifacts"}
# The cluster job role reads the gateway's archive (graph --on-emr); serverless job runs do not.
ARCHIVE_SIDS = {"ListGatewayArchive", "ReadGatewayArchive", "DecryptGatewayArchive"}
# Job runs name the gateway's API key secret; EMR Serverless reads it when a run starts.
API_KEY_SIDS = {"ReadGatewayApiKey", "DecryptGatewayApiKey"}


def _imported(synth, stack: str, value: dict) -> dict:
    return {"Fn::ImportValue": export_name(synth.template_json(stack), value)}


def _application(synth) -> dict:
    _, application = one(synth.template_json("emr"), APPLICATION)
    return application["Properties"]


def _job_role_id(tpl: dict) -> str:
    return _id(tpl, "ServerlessJobRole", ROLE)


def test_dev_has_no_serverless_resources_parameters_or_rule(synths):
    dev = synths["dev"]
    assert not load_settings("dev").emr_serverless.enabled
    for name in dev.stack_names:
        text = json.dumps(dev.template_json(name))
        assert "EMRServerless" not in text and "emr-serverless" not in text, name
        assert "Serverless" not in "".join(dev.template_json(name)["Resources"]), name


def test_application_runs_the_clusters_release_with_the_configured_limits(synths, render):
    synth = synths["prod"]
    settings = load_settings("prod")
    serverless = settings.emr_serverless
    assert serverless.enabled
    app = _application(synth)
    assert app["Type"] == "SPARK"
    assert app["ReleaseLabel"] == settings.emr.release_label
    assert app["Name"] == f"{settings.resource_prefix}-spark"
    assert app["AutoStartConfiguration"] == {"Enabled": True}
    assert app["AutoStopConfiguration"] == {"Enabled": True, "IdleTimeoutMinutes": serverless.idle_timeout_minutes}
    assert app["MaximumCapacity"] == {"Cpu": f"{serverless.max_vcpu} vCPU", "Memory": f"{serverless.max_memory_gib} GB"}
    # Job run logs under their own prefix of the artifacts bucket (S3-managed encryption: no key to name).
    bucket_id, _ = one(synth.template_json("emr"), "AWS::S3::Bucket")
    assert app["MonitoringConfiguration"] == {
        "S3MonitoringConfiguration": {"LogUri": {"Fn::Join": ["", ["s3://", {"Ref": bucket_id}, "/serverless-logs/"]]}}
    }
    # The clusters' catalogs, from the one builder: Glue for Hive and the Iceberg catalog, its warehouse in the lake
    # bucket; no listener conf and no Iceberg runtime (per run: a job run's spark.jars replaces the application's).
    data_lake = synth.template_json("data_lake")
    lake = "{Import:" + export_name(data_lake, {"Ref": lake_bucket_id(data_lake, "prod")}) + "}"
    rendered = {
        c["Classification"]: {k: render(v) for k, v in c["Properties"].items()} for c in app["RuntimeConfiguration"]
    }
    assert rendered == catalogs.catalog_configurations(
        glue_catalog_id="{Ref:AWS::AccountId}", warehouse=f"s3://{lake}/curated/"
    )
    assert "spark.jars" not in rendered[catalogs.SPARK_DEFAULTS]
    assert "openlineage" not in json.dumps(app).lower()


def test_job_run_logs_expire_like_the_clusters_logs(synths):
    _, bucket = one(synths["prod"].template_json("emr"), "AWS::S3::Bucket")
    rules = {r.get("Prefix"): r for r in bucket["Properties"]["LifecycleConfiguration"]["Rules"]}
    days = load_settings("prod").log_retention_days
    assert rules["serverless-logs/"] == {"ExpirationInDays": days, "Prefix": "serverless-logs/", "Status": "Enabled"}
    assert rules["emr-logs/"]["ExpirationInDays"] == days


def test_application_runs_in_the_private_subnets(synths):
    synth = synths["prod"]
    network = synth.template_json("network")
    private = sorted(k for k in by_type(network, "AWS::EC2::Subnet") if k.startswith("Vpcprivate"))
    assert len(private) >= 2
    subnets = _application(synth)["NetworkConfiguration"]["SubnetIds"]
    assert sorted(s["Fn::ImportValue"] for s in subnets) == sorted(
        export_name(network, {"Ref": subnet}) for subnet in private
    )


def test_security_groups_send_https_to_aws_and_lineage_to_the_load_balancer_only(synths):
    synth = synths["prod"]
    emr, lineage = synth.template_json("emr"), synth.template_json("lineage")
    own_id = _id(emr, "ServerlessSecurityGroup", "AWS::EC2::SecurityGroup")
    own, clients = _application(synth)["NetworkConfiguration"]["SecurityGroupIds"]
    assert own == {"Fn::GetAtt": [own_id, "GroupId"]}
    # The lineage clients group, as the clusters' nodes join it: the load balancer takes lineage from it.
    clients_id = _id(lineage, "LoadBalancerClientsSecurityGroup", "AWS::EC2::SecurityGroup")
    assert clients == _imported(synth, "lineage", {"Fn::GetAtt": [clients_id, "GroupId"]})
    alb_group = {"Fn::GetAtt": [_id(lineage, "LoadBalancerSecurityGroup", "AWS::EC2::SecurityGroup"), "GroupId"]}
    client_egress = [
        e["Properties"]
        for e in by_type(lineage, "AWS::EC2::SecurityGroupEgress").values()
        if e["Properties"]["GroupId"] == {"Fn::GetAtt": [clients_id, "GroupId"]}
    ]
    assert client_egress and all(e["DestinationSecurityGroupId"] == alb_group for e in client_egress)
    # Its own group: HTTPS out (AWS APIs through NAT or endpoints), nothing else, nothing in.
    props = emr["Resources"][own_id]["Properties"]
    assert [{k: v for k, v in r.items() if k != "Description"} for r in props["SecurityGroupEgress"]] == [
        {"CidrIp": "0.0.0.0/0", "IpProtocol": "tcp", "FromPort": 443, "ToPort": 443}
    ]
    assert "SecurityGroupIngress" not in props
    for name in synth.stack_names:
        tpl = synth.template_json(name)
        for kind in ("AWS::EC2::SecurityGroupIngress", "AWS::EC2::SecurityGroupEgress"):
            for rule in by_type(tpl, kind).values():
                assert own_id not in json.dumps(rule["Properties"]), (name, rule)


def test_job_role_is_assumed_by_emr_serverless_for_this_accounts_applications_only(synths, render):
    emr = synths["prod"].template_json("emr")
    role = emr["Resources"][_job_role_id(emr)]["Properties"]
    (trust,) = role["AssumeRolePolicyDocument"]["Statement"]
    assert trust["Principal"] == {"Service": "emr-serverless.amazonaws.com"}
    assert trust["Action"] == "sts:AssumeRole"
    assert trust["Condition"]["StringEquals"] == {"aws:SourceAccount": {"Ref": "AWS::AccountId"}}
    assert {k: render(v) for k, v in trust["Condition"]["ArnLike"].items()} == {
        "aws:SourceArn": "arn:{Ref:AWS::Partition}:emr-serverless:{Ref:AWS::Region}:{Ref:AWS::AccountId}"
        ":/applications/*"
    }
    assert "ManagedPolicyArns" not in role


def _cluster_job_role_id(tpl: dict, lake_formation_runtime_role: bool) -> str:
    return _id(tpl, "RolesRuntimeRole" if lake_formation_runtime_role else "RolesInstanceRole", ROLE)


@pytest.mark.parametrize("variant", ["prod", "optional"])
def test_job_role_has_the_cluster_job_roles_data_lake_access_and_its_own_artifacts(
    variant, synths, optional_synth, render
):
    """prod's clusters run Spark as the instance role, the optional variant as the Lake Formation runtime role."""
    synth = synths["prod"] if variant == "prod" else optional_synth
    emr = synth.template_json("emr")
    runtime_role = variant == "optional"
    serverless = statements(emr, _job_role_id(emr))
    cluster = statements(emr, _cluster_job_role_id(emr, runtime_role))

    local_disk_key = {"Fn::GetAtt": [_id(emr, "SecurityLocalDiskKey", "AWS::KMS::Key"), "Arn"]}

    def data_lake(found: list[dict]) -> list[dict]:
        # The instance role's own statements (artifacts, the runtime role, the gateway key for the bootstrap,
        # the nodes' local disk key) are not the lake's.
        not_lake = {"AssumeRuntimeRole"} | API_KEY_SIDS | ARCHIVE_SIDS
        return [s for s in found if s.get("Sid") not in ARTIFACT_SIDS | not_lake and s["Resource"] != local_disk_key]

    lake = data_lake(serverless)
    assert lake == data_lake(cluster)
    assert {s.get("Sid") for s in lake} >= {"ReadZones", "WriteZones", "GlueCatalogRead", "LakeFormationDataAccess"}
    by_sid = {s.get("Sid"): s for s in serverless}
    assert set(by_sid) - {None} == {s.get("Sid") for s in lake} - {None} | ARTIFACT_SIDS | API_KEY_SIDS
    # Of the artifacts: job scripts and the listener jar (no bootstrap, no TLS zip: no bootstrap runs), and with
    # openlineage.trusted_ca (the optional variant) the truststores launch stages; never the CA's own source.
    read = [render(r) for r in as_list(by_sid["ReadArtifacts"]["Resource"])]
    truststores = {"truststores"} if variant == "optional" else set()
    assert {r.rsplit("/", 2)[-2] for r in read} == {"jobs", "staged-jobs", "listener"} | truststores
    assert "ReadTrustedCa" not in by_sid
    assert by_sid["WriteLogs"]["Action"] == "s3:PutObject"
    assert render(by_sid["WriteLogs"]["Resource"]).endswith("/serverless-logs/*")
    assert by_sid["ListArtifacts"]["Action"] == "s3:ListBucket"


def test_job_role_reads_only_the_gateways_api_key_secret_through_secrets_manager(synths):
    """Job runs carry EMR.secret@<the secret's ARN>: the job role may read that one secret and decrypt it
    with the gateway key on Secrets Manager's behalf only, by identity policy (the gateway key's policy
    does not name it: no gateway -> EMR reference)."""
    synth = synths["prod"]
    emr, gateway = synth.template_json("emr"), synth.template_json("gateway")
    by_sid = {s.get("Sid"): s for s in statements(emr, _job_role_id(emr))}
    secret_id, _ = one(gateway, "AWS::SecretsManager::Secret")
    key_id, key = one(gateway, "AWS::KMS::Key")
    read, decrypt = by_sid["ReadGatewayApiKey"], by_sid["DecryptGatewayApiKey"]
    assert read["Action"] == ["secretsmanager:GetSecretValue", "secretsmanager:DescribeSecret"]
    assert read["Resource"] == _imported(synth, "gateway", {"Ref": secret_id})
    assert decrypt["Action"] == "kms:Decrypt"
    assert decrypt["Resource"] == _imported(synth, "gateway", {"Fn::GetAtt": [key_id, "Arn"]})
    assert decrypt["Condition"] == {
        "StringEquals": {
            "kms:ViaService": {"Fn::Join": ["", ["secretsmanager.", {"Ref": "AWS::Region"}, ".amazonaws.com"]]}
        }
    }
    assert "ServerlessJobRole" not in json.dumps(key["Properties"]["KeyPolicy"])


def test_without_the_gateway_the_job_role_reads_no_secret(cdk_context):
    """Construction only (no synth): serverless on, gateway off."""
    context = copy.deepcopy(cdk_context)
    environment = context["emr-lineage"]["environments"]["dev"]
    environment["gateway"]["enabled"] = False
    environment["emr_serverless"]["enabled"] = True
    emr = cdk_app.build_app(cdk.App(context={**context, "env": "dev"}))["emr"]
    policy = emr.resolve(emr.serverless.job_role.node.find_child("DefaultPolicy").document)
    assert {s.get("Sid") for s in policy["Statement"]} >= ARTIFACT_SIDS
    assert "secretsmanager" not in json.dumps(policy)


def test_job_role_has_the_cluster_job_roles_lake_formation_grants(synths):
    emr = synths["prod"].template_json("emr")
    grants = by_type(emr, "AWS::LakeFormation::PrincipalPermissions")

    def of(role_id: str) -> list[dict]:
        principal = {"DataLakePrincipalIdentifier": {"Fn::GetAtt": [role_id, "Arn"]}}
        found = [g["Properties"] for g in grants.values() if g["Properties"]["Principal"] == principal]
        return sorted(json.dumps({k: v for k, v in g.items() if k != "Principal"}, sort_keys=True) for g in found)

    serverless = of(_job_role_id(emr))
    # The data location, the default database, each zone's database and tables, and the clean zone's writes.
    assert len(serverless) == 8
    assert serverless == of(_cluster_job_role_id(emr, False))
    assert len(grants) == 16


def test_stack_publishes_the_application_id_and_job_role_for_the_tools(synths):
    from emr_lineage.aws.stacks import EMR, tool_parameters

    emr = synths["prod"].template_json("emr")
    application_id, _ = one(emr, APPLICATION)
    published = {
        p["Properties"]["Name"]: p["Properties"]["Value"] for p in by_type(emr, "AWS::SSM::Parameter").values()
    }
    role_arn = {"Fn::GetAtt": [_job_role_id(emr), "Arn"]}
    app_id = {"Fn::GetAtt": [application_id, "ApplicationId"]}
    assert published[parameters.serverless_application_id("prod")] == app_id
    assert published[parameters.serverless_job_role_arn("prod")] == role_arn
    outputs = emr["Outputs"]
    assert outputs["ServerlessApplicationId"]["Value"] == app_id
    assert outputs["ServerlessJobRoleArn"]["Value"] == role_arn
    # doctor checks them where they are published, and only where serverless is on.
    for env in ("prod", "dev"):
        wanted = tool_parameters(load_settings(env))
        serverless = {parameters.serverless_application_id(env), parameters.serverless_job_role_arn(env)}
        if env == "prod":
            assert {wanted[name] for name in serverless} == {EMR}
        else:
            assert not serverless & set(wanted)
