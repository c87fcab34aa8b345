"""EmrStack: roles, security configuration and groups, Lake Formation grants, launch spec, long-running cluster."""

from __future__ import annotations

import json

import pytest

from emr_lineage.aws import parameters
from emr_lineage.listener.artifact import bootstrap_arguments
from emr_lineage.settings.loader import load_settings
from emr_lineage.spark import conf as spark_conf
from stacks.network import EMR_MANAGED_TAG


def _by_type(tpl: dict, kind: str) -> dict[str, dict]:
    return {k: v for k, v in tpl["Resources"].items() if v["Type"] == kind}


def _id(tpl: dict, prefix: str, kind: str) -> str:
    (found,) = [k for k in _by_type(tpl, kind) if k.startswith(prefix)]
    return found


def _statements(tpl: dict, role_id: str) -> list[dict]:
    return [
        s
        for p in _by_type(tpl, "AWS::IAM::Policy").values()
        if {"Ref": role_id} in p["Properties"]["Roles"]
        for s in p["Properties"]["PolicyDocument"]["Statement"]
    ]


def _as_list(value) -> list:
    return value if isinstance(value, list) else [value]


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
    assert spec["ReleaseLabel"] == settings.emr.release_label == "emr-7.13.0"
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
    assert action["ScriptBootstrapAction"]["Args"] == bootstrap_arguments(
        settings, bucket, emr_release=settings.emr.release_label, region="{Ref:AWS::Region}"
    )

    classifications = {c["Classification"]: c["Properties"] for c in spec["Configurations"]}
    assert set(classifications) == {"spark-defaults", "spark-hive-site"}
    defaults = classifications["spark-defaults"]
    api_url = defaults["spark.openlineage.transport.url"]
    assert api_url.startswith("{Ref:SsmParameterValueemrlineage") and "marquezapiurl" in api_url
    expected = spark_conf.listener_properties(
        spark_conf.ListenerConfig(
            api_url=api_url,
            namespace=settings.openlineage.namespace,
            timeout_ms=settings.openlineage.transport_timeout_ms,
            compression=settings.openlineage.transport_compression,
        )
    )
    assert defaults == {**expected, "spark.glue.accountId": "{Ref:AWS::AccountId}"}
    assert defaults["spark.extraListeners"] == "io.openlineage.spark.agent.OpenLineageSparkListener"
    assert defaults["spark.openlineage.columnLineage.datasetLineageEnabled"] == "true"
    assert not any("extraClassPath" in k for k in defaults), "would drop EMR's default classpath"
    assert classifications["spark-hive-site"] == {
        "hive.metastore.client.factory.class": spark_conf.GLUE_CLIENT_FACTORY,
        "hive.metastore.glue.catalogid": "{Ref:AWS::AccountId}",
    }
    tags = {t["Key"]: t["Value"] for t in spec["Tags"]}
    assert tags[EMR_MANAGED_TAG[0]] == EMR_MANAGED_TAG[1]
    assert tags["emr-lineage:cluster-kind"] == "ephemeral"


def test_launch_spec_reads_the_marquez_url_from_the_lineage_stacks_parameter(synths):
    tpl = synths["dev"].template_json("emr")
    ssm_params = [
        p["Default"]
        for p in tpl["Parameters"].values()
        if p["Type"] == "AWS::SSM::Parameter::Value<String>" and not p["Default"].startswith("/cdk-bootstrap/")
    ]
    assert ssm_params == [parameters.marquez_api_url("dev")]


def test_service_role_uses_the_v2_policy_and_passes_only_the_instance_role(synth, render):
    tpl = synth.template_json("emr")
    role_id = _id(tpl, "RolesServiceRole", "AWS::IAM::Role")
    role = tpl["Resources"][role_id]["Properties"]
    assert [render(a) for a in role["ManagedPolicyArns"]] == [
        "arn:{Ref:AWS::Partition}:iam::aws:policy/service-role/AmazonEMRServicePolicy_v2"
    ]
    passes = [s for s in _statements(tpl, role_id) if "iam:PassRole" in _as_list(s["Action"])]
    assert passes == [
        {
            "Action": "iam:PassRole",
            "Effect": "Allow",
            "Sid": "PassInstanceRole",
            "Resource": {"Fn::GetAtt": [_id(tpl, "RolesInstanceRole", "AWS::IAM::Role"), "Arn"]},
            "Condition": {"StringEquals": {"iam:PassedToService": "ec2.amazonaws.com"}},
        }
    ]


