"""What the attach/detach tests share: EMR's answers about a running cluster and its instance groups or
fleets, given to botocore's Stubber (moto 5.2.5 neither keeps an instance group's configurations nor
implements ModifyInstanceGroups with them, nor instance fleets), and a Stubber'ed EMR client.

Each answer is checked by the Stubber against botocore's model of the operation, and each expected request
too: the request shapes under test are the service model's.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from typing import Any

import boto3
import pytest
from botocore.stub import Stubber

from tests.emr_lineage.launch_support import REGION
from tests.versions import EMR_RELEASE

CLUSTER_ID = "j-2AL4XXXXXX5T9"
SERVICE_ROLE = "analytics-emr-service"
SECRET_ARN = "arn:aws:secretsmanager:eu-west-1:123456789012:secret:emr-lineage-dev-gateway-api-key-AbCdEf"
USER_SECRET_ARN = "arn:aws:secretsmanager:eu-west-1:123456789012:secret:analytics-metastore-pw-Gh1jK2"


def cluster(
    *,
    state: str = "WAITING",
    release: str = EMR_RELEASE,
    applications: Sequence[str] = ("Spark", "Hadoop"),
    configurations: Sequence[dict[str, Any]] = (),
    collection: str = "INSTANCE_GROUP",
) -> dict[str, Any]:
    """A DescribeCluster answer."""
    return {
        "Cluster": {
            "Id": CLUSTER_ID,
            "Name": "analytics",
            "Status": {"State": state},
            "ReleaseLabel": release,
            "Applications": [{"Name": name} for name in applications],
            "ServiceRole": SERVICE_ROLE,
            "InstanceCollectionType": collection,
            "Configurations": list(configurations),
        }
    }


def defaults(properties: dict[str, str], **more: Any) -> dict[str, Any]:
    """A spark-defaults configuration."""
    return {"Classification": "spark-defaults", "Properties": properties, **more}


def group(
    group_id: str,
    role: str,
    *,
    state: str = "RUNNING",
    configurations: Sequence[dict[str, Any]] = (),
    version: int = 1,
    applied: int | None = None,
    applied_configurations: Sequence[dict[str, Any]] | None = None,
    reason: str | None = None,
) -> dict[str, Any]:
    """An instance group as ListInstanceGroups shows it (applied: the version last applied, default ``version``)."""
    status: dict[str, Any] = {"State": state}
    if reason:
        status["StateChangeReason"] = {"Code": "VALIDATION_ERROR", "Message": reason}
    return {
        "Id": group_id,
        "Name": role.lower(),
        "InstanceGroupType": role,
        "InstanceType": "m7g.xlarge",
        "Status": status,
        "Configurations": list(configurations),
        "ConfigurationsVersion": version,
        "LastSuccessfullyAppliedConfigurations": list(
            configurations if applied_configurations is None else applied_configurations
        ),
        "LastSuccessfullyAppliedConfigurationsVersion": version if applied is None else applied,
    }


def three_groups(configurations: Sequence[dict[str, Any]] = (), **kwargs: Any) -> list[dict[str, Any]]:
    """Primary, core and task, with the same configurations."""
    return [
        group(gid, role, configurations=configurations, **kwargs)
        for gid, role in (("ig-MASTER1", "MASTER"), ("ig-CORE1", "CORE"), ("ig-TASK1", "TASK"))
    ]


def fleet(fleet_id: str, role: str, *, state: str = "RUNNING", configurations: Sequence[dict[str, Any]] = ()) -> dict:
    """An instance fleet of two instance types (the second with two EBS volumes), as ListInstanceFleets shows it."""
    volume = {"VolumeType": "gp3", "SizeInGB": 64}
    return {
        "Id": fleet_id,
        "Name": role.lower(),
        "InstanceFleetType": role,
        "Status": {"State": state},
        "InstanceTypeSpecifications": [
            {
                "InstanceType": "m7g.xlarge",
                "WeightedCapacity": 1,
                "BidPriceAsPercentageOfOnDemandPrice": 100.0,
                "Configurations": list(configurations),
            },
            {
                "InstanceType": "r7g.xlarge",
                "WeightedCapacity": 2,
                "BidPrice": "0.30",
                "Configurations": list(configurations),
                "EbsBlockDevices": [
                    {"VolumeSpecification": volume, "Device": "/dev/sdb"},
                    {"VolumeSpecification": volume, "Device": "/dev/sdc"},
                ],
                "EbsOptimized": True,
            },
        ],
    }


def answer_cluster(stubber: Stubber, **kwargs: Any) -> None:
    stubber.add_response("describe_cluster", cluster(**kwargs), {"ClusterId": CLUSTER_ID})


def answer_groups(stubber: Stubber, groups: list[dict[str, Any]]) -> None:
    stubber.add_response("list_instance_groups", {"InstanceGroups": groups}, {"ClusterId": CLUSTER_ID})


def answer_fleets(stubber: Stubber, fleets: list[dict[str, Any]]) -> None:
    stubber.add_response("list_instance_fleets", {"InstanceFleets": fleets}, {"ClusterId": CLUSTER_ID})


def stubbed_emr() -> tuple[Any, Stubber]:
    client = boto3.client("emr", region_name=REGION, aws_access_key_id="x", aws_secret_access_key="x")
    return client, Stubber(client)


@pytest.fixture
def emr_stub() -> Iterator[tuple[Any, Stubber]]:
    """An EMR client whose every call is a stubbed answer, in order; none may be left unanswered."""
    client, stubber = stubbed_emr()
    with stubber:
        yield client, stubber
        stubber.assert_no_pending_responses()
