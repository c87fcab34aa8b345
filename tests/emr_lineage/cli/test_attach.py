"""``emr-lineage attach`` and ``detach`` end to end: what the stacks publish on moto's SSM and S3, the cluster
on a Stubber'ed EMR client whose expected requests are the ones under test (moto keeps no instance group
configurations), and on moto's EMR where it answers (a terminated cluster)."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

import boto3
import pytest
from botocore.stub import ANY
from click.testing import CliRunner

from emr_lineage.aws import clients as aws_clients
from emr_lineage.aws import parameters, reconfigure
from emr_lineage.aws.trusted_ca import CaBundle
from emr_lineage.cli.app import main
from emr_lineage.launch.attach import TRUST_STEP_NAME
from emr_lineage.listener.artifact import listener_s3_key
from emr_lineage.settings.loader import load_settings
from emr_lineage.spark.conf import ATTACHED_PROPERTY, LISTENER_CLASS
from emr_lineage.spark.truststore import stage_truststore
from tests import pki
from tests.emr_lineage.launch_support import BUCKET, REGION
from tests.emr_lineage.reconfigure_support import (
    CLUSTER_ID,
    SECRET_ARN,
    SERVICE_ROLE,
    answer_cluster,
    answer_groups,
    defaults,
    group,
    stubbed_emr,
    three_groups,
)
from tests.emr_lineage.serverless_support import REPO_CDK_JSON, serverless_cdk_json
from tests.helpers import one_error_line
from tests.stacks.variants import CERTIFICATE_ARN

JAR = f"s3://{BUCKET}/listener/openlineage-spark_2.12-1.53.0.jar"
URL = "http://marquez.internal.example:5000"  # the launch spec's (launch_support.launch_spec)
USERS = [defaults({"spark.executor.memory": "4g"})]


@pytest.fixture
def published(launch_aws) -> None:
    """The pinned jar staged and the gateway's API key secret named, as the stacks and `listener stage` leave them."""
    artifact = load_settings("dev", REPO_CDK_JSON).versions.openlineage_spark
    launch_aws.s3.put_object(
        Bucket=BUCKET, Key=listener_s3_key(artifact), Body=b"jar", Metadata={"sha256": artifact.sha256}
    )
    launch_aws.ssm.put_parameter(Name=parameters.gateway_api_key_secret("dev"), Value=SECRET_ARN, Type="String")


@pytest.fixture
def stubber(monkeypatch, published):
    """The EMR client of the command, Stubber'ed; SSM and S3 stay moto's."""
    client, stub = stubbed_emr()
    made = aws_clients.new_client
    monkeypatch.setattr(
        aws_clients, "new_client", lambda service, **k: client if service == "emr" else made(service, **k)
    )
    with stub:
        yield stub
        stub.assert_no_pending_responses()


@pytest.fixture
def pauses(monkeypatch) -> list[float]:
    seen: list[float] = []
    monkeypatch.setattr(reconfigure, "pause", seen.append)
    monkeypatch.setattr(reconfigure, "clock", lambda: sum(seen))
    return seen


def run(tmp_path: Path, command: str, *args: str, gateway: bool = True):
    cdk_json = serverless_cdk_json(tmp_path, enabled=False, gateway=gateway)
    argv = [
        command,
        "--env",
        "dev",
        "--cdk-json",
        str(cdk_json),
        "--cluster-id",
        CLUSTER_ID,
        "--poll-interval",
        "5",
        *args,
    ]
    return CliRunner().invoke(main, argv, catch_exceptions=False)


def expect_modify(stubber, groups: list[tuple[str, list[dict]]]) -> None:
    request = {
        "ClusterId": CLUSTER_ID,
        "InstanceGroups": [
            {"InstanceGroupId": gid, "ReconfigurationType": "OVERWRITE", "Configurations": configurations}
            for gid, configurations in groups
        ],
    }
    stubber.add_response("modify_instance_groups", {}, request)


