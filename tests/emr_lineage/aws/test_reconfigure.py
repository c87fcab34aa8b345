"""A running cluster's configurations: read (moto's DescribeCluster; Stubber'ed instance groups and fleets),
the requests that replace them (checked against botocore's model), and the wait until EMR applied them."""

from __future__ import annotations

import boto3
import pytest
from botocore.validate import ParamValidator

from emr_lineage.aws import reconfigure
from emr_lineage.aws.clients import AwsError
from emr_lineage.aws.session import service_model
from tests.emr_lineage.launch_support import REGION
from tests.emr_lineage.reconfigure_support import (
    CLUSTER_ID,
    SECRET_ARN,
    USER_SECRET_ARN,
    answer_fleets,
    answer_groups,
    cluster,
    defaults,
    fleet,
    group,
)
from tests.helpers import fake_aws_credentials


def _valid(operation: str, parameters: dict) -> None:
    report = ParamValidator().validate(parameters, service_model("emr").operation_model(operation).input_shape)
    assert not report.has_errors(), report.generate_report()


def _cluster(**kwargs) -> reconfigure.Cluster:
    found = cluster(**kwargs)["Cluster"]
    return reconfigure.Cluster(
        CLUSTER_ID, "analytics", found["Status"]["State"], found["ReleaseLabel"], ("Spark",), "role",
        found["InstanceCollectionType"], tuple(found["Configurations"]),
    )  # fmt: skip


@pytest.fixture
def moto_emr(monkeypatch):
    from moto import mock_aws

    fake_aws_credentials(monkeypatch, REGION)
    with mock_aws():
        yield boto3.client("emr", region_name=REGION)


def test_describe_cluster_reads_what_attach_checks(moto_emr) -> None:
    cid = moto_emr.run_job_flow(
        Name="analytics",
        ReleaseLabel="emr-7.13.0",
        Applications=[{"Name": "Spark"}, {"Name": "Hive"}],
        Instances={"MasterInstanceType": "m5.xlarge", "InstanceCount": 1, "KeepJobFlowAliveWhenNoSteps": True},
        Configurations=[defaults({"spark.jars": "s3://mine/a.jar"})],
        ServiceRole="analytics-emr-service",
        JobFlowRole="analytics-emr-instance",
    )["JobFlowId"]
    found = reconfigure.describe_cluster(moto_emr, cid)
    assert (found.state, found.release_label, found.applications) == ("WAITING", "emr-7.13.0", ("Spark", "Hive"))
    assert found.service_role == "analytics-emr-service" and found.collection == reconfigure.GROUPS
    assert found.configurations == (
        {"Classification": "spark-defaults", "Properties": {"spark.jars": "s3://mine/a.jar"}},
    )


def test_an_unknown_cluster_is_named_with_the_fix(moto_emr) -> None:
    with pytest.raises(AwsError, match=r"cluster j-NOPE not found .*Cluster id 'j-NOPE' is not valid.*--cluster-id"):
        reconfigure.describe_cluster(moto_emr, "j-NOPE")


def test_a_group_whose_last_request_failed_runs_the_configurations_last_applied(emr_stub) -> None:
    client, stubber = emr_stub
    applied = [defaults({"spark.executor.memory": "4g"})]
    answer_groups(
        stubber,
        [
            group("ig-1", "MASTER", configurations=[defaults({"x": "failed"})], version=3, applied=2,
                  applied_configurations=applied),
            group("ig-2", "CORE", configurations=applied, version=2),
        ],
    )  # fmt: skip
    first, second = reconfigure.instance_sets(client, _cluster())
    assert first.configurations == tuple(applied) and (first.version, first.applied_version) == (3, 2)
    assert second.configurations == tuple(applied) and first.label == "instance group ig-1 (MASTER)"


def test_a_fleet_is_one_set_per_instance_type(emr_stub) -> None:
    client, stubber = emr_stub
    answer_fleets(stubber, [fleet("if-1", "MASTER"), fleet("if-2", "CORE")])
    sets = reconfigure.instance_sets(client, _cluster(collection=reconfigure.FLEETS))
    assert [s.key for s in sets] == ["if-1/m7g.xlarge", "if-1/r7g.xlarge", "if-2/m7g.xlarge", "if-2/r7g.xlarge"]
    assert sets[1].label == "instance fleet r7g.xlarge of if-1 (MASTER)"


