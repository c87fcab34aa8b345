"""emr_lineage.launch.attach: what attach merges into a running cluster's configurations, what it refuses,
and that detach takes out exactly what attach added. The cluster's checks run on moto's EMR; its instance
groups and fleets are Stubber'ed answers (tests/emr_lineage/reconfigure_support.py)."""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path

import boto3
import pytest

from emr_lineage.aws import reconfigure
from emr_lineage.aws.clients import AwsError
from emr_lineage.launch import attach
from emr_lineage.launch.listener_target import ListenerTarget
from emr_lineage.settings.loader import load_settings
from emr_lineage.spark.conf import ATTACHED_PROPERTY, LISTENER_CLASS, MASK
from emr_lineage.spark.truststore import TrustStore
from tests.emr_lineage.launch_support import REGION
from tests.emr_lineage.reconfigure_support import (
    CLUSTER_ID,
    SECRET_ARN,
    USER_SECRET_ARN,
    answer_cluster,
    answer_fleets,
    answer_groups,
    defaults,
    fleet,
    group,
    three_groups,
)
from tests.emr_lineage.serverless_support import serverless_cdk_json
from tests.helpers import fake_aws_credentials
from tests.stacks.variants import CERTIFICATE_ARN

JAR = "s3://emr-lineage-dev-artifacts-123456789012/listener/openlineage-spark_2.12-1.53.0.jar"
URL = "http://internal-lineage.example:80"
TARGET = ListenerTarget(bucket="b", jar_uri=JAR, lineage_url=URL, glue_catalog_id=None, api_key_secret=SECRET_ARN)
KEY = "spark.openlineage.transport.auth.apiKey"
USERS = [
    defaults({"spark.executor.memory": "4g", "spark.jars": "s3://mine/udf.jar"}),
    {"Classification": "yarn-site", "Properties": {"yarn.nodemanager.vmem-check-enabled": "false"}},
]


@pytest.fixture
def settings(tmp_path: Path):
    return load_settings("dev", serverless_cdk_json(tmp_path, enabled=False, gateway=True))


def read(client, stubber, groups, **cluster):
    answer_cluster(stubber, **cluster)
    answer_groups(stubber, groups)
    return attach.read_cluster(client, CLUSTER_ID)


def spark_defaults(configurations) -> dict[str, str]:
    (found,) = [c for c in configurations if c["Classification"] == "spark-defaults"]
    return found["Properties"]


def test_attach_merges_the_listener_into_each_groups_own_configuration(emr_stub, settings) -> None:
    cluster, sets = read(*emr_stub, three_groups(USERS))
    plan = attach.plan_attach(cluster, sets, settings, TARGET, append_listener=False)
    assert [c.instance_set.set_id for c in plan.changes] == ["ig-MASTER1", "ig-CORE1", "ig-TASK1"]
    configurations = plan.changes[0].configurations
    assert configurations[1] == USERS[1]  # another classification, untouched
    props = spark_defaults(configurations)
    assert props["spark.executor.memory"] == "4g"
    assert props["spark.jars"] == f"s3://mine/udf.jar,{JAR}"
    assert props["spark.extraListeners"] == LISTENER_CLASS
    assert props["spark.openlineage.transport.url"] == URL and props["spark.openlineage.transport.type"] == "http"
    assert props["spark.openlineage.namespace"] == settings.openlineage.namespace
    assert props["spark.openlineage.transport.auth.type"] == "api_key"
    assert props[f"EMR.secret@{KEY}"] == SECRET_ARN and KEY not in props  # EMR reads the key on the nodes
    marker = json.loads(props[ATTACHED_PROPERTY])
    assert marker["appended"] == {"spark.jars": JAR, "spark.extraListeners": LISTENER_CLASS}
    assert marker["created"] == ["spark.extraListeners"] and marker["env"] == "dev"
    assert marker["added"][KEY] == SECRET_ARN and "spark.executor.memory" not in marker["added"]
    assert plan.calls[0][0] == "ModifyInstanceGroups" and len(plan.calls) == 1
    assert plan.before == {"ig-MASTER1": 1, "ig-CORE1": 1, "ig-TASK1": 1}


def test_without_the_gateway_no_key_is_configured(emr_stub, tmp_path) -> None:
    settings = load_settings("dev", serverless_cdk_json(tmp_path, enabled=False, gateway=False))
    cluster, sets = read(*emr_stub, [group("ig-1", "MASTER")])
    target = ListenerTarget(bucket="b", jar_uri=JAR, lineage_url=URL, glue_catalog_id=None)
    props = spark_defaults(
        attach.plan_attach(cluster, sets, settings, target, append_listener=False).changes[0].configurations
    )
    assert not [k for k in props if "auth" in k]


