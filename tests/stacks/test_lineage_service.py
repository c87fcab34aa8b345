"""LineageServiceStack: Marquez on Fargate, PostgreSQL on RDS, the internal ALB, and outputs."""

from __future__ import annotations

import base64
import json
import os
import subprocess

import yaml
from aws_cdk.assertions import Match

from emr_lineage.aws import parameters
from emr_lineage.settings.loader import load_settings
from stacks import marquez_service
from stacks.marquez_service import (
    ADMIN_PORT,
    API_CONTAINER,
    API_PORT,
    CONFIG_PATH,
    IMAGE_WORKDIR,
    START_COMMAND,
    WEB_CONTAINER,
    WEB_PORT,
    marquez_config,
)


def _one(template_json: dict, kind: str) -> tuple[str, dict]:
    found = [(k, v) for k, v in template_json["Resources"].items() if v["Type"] == kind]
    assert len(found) == 1, f"expected one {kind}, found {len(found)}"
    return found[0]


def _all(template_json: dict, kind: str) -> dict[str, dict]:
    return {k: v for k, v in template_json["Resources"].items() if v["Type"] == kind}


def _containers(synth) -> dict[str, dict]:
    _, task = _one(synth.template_json("lineage"), "AWS::ECS::TaskDefinition")
    return {c["Name"]: c for c in task["Properties"]["ContainerDefinitions"]}


def _env(container: dict) -> dict:
    return {e["Name"]: e["Value"] for e in container.get("Environment", [])}


def _group_id(tpl: dict, prefix: str) -> str:
    matches = [
        k for k, v in tpl["Resources"].items() if v["Type"] == "AWS::EC2::SecurityGroup" and k.startswith(prefix)
    ]
    assert len(matches) == 1, (prefix, matches)
    return matches[0]


def _ingress(tpl: dict, group_id: str) -> list[dict]:
    """Every ingress rule of a group, inline or standalone."""
    rules = list(tpl["Resources"][group_id]["Properties"].get("SecurityGroupIngress", []))
    for res in _all(tpl, "AWS::EC2::SecurityGroupIngress").values():
        props = res["Properties"]
        if props["GroupId"] == {"Fn::GetAtt": [group_id, "GroupId"]}:
            rules.append(props)
    return rules


# --- database ---------------------------------------------------------------------------------


def test_database_is_postgres_14_or_newer_encrypted_and_sized_per_env(synth):
    db = load_settings(synth.env).database
    _, instance = _one(synth.template_json("lineage"), "AWS::RDS::DBInstance")
    props = instance["Properties"]
    assert props["Engine"] == "postgres"
    assert props["EngineVersion"] == db.postgres_version
    assert int(props["EngineVersion"].split(".")[0]) >= 14
    assert props["StorageEncrypted"] is True
    assert props["PubliclyAccessible"] is False
    assert props["DBInstanceClass"] == f"db.{db.instance_type}"
    assert props["MultiAZ"] is db.multi_az
    assert props["BackupRetentionPeriod"] == db.backup_retention_days
    assert props["DeletionProtection"] is db.deletion_protection
    assert props["AllocatedStorage"] == str(db.allocated_storage_gib)
    assert props["MaxAllocatedStorage"] == db.max_allocated_storage_gib
    assert props["DBName"] == "marquez"


def test_database_removal_policy_follows_config(synth):
    _, instance = _one(synth.template_json("lineage"), "AWS::RDS::DBInstance")
    expected = {"destroy": "Delete", "retain": "Retain", "snapshot": "Snapshot"}[
        load_settings(synth.env).removal_policy.value
    ]
    assert instance["DeletionPolicy"] == expected


def test_database_credentials_are_generated_into_secrets_manager(synth):
    tpl = synth.template_json("lineage")
    secret_id, secret = _one(tpl, "AWS::SecretsManager::Secret")
    generate = secret["Properties"]["GenerateSecretString"]
    assert json.loads(generate["SecretStringTemplate"]) == {"username": "marquez"}
    assert generate["GenerateStringKey"] == "password"
    _, instance = _one(tpl, "AWS::RDS::DBInstance")
    password = json.dumps(instance["Properties"]["MasterUserPassword"])
    assert "resolve:secretsmanager" in password and secret_id in password


