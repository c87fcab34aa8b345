"""MarquezService: the Marquez API and web containers on Fargate, and the config the API runs."""

from __future__ import annotations

import base64
import json
import os
import subprocess

import yaml

from emr_lineage.settings.loader import load_settings
from stacks.lineage_service import marquez as marquez_service
from stacks.lineage_service.marquez import (
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
from tests.stacks.templates import as_list as _as_list
from tests.stacks.templates import by_type as _by_type
from tests.stacks.templates import one as _one
from tests.stacks.templates import statements as _statements
from tests.stacks.variants import ECR_MIRROR


def _service_task(tpl: dict) -> dict:
    """The Marquez service's task definition (the retention task has its own)."""
    _, service = _one(tpl, "AWS::ECS::Service")
    return tpl["Resources"][service["Properties"]["TaskDefinition"]["Ref"]]


def _containers(synth) -> dict[str, dict]:
    task = _service_task(synth.template_json("lineage"))
    return {c["Name"]: c for c in task["Properties"]["ContainerDefinitions"]}


def _env(container: dict) -> dict:
    return {e["Name"]: e["Value"] for e in container.get("Environment", [])}


# CDK writes an ECR registry's account, region and domain suffix as pseudo parameters.
CACHE_REGISTRY = "{Ref:AWS::AccountId}.dkr.ecr.{Ref:AWS::Region}.{Ref:AWS::URLSuffix}"
CACHE_REPOSITORY_ARN = "arn:{Ref:AWS::Partition}:ecr:{Ref:AWS::Region}:{Ref:AWS::AccountId}:repository"


def _images(synth, render) -> dict[str, str]:
    return {name: render(container["Image"]) for name, container in _containers(synth).items()}


def test_dev_pulls_the_configured_repositories_as_named(synths, render):
    settings = load_settings("dev")
    assert settings.marquez.image_registry.type == "direct"
    images, tag = settings.versions.marquez_image, settings.versions.marquez
    assert _images(synths["dev"], render) == {
        API_CONTAINER: f"{images.api}:{tag}",
        WEB_CONTAINER: f"{images.web}:{tag}",
    }
    assert images.api == "marquezproject/marquez"  # Docker Hub unless configured
    assert _by_type(synths["dev"].template_json("lineage"), "AWS::ECR::PullThroughCacheRule") == {}


def test_prod_pulls_the_docker_hub_images_through_its_ecr_cache(synths, render):
    settings = load_settings("prod")
    tag = settings.versions.marquez
    assert _images(synths["prod"], render) == {
        API_CONTAINER: f"{CACHE_REGISTRY}/emr-lineage-prod/marquezproject/marquez:{tag}",
        WEB_CONTAINER: f"{CACHE_REGISTRY}/emr-lineage-prod/marquezproject/marquez-web:{tag}",
    }


def test_the_cache_rule_reads_docker_hub_credentials_from_the_named_secret(synths, render):
    settings = load_settings("prod")
    _, rule = _one(synths["prod"].template_json("lineage"), "AWS::ECR::PullThroughCacheRule")
    props = rule["Properties"]
    assert props["EcrRepositoryPrefix"] == settings.image_cache_prefix == "emr-lineage-prod"
    assert (props["UpstreamRegistry"], props["UpstreamRegistryUrl"]) == ("docker-hub", "registry-1.docker.io")
    secret = settings.marquez.image_registry.credentials_secret
    assert secret == "ecr-pullthroughcache/emr-lineage/docker-hub"
    # A partial ARN (no 6-character suffix): the account is unknown until deploy, the secret made by hand.
    assert render(props["CredentialArn"]) == (
        f"arn:{{Ref:AWS::Partition}}:secretsmanager:{{Ref:AWS::Region}}:{{Ref:AWS::AccountId}}:secret:{secret}"
    )


def test_a_first_pull_through_the_cache_may_import_exactly_the_marquez_repositories(synths, render):
    tpl = synths["prod"].template_json("lineage")
    rule_id, _ = _one(tpl, "AWS::ECR::PullThroughCacheRule")
    api = f"{CACHE_REPOSITORY_ARN}/emr-lineage-prod/marquezproject/marquez"
    web = f"{CACHE_REPOSITORY_ARN}/emr-lineage-prod/marquezproject/marquez-web"
    tasks = _by_type(tpl, "AWS::ECS::TaskDefinition").values()
    assert len(tasks) == 2  # the service's (API and web) and the retention task's (API)
    for task in tasks:
        names = {c["Name"] for c in task["Properties"]["ContainerDefinitions"]}
        pulled = {api, web} if WEB_CONTAINER in names else {api}
        statements = _statements(tpl, task["Properties"]["ExecutionRoleArn"]["Fn::GetAtt"][0])
        imports = [s for s in statements if "ecr:BatchImportUpstreamImage" in _as_list(s["Action"])]
        assert [sorted(s["Action"]) for s in imports] == [["ecr:BatchImportUpstreamImage", "ecr:CreateRepository"]]
        assert {render(r) for s in imports for r in _as_list(s["Resource"])} == pulled
        reads = [s for s in statements if "ecr:BatchGetImage" in _as_list(s["Action"])]
        assert {render(r) for s in reads for r in _as_list(s["Resource"])} == pulled
        assert rule_id in task["DependsOn"]  # the rule exists before a task pulls through it


def test_ecr_images_are_pulled_with_permissions_on_those_repositories_only(cognito_synth, render):
    versions = load_settings("dev").versions
    tpl = cognito_synth.template_json("lineage")
    task = _service_task(tpl)
    # CDK writes the registry's domain suffix as AWS::URLSuffix (amazonaws.com in the aws partition).
    images = {
        c["Name"]: render(c["Image"]).replace("{Ref:AWS::URLSuffix}", "amazonaws.com")
        for c in task["Properties"]["ContainerDefinitions"]
    }
    assert images[API_CONTAINER] == f"{ECR_MIRROR}/marquez:{versions.marquez}"
    assert images[WEB_CONTAINER] == f"{ECR_MIRROR}/marquez-web:{versions.marquez}"
    role_id = task["Properties"]["ExecutionRoleArn"]["Fn::GetAtt"][0]
    pulls = [s for s in _statements(tpl, role_id) if "ecr:BatchGetImage" in _as_list(s["Action"])]
    arns = sorted(r for s in pulls for r in _as_list(s["Resource"]))
    registry = "arn:aws:ecr:eu-west-1:123456789012:repository/docker-hub/marquezproject"
    assert arns == [f"{registry}/marquez", f"{registry}/marquez-web"]
    # A mirror is filled by its owner: no rule, and the tasks import nothing.
    assert _by_type(tpl, "AWS::ECR::PullThroughCacheRule") == {}
    assert not [s for s in _statements(tpl, role_id) if "ecr:BatchImportUpstreamImage" in _as_list(s["Action"])]


def test_failed_deployments_stop_and_roll_back(synth):
    _, service = _one(synth.template_json("lineage"), "AWS::ECS::Service")
    configuration = service["Properties"]["DeploymentConfiguration"]
    assert configuration["DeploymentCircuitBreaker"] == {"Enable": True, "Rollback": True}
    assert (configuration["MinimumHealthyPercent"], configuration["MaximumPercent"]) == (100, 200)


def test_service_scales_on_cpu_within_the_configured_bounds(synth):
    scaling = load_settings(synth.env).marquez.autoscaling
    tpl = synth.template_json("lineage")
    targets = _by_type(tpl, "AWS::ApplicationAutoScaling::ScalableTarget")
    if scaling is None:  # dev: a fixed desired_count
        assert synth.env == "dev"
        assert targets == {} and _by_type(tpl, "AWS::ApplicationAutoScaling::ScalingPolicy") == {}
        return
    assert synth.env == "prod"
    ((target_id, target),) = targets.items()
    props = target["Properties"]
    assert (props["MinCapacity"], props["MaxCapacity"]) == (scaling.min_tasks, scaling.max_tasks)
    assert props["ScalableDimension"] == "ecs:service:DesiredCount"
    service_id, _ = _one(tpl, "AWS::ECS::Service")
    assert {"Fn::GetAtt": [service_id, "Name"]} in props["ResourceId"]["Fn::Join"][1]
    _, policy = _one(tpl, "AWS::ApplicationAutoScaling::ScalingPolicy")
    assert policy["Properties"]["ScalingTargetId"] == {"Ref": target_id}
    tracking = policy["Properties"]["TargetTrackingScalingPolicyConfiguration"]
    assert tracking["PredefinedMetricSpecification"] == {"PredefinedMetricType": "ECSServiceAverageCPUUtilization"}
    assert tracking["TargetValue"] == scaling.target_cpu_percent


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
    task = _service_task(tpl)
    assert task["Properties"]["Cpu"] == str(marquez.task_cpu)
    assert task["Properties"]["Memory"] == str(marquez.task_memory_mib)
    _, service = _one(tpl, "AWS::ECS::Service")
    props = service["Properties"]
    # Under autoscaling no count in the template: a deploy must not undo a scale-out.
    assert props.get("DesiredCount") == (None if marquez.autoscaling else marquez.desired_count)
    assert props["LaunchType"] == "FARGATE"
    network = props["NetworkConfiguration"]["AwsvpcConfiguration"]
    assert network["AssignPublicIp"] == "DISABLED"
    assert props["HealthCheckGracePeriodSeconds"] == marquez.health_check_grace_seconds