def test_a_list_inherited_from_the_cluster_is_restated_with_ours(emr_stub, settings) -> None:
    cluster_conf = [defaults({"spark.jars": "s3://cluster/a.jar", "spark.extraListeners": "com.example.Audit"})]
    cluster, sets = read(*emr_stub, [group("ig-1", "MASTER")], configurations=cluster_conf)
    with pytest.raises(
        attach.AttachError,
        match=r"instance group ig-1 \(MASTER\) has spark.extraListeners=com.example.Audit.*--append-listener",
    ):
        attach.plan_attach(cluster, sets, settings, TARGET, append_listener=False)
    plan = attach.plan_attach(cluster, sets, settings, TARGET, append_listener=True)
    props = spark_defaults(plan.changes[0].configurations)
    assert props["spark.jars"] == f"s3://cluster/a.jar,{JAR}"
    assert props["spark.extraListeners"] == f"com.example.Audit,{LISTENER_CLASS}"
    assert json.loads(props[ATTACHED_PROPERTY])["created"] == ["spark.jars", "spark.extraListeners"]


@pytest.mark.parametrize(
    "theirs, refused",
    [
        ({"spark.openlineage.transport.url": "http://elsewhere:5000"}, "already sets spark.openlineage.transport.url"),
        ({KEY: USER_SECRET_ARN}, f"already sets {KEY}: attach would replace them"),
        ({"spark.extraListeners": LISTENER_CLASS}, f"already loads {LISTENER_CLASS}"),
    ],
)
def test_a_value_of_the_clusters_is_never_replaced(emr_stub, settings, theirs, refused) -> None:
    cluster, sets = read(*emr_stub, [group("ig-1", "MASTER", configurations=[defaults(theirs)])])
    with pytest.raises(attach.AttachError, match=refused) as caught:
        attach.plan_attach(cluster, sets, settings, TARGET, append_listener=True)
    assert USER_SECRET_ARN not in str(caught.value) and "elsewhere" not in str(caught.value)


def test_the_same_value_already_there_is_neither_added_nor_taken_away(emr_stub, settings) -> None:
    namespace = {"spark.openlineage.namespace": settings.openlineage.namespace}
    cluster, sets = read(*emr_stub, [group("ig-1", "MASTER", configurations=[defaults(namespace)])])
    props = spark_defaults(
        attach.plan_attach(cluster, sets, settings, TARGET, append_listener=False).changes[0].configurations
    )
    assert "spark.openlineage.namespace" not in json.loads(props[ATTACHED_PROPERTY])["added"]
    detached, _ = attach.detached(reconfigure.as_read(props), {}, "ig-1")
    assert detached == namespace


def _attached_groups(plan) -> list[dict]:
    """The groups as EMR lists them once the plan is applied: a secret's key unmarked."""
    return [
        group(c.instance_set.set_id, c.instance_set.role, version=2, configurations=[
            {**conf, "Properties": reconfigure.as_read(conf.get("Properties", {}))} for conf in c.configurations
        ])
        for c in plan.changes
    ]  # fmt: skip


def test_detach_gives_back_exactly_what_was_there(emr_stub, settings) -> None:
    client, stubber = emr_stub
    users = [*USERS, defaults({"spark.hadoop.javax.jdo.option.ConnectionPassword": USER_SECRET_ARN})]
    cluster, sets = read(client, stubber, three_groups([USERS[0], USERS[1]]))
    plan = attach.plan_attach(cluster, sets, settings, TARGET, append_listener=False)
    cluster, sets = read(client, stubber, _attached_groups(plan))
    undone = attach.plan_detach(cluster, sets)
    assert [c.configurations for c in undone.changes] == [list(USERS)] * 3
    assert undone.before == {"ig-MASTER1": 2, "ig-CORE1": 2, "ig-TASK1": 2}
    assert undone.changes[0].summary.endswith("; takes what it appended out of spark.extraListeners, spark.jars")
    # a secret of the cluster's, shown by EMR as its ARN, is sent back as a reference
    cluster, sets = read(client, stubber, [group("ig-1", "MASTER", configurations=users)])
    plan = attach.plan_attach(cluster, sets, settings, TARGET, append_listener=False)
    assert plan.references == ["EMR.secret@spark.hadoop.javax.jdo.option.ConnectionPassword"]