def attached_configurations() -> list[dict]:
    """What attach sends for a group holding USERS (gateway on)."""
    marker = {
        "added": {
            "spark.openlineage.columnLineage.datasetLineageEnabled": "true",
            "spark.openlineage.namespace": "emr-lineage-dev",
            "spark.openlineage.transport.auth.apiKey": SECRET_ARN,
            "spark.openlineage.transport.auth.type": "api_key",
            "spark.openlineage.transport.endpoint": "/api/v1/lineage",
            "spark.openlineage.transport.timeoutInMillis": "5000",
            "spark.openlineage.transport.type": "http",
            "spark.openlineage.transport.url": URL,
        },
        "appended": {"spark.extraListeners": LISTENER_CLASS, "spark.jars": JAR},
        "created": ["spark.jars", "spark.extraListeners"],
        "env": "dev",
    }
    props = {
        "spark.executor.memory": "4g",
        **marker["added"],
        "spark.jars": JAR,
        "spark.extraListeners": LISTENER_CLASS,
    }
    props["EMR.secret@spark.openlineage.transport.auth.apiKey"] = props.pop("spark.openlineage.transport.auth.apiKey")
    props[ATTACHED_PROPERTY] = json.dumps(marker, sort_keys=True, separators=(",", ":"))
    return [defaults(props)]


def applied(configurations: list[dict], **kwargs) -> list[dict]:
    """Three groups as EMR lists them once ``configurations`` are applied (version 2)."""
    shown = [{**c, "Properties": reconfigure.as_read(c["Properties"])} for c in configurations]
    return three_groups(shown, version=2, **kwargs)


def test_attach_reconfigures_every_group_and_reports_each(stubber, pauses, tmp_path, launch_aws) -> None:
    answer_cluster(stubber)
    answer_groups(stubber, three_groups(USERS))
    sent = attached_configurations()
    expect_modify(stubber, [("ig-MASTER1", sent), ("ig-CORE1", sent), ("ig-TASK1", sent)])
    answer_groups(stubber, three_groups(USERS, state="RECONFIGURING", version=2, applied=1))
    answer_groups(stubber, applied(sent))
    result = run(tmp_path, "attach")
    assert result.exit_code == 0, result.output
    assert pauses == [5]
    assert result.stdout.splitlines() == [
        "ig-MASTER1\tMASTER\tmaster\tRUNNING\tapplied",
        "ig-CORE1\tCORE\tcore\tRUNNING\tapplied",
        "ig-TASK1\tTASK\ttask\tRUNNING\tapplied",
        f"listener attached on cluster {CLUSTER_ID}",
    ]
    assert (
        f"listener {JAR} reporting to {URL} with the gateway's API key: EMR reads secret {SECRET_ARN}" in result.stderr
    )
    assert f"service role {SERVICE_ROLE}" in result.stderr
    assert "instance group ig-CORE1 (CORE): adds spark.openlineage" in result.stderr
    assert "RECONFIGURING" in result.stderr


def test_a_dry_run_prints_the_requests_and_sends_nothing(stubber, tmp_path) -> None:
    answer_cluster(stubber)
    answer_groups(stubber, three_groups(USERS))
    result = run(tmp_path, "attach", "--dry-run")
    assert result.exit_code == 0, result.output
    (shown,) = json.loads(result.stdout)
    assert shown["operation"] == "ModifyInstanceGroups"
    assert [g["Configurations"] for g in shown["request"]["InstanceGroups"]] == [attached_configurations()] * 3
    assert "dry run: nothing was sent to EMR" in result.stderr


def test_attach_of_an_attached_cluster_changes_nothing(stubber, tmp_path) -> None:
    answer_cluster(stubber)
    answer_groups(stubber, applied(attached_configurations()))
    result = run(tmp_path, "attach")
    assert result.exit_code == 0 and result.stdout == f"cluster {CLUSTER_ID}: already attached, nothing to change\n"


