"""What `launch` tests share: the published launch spec and moto with the stacks' SSM parameters.

Imported by tests/emr_lineage/test_launcher.py and tests/emr_lineage/commands/test_launch_cli.py
(the `aws` fixture is imported by name into both).
"""

from __future__ import annotations

import json

import boto3
import pytest

from emr_lineage.aws import clients as aws_clients
from emr_lineage.aws import parameters
from emr_lineage.aws.lake import warehouse_uri
from emr_lineage.spark.conf import PARENT_KEYS, ListenerConfig, emr_configurations
from tests.helpers import fake_aws_credentials
from tests.versions import EMR_RELEASE, LISTENER_JAR

REGION = "eu-west-1"
BUCKET = "emr-lineage-dev-artifacts-123456789012"
LOGS = "s3://emr-lineage-dev-logs-123456789012/emr/"
MARQUEZ_WEB = "http://marquez-web.internal.example:3000"


def launch_spec() -> dict:
    """The shape the EMR stack publishes: a RunJobFlow request minus Steps."""
    listener = ListenerConfig(
        api_url="http://marquez.internal.example:5000", namespace="emr-lineage-dev", timeout_ms=5000
    )
    return {
        "Name": "emr-lineage-dev",
        "ReleaseLabel": EMR_RELEASE,
        "Applications": [{"Name": "Spark"}, {"Name": "Hadoop"}],
        "LogUri": LOGS,
        "ServiceRole": "emr-lineage-dev-emr-service",
        "JobFlowRole": "emr-lineage-dev-emr-instance-profile",
        "SecurityConfiguration": "emr-lineage-dev-security",
        "VisibleToAllUsers": True,
        "Instances": {
            "InstanceGroups": [
                {"Name": "primary", "InstanceRole": "MASTER", "InstanceType": "m7g.xlarge", "InstanceCount": 1},
                {"Name": "core", "InstanceRole": "CORE", "InstanceType": "m7g.xlarge", "InstanceCount": 2},
            ],
            "Ec2SubnetId": "subnet-0abc1234def567890",
            "EmrManagedMasterSecurityGroup": "sg-0aaa1111bbbb2222c",
            "EmrManagedSlaveSecurityGroup": "sg-0ddd3333eeee4444f",
            "ServiceAccessSecurityGroup": "sg-0fff5555aaaa6666b",
            # The stack's long-running default; the launcher must turn it off.
            "KeepJobFlowAliveWhenNoSteps": True,
            "TerminationProtected": False,
        },
        "BootstrapActions": [
            {
                "Name": "install-openlineage",
                "ScriptBootstrapAction": {
                    "Path": f"s3://{BUCKET}/bootstrap/install-openlineage.sh",
                    "Args": ["--bucket", BUCKET, "--key", f"listener/{LISTENER_JAR}"],
                },
            }
        ],
        "Configurations": emr_configurations(
            listener, glue_catalog_id="123456789012", warehouse=warehouse_uri("emr-lineage-dev-data-lake")
        ),
        "AutoTerminationPolicy": {"IdleTimeout": 3600},
        "Tags": [{"Key": "project", "Value": "emr-lineage"}, {"Key": "environment", "Value": "dev"}],
    }


@pytest.fixture
def launch_aws(monkeypatch: pytest.MonkeyPatch):
    """moto in-process with the parameters the EMR and Marquez stacks publish for dev."""
    from moto import mock_aws  # imported by the tests that use moto, not when the conftest loads

    for _, env_name in PARENT_KEYS.values():
        monkeypatch.delenv(env_name, raising=False)
    fake_aws_credentials(monkeypatch, REGION)
    with mock_aws():
        ssm = boto3.client("ssm", region_name=REGION)
        ssm.put_parameter(Name=parameters.emr_launch_spec("dev"), Value=json.dumps(launch_spec()), Type="String")
        ssm.put_parameter(Name=parameters.artifacts_bucket("dev"), Value=BUCKET, Type="String")
        ssm.put_parameter(Name=parameters.marquez_web_url("dev"), Value=MARQUEZ_WEB, Type="String")
        s3 = boto3.client("s3", region_name=REGION)
        s3.create_bucket(Bucket=BUCKET, CreateBucketConfiguration={"LocationConstraint": REGION})
        yield aws_clients.AwsClients(ssm=ssm, s3=s3, emr=boto3.client("emr", region_name=REGION))
