"""Logs at rest, in every stack: each log group encrypted with a key of its own stack that CloudWatch Logs
may use, and the log buckets versioned, so a deleted log can be recovered for a while."""

from __future__ import annotations

from stacks.shared.server_access_logs_bucket import DELETED_LOGS_KEPT_DAYS
from tests.stacks.templates import as_list, by_type

LOGS_PRINCIPAL = "logs.{Ref:AWS::Region}.amazonaws.com"
THIS_ACCOUNT_S_LOG_GROUPS = "arn:{Ref:AWS::Partition}:logs:{Ref:AWS::Region}:{Ref:AWS::AccountId}:log-group:*"


def test_every_log_group_is_encrypted_with_a_key_cloudwatch_logs_may_use(any_synth, render):
    seen = 0
    for name, tpl in any_synth.templates.items():
        keys = by_type(tpl, "AWS::KMS::Key")
        for group_id, group in by_type(tpl, "AWS::Logs::LogGroup").items():
            key_ref = group["Properties"].get("KmsKeyId")
            assert key_ref is not None, f"{name}/{group_id} is not encrypted with a KMS key"
            (key_id, attribute) = key_ref["Fn::GetAtt"]
            assert attribute == "Arn" and key_id in keys, f"{name}/{group_id}: a key of its own stack"
            key = keys[key_id]["Properties"]
            assert key["EnableKeyRotation"] is True
            # Without this statement of the key policy, CloudWatch Logs refuses the key at deploy time.
            (grant,) = [
                s for s in key["KeyPolicy"]["Statement"] if render(s["Principal"].get("Service", "")) == LOGS_PRINCIPAL
            ]
            assert grant["Effect"] == "Allow"
            assert {"kms:Encrypt*", "kms:Decrypt*", "kms:GenerateDataKey*"} <= set(as_list(grant["Action"]))
            assert {k: render(v) for k, v in grant["Condition"]["ArnLike"].items()} == {
                "kms:EncryptionContext:aws:logs:arn": THIS_ACCOUNT_S_LOG_GROUPS
            }
            seen += 1
    # Marquez, its database's two exports; the gateway's two functions (a spoke runs neither); the flow logs of a
    # created VPC (an existing one has none of the stacks').
    flow_logs = len(by_type(any_synth.templates["network"], "AWS::EC2::FlowLog"))
    assert seen == (5 if "lineage" in any_synth.stack_names else 0) + flow_logs


def test_log_buckets_are_versioned_and_keep_deleted_logs_for_a_while(synth):
    buckets = {
        (name, bucket_id): bucket["Properties"]
        for name, tpl in synth.templates.items()
        for bucket_id, bucket in by_type(tpl, "AWS::S3::Bucket").items()
        if "AccessLogs" in bucket_id
    }
    assert sorted(name for name, _ in buckets) == ["data_lake", "lineage"]  # S3 server access logs, ALB access logs
    for props in buckets.values():
        assert props["VersioningConfiguration"] == {"Status": "Enabled"}
        (rule,) = props["LifecycleConfiguration"]["Rules"]
        assert rule["ExpirationInDays"] >= 1
        assert rule["NoncurrentVersionExpiration"] == {"NoncurrentDays": DELETED_LOGS_KEPT_DAYS}