def test_a_group_that_fails_is_exit_1_with_emrs_reason(stubber, pauses, tmp_path) -> None:
    answer_cluster(stubber)
    answer_groups(stubber, three_groups(USERS))
    sent = attached_configurations()
    expect_modify(stubber, [("ig-MASTER1", sent), ("ig-CORE1", sent), ("ig-TASK1", sent)])
    answer_groups(stubber, three_groups(USERS, state="RECONFIGURING", version=2, applied=1))
    failed = [group("ig-MASTER1", "MASTER", version=2, applied=1, reason="Instance i-1 failed: AccessDenied")]
    answer_groups(stubber, [*failed, *applied(sent)[1:]])
    result = run(tmp_path, "attach")
    assert result.exit_code == 1, result.output
    assert "ig-MASTER1\tMASTER\tmaster\tRUNNING\tfailed" in result.stdout
    line = [entry for entry in result.stderr.splitlines() if entry.startswith("error: ")]
    assert line == [
        "error: instance group ig-MASTER1 (MASTER): reconfiguration failed: Instance i-1 failed: AccessDenied"
    ]


def test_ctrl_c_while_waiting_says_the_reconfiguration_goes_on(stubber, monkeypatch, tmp_path) -> None:
    answer_cluster(stubber)
    answer_groups(stubber, three_groups(USERS))
    sent = attached_configurations()
    expect_modify(stubber, [("ig-MASTER1", sent), ("ig-CORE1", sent), ("ig-TASK1", sent)])
    answer_groups(stubber, three_groups(USERS, state="RECONFIGURING", version=2, applied=1))

    def interrupted(seconds: float) -> None:
        raise KeyboardInterrupt

    monkeypatch.setattr(reconfigure, "pause", interrupted)
    result = run(tmp_path, "attach")
    assert result.exit_code == 130
    assert result.stderr.splitlines()[-1] == (
        "error: interrupted; the reconfiguration continues in EMR: follow it with "
        f"aws emr list-instance-groups --cluster-id {CLUSTER_ID}"
    )


def test_not_applied_by_the_deadline_is_exit_1(stubber, pauses, monkeypatch, tmp_path) -> None:
    monkeypatch.setattr(reconfigure, "DEFAULT_DEADLINE_SECONDS", 120)
    answer_cluster(stubber)
    answer_groups(stubber, three_groups(USERS))
    sent = attached_configurations()
    expect_modify(stubber, [("ig-MASTER1", sent), ("ig-CORE1", sent), ("ig-TASK1", sent)])
    for _ in range(3):  # at 0, 60 and 120 s: one at 180 s would pass the deadline
        answer_groups(stubber, three_groups(USERS, state="RECONFIGURING", version=2, applied=1))
    result = run(tmp_path, "attach", "--poll-interval", "60")
    assert result.exit_code == 1, result.output
    assert pauses == [60, 60]
    assert "ig-CORE1\tCORE\tcore\tRECONFIGURING\tapplying" in result.stdout
    assert result.stderr.splitlines()[-1] == (
        "error: not applied after 2 minutes; EMR goes on: follow it with "
        f"aws emr list-instance-groups --cluster-id {CLUSTER_ID}"
    )


def test_detach_takes_off_what_attach_added(stubber, pauses, tmp_path) -> None:
    answer_cluster(stubber)
    answer_groups(stubber, applied(attached_configurations()))
    expect_modify(stubber, [("ig-MASTER1", USERS), ("ig-CORE1", USERS), ("ig-TASK1", USERS)])
    answer_groups(stubber, three_groups(USERS, version=3))
    result = run(tmp_path, "detach")
    assert result.exit_code == 0, result.output
    assert result.stdout.splitlines()[-1] == f"listener detached on cluster {CLUSTER_ID}"
    assert "instance group ig-TASK1 (TASK): removes spark.openlineage" in result.stderr


def test_detach_of_a_cluster_never_attached_is_one_line_exit_2(stubber, tmp_path) -> None:
    answer_cluster(stubber)
    answer_groups(stubber, three_groups(USERS))
    one_error_line(
        run(tmp_path, "detach"), f"cluster {CLUSTER_ID} has nothing attached by emr-lineage", stdout_empty=True
    )


def test_another_listener_is_refused_unless_appended(stubber, tmp_path) -> None:
    theirs = [defaults({"spark.extraListeners": "com.example.Audit"})]
    answer_cluster(stubber)
    answer_groups(stubber, three_groups(theirs))
    one_error_line(run(tmp_path, "attach"), "pass --append-listener", stdout_empty=True)
    answer_cluster(stubber)
    answer_groups(stubber, three_groups(theirs))
    result = run(tmp_path, "attach", "--append-listener", "--dry-run")
    assert result.exit_code == 0, result.output
    props = json.loads(result.stdout)[0]["request"]["InstanceGroups"][0]["Configurations"][0]["Properties"]
    assert props["spark.extraListeners"] == f"com.example.Audit,{LISTENER_CLASS}"


