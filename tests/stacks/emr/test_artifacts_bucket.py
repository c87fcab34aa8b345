"""ArtifactsBucket: bootstrap/ and jobs/ uploaded, the bucket name published for the tools."""

from __future__ import annotations

from emr_lineage.aws import parameters
from tests.stacks.templates import by_type as _by_type


def test_stack_uploads_bootstrap_and_jobs(synth):
    deployments = _by_type(synth.template_json("emr"), "Custom::CDKBucketDeployment")
    assert sorted(d["Properties"]["DestinationBucketKeyPrefix"] for d in deployments.values()) == [
        "bootstrap/",
        "jobs/",
    ]


def test_artifacts_bucket_name_published(synth):
    synth.template("emr").has_resource_properties(
        "AWS::SSM::Parameter", {"Name": parameters.artifacts_bucket(synth.env)}
    )