def test_instance_role_is_scoped(synth, render):
    tpl = synth.template_json("emr")
    statements = _statements(tpl, _id(tpl, "RolesInstanceRole", "AWS::IAM::Role"))
    by_sid = {s.get("Sid"): s for s in statements}
    resources = [render(r) for s in statements for r in _as_list(s["Resource"])]
    # The only bare "*" is Lake Formation's credential vending, which has no resource-level permissions.
    assert [s["Action"] for s in statements if "*" in _as_list(s["Resource"])] == ["lakeformation:GetDataAccess"]
    lake = (
        f"arn:{{Ref:AWS::Partition}}:s3:::emr-lineage-{synth.env}-data-lake-{{Ref:AWS::AccountId}}-{{Ref:AWS::Region}}"
    )
    assert sorted(render(r) for r in by_sid["WriteZones"]["Resource"]) == sorted(
        f"{lake}/{z}/*" for z in ("clean", "curated", "models")
    )
    assert f"{lake}/raw/*" in [render(r) for r in by_sid["ReadZones"]["Resource"]]
    assert by_sid["WriteLogs"]["Action"] == "s3:PutObject"
    assert render(by_sid["WriteLogs"]["Resource"]).endswith("/emr-logs/*")
    assert not [r for r in resources if r.endswith(":::*") or r.endswith("}/*")], "no whole-bucket object wildcards"
    glue_resources = [render(r) for r in by_sid["GlueCatalogWrite"]["Resource"]]
    assert not any(r.endswith(":table/*/*") or r.endswith(":database/*") for r in glue_resources)
    assert (
        f"arn:{{Ref:AWS::Partition}}:glue:{{Ref:AWS::Region}}:{{Ref:AWS::AccountId}}:table/emr_lineage_{synth.env}_curated/*"
        in glue_resources
    )


def test_security_configuration_document(synth, render):
    tpl = synth.template_json("emr")
    (config,) = _by_type(tpl, "AWS::EMR::SecurityConfiguration").values()
    document = json.loads(render(config["Properties"]["SecurityConfiguration"]))
    encryption = document["EncryptionConfiguration"]
    assert encryption["EnableAtRestEncryption"] is True
    assert encryption["EnableInTransitEncryption"] is load_settings(synth.env).emr.in_transit_encryption
    at_rest = encryption["AtRestEncryptionConfiguration"]
    assert at_rest["S3EncryptionConfiguration"]["EncryptionMode"] == "SSE-KMS"
    assert at_rest["S3EncryptionConfiguration"]["AwsKmsKey"].startswith(f"{{Import:EmrLineage-{synth.env}-DataLake:")
    local = at_rest["LocalDiskEncryptionConfiguration"]
    assert local["EncryptionKeyProviderType"] == "AwsKms" and local["EnableEbsEncryption"] is True
    assert local["AwsKmsKey"] == "{GetAtt:" + _id(tpl, "SecurityLocalDiskKey", "AWS::KMS::Key") + ".Arn}"
    tls = encryption["InTransitEncryptionConfiguration"]["TLSCertificateConfiguration"]
    assert tls["CertificateProviderType"] == "PEM"
    assert tls["S3Object"].endswith("/tls/emr-tls-certificates.zip")
    assert "AuthorizationConfiguration" not in document  # runtime role off by default


def test_emr_security_groups_open_nothing_and_carry_the_managed_policy_tag(synth):
    tpl = synth.template_json("emr")
    groups = {k: v["Properties"] for k, v in _by_type(tpl, "AWS::EC2::SecurityGroup").items()}
    assert len(groups) == 3
    for props in groups.values():
        assert "SecurityGroupIngress" not in props
        assert {"Key": EMR_MANAGED_TAG[0], "Value": EMR_MANAGED_TAG[1]} in props["Tags"]
    assert not _by_type(tpl, "AWS::EC2::SecurityGroupIngress")