def test_database_requires_tls(synth):
    synth.template("lineage").has_resource_properties(
        "AWS::RDS::DBParameterGroup", {"Parameters": {"rds.force_ssl": "1"}}
    )


def test_database_lives_in_isolated_subnets(synth):
    _, group = _one(synth.template_json("lineage"), "AWS::RDS::DBSubnetGroup")
    network_tpl = synth.template_json("network")
    isolated = {
        k
        for k, v in network_tpl["Resources"].items()
        if v["Type"] == "AWS::EC2::Subnet"
        and {"Key": "aws-cdk:subnet-type", "Value": "Isolated"} in v["Properties"]["Tags"]
    }
    imported = json.dumps(group["Properties"]["SubnetIds"])
    assert isolated and all(subnet in imported for subnet in isolated)


def test_database_accepts_only_the_marquez_tasks(synth):
    tpl = synth.template_json("lineage")
    rules = _ingress(tpl, _group_id(tpl, "DatabaseSecurityGroup"))
    task_group = _group_id(tpl, "MarquezSecurityGroup")
    assert rules == [Match.any_value()] or len(rules) == 1
    assert rules[0]["SourceSecurityGroupId"] == {"Fn::GetAtt": [task_group, "GroupId"]}
    assert (rules[0]["FromPort"], rules[0]["ToPort"]) == (5432, 5432)


# --- Marquez containers -------------------------------------------------------------------------


def test_images_are_pinned_to_the_configured_marquez_version(synth):
    version = load_settings(synth.env).versions.marquez
    containers = _containers(synth)
    assert containers[API_CONTAINER]["Image"] == f"marquezproject/marquez:{version}"
    assert containers[WEB_CONTAINER]["Image"] == f"marquezproject/marquez-web:{version}"


def test_api_runs_a_config_that_reads_credentials_from_the_environment(synth):
    api = _containers(synth)[API_CONTAINER]
    env = _env(api)
    assert env["MARQUEZ_CONFIG"] == CONFIG_PATH
    config = yaml.safe_load(base64.b64decode(env["MARQUEZ_CONFIG_BASE64"]))
    assert config["db"]["user"] == "${POSTGRES_USER}"
    assert config["db"]["password"] == "${POSTGRES_PASSWORD}"
    assert "${POSTGRES_HOST}" in config["db"]["url"] and "${POSTGRES_DB}" in config["db"]["url"]
    assert config["search"] == {"enabled": False}
    assert config["migrateOnStartup"] is True
    assert env["SEARCH_ENABLED"] == "false"
    secrets = {s["Name"]: s["ValueFrom"] for s in api["Secrets"]}
    assert set(secrets) == {"POSTGRES_USER", "POSTGRES_PASSWORD"}
    assert ":username::" in json.dumps(secrets["POSTGRES_USER"])
    assert ":password::" in json.dumps(secrets["POSTGRES_PASSWORD"])
    assert {p["ContainerPort"] for p in api["PortMappings"]} == {API_PORT, ADMIN_PORT}
    assert api["EntryPoint"] == ["/bin/bash", "-c"] and api["Command"] == [START_COMMAND]
    assert api["WorkingDirectory"] == IMAGE_WORKDIR


def test_start_command_writes_the_config_then_execs_the_entrypoint(tmp_path):
    """Run the container's start command for real with a stand-in for the image's entrypoint."""
    workdir = tmp_path / "app"
    workdir.mkdir()
    entrypoint = workdir / "entrypoint.sh"
    entrypoint.write_text('#!/bin/bash\necho "server $MARQUEZ_CONFIG"\n')
    entrypoint.chmod(0o755)
    config_path = tmp_path / "marquez.yml"
    command = START_COMMAND.replace(IMAGE_WORKDIR, str(workdir)).replace(CONFIG_PATH, str(config_path))
    env = {
        **os.environ,
        "MARQUEZ_CONFIG": str(config_path),
        "MARQUEZ_CONFIG_BASE64": marquez_service.marquez_config_base64(),
    }
    result = subprocess.run(["/bin/bash", "-c", command], env=env, capture_output=True, text=True, check=True)
    assert result.stdout.strip() == f"server {config_path}"
    assert yaml.safe_load(config_path.read_text()) == marquez_config()