def test_a_listener_jar_not_staged_points_to_listener_stage(stubber, launch_aws, tmp_path) -> None:
    launch_aws.s3.delete_object(
        Bucket=BUCKET, Key=listener_s3_key(load_settings("dev", REPO_CDK_JSON).versions.openlineage_spark)
    )
    answer_cluster(stubber)
    answer_groups(stubber, three_groups(USERS))
    one_error_line(run(tmp_path, "attach"), "run emr-lineage listener stage --env dev", stdout_empty=True)


def test_another_reconfiguration_in_progress_is_refused(stubber, tmp_path) -> None:
    answer_cluster(stubber)
    answer_groups(stubber, three_groups(USERS, state="RECONFIGURING", version=2, applied=1))
    one_error_line(run(tmp_path, "attach"), "another reconfiguration is in progress", stdout_empty=True)


def test_a_terminated_cluster_is_one_line_exit_2(published, launch_aws, tmp_path) -> None:
    emr = boto3.client("emr", region_name=REGION)
    cid = emr.run_job_flow(
        Name="analytics",
        ReleaseLabel="emr-7.13.0",
        Applications=[{"Name": "Spark"}],
        Instances={"MasterInstanceType": "m5.xlarge", "InstanceCount": 1},
        ServiceRole=SERVICE_ROLE,
        JobFlowRole="analytics-emr-instance",
    )["JobFlowId"]
    emr.terminate_job_flows(JobFlowIds=[cid])
    cdk_json = serverless_cdk_json(tmp_path, enabled=False)
    for command in ("attach", "detach"):
        result = CliRunner().invoke(main, [command, "--cdk-json", str(cdk_json), "--cluster-id", cid])
        one_error_line(
            result, f"cluster {cid} is TERMINATED: only a running cluster can be reconfigured", stdout_empty=True
        )


@pytest.mark.parametrize("command", ["attach", "detach"])
@pytest.mark.parametrize("cluster_id", ["foo", "j-abc", "j-"])
def test_a_cluster_id_that_is_not_one_is_refused_before_any_aws_call(command, cluster_id) -> None:
    result = CliRunner().invoke(main, [command, "--cluster-id", cluster_id, "--dry-run"])
    line = one_error_line(result, stdout_empty=True)
    assert f"{cluster_id!r} is not an EMR cluster id (j- and upper-case letters and digits)" in line


def trusting_cdk_json(tmp_path: Path, s3) -> tuple[Path, str]:
    """dev with HTTPS and a CA bundle in S3 as openlineage.trusted_ca; the truststore's archive attach stages."""
    root = pki.certificate_authority("Estate Root CA")
    bundle = root.pem
    s3.put_object(Bucket=BUCKET, Key="pki/estate.pem", Body=bundle)
    path = serverless_cdk_json(tmp_path, enabled=False)
    document = json.loads(path.read_text())
    env = document["context"]["emr-lineage"]["environments"]["dev"]
    env["marquez"].update(certificate_arn=CERTIFICATE_ARN, domain_name="lineage.dev.example.com")
    ca = {"type": "s3", "uri": f"s3://{BUCKET}/pki/estate.pem", "sha256": hashlib.sha256(bundle).hexdigest()}
    env["openlineage"]["trusted_ca"] = ca
    path.write_text(json.dumps(document))
    store = stage_truststore(s3, BUCKET, CaBundle(ca["uri"], bundle, (root.certificate,)), upload_it=False)
    return path, store.archive