def test_detach_leaves_what_the_user_changed_since(emr_stub, settings) -> None:
    client, stubber = emr_stub
    cluster, sets = read(client, stubber, [group("ig-1", "MASTER", configurations=[USERS[0]])])
    plan = attach.plan_attach(cluster, sets, settings, TARGET, append_listener=False)
    (changed,) = _attached_groups(plan)
    props = changed["Configurations"][0]["Properties"]
    props["spark.openlineage.namespace"] = "theirs-now"
    props["spark.jars"] += ",s3://mine/later.jar"
    cluster, sets = read(client, stubber, [changed])
    (change,) = attach.plan_detach(cluster, sets).changes
    after = spark_defaults(change.configurations)
    assert after["spark.openlineage.namespace"] == "theirs-now"
    assert after["spark.jars"] == "s3://mine/udf.jar,s3://mine/later.jar"
    assert "spark.extraListeners" not in after and ATTACHED_PROPERTY not in after
    assert not [k for k in after if k.startswith("spark.openlineage.") and k != "spark.openlineage.namespace"]
    assert change.notes == ("instance group ig-1 (MASTER): kept spark.openlineage.namespace, changed since attach",)


def test_attach_again_replaces_its_own_and_changes_nothing_when_it_is_the_same(emr_stub, settings) -> None:
    client, stubber = emr_stub
    cluster, sets = read(client, stubber, [group("ig-1", "MASTER", configurations=[USERS[0]])])
    plan = attach.plan_attach(cluster, sets, settings, TARGET, append_listener=False)
    cluster, sets = read(client, stubber, _attached_groups(plan))
    again = attach.plan_attach(cluster, sets, settings, TARGET, append_listener=False)
    assert again.changes == () and again.calls == ()
    newer = ListenerTarget(bucket="b", jar_uri=JAR.replace("1.53.0", "1.54.0"), lineage_url=URL, glue_catalog_id=None,
                           api_key_secret=SECRET_ARN)  # fmt: skip
    (change,) = attach.plan_attach(cluster, sets, settings, newer, append_listener=False).changes
    assert spark_defaults(change.configurations)["spark.jars"] == f"s3://mine/udf.jar,{newer.jar_uri}"


def test_detach_of_a_cluster_never_attached_is_refused(emr_stub) -> None:
    cluster, sets = read(*emr_stub, three_groups(USERS))
    with pytest.raises(attach.AttachError, match=f"cluster {CLUSTER_ID} has nothing attached by emr-lineage"):
        attach.plan_detach(cluster, sets)


def test_an_unreadable_marker_is_refused(emr_stub) -> None:
    cluster, sets = read(*emr_stub, [group("ig-1", "MASTER", configurations=[defaults({ATTACHED_PROPERTY: "{"})])])
    with pytest.raises(attach.AttachError, match="ig-1 .*is not what emr-lineage attach writes"):
        attach.plan_detach(cluster, sets)


def test_fleets_get_one_request_per_fleet(emr_stub, settings) -> None:
    client, stubber = emr_stub
    answer_cluster(stubber, collection=reconfigure.FLEETS)
    answer_fleets(stubber, [fleet("if-1", "MASTER"), fleet("if-2", "CORE")])
    cluster, sets = attach.read_cluster(client, CLUSTER_ID)
    plan = attach.plan_attach(cluster, sets, settings, TARGET, append_listener=False)
    assert [(op, params["InstanceFleet"]["InstanceFleetId"]) for op, params in plan.calls] == [
        ("ModifyInstanceFleet", "if-1"), ("ModifyInstanceFleet", "if-2")
    ]  # fmt: skip
    assert len(plan.changes) == 4


@pytest.mark.parametrize(
    "state, refused",
    [
        ("RECONFIGURING", "another reconfiguration is in progress on instance group ig-CORE1 \\(CORE\\)"),
        ("RESIZING", "instance group ig-CORE1 \\(CORE\\) is being resized"),
        ("SUSPENDED", "instance group ig-CORE1 \\(CORE\\) is SUSPENDED: it must be RUNNING"),
    ],
)
def test_a_group_that_cannot_take_a_reconfiguration_is_refused(emr_stub, state, refused) -> None:
    client, stubber = emr_stub
    groups = [
        group("ig-MASTER1", "MASTER"),
        group("ig-CORE1", "CORE", state=state),
        group("ig-OLD", "TASK", state="ENDED"),
    ]
    with pytest.raises(
        attach.AttachError, match=refused + r".*aws emr list-instance-groups --cluster-id " + CLUSTER_ID
    ):
        read(client, stubber, groups)


