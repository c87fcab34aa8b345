"""Tags with a meaning to AWS services: the stacks put them on, ``doctor`` checks them."""

from __future__ import annotations

# AmazonEMRServicePolicy_v2 only acts on subnets, security groups and launch templates that carry
# this tag (https://docs.aws.amazon.com/emr/latest/ManagementGuide/emr-iam-role.html and
# https://docs.aws.amazon.com/emr/latest/ManagementGuide/emr-managed-iam-policies.html).
EMR_MANAGED_TAG = ("for-use-with-amazon-emr-managed-policies", "true")
