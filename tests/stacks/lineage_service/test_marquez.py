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


def test_images_are_the_configured_repositories_pinned_to_the_marquez_version(synth):
    versions = load_settings(synth.env).versions
    containers = _containers(synth)
    assert containers[API_CONTAINER]["Image"] == f"{versions.marquez_image.api}:{versions.marquez}"
    assert containers[WEB_CONTAINER]["Image"] == f"{versions.marquez_image.web}:{versions.marquez}"
    assert versions.marquez_image.api == "marquezproject/marquez"  # Docker Hub unless configured


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