def test_a_secret_read_back_as_its_arn_is_sent_as_a_reference_again() -> None:
    read = [
        defaults(
            {"spark.openlineage.transport.auth.apiKey": SECRET_ARN, "spark.x": "arn:aws:s3:::bucket"},
            Configurations=[{"Classification": "export", "Properties": {"PASSWORD": USER_SECRET_ARN}}],
        ),
        {"Classification": "spark-hive-site", "Properties": {"note": f"see {USER_SECRET_ARN}"}},
    ]
    sent = reconfigure.as_sent(read)
    assert sent[0]["Properties"] == {
        "EMR.secret@spark.openlineage.transport.auth.apiKey": SECRET_ARN,
        "spark.x": "arn:aws:s3:::bucket",
    }
    assert sent[0]["Configurations"][0]["Properties"] == {"EMR.secret@PASSWORD": USER_SECRET_ARN}
    assert sent[1] == read[1]  # an ARN inside a longer value is a literal
    assert reconfigure.secret_references(sent) == [
        "EMR.secret@spark.openlineage.transport.auth.apiKey",
        "EMR.secret@PASSWORD",
    ]
    assert reconfigure.as_read(sent[0]["Properties"]) == read[0]["Properties"]
    assert reconfigure.as_sent(sent) == sent  # marked once


def test_groups_are_reconfigured_in_one_request_of_the_models_shape(emr_stub) -> None:
    client, stubber = emr_stub
    answer_groups(stubber, [group("ig-1", "MASTER"), group("ig-2", "CORE"), group("ig-3", "TASK")])
    sets = reconfigure.instance_sets(client, _cluster())
    new = [defaults({"spark.jars": "s3://b/l.jar"})]
    calls = reconfigure.requests(_cluster(), {"ig-1": new, "ig-3": new}, sets)
    assert calls == [
        (
            "ModifyInstanceGroups",
            {
                "ClusterId": CLUSTER_ID,
                "InstanceGroups": [
                    {"InstanceGroupId": "ig-1", "ReconfigurationType": "OVERWRITE", "Configurations": new},
                    {"InstanceGroupId": "ig-3", "ReconfigurationType": "OVERWRITE", "Configurations": new},
                ],
            },
        )
    ]
    _valid(*calls[0])
    assert reconfigure.requests(_cluster(), {}, sets) == []


def test_a_fleet_restates_every_instance_type_with_its_launch_fields(emr_stub) -> None:
    client, stubber = emr_stub
    answer_fleets(stubber, [fleet("if-1", "CORE")])
    sets = reconfigure.instance_sets(client, _cluster(collection=reconfigure.FLEETS))
    new = [defaults({"spark.jars": "s3://b/l.jar"})]
    ((operation, parameters),) = reconfigure.requests(
        _cluster(collection=reconfigure.FLEETS), {"if-1/m7g.xlarge": new, "if-1/r7g.xlarge": new}, sets
    )
    _valid(operation, parameters)
    assert operation == "ModifyInstanceFleet" and parameters["ClusterId"] == CLUSTER_ID
    assert parameters["InstanceFleet"] == {
        "InstanceFleetId": "if-1",
        "InstanceTypeConfigs": [
            {"InstanceType": "m7g.xlarge", "WeightedCapacity": 1, "BidPriceAsPercentageOfOnDemandPrice": 100.0,
             "Configurations": new},
            {
                "InstanceType": "r7g.xlarge", "WeightedCapacity": 2, "BidPrice": "0.30",
                "EbsConfiguration": {
                    "EbsBlockDeviceConfigs": [
                        {"VolumeSpecification": {"VolumeType": "gp3", "SizeInGB": 64}, "VolumesPerInstance": 2}
                    ],
                    "EbsOptimized": True,
                },
                "Configurations": new,
            },
        ],
    }  # fmt: skip


def test_a_refused_request_names_what_was_already_sent(emr_stub) -> None:
    client, stubber = emr_stub
    first = {"ClusterId": CLUSTER_ID, "InstanceFleet": {"InstanceFleetId": "if-1", "InstanceTypeConfigs": []}}
    second = {"ClusterId": CLUSTER_ID, "InstanceFleet": {"InstanceFleetId": "if-2", "InstanceTypeConfigs": []}}
    stubber.add_response("modify_instance_fleet", {}, first)
    stubber.add_client_error(
        "modify_instance_fleet", "ValidationException", "bad classification", 400, expected_params=second
    )
    with pytest.raises(
        AwsError,
        match=r"EMR refused the reconfiguration \(ValidationException: bad classification\); already sent for if-1",
    ):
        reconfigure.submit(client, [("ModifyInstanceFleet", first), ("ModifyInstanceFleet", second)])


