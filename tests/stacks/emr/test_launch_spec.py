"""EmrStack: the launch spec of ephemeral clusters, and the long-running cluster built from the same request."""

from __future__ import annotations

import json

import pytest

from emr_lineage.aws import parameters
from emr_lineage.aws.tags import EMR_MANAGED_TAG
from emr_lineage.listener.artifact import bootstrap_arguments
from emr_lineage.settings.loader import load_settings
from emr_lineage.spark import catalogs
from emr_lineage.spark import conf as spark_conf
from tests.stacks.templates import by_type as _by_type
from tests.stacks.templates import export_name, lake_bucket_id, one
from tests.stacks.templates import logical_id as _id
from tests.stacks.variants import EXISTING_BUCKET, TRUSTED_CA_BUNDLE


@pytest.fixture(scope="module")
def launch_spec(synths, render) -> dict[str, dict]:
    """The launch-spec SSM parameter of each env, parsed back from the template."""
    specs = {}
    for env, synth in synths.items():
        (param,) = [
            p["Properties"]
            for p in _by_type(synth.template_json("emr"), "AWS::SSM::Parameter").values()
            if p["Properties"]["Name"] == parameters.emr_launch_spec(env)
        ]
        specs[env] = json.loads(render(param["Value"]))
    return specs


@pytest.mark.parametrize("env", ["dev", "prod"])
def test_launch_spec_field_by_field(env, launch_spec, synths, render):
    settings = load_settings(env)
    spec = launch_spec[env]
    tpl = synths[env].template_json("emr")
    bucket = "{Ref:" + _id(tpl, "ArtifactsBucket", "AWS::S3::Bucket") + "}"

    assert "Steps" not in spec
    assert spec["Name"] == f"emr-lineage-{env}-ephemeral"
    assert spec["ReleaseLabel"] == settings.emr.release_label
    assert spec["Applications"] == [{"Name": a} for a in settings.emr.applications]
    assert spec["LogUri"] == f"s3://{bucket}/emr-logs/"
    assert spec["ServiceRole"] == "{Ref:" + _id(tpl, "RolesServiceRole", "AWS::IAM::Role") + "}"
    assert spec["JobFlowRole"] == "{Ref:" + _id(tpl, "RolesInstanceProfile", "AWS::IAM::InstanceProfile") + "}"
    assert (
        spec["SecurityConfiguration"]
        == "{Ref:" + _id(tpl, "SecuritySecurityConfiguration", "AWS::EMR::SecurityConfiguration") + "}"
    )
    assert spec["VisibleToAllUsers"] is True
    assert spec["AutoTerminationPolicy"] == {"IdleTimeout": settings.emr.idle_timeout_seconds}

    instances = spec["Instances"]
    groups = {g["InstanceRole"]: g for g in instances["InstanceGroups"]}
    assert (groups["MASTER"]["InstanceType"], groups["MASTER"]["InstanceCount"]) == (
        settings.emr.primary_instance_type,
        1,
    )
    assert (groups["CORE"]["InstanceType"], groups["CORE"]["InstanceCount"]) == (
        settings.emr.core_instance_type,
        settings.emr.core_instance_count,
    )
    for group in groups.values():
        volume = group["EbsConfiguration"]["EbsBlockDeviceConfigs"][0]["VolumeSpecification"]
        assert volume == {"VolumeType": "gp3", "SizeInGB": settings.emr.ebs_volume_gib}
    assert instances["KeepJobFlowAliveWhenNoSteps"] is False
    assert instances["Ec2SubnetId"].startswith(f"{{Import:EmrLineage-{env}-Network:ExportsOutputRefVpcprivateSubnet")
    clients = f"{{Import:EmrLineage-{env}-LineageService:ExportsOutputFnGetAttLoadBalancerClientsSecurityGroup"
    assert len(instances["AdditionalMasterSecurityGroups"]) == 1
    assert instances["AdditionalMasterSecurityGroups"][0].startswith(clients)
    assert instances["AdditionalSlaveSecurityGroups"] == instances["AdditionalMasterSecurityGroups"]
    for key, prefix in (
        ("EmrManagedMasterSecurityGroup", "SecurityPrimary"),
        ("EmrManagedSlaveSecurityGroup", "SecurityCore"),
        ("ServiceAccessSecurityGroup", "SecurityServiceAccess"),
    ):
        assert instances[key] == "{GetAtt:" + _id(tpl, prefix, "AWS::EC2::SecurityGroup") + ".GroupId}"

    (action,) = spec["BootstrapActions"]
    assert action["ScriptBootstrapAction"]["Path"] == f"s3://{bucket}/bootstrap/install-openlineage.sh"
    # The gateway's API key secret, handed over by app.py: the bootstrap gives it to the listener.
    gateway = synths[env].template_json("gateway")
    secret_id, _ = one(gateway, "AWS::SecretsManager::Secret")
    secret = "{Import:" + export_name(gateway, {"Ref": secret_id}) + "}"
    assert action["ScriptBootstrapAction"]["Args"] == bootstrap_arguments(
        settings,
        bucket,
        emr_release=settings.emr.release_label,
        region="{Ref:AWS::Region}",
        api_key_secret_arn=secret,
    )
    assert action["ScriptBootstrapAction"]["Args"][-2:] == ["--api-key-secret", secret]

    classifications = {c["Classification"]: c["Properties"] for c in spec["Configurations"]}
    assert set(classifications) == {"spark-defaults", "spark-hive-site", "iceberg-defaults"}
    defaults = classifications["spark-defaults"]
    api_url = defaults["spark.openlineage.transport.url"]
    # The lineage stack's load balancer, handed over by app.py (not read back from SSM).
    lineage = synths[env].template_json("lineage")
    alb_id, _ = one(lineage, "AWS::ElasticLoadBalancingV2::LoadBalancer")
    assert api_url == "http://{Import:" + export_name(lineage, {"Fn::GetAtt": [alb_id, "DNSName"]}) + "}"
    expected = spark_conf.listener_properties(
        spark_conf.ListenerConfig(
            api_url=api_url,
            namespace=settings.openlineage.namespace,
            timeout_ms=settings.openlineage.transport_timeout_ms,
            compression=settings.openlineage.transport_compression,
        )
    )
    # The data lake stack's bucket, handed over by app.py: the Iceberg catalog's warehouse is its curated zone.
    data_lake = synths[env].template_json("data_lake")
    lake = "{Import:" + export_name(data_lake, {"Ref": lake_bucket_id(data_lake, env)}) + "}"
    catalog_defaults = catalogs.catalog_configurations(
        glue_catalog_id="{Ref:AWS::AccountId}", warehouse=f"s3://{lake}/curated/"
    )
    assert defaults == {**expected, **catalog_defaults["spark-defaults"]}
    assert defaults["spark.glue.accountId"] == "{Ref:AWS::AccountId}"
    assert defaults["spark.sql.catalog.lakehouse.catalog-impl"] == "org.apache.iceberg.aws.glue.GlueCatalog"
    assert defaults["spark.sql.catalog.lakehouse.warehouse"] == f"s3://{lake}/curated/"
    # EMR puts its Iceberg runtime on the nodes' Spark classpath, where the bootstrap puts the listener.
    assert classifications["iceberg-defaults"] == {"iceberg.enabled": "true"}
    assert "spark.jars" not in defaults
    assert defaults["spark.extraListeners"] == "io.openlineage.spark.agent.OpenLineageSparkListener"
    assert defaults["spark.openlineage.columnLineage.datasetLineageEnabled"] == "true"
    assert not any("extraClassPath" in k for k in defaults), "would drop EMR's default classpath"
    assert classifications["spark-hive-site"] == {
        "hive.metastore.client.factory.class": catalogs.GLUE_CLIENT_FACTORY,
        "hive.metastore.glue.catalogid": "{Ref:AWS::AccountId}",
    }
    tags = {t["Key"]: t["Value"] for t in spec["Tags"]}
    assert tags[EMR_MANAGED_TAG[0]] == EMR_MANAGED_TAG[1]
    assert tags["emr-lineage:cluster-kind"] == "ephemeral"