def test_an_ended_group_is_left_alone(emr_stub) -> None:
    _, sets = read(*emr_stub, [group("ig-1", "MASTER"), group("ig-OLD", "TASK", state="ENDED")])
    assert [s.set_id for s in sets] == ["ig-1"]


@pytest.fixture
def moto_emr(monkeypatch):
    from moto import mock_aws

    fake_aws_credentials(monkeypatch, REGION)
    with mock_aws():
        yield boto3.client("emr", region_name=REGION)


def _moto_cluster(client, release: str = "emr-7.13.0", applications=("Spark",)) -> str:
    return client.run_job_flow(
        Name="analytics",
        ReleaseLabel=release,
        Applications=[{"Name": name} for name in applications],
        Instances={"MasterInstanceType": "m5.xlarge", "InstanceCount": 1, "KeepJobFlowAliveWhenNoSteps": True},
        ServiceRole="analytics-emr-service",
        JobFlowRole="analytics-emr-instance",
    )["JobFlowId"]


def test_a_cluster_attach_can_reconfigure_passes_the_checks(moto_emr) -> None:
    cluster, sets = attach.read_cluster(moto_emr, _moto_cluster(moto_emr))
    assert cluster.state == "WAITING" and [s.role for s in sets] == ["MASTER"]


def test_a_terminated_cluster_is_refused(moto_emr) -> None:
    cid = _moto_cluster(moto_emr)
    moto_emr.terminate_job_flows(JobFlowIds=[cid])
    with pytest.raises(attach.AttachError, match=f"cluster {cid} is TERMINATED: only a running cluster"):
        attach.read_cluster(moto_emr, cid)


def test_a_release_without_the_listeners_spark_is_refused(moto_emr) -> None:
    cid = _moto_cluster(moto_emr, release="emr-6.15.0")
    with pytest.raises(
        attach.AttachError, match=r"runs emr-6.15.0; the pinned listener is built for Spark 3.5 .* emr-7.8.0"
    ):
        attach.read_cluster(moto_emr, cid)


def test_a_cluster_without_spark_is_refused(moto_emr) -> None:
    cid = _moto_cluster(moto_emr, applications=("Hadoop", "Hive"))
    with pytest.raises(attach.AttachError, match=f"cluster {cid} has no Spark application \\(it runs Hadoop, Hive\\)"):
        attach.read_cluster(moto_emr, cid)


def test_an_unknown_cluster_is_refused(moto_emr) -> None:
    with pytest.raises(AwsError, match="cluster j-NOPE not found"):
        attach.read_cluster(moto_emr, "j-NOPE")


@pytest.mark.parametrize("state", ["STARTING", "BOOTSTRAPPING"])
def test_a_starting_cluster_is_refused_until_it_runs(emr_stub, state) -> None:
    client, stubber = emr_stub
    answer_cluster(stubber, state=state)
    with pytest.raises(attach.AttachError, match=f"is {state}: wait until it is WAITING or RUNNING"):
        attach.read_cluster(client, CLUSTER_ID)


def test_what_may_be_shown_masks_credentials_but_not_secret_references(emr_stub, settings) -> None:
    password = {"spark.hadoop.fs.s3a.secret.key": "plain-secret-value"}
    cluster, sets = read(*emr_stub, [group("ig-1", "MASTER", configurations=[defaults(password)])])
    plan = attach.plan_attach(cluster, sets, settings, TARGET, append_listener=False)
    (shown,) = attach.shown(plan.calls)
    props = shown["request"]["InstanceGroups"][0]["Configurations"][0]["Properties"]
    assert props["spark.hadoop.fs.s3a.secret.key"] == MASK and props[f"EMR.secret@{KEY}"] == SECRET_ARN
    assert "plain-secret-value" not in json.dumps(shown)


def test_an_aws_refusal_never_quotes_a_credential(emr_stub, settings) -> None:
    client, stubber = emr_stub
    password = {"spark.hadoop.fs.s3a.secret.key": "plain-secret-value"}
    cluster, sets = read(client, stubber, [group("ig-1", "MASTER", configurations=[defaults(password)])])
    plan = attach.plan_attach(cluster, sets, settings, TARGET, append_listener=False)
    stubber.add_client_error("modify_instance_groups", "ValidationException", "bad value plain-secret-value", 400)
    with pytest.raises(AwsError) as caught:
        attach.submit(client, plan)
    assert "plain-secret-value" not in str(caught.value) and f"bad value {MASK}" in str(caught.value)


