"""doctor's check of an existing VPC (``network.existing_vpc``): what the stacks cannot do on a network
they do not own."""

from __future__ import annotations

from emr_lineage.aws.tags import EMR_MANAGED_TAG
from emr_lineage.operations.checks import CheckResult, DoctorClients, Status, aws_call
from emr_lineage.settings.network import ExistingVpc

SUBNET_TAGS_CHECK, SUBNET_TAGS_TITLE = "emr-subnet-tags", "EMR managed-policy tag on the private subnets"


def emr_subnet_tags(clients: DoctorClients, existing: ExistingVpc) -> CheckResult:
    """The existing VPC's private subnets carry the tag EMR's managed policies act on (the stacks cannot
    tag subnets they do not own), and are in that VPC."""
    key, value = EMR_MANAGED_TAG
    wanted = existing.private_subnet_ids
    subnets, problem = aws_call(lambda: clients.ec2.describe_subnets(SubnetIds=wanted)["Subnets"])
    if problem:
        fix = "correct network.existing_vpc.private_subnet_ids in cdk.json"
        return CheckResult(SUBNET_TAGS_CHECK, SUBNET_TAGS_TITLE, Status.FAIL, f"EC2 DescribeSubnets: {problem}", fix)
    elsewhere = [f"{s['SubnetId']} is in {s['VpcId']}" for s in subnets if s["VpcId"] != existing.vpc_id]
    if elsewhere:
        detail = f"{'; '.join(elsewhere)}, not {existing.vpc_id}"
        fix = "correct network.existing_vpc.vpc_id or private_subnet_ids in cdk.json"
        return CheckResult(SUBNET_TAGS_CHECK, SUBNET_TAGS_TITLE, Status.FAIL, detail, fix)
    untagged = [s["SubnetId"] for s in subnets if {"Key": key, "Value": value} not in s.get("Tags", [])]
    if untagged:
        detail = f"{', '.join(untagged)} without the tag {key}={value}: EMR cannot launch clusters there"
        fix = f"aws ec2 create-tags --resources {' '.join(untagged)} --tags Key={key},Value={value}"
        return CheckResult(SUBNET_TAGS_CHECK, SUBNET_TAGS_TITLE, Status.FAIL, detail, fix)
    return CheckResult(SUBNET_TAGS_CHECK, SUBNET_TAGS_TITLE, Status.PASS, f"{', '.join(wanted)}: {key}={value}")
