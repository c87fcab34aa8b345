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
from tests.stacks.templates import one as _one


def _containers(synth) -> dict[str, dict]:
    _, task = _one(synth.template_json("lineage"), "AWS::ECS::TaskDefinition")
    return {c["Name"]: c for c in task["Properties"]["ContainerDefinitions"]}


def _env(container: dict) -> dict:
    return {e["Name"]: e["Value"] for e in container.get("Environment", [])}


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