def test_web_points_at_the_api_inside_the_task(synth):
    web = _containers(synth)[WEB_CONTAINER]
    assert _env(web) == {"MARQUEZ_HOST": "localhost", "MARQUEZ_PORT": str(API_PORT), "WEB_PORT": str(WEB_PORT)}


def test_containers_log_to_cloudwatch(synth):
    for container in _containers(synth).values():
        assert container["LogConfiguration"]["LogDriver"] == "awslogs"


def test_cluster_has_container_insights(synth):
    synth.template("lineage").has_resource_properties(
        "AWS::ECS::Cluster",
        {
            "ClusterSettings": [{"Name": "containerInsights", "Value": "enabled"}],
        },
    )


def test_service_runs_privately_with_configured_size(synth):
    marquez = load_settings(synth.env).marquez
    tpl = synth.template_json("lineage")
    _, task = _one(tpl, "AWS::ECS::TaskDefinition")
    assert task["Properties"]["Cpu"] == str(marquez.task_cpu)
    assert task["Properties"]["Memory"] == str(marquez.task_memory_mib)
    _, service = _one(tpl, "AWS::ECS::Service")
    props = service["Properties"]
    assert props["DesiredCount"] == marquez.desired_count
    assert props["LaunchType"] == "FARGATE"
    network = props["NetworkConfiguration"]["AwsvpcConfiguration"]
    assert network["AssignPublicIp"] == "DISABLED"
    assert props["DeploymentConfiguration"]["DeploymentCircuitBreaker"] == {"Enable": True, "Rollback": True}
    assert props["HealthCheckGracePeriodSeconds"] == marquez.health_check_grace_seconds


# --- load balancer ------------------------------------------------------------------------------


def test_load_balancer_is_internal_with_access_logs(synth):
    _, alb = _one(synth.template_json("lineage"), "AWS::ElasticLoadBalancingV2::LoadBalancer")
    props = alb["Properties"]
    assert props["Scheme"] == "internal"
    attributes = {a["Key"]: a["Value"] for a in props["LoadBalancerAttributes"]}
    assert attributes["access_logs.s3.enabled"] == "true"
    assert attributes["access_logs.s3.prefix"] == "marquez-alb"
    assert attributes["routing.http.drop_invalid_header_fields.enabled"] == "true"


def test_access_log_bucket_is_ssl_only_and_lets_elb_deliver_in_any_region(synth):
    tpl = synth.template_json("lineage")
    _, policy = _one(tpl, "AWS::S3::BucketPolicy")
    statements = {s["Sid"]: s for s in policy["Properties"]["PolicyDocument"]["Statement"]}
    deny = statements["DenyInsecureTransport"]
    assert deny["Effect"] == "Deny" and deny["Condition"] == {"Bool": {"aws:SecureTransport": "false"}}
    principal = statements["AllowElbLogDelivery"]["Principal"]["Fn::If"]
    assert principal[2] == {"Service": "logdelivery.elasticloadbalancing.amazonaws.com"}
    mapping = next(iter(tpl["Mappings"].values()))
    assert mapping["us-east-1"]["account"] == "127311923021"  # ELB's account there (ELB user guide)
    assert mapping["me-central-1"]["account"] == "none"  # newer region: service principal instead
    _, bucket = _one(tpl, "AWS::S3::Bucket")
    assert bucket["Properties"]["PublicAccessBlockConfiguration"] == {
        "BlockPublicAcls": True,
        "BlockPublicPolicy": True,
        "IgnorePublicAcls": True,
        "RestrictPublicBuckets": True,
    }