def test_lake_formation_grants_to_the_job_role(synth):
    tpl = synth.template_json("emr")
    role = {"Fn::GetAtt": [_id(tpl, "RolesInstanceRole", "AWS::IAM::Role"), "Arn"]}
    grants = [g["Properties"] for g in _by_type(tpl, "AWS::LakeFormation::PrincipalPermissions").values()]
    assert all(g["Principal"] == {"DataLakePrincipalIdentifier": role} for g in grants)
    assert all(g["PermissionsWithGrantOption"] == [] for g in grants)
    by_resource = {}
    for g in grants:
        resource = g["Resource"]
        if "DataLocation" in resource:
            by_resource["location"] = g["Permissions"]
        elif "Database" in resource:
            by_resource["db:" + resource["Database"]["Name"]] = g["Permissions"]
        else:
            assert resource["Table"]["TableWildcard"] == {}
            by_resource["tables:" + resource["Table"]["DatabaseName"]] = g["Permissions"]
    env = synth.env
    assert by_resource == {
        "location": ["DATA_LOCATION_ACCESS"],
        f"db:emr_lineage_{env}_clean": ["DESCRIBE"],
        f"tables:emr_lineage_{env}_clean": ["SELECT", "DESCRIBE"],
        f"db:emr_lineage_{env}_curated": ["DESCRIBE", "CREATE_TABLE"],
        f"tables:emr_lineage_{env}_curated": ["SELECT", "INSERT", "DELETE", "DESCRIBE", "ALTER", "DROP"],
    }


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


def test_no_long_running_cluster_by_default(synth):
    assert not _by_type(synth.template_json("emr"), "AWS::EMR::Cluster")


# --- the optional parts, switched on -----------------------------------------------------------


def test_long_running_cluster_is_built_from_the_launch_spec_request(long_running_synth, render):
    tpl = long_running_synth.template_json("emr")
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
    assert props["Instances"]["KeepJobFlowAliveWhenNoSteps"] is True
    assert spec["Instances"]["KeepJobFlowAliveWhenNoSteps"] is False
    assert props["Instances"]["Ec2KeyName"] == spec["Instances"]["Ec2KeyName"] == "platform-ops"
    assert (
        props["Instances"]["CoreInstanceGroup"]["InstanceCount"]
        == spec["Instances"]["InstanceGroups"][1]["InstanceCount"]
    )
    assert "AutoTerminationPolicy" not in props


def test_runtime_role_gets_the_data_and_lake_formation_session_tags(long_running_synth, render):
    tpl = long_running_synth.template_json("emr")
    runtime = _id(tpl, "RolesRuntimeRole", "AWS::IAM::Role")
    instance = _id(tpl, "RolesInstanceRole", "AWS::IAM::Role")
    sids = {s.get("Sid") for s in _statements(tpl, runtime)}
    assert {"ReadZones", "WriteZones", "GlueCatalogRead", "LakeFormationDataAccess"} <= sids
    assert not {"ReadZones", "WriteZones"} & {s.get("Sid") for s in _statements(tpl, instance)}
    grants = _by_type(tpl, "AWS::LakeFormation::PrincipalPermissions").values()
    assert all(
        g["Properties"]["Principal"]["DataLakePrincipalIdentifier"] == {"Fn::GetAtt": [runtime, "Arn"]} for g in grants
    )
    (config,) = _by_type(tpl, "AWS::EMR::SecurityConfiguration").values()
    document = json.loads(render(config["Properties"]["SecurityConfiguration"]))
    assert document["AuthorizationConfiguration"] == {
        "IAMConfiguration": {"EnableApplicationScopedIAMRole": True},
        "LakeFormationConfiguration": {"AuthorizedSessionTagValue": "Amazon EMR"},
    }


@pytest.mark.parametrize("env", ["dev", "prod"])
def test_launch_spec_is_accepted_by_the_launcher(env, synths):
    """What the stack publishes is what `emr-lineage launch` reads: parse it with the launcher's checks."""
    import re

    from emr_lineage.launcher import parse_launch_spec

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
