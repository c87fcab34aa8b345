"""MarquezRetention: Marquez's db-retention command, daily, with the service's image, config and secrets."""

from __future__ import annotations

import os
import subprocess

import yaml

from emr_lineage.settings.loader import load_settings
from stacks.lineage_service import marquez as marquez_service
from stacks.lineage_service.marquez import API_CONTAINER, CONFIG_PATH, IMAGE_WORKDIR, marquez_config
from stacks.lineage_service.retention import CONTAINER, retention_command
from tests.stacks.templates import by_type, one
from tests.stacks.templates import ingress as _ingress
from tests.stacks.templates import security_group_id as _group_id


def _task_containers(tpl: dict) -> dict[str, tuple[str, dict]]:
    """Every container of the template by name, with its task definition's logical id."""
    return {
        c["Name"]: (task_id, c)
        for task_id, task in by_type(tpl, "AWS::ECS::TaskDefinition").items()
        for c in task["Properties"]["ContainerDefinitions"]
    }


def test_retention_runs_daily_with_the_configured_days(synth):
    days = load_settings(synth.env).marquez.retention_days
    assert days is not None  # both environments keep a bounded history
    tpl = synth.template_json("lineage")
    _, rule = one(tpl, "AWS::Events::Rule")
    props = rule["Properties"]
    assert props["ScheduleExpression"] == "cron(0 3 * * ? *)"
    assert props["State"] == "ENABLED"
    (target,) = props["Targets"]
    task_id, container = _task_containers(tpl)[CONTAINER]
    assert target["EcsParameters"]["TaskDefinitionArn"] == {"Ref": task_id}
    assert target["EcsParameters"]["LaunchType"] == "FARGATE"
    assert target["EcsParameters"]["NetworkConfiguration"]["AwsVpcConfiguration"]["AssignPublicIp"] == "DISABLED"
    assert container["EntryPoint"] == ["/bin/bash", "-c"]
    assert container["Command"] == [retention_command(days)]
    assert f"db-retention --retention-days {days} {CONFIG_PATH}" in container["Command"][0]


def test_retention_uses_the_service_image_config_and_secrets(synth, render):
    containers = _task_containers(synth.template_json("lineage"))
    _, retention = containers[CONTAINER]
    _, api = containers[API_CONTAINER]
    version = load_settings(synth.env).versions.marquez
    assert retention["Image"] == api["Image"] and render(retention["Image"]).endswith(f":{version}")
    assert retention["Environment"] == api["Environment"]
    assert retention["Secrets"] == api["Secrets"]
    assert retention["WorkingDirectory"] == IMAGE_WORKDIR
    assert retention["LogConfiguration"]["Options"]["awslogs-stream-prefix"] == "retention"


def test_retention_task_reaches_the_database(synth):
    tpl = synth.template_json("lineage")
    rules = _ingress(tpl, _group_id(tpl, "DatabaseSecurityGroup"))
    retention_group = _group_id(tpl, "RetentionSecurityGroup")
    assert {"Fn::GetAtt": [retention_group, "GroupId"]} in [r["SourceSecurityGroupId"] for r in rules]
    assert _ingress(tpl, retention_group) == []


def test_no_retention_task_without_retention_days(cognito_synth):
    tpl = cognito_synth.template_json("lineage")
    assert by_type(tpl, "AWS::Events::Rule") == {}
    assert CONTAINER not in _task_containers(tpl)


def test_retention_command_runs_marquez_jar_with_the_written_config(tmp_path):
    """The command for real, with a stand-in ``java`` on PATH and a jar named like the image's."""
    workdir = tmp_path / "app"
    workdir.mkdir()
    (workdir / "marquez-api-0.51.1.jar").write_text("")
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    java = bin_dir / "java"
    java.write_text('#!/bin/bash\nprintf "%s\\n" "$@"\n')
    java.chmod(0o755)
    config_path = tmp_path / "marquez.yml"
    command = retention_command(30).replace(IMAGE_WORKDIR, str(workdir)).replace(CONFIG_PATH, str(config_path))
    env = {
        **os.environ,
        "PATH": f"{bin_dir}:{os.environ['PATH']}",
        "JAVA_OPTS": "-Xmx512m",
        "MARQUEZ_CONFIG_BASE64": marquez_service.marquez_config_base64(),
    }
    result = subprocess.run(["/bin/bash", "-c", command], env=env, capture_output=True, text=True, check=True)
    assert result.stdout.split("\n")[:-1] == [
        "-Xmx512m",
        "-Duser.timezone=UTC",
        "-Dlog4j2.formatMsgNoLookups=true",
        "-jar",
        f"{workdir}/marquez-api-0.51.1.jar",
        "db-retention",
        "--retention-days",
        "30",
        str(config_path),
    ]
    assert yaml.safe_load(config_path.read_text()) == marquez_config()