def test_routes_api_paths_to_the_api_and_the_rest_to_the_web(synth):
    tpl = synth.template_json("lineage")
    groups = _all(tpl, "AWS::ElasticLoadBalancingV2::TargetGroup")
    by_port = {g["Properties"]["Port"]: (k, g["Properties"]) for k, g in groups.items()}
    api_id, api = by_port[API_PORT]
    web_id, web = by_port[WEB_PORT]
    assert (api["HealthCheckPath"], api["HealthCheckPort"]) == ("/healthcheck", str(ADMIN_PORT))
    assert (web["HealthCheckPath"], web["HealthCheckPort"]) == ("/healthcheck", str(WEB_PORT))
    _, listener = _one(tpl, "AWS::ElasticLoadBalancingV2::Listener")
    assert listener["Properties"]["Port"] == 80
    assert listener["Properties"]["DefaultActions"] == [{"TargetGroupArn": {"Ref": web_id}, "Type": "forward"}]
    _, rule = _one(tpl, "AWS::ElasticLoadBalancingV2::ListenerRule")
    assert rule["Properties"]["Conditions"] == [{"Field": "path-pattern", "PathPatternConfig": {"Values": ["/api/*"]}}]
    assert rule["Properties"]["Actions"] == [{"TargetGroupArn": {"Ref": api_id}, "Type": "forward"}]


def test_load_balancer_admits_only_allowed_cidrs_and_lineage_clients(synth):
    settings = load_settings(synth.env)
    tpl = synth.template_json("lineage")
    rules = _ingress(tpl, _group_id(tpl, "LoadBalancerSecurityGroup"))
    cidrs = sorted(r["CidrIp"] for r in rules if "CidrIp" in r)
    assert cidrs == sorted(settings.marquez.web_allowed_cidrs)
    assert "0.0.0.0/0" not in cidrs
    clients = _group_id(tpl, "LoadBalancerClientsSecurityGroup")
    sources = [r["SourceSecurityGroupId"] for r in rules if "SourceSecurityGroupId" in r]
    assert sources == [{"Fn::GetAtt": [clients, "GroupId"]}]
    assert all((r["FromPort"], r["ToPort"]) == (80, 80) for r in rules)


def test_marquez_tasks_admit_only_the_load_balancer(synth):
    tpl = synth.template_json("lineage")
    rules = _ingress(tpl, _group_id(tpl, "MarquezSecurityGroup"))
    alb_group = _group_id(tpl, "LoadBalancerSecurityGroup")
    assert {r["SourceSecurityGroupId"]["Fn::GetAtt"][0] for r in rules} == {alb_group}
    assert sorted(r["FromPort"] for r in rules) == sorted([API_PORT, ADMIN_PORT, WEB_PORT])


# --- outputs ------------------------------------------------------------------------------------


def test_urls_are_published_as_outputs_and_ssm_parameters(synth):
    tpl = synth.template_json("lineage")
    _, alb = _one(tpl, "AWS::ElasticLoadBalancingV2::LoadBalancer")
    params = {p["Properties"]["Name"]: p["Properties"]["Value"] for p in _all(tpl, "AWS::SSM::Parameter").values()}
    api_url = params[parameters.marquez_api_url(synth.env)]
    web_url = params[parameters.marquez_web_url(synth.env)]
    assert api_url["Fn::Join"][1][0] == "http://" and "DNSName" in json.dumps(api_url)
    assert web_url["Fn::Join"][1][-1] == "/"
    outputs = tpl["Outputs"]
    assert outputs["MarquezApiUrl"]["Value"] == api_url
    assert outputs["MarquezWebUrl"]["Value"] == web_url
    assert "LineageClientsSecurityGroupId" in outputs


def test_lineage_clients_group_is_exposed_for_the_emr_stack(synths):
    stack = synths["dev"].stacks["lineage"]
    assert stack.clients_security_group.security_group_id