@pytest.fixture
def pauses(monkeypatch) -> list[float]:
    """The pauses between polls; the clock is the time they add up to."""
    seen: list[float] = []
    monkeypatch.setattr(reconfigure, "pause", seen.append)
    monkeypatch.setattr(reconfigure, "clock", lambda: sum(seen))
    return seen


def _wait(client, sent, before, **kwargs):
    return reconfigure.wait_for_reconfiguration(client, _cluster(), sent, before, poll_interval=15, **kwargs)


def test_groups_are_applied_when_their_last_applied_version_passes_the_one_before(emr_stub, pauses) -> None:
    client, stubber = emr_stub
    new = [defaults({"a": "b"})]
    answer_groups(stubber, [group("ig-1", "MASTER", version=3, applied=2), group("ig-2", "CORE", version=3, applied=2)])
    answer_groups(stubber, [group("ig-1", "MASTER", state="RECONFIGURING", version=3, applied=2),
                            group("ig-2", "CORE", version=3)])  # fmt: skip
    answer_groups(stubber, [group("ig-1", "MASTER", version=3, configurations=new), group("ig-2", "CORE", version=3)])
    snapshot, done = _wait(client, {"ig-1": new, "ig-2": new}, {"ig-1": 2, "ig-2": 2})
    assert done and [p.outcome for p in snapshot.sets] == ["applied", "applied"] and pauses == [15, 15]
    assert snapshot.elapsed == 30


def test_a_group_back_to_running_without_its_version_had_it_reverted(emr_stub, pauses) -> None:
    client, stubber = emr_stub
    answer_groups(stubber, [group("ig-1", "MASTER", state="RECONFIGURING", version=3, applied=2)])
    answer_groups(stubber, [group("ig-1", "MASTER", version=3, applied=2, reason="Instance i-1 failed: bad value")])
    snapshot, done = _wait(client, {"ig-1": []}, {"ig-1": 2})
    assert done and snapshot.failed[0].reason == "Instance i-1 failed: bad value"


def test_a_suspended_group_failed(emr_stub, pauses) -> None:
    client, stubber = emr_stub
    answer_groups(stubber, [group("ig-1", "MASTER", state="SUSPENDED", version=3, applied=2)])
    snapshot, done = _wait(client, {"ig-1": []}, {"ig-1": 2})
    assert done and snapshot.failed[0].reason == "SUSPENDED" and pauses == []


def test_a_group_not_applied_by_the_deadline_is_not_done(emr_stub, pauses) -> None:
    client, stubber = emr_stub
    for _ in range(3):
        answer_groups(stubber, [group("ig-1", "MASTER", state="RECONFIGURING", version=3, applied=2)])
    snapshot, done = _wait(client, {"ig-1": []}, {"ig-1": 2}, deadline_seconds=40)
    assert not done and snapshot.sets[0].outcome == "applying" and pauses == [15, 15]


def test_a_fleet_is_applied_when_it_runs_what_was_sent_after_reconfiguring(emr_stub, pauses) -> None:
    client, stubber = emr_stub
    old, new = [defaults({"a": "1"})], [defaults({"EMR.secret@k": SECRET_ARN})]
    fleets = reconfigure.FLEETS
    answer_fleets(stubber, [fleet("if-1", "CORE", configurations=new)])  # what was asked, not applied yet
    answer_fleets(stubber, [fleet("if-1", "CORE", state="RECONFIGURING", configurations=new)])
    answer_fleets(stubber, [fleet("if-1", "CORE", configurations=[defaults({"k": SECRET_ARN})])])
    sent = {"if-1/m7g.xlarge": new, "if-1/r7g.xlarge": new}
    snapshot, done = reconfigure.wait_for_reconfiguration(
        client, _cluster(collection=fleets), sent, {}, poll_interval=15
    )
    assert done and [p.outcome for p in snapshot.sets] == ["applied", "applied"]
    answer_fleets(stubber, [fleet("if-1", "CORE", state="RECONFIGURING")])
    answer_fleets(stubber, [fleet("if-1", "CORE", configurations=old)])
    snapshot, done = reconfigure.wait_for_reconfiguration(
        client, _cluster(collection=fleets), sent, {}, poll_interval=15
    )
    assert done and len(snapshot.failed) == 2
