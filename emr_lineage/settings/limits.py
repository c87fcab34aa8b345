"""What AWS accepts, as emr-lineage's settings check it: EMR releases and the Spark they run,
the VPC subnet layout, Fargate task sizes, CloudWatch Logs retention periods, reserved tag keys
and the private IPv4 ranges. Each table cites its public source.
"""

from __future__ import annotations

import ipaddress
from dataclasses import dataclass

# CloudWatch Logs only accepts these retention periods.
LOG_RETENTION_DAYS = (
    1, 3, 5, 7, 14, 30, 60, 90, 120, 150, 180, 365,
    400, 545, 731, 1096, 1827, 2192, 2557, 2922, 3288, 3653,
)  # fmt: skip


@dataclass(frozen=True)
class EmrRelease:
    """What an EMR release runs that emr-lineage must match: Spark (upstream version, without EMR's
    ``-amzn-N`` suffix) and the Scala binary version Spark is built for."""

    spark: str
    scala: str


# The EMR releases emr-lineage supports -> the Spark they run. Source: Amazon EMR release guide,
# "Spark release history" (https://docs.aws.amazon.com/emr/latest/ReleaseGuide/Spark-release-history.html),
# "Application versions in Amazon EMR 7.x releases" for Scala
# (https://docs.aws.amazon.com/emr/latest/ReleaseGuide/emr-release-app-versions-7.x.html) and each
# release's page, e.g. https://docs.aws.amazon.com/emr/latest/ReleaseGuide/emr-7130-release.html.
# Only Spark 3.5 on Scala 2.12: what the pinned listener (openlineage-spark_2.12) and the local
# pyspark pin (requirements.in) are built for; tests check that pyspark equals the configured
# release's Spark. To support another release, add its row (with its Spark from the page above).
EMR_RELEASES: dict[str, EmrRelease] = {
    "emr-7.8.0": EmrRelease(spark="3.5.4", scala="2.12"),
    "emr-7.9.0": EmrRelease(spark="3.5.5", scala="2.12"),
    "emr-7.10.0": EmrRelease(spark="3.5.5", scala="2.12"),
    "emr-7.11.0": EmrRelease(spark="3.5.6", scala="2.12"),
    "emr-7.12.0": EmrRelease(spark="3.5.6", scala="2.12"),
    "emr-7.13.0": EmrRelease(spark="3.5.6", scala="2.12"),
}

# The VPC's subnet tiers (name, CIDR mask), in the order the network stack declares them. CDK's
# ``ec2.IpAddresses.cidr`` gives each tier one subnet per AZ, tier after tier, each subnet at the
# next address aligned to its own size.
SUBNET_TIERS: tuple[tuple[str, int], ...] = (("public", 24), ("private", 20), ("isolated", 24))
MIN_AZS = 2
# The largest IPv4 VPC AWS allows (https://docs.aws.amazon.com/vpc/latest/userguide/vpc-cidr-blocks.html).
LARGEST_VPC_PREFIX = 16

# Private IPv4 ranges (RFC 1918, https://www.rfc-editor.org/rfc/rfc1918): the lineage UI sits behind
# an internal load balancer, reached from the VPC, peered networks, VPN or Direct Connect.
PRIVATE_IPV4_RANGES = tuple(ipaddress.ip_network(n) for n in ("10.0.0.0/8", "172.16.0.0/12", "192.168.0.0/16"))
WIDEST_WEB_ALLOWED_PREFIX = 8

# AWS reserves tag keys starting with "aws:" in any case, e.g. for EMR clusters
# (https://docs.aws.amazon.com/emr/latest/ManagementGuide/emr-plan-tags-restrictions.html).
RESERVED_TAG_PREFIX = "aws:"


def subnet_layout_size(azs: int) -> int:
    """How many addresses, from the VPC's first one, the subnet tiers span over ``azs`` AZs."""
    end = 0
    for _, mask in SUBNET_TIERS:
        size = 2 ** (32 - mask)
        for _ in range(azs):
            end = -(-end // size) * size + size  # the next aligned start, plus this subnet
    return end


def longest_vpc_prefix(azs: int) -> int:
    """The smallest VPC (longest prefix) that holds the subnet tiers over ``azs`` AZs."""
    return 32 - (subnet_layout_size(azs) - 1).bit_length()


# Fargate's valid (cpu, memory) pairs for the sizes a Marquez task sensibly uses.
FARGATE_MEMORY_MIB = {
    512: range(1024, 4097, 1024),
    1024: range(2048, 8193, 1024),
    2048: range(4096, 16385, 1024),
    4096: range(8192, 30721, 1024),
}

# An Application Load Balancer hands a Lambda target at most "1 MB" of request body
# (https://docs.aws.amazon.com/elasticloadbalancing/latest/application/lambda-functions.html, "Limits"),
# read as 10^6 bytes, the smaller of its two readings.
ALB_LAMBDA_MAX_BODY_BYTES = 1_000_000
# SQS keeps a message at most 14 days (MessageRetentionPeriod, 60 s .. 1,209,600 s:
# https://docs.aws.amazon.com/AWSSimpleQueueService/latest/APIReference/API_SetQueueAttributes.html).
SQS_MAX_RETENTION_DAYS = 14
# SQS's largest message, body and message attributes together (MaximumMessageSize 1,024 ..
# 1,048,576 bytes since August 2025:
# https://docs.aws.amazon.com/AWSSimpleQueueService/latest/APIReference/API_SetQueueAttributes.html,
# https://docs.aws.amazon.com/AWSSimpleQueueService/latest/SQSDeveloperGuide/quotas-messages.html).
SQS_MAX_MESSAGE_BYTES = 1_048_576
# The largest event a gateway takes: within the ALB's Lambda body and one SQS message. Its default
# is three quarters of it: a gzip body reaches the Lambda base64-encoded, a third larger.
LARGEST_EVENT_BYTES = min(ALB_LAMBDA_MAX_BODY_BYTES, SQS_MAX_MESSAGE_BYTES)
DEFAULT_MAX_EVENT_BYTES = LARGEST_EVENT_BYTES * 3 // 4
