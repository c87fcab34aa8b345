"""LongRunningCluster: the optional always-on EMR cluster, built from the same request as the launch spec."""

from __future__ import annotations

from aws_cdk import aws_emr as emr
from constructs import Construct

from emr_lineage.settings.model import EnvironmentSettings
from stacks.emr.cluster_spec import ClusterResources, cfn_cluster_properties, job_flow_request
from stacks.shared.logical_ids import keep_logical_ids
from stacks.shared.nag import acknowledge


class LongRunningCluster(Construct):
    """The long-running cluster of ``emr.long_running_cluster``; exposes ``cluster``."""

    def __init__(
        self, scope: Construct, construct_id: str, *, settings: EnvironmentSettings, resources: ClusterResources
    ) -> None:
        super().__init__(scope, construct_id)
        keep_logical_ids(self)  # first deployed directly in the stack
        request = job_flow_request(settings, resources, long_running=True)
        self.cluster = emr.CfnCluster(self, "LongRunningCluster", **cfn_cluster_properties(request))
        # cdk-nag's EMR4/EMR5 read the encryption settings at the top level of the document
        # (https://github.com/cdklabs/cdk-nag/blob/main/src/rules/emr/EMRLocalDiskEncryption.ts,
        # EMREncryptionInTransit.ts); EMR nests them under EncryptionConfiguration
        # (https://docs.aws.amazon.com/emr/latest/ManagementGuide/emr-create-security-configuration.html).
        for rule, what in (("EMR4", "local disk encryption"), ("EMR5", "in-transit encryption")):
            acknowledge(
                self.cluster,
                f"AwsSolutions-{rule}",
                f"False positive: the security configuration enables {what} under "
                "EncryptionConfiguration, as the EMR management guide documents it; the rule reads a "
                "flat shape EMR does not use. tests/stacks/emr/test_security.py checks the real document.",
            )