@pytest.mark.parametrize("env", ["dev", "prod"])
def test_launch_spec_is_accepted_by_the_launcher(env, synths):
    """What the stack publishes is what `emr-lineage launch` reads: parse it with the launcher's checks."""
    import re

    from emr_lineage.aws.emr import parse_launch_spec

    tpl = synths[env].template_json("emr")
    (param,) = [
        p["Properties"]
        for p in _by_type(tpl, "AWS::SSM::Parameter").values()
        if p["Properties"]["Name"] == parameters.emr_launch_spec(env)
    ]

    # Deploy-time values, as CloudFormation would substitute them.
    def deployed(value) -> str:
        if isinstance(value, str):
            return value
        ((fn, arg),) = value.items()
        if fn == "Fn::Join":
            return arg[0].join(deployed(p) for p in arg[1])
        return re.sub(r"[^a-z0-9]", "", json.dumps(arg).lower())[:20] or "x"

    spec = parse_launch_spec(deployed(param["Value"]), parameters.emr_launch_spec(env))
    assert spec["ReleaseLabel"] == load_settings(env).emr.release_label


def test_no_long_running_cluster_by_default(synth):
    assert not _by_type(synth.template_json("emr"), "AWS::EMR::Cluster")


def test_long_running_cluster_is_built_from_the_launch_spec_request(optional_synth, render):
    tpl = optional_synth.template_json("emr")
    (cluster,) = _by_type(tpl, "AWS::EMR::Cluster").values()
    props = cluster["Properties"]
    (param,) = [
        p["Properties"]
        for p in _by_type(tpl, "AWS::SSM::Parameter").values()
        if p["Properties"]["Name"] == parameters.emr_launch_spec("prod")
    ]
    spec = json.loads(render(param["Value"]))
    assert props["ReleaseLabel"] == spec["ReleaseLabel"]
    assert props["Applications"] == spec["Applications"]
    assert render(props["LogUri"]) == spec["LogUri"]
    assert [
        (b["Name"], render(b["ScriptBootstrapAction"]["Path"]), [render(a) for a in b["ScriptBootstrapAction"]["Args"]])
        for b in props["BootstrapActions"]
    ] == [
        (b["Name"], b["ScriptBootstrapAction"]["Path"], b["ScriptBootstrapAction"]["Args"])
        for b in spec["BootstrapActions"]
    ]
    assert [
        (c["Classification"], {k: render(v) for k, v in c["ConfigurationProperties"].items()})
        for c in props["Configurations"]
    ] == [(c["Classification"], c["Properties"]) for c in spec["Configurations"]]
    # Iceberg too: EMR's runtime and the Glue catalog whose warehouse is in the existing lake bucket.
    configurations = {c["Classification"]: c["ConfigurationProperties"] for c in props["Configurations"]}
    assert configurations["iceberg-defaults"] == {"iceberg.enabled": "true"}
    warehouse = render(configurations["spark-defaults"]["spark.sql.catalog.lakehouse.warehouse"])
    assert warehouse == f"s3://{EXISTING_BUCKET}/curated/"
    # openlineage.trusted_ca (a bundle in S3): the bootstrap imports it, refusing any but the pinned content.
    bundle = TRUSTED_CA_BUNDLE
    assert spec["BootstrapActions"][0]["ScriptBootstrapAction"]["Args"][-4:] == [
        "--trusted-ca-uri",
        bundle["uri"],
        "--trusted-ca-sha256",
        bundle["sha256"],
    ]
    assert props["Instances"]["KeepJobFlowAliveWhenNoSteps"] is True
    assert spec["Instances"]["KeepJobFlowAliveWhenNoSteps"] is False
    assert props["Instances"]["Ec2KeyName"] == spec["Instances"]["Ec2KeyName"] == "platform-ops"
    assert (
        props["Instances"]["CoreInstanceGroup"]["InstanceCount"]
        == spec["Instances"]["InstanceGroups"][1]["InstanceCount"]
    )
    assert "AutoTerminationPolicy" not in props
