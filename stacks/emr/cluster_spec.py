"""The one definition of an emr-lineage EMR cluster.

:func:`job_flow_request` builds the RunJobFlow request (boto3 shape, minus Steps). The EMR
stack publishes it as the launch spec for ephemeral clusters, and turns the very same request
into the long-running cluster's CloudFormation properties with :func:`cfn_cluster_properties`,
so the two cannot drift apart.
"""

from __future__ import annotations

from dataclasses import dataclass

from emr_lineage.aws.tags import EMR_MANAGED_TAG
from emr_lineage.settings.model import EnvironmentSettings

EBS_VOLUME_TYPE = "gp3"


@dataclass(frozen=True, kw_only=True)
class ClusterResources:
    """Deployed resources a cluster refers to (CDK tokens are fine)."""

    subnet_id: str
    service_role: str
    instance_profile: str
    security_configuration: str
    log_uri: str
    primary_security_group: str
    core_security_group: str
    service_access_security_group: str
    additional_security_groups: tuple[str, ...]
    bootstrap_path: str
    bootstrap_args: tuple[str, ...]
    bootstrap_name: str
    configurations: tuple[dict, ...]


def _instance_group(name: str, role: str, instance_type: str, count: int, ebs_gib: int) -> dict:
    return {
        "Name": name,
        "InstanceRole": role,
        "InstanceType": instance_type,
        "InstanceCount": count,
        "Market": "ON_DEMAND",
        "EbsConfiguration": {
            "EbsBlockDeviceConfigs": [
                {"VolumeSpecification": {"VolumeType": EBS_VOLUME_TYPE, "SizeInGB": ebs_gib}, "VolumesPerInstance": 1}
            ],
            "EbsOptimized": True,
        },
    }


def job_flow_request(settings: EnvironmentSettings, resources: ClusterResources, *, long_running: bool) -> dict:
    """RunJobFlow request without Steps: ephemeral (auto-terminating) or long-running."""
    emr = settings.emr
    kind = "long-running" if long_running else "ephemeral"
    tags = {**settings.tags, EMR_MANAGED_TAG[0]: EMR_MANAGED_TAG[1], "emr-lineage:cluster-kind": kind}
    request: dict = {
        "Name": f"{settings.resource_prefix}-{kind}",
        "ReleaseLabel": emr.release_label,
        "Applications": [{"Name": app} for app in emr.applications],
        "LogUri": resources.log_uri,
        "ServiceRole": resources.service_role,
        "JobFlowRole": resources.instance_profile,
        "SecurityConfiguration": resources.security_configuration,
        "Instances": {
            "InstanceGroups": [
                _instance_group("primary", "MASTER", emr.primary_instance_type, 1, emr.ebs_volume_gib),
                _instance_group("core", "CORE", emr.core_instance_type, emr.core_instance_count, emr.ebs_volume_gib),
            ],
            "Ec2SubnetId": resources.subnet_id,
            "EmrManagedMasterSecurityGroup": resources.primary_security_group,
            "EmrManagedSlaveSecurityGroup": resources.core_security_group,
            "ServiceAccessSecurityGroup": resources.service_access_security_group,
            "AdditionalMasterSecurityGroups": list(resources.additional_security_groups),
            "AdditionalSlaveSecurityGroups": list(resources.additional_security_groups),
            "KeepJobFlowAliveWhenNoSteps": long_running,
            "TerminationProtected": False,
        },
        "BootstrapActions": [
            {
                "Name": resources.bootstrap_name,
                "ScriptBootstrapAction": {"Path": resources.bootstrap_path, "Args": list(resources.bootstrap_args)},
            }
        ],
        "Configurations": [dict(c) for c in resources.configurations],
        "Tags": [{"Key": k, "Value": v} for k, v in sorted(tags.items())],
        "VisibleToAllUsers": True,
        "StepConcurrencyLevel": 1,
    }
    if emr.ec2_key_name:
        request["Instances"]["Ec2KeyName"] = emr.ec2_key_name
    if not long_running:
        # Ephemeral clusters end after their steps; the idle timeout is the safety net if a
        # launcher dies before adding any.
        request["AutoTerminationPolicy"] = {"IdleTimeout": emr.idle_timeout_seconds}
    return request


def _cfn_instance_group(group: dict) -> dict:
    ebs = group["EbsConfiguration"]
    return {
        "name": group["Name"],
        "instanceType": group["InstanceType"],
        "instanceCount": group["InstanceCount"],
        "market": group["Market"],
        "ebsConfiguration": {
            "ebsOptimized": ebs["EbsOptimized"],
            "ebsBlockDeviceConfigs": [
                {
                    "volumeSpecification": {
                        "volumeType": d["VolumeSpecification"]["VolumeType"],
                        "sizeInGb": d["VolumeSpecification"]["SizeInGB"],
                    },
                    "volumesPerInstance": d["VolumesPerInstance"],
                }
                for d in ebs["EbsBlockDeviceConfigs"]
            ],
        },
    }


def cfn_cluster_properties(request: dict) -> dict:
    """Keyword arguments of ``aws_emr.CfnCluster`` equivalent to a RunJobFlow request.

    Top-level keys are Python keyword names; nested structs are plain dicts, which jsii
    passes through as-is, so they use the JavaScript (camelCase) property names.
    """
    instances = request["Instances"]
    groups = {g["InstanceRole"]: g for g in instances["InstanceGroups"]}
    props = {
        "name": request["Name"],
        "release_label": request["ReleaseLabel"],
        "applications": [{"name": a["Name"]} for a in request["Applications"]],
        "log_uri": request["LogUri"],
        "service_role": request["ServiceRole"],
        "job_flow_role": request["JobFlowRole"],
        "security_configuration": request["SecurityConfiguration"],
        "instances": {
            "masterInstanceGroup": _cfn_instance_group(groups["MASTER"]),
            "coreInstanceGroup": _cfn_instance_group(groups["CORE"]),
            "ec2SubnetId": instances["Ec2SubnetId"],
            "emrManagedMasterSecurityGroup": instances["EmrManagedMasterSecurityGroup"],
            "emrManagedSlaveSecurityGroup": instances["EmrManagedSlaveSecurityGroup"],
            "serviceAccessSecurityGroup": instances["ServiceAccessSecurityGroup"],
            "additionalMasterSecurityGroups": instances["AdditionalMasterSecurityGroups"],
            "additionalSlaveSecurityGroups": instances["AdditionalSlaveSecurityGroups"],
            "keepJobFlowAliveWhenNoSteps": instances["KeepJobFlowAliveWhenNoSteps"],
            "terminationProtected": instances["TerminationProtected"],
        },
        "bootstrap_actions": [
            {
                "name": b["Name"],
                "scriptBootstrapAction": {
                    "path": b["ScriptBootstrapAction"]["Path"],
                    "args": b["ScriptBootstrapAction"]["Args"],
                },
            }
            for b in request["BootstrapActions"]
        ],
        "configurations": [
            {"classification": c["Classification"], "configurationProperties": c["Properties"]}
            for c in request["Configurations"]
        ],
        "tags": [{"key": t["Key"], "value": t["Value"]} for t in request["Tags"]],
        "visible_to_all_users": request["VisibleToAllUsers"],
        "step_concurrency_level": request["StepConcurrencyLevel"],
    }
    if "Ec2KeyName" in instances:
        props["instances"]["ec2KeyName"] = instances["Ec2KeyName"]
    if "AutoTerminationPolicy" in request:
        props["auto_termination_policy"] = {"idleTimeout": request["AutoTerminationPolicy"]["IdleTimeout"]}
    return props