def trusting_configurations(archive: str) -> list[dict]:
    """What attach sends for a group holding USERS, with the truststore for cluster-mode drivers."""
    (sent,) = attached_configurations()
    props = dict(sent["Properties"])
    marker = json.loads(props.pop(ATTACHED_PROPERTY))
    options = (
        "-Djavax.net.ssl.trustStore=emr-lineage-truststore/truststore.p12 "
        "-Djavax.net.ssl.trustStorePassword=changeit -Djavax.net.ssl.trustStoreType=PKCS12"
    )
    marker["added"]["spark.yarn.appMasterEnv.JAVA_TOOL_OPTIONS"] = options
    marker["appended"]["spark.archives"] = archive
    marker["created"].append("spark.archives")
    props.update({"spark.yarn.appMasterEnv.JAVA_TOOL_OPTIONS": options, "spark.archives": archive})
    props[ATTACHED_PROPERTY] = json.dumps(marker, sort_keys=True, separators=(",", ":"))
    return [defaults(props)]


@pytest.mark.parametrize("outcome", ["COMPLETED", "FAILED"])
def test_with_a_trusted_ca_attach_trusts_it_on_the_primary_node_with_a_step_and_reports_it(
    stubber, pauses, tmp_path, launch_aws, outcome
) -> None:
    cdk_json, archive = trusting_cdk_json(tmp_path, launch_aws.s3)
    answer_cluster(stubber)
    answer_groups(stubber, three_groups(USERS))
    sent = trusting_configurations(archive)
    expect_modify(stubber, [("ig-MASTER1", sent), ("ig-CORE1", sent), ("ig-TASK1", sent)])
    answer_groups(stubber, applied(sent))
    step = {"Steps": [ANY]}
    stubber.add_response("add_job_flow_steps", {"StepIds": ["s-1TRUST"]}, {"JobFlowId": CLUSTER_ID, **step})
    answer_cluster(stubber)
    failure = {"FailureDetails": {"Reason": "Unknown error", "Message": "Command exited with status 1"}}
    status = {"State": outcome, **(failure if outcome == "FAILED" else {})}
    stubber.add_response(
        "list_steps", {"Steps": [{"Id": "s-1TRUST", "Name": "x", "Status": status}]}, {"ClusterId": CLUSTER_ID}
    )

    result = CliRunner().invoke(
        main, ["attach", "--cdk-json", str(cdk_json), "--cluster-id", CLUSTER_ID], catch_exceptions=False
    )

    key = archive.removeprefix(f"s3://{BUCKET}/").partition("#")[0]
    assert launch_aws.s3.head_object(Bucket=BUCKET, Key=key)["ContentLength"] > 0  # the truststore is staged
    assert f"s-1TRUST\tstep\t{TRUST_STEP_NAME}\t{outcome}" in result.stdout
    assert "in client mode through the primary node's Java truststores" in result.stderr
    if outcome == "COMPLETED":
        assert result.exit_code == 0, result.output
        assert result.stdout.splitlines()[-1] == f"listener attached on cluster {CLUSTER_ID}"
    else:
        assert result.exit_code == 1
        (line,) = [entry for entry in result.stderr.splitlines() if entry.startswith("error: ")]
        assert line.startswith(f"error: step {TRUST_STEP_NAME} (s-1TRUST) FAILED: Command exited with status 1")
        assert "client-mode drivers on the primary node do not" in line
        assert "/mnt/var/log/hadoop/steps/s-1TRUST/" in line  # the cluster archives no logs to S3


def test_a_dry_run_with_a_trusted_ca_shows_the_step_and_stages_nothing(stubber, tmp_path, launch_aws) -> None:
    cdk_json, archive = trusting_cdk_json(tmp_path, launch_aws.s3)
    answer_cluster(stubber)
    answer_groups(stubber, three_groups(USERS))

    result = CliRunner().invoke(main, ["attach", "--cdk-json", str(cdk_json), "--cluster-id", CLUSTER_ID, "--dry-run"])

    assert result.exit_code == 0, result.output
    modify, step = json.loads(result.stdout)
    assert modify["operation"] == "ModifyInstanceGroups" and step["operation"] == "AddJobFlowSteps"
    (added,) = step["request"]["Steps"]
    assert added["Name"] == TRUST_STEP_NAME and "--trusted-ca-only" in added["HadoopJarStep"]["Args"]
    listed = launch_aws.s3.list_objects_v2(Bucket=BUCKET, Prefix="truststores/")
    assert listed["KeyCount"] == 0