STORE = TrustStore(
    path="emr-lineage-truststore/truststore.p12", archive="s3://b/truststores/0a1b.zip#emr-lineage-truststore"
)
PRIVATE_CA = "arn:aws:acm-pca:eu-west-1:123456789012:certificate-authority/0f1e2d3c-4b5a-6978-8a9b-0c1d2e3f4a5b"
TRUST_ARGUMENTS = ("--trusted-ca-only", "--trusted-ca-arn", PRIVATE_CA)


@pytest.fixture
def trusting(tmp_path: Path):
    """dev with HTTPS and an AWS Private CA as openlineage.trusted_ca."""
    path = serverless_cdk_json(tmp_path, enabled=False, gateway=True)
    document = json.loads(path.read_text())
    env = document["context"]["emr-lineage"]["environments"]["dev"]
    env["marquez"].update(certificate_arn=CERTIFICATE_ARN, domain_name="lineage.dev.example.com")
    env["openlineage"]["trusted_ca"] = {"type": "aws_private_ca", "arn": PRIVATE_CA}
    path.write_text(json.dumps(document))
    return load_settings("dev", path)


def test_with_a_trusted_ca_cluster_mode_drivers_get_the_truststore_and_a_step_trusts_it_on_the_primary(
    emr_stub, trusting
) -> None:
    users = [defaults({"spark.archives": "s3://mine/env.tar.gz#env", "spark.driver.extraJavaOptions": "-Xss4m"})]
    cluster, sets = read(*emr_stub, three_groups(users))
    target = dataclasses.replace(TARGET, truststore=STORE, trust_arguments=TRUST_ARGUMENTS)

    plan = attach.plan_attach(cluster, sets, trusting, target, append_listener=False)

    props = spark_defaults(plan.changes[0].configurations)
    assert props["spark.archives"] == f"s3://mine/env.tar.gz#env,{STORE.archive}"
    assert props["spark.yarn.appMasterEnv.JAVA_TOOL_OPTIONS"] == (
        "-Djavax.net.ssl.trustStore=emr-lineage-truststore/truststore.p12 -Djavax.net.ssl.trustStorePassword=changeit "
        "-Djavax.net.ssl.trustStoreType=PKCS12"
    )
    assert props["spark.driver.extraJavaOptions"] == "-Xss4m"  # the cluster's own options are not touched
    assert plan.step == {
        "Name": attach.TRUST_STEP_NAME,
        "ActionOnFailure": "CONTINUE",
        "HadoopJarStep": {
            "Jar": "command-runner.jar",
            "Args": [
                "bash",
                "-c",
                'aws s3 cp --only-show-errors "$0" install-openlineage.sh && exec bash install-openlineage.sh "$@"',
                "s3://b/bootstrap/install-openlineage.sh",
                "--trusted-ca-only",
                "--trusted-ca-arn",
                PRIVATE_CA,
            ],
        },
    }
    assert plan.shown_calls[-1] == ("AddJobFlowSteps", {"JobFlowId": CLUSTER_ID, "Steps": [plan.step]})


def test_detach_takes_the_truststore_out_and_keeps_the_clusters_archives(emr_stub, trusting) -> None:
    client, stubber = emr_stub
    users = [defaults({"spark.archives": "s3://mine/env.tar.gz#env"})]
    cluster, sets = read(client, stubber, [group("ig-1", "MASTER", configurations=users)])
    plan = attach.plan_attach(
        cluster, sets, trusting, dataclasses.replace(TARGET, truststore=STORE), append_listener=False
    )
    cluster, sets = read(client, stubber, _attached_groups(plan))

    (change,) = attach.plan_detach(cluster, sets).changes

    assert change.configurations == users
    assert attach.plan_detach(cluster, sets).step is None


def test_a_cluster_whose_application_masters_have_java_tool_options_is_refused(emr_stub, trusting) -> None:
    users = [defaults({"spark.yarn.appMasterEnv.JAVA_TOOL_OPTIONS": "-Dfoo=bar"})]
    cluster, sets = read(*emr_stub, [group("ig-1", "MASTER", configurations=users)])
    with pytest.raises(attach.AttachError, match=r"already sets spark\.yarn\.appMasterEnv\.JAVA_TOOL_OPTIONS"):
        attach.plan_attach(
            cluster, sets, trusting, dataclasses.replace(TARGET, truststore=STORE), append_listener=False
        )


def test_without_a_trusted_ca_attach_adds_no_step(emr_stub, settings) -> None:
    cluster, sets = read(*emr_stub, three_groups(USERS))
    plan = attach.plan_attach(cluster, sets, settings, TARGET, append_listener=False)
    assert plan.step is None and plan.shown_calls == plan.calls
