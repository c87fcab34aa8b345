"""GatewayStack: the archive, the FIFO queues, the secret, the forwarder and its way to Marquez, the
Lambda asset, and least-privilege policies (its rules on the lineage load balancer: test_routing.py)."""

from __future__ import annotations

import copy
import json
import zipfile
from pathlib import Path

import aws_cdk as cdk

import app as cdk_app
from emr_lineage.aws import parameters
from emr_lineage.gateway import config as gateway_env
from emr_lineage.lineage.schemas.store import PINNED_SCHEMAS
from emr_lineage.settings.limits import SQS_MAX_MESSAGE_BYTES
from emr_lineage.settings.loader import load_settings
from stacks.gateway.asset import asset_files
from stacks.gateway.packages import wheels
from stacks.gateway.routing import FORWARD_LISTENER_PORT
from stacks.gateway.stack import VISIBILITY_TIMEOUT_FACTOR
from stacks.gateway.storage import max_receive_count
from stacks.lineage_service.marquez import API_PORT
from tests.paths import REPO_ROOT
from tests.stacks.gateway.test_routing import serving_listener
from tests.stacks.templates import as_list, by_type, export_name, ingress, logical_id, one, statements

FUNCTION = "AWS::Lambda::Function"
QUEUE = "AWS::SQS::Queue"
RULE = "AWS::ElasticLoadBalancingV2::ListenerRule"
LISTENER = "AWS::ElasticLoadBalancingV2::Listener"


def _function(tpl: dict, prefix: str) -> tuple[str, dict]:
    fid = logical_id(tpl, prefix, FUNCTION)
    return fid, tpl["Resources"][fid]["Properties"]


def _queues(tpl: dict) -> tuple[str, dict, str, dict]:
    queue_id = logical_id(tpl, "Queue", QUEUE)
    dlq_id = logical_id(tpl, "DeadLetterQueue", QUEUE)
    res = tpl["Resources"]
    return queue_id, res[queue_id]["Properties"], dlq_id, res[dlq_id]["Properties"]


# The longest environment name the settings take (loader._ENV_NAME) and CloudFormation's name of a FIFO
# queue without one: <stack>-<logical id>-<13 random characters>.fifo, which SQS caps at 80
# (https://github.com/aws-cloudformation/cloudformation-coverage-roadmap/issues/280).
LONGEST_ENV = "e" * 16
SQS_QUEUE_NAME_LIMIT = 80


def test_cloudformation_s_name_of_each_queue_fits_sqs_for_the_longest_environment_name(synth):
    from emr_lineage.aws.stacks import GATEWAY, stack_name

    queue_id, _, dlq_id, _ = _queues(synth.template_json("gateway"))
    for lid in (queue_id, dlq_id):
        generated = f"{stack_name(LONGEST_ENV, GATEWAY)}-{lid}-{'X' * 13}.fifo"
        assert len(generated) <= SQS_QUEUE_NAME_LIMIT, generated


def _lineage_target_group_on_port(lineage: dict, port: int) -> str:
    (found,) = [
        k
        for k, v in by_type(lineage, "AWS::ElasticLoadBalancingV2::TargetGroup").items()
        if v["Properties"]["Port"] == port
    ]
    return found


def _denies_insecure_transport(policy_statements: list[dict]) -> bool:
    return any(
        s["Effect"] == "Deny" and s["Condition"] == {"Bool": {"aws:SecureTransport": "false"}}
        for s in policy_statements
    )


def test_queue_is_fifo_and_redrives_to_a_fifo_dead_letter_queue_as_configured(synth):
    tpl = synth.template_json("gateway")
    gateway = load_settings(synth.env).gateway
    key_id, _ = one(tpl, "AWS::KMS::Key")
    _, queue, dlq_id, dlq = _queues(tpl)
    for props in (queue, dlq):
        assert props["FifoQueue"] is True
        # CloudFormation names them (with .fifo): a queue a destroy retains would block the next deploy.
        assert "QueueName" not in props
        assert props["ContentBasedDeduplication"] is False
        assert props["KmsMasterKeyId"] == {"Fn::GetAtt": [key_id, "Arn"]}
        # SQS's largest message (the default was 256 KiB before 2025): an event the ingest took always fits.
        assert props["MaximumMessageSize"] == SQS_MAX_MESSAGE_BYTES >= gateway.max_event_bytes
    assert queue["RedrivePolicy"] == {
        "deadLetterTargetArn": {"Fn::GetAtt": [dlq_id, "Arn"]},
        "maxReceiveCount": max_receive_count(gateway.dead_letter_after_hours),
    }
    assert dlq["MessageRetentionPeriod"] == gateway.dead_letter_retention_days * 86400
    assert (queue["DeduplicationScope"], queue["FifoThroughputLimit"]) == ("messageGroup", "perMessageGroupId")
    _, forward = _function(tpl, "Forward")
    assert queue["VisibilityTimeout"] >= VISIBILITY_TIMEOUT_FACTOR * forward["Timeout"]
    policies = by_type(tpl, "AWS::SQS::QueuePolicy").values()
    assert len(policies) == 2
    for policy in policies:
        assert _denies_insecure_transport(policy["Properties"]["PolicyDocument"]["Statement"])


def test_events_reach_the_dead_letter_queue_only_after_the_configured_outage(synth):
    """With the forwarder's redelivery backoff, maxReceiveCount receives span dead_letter_after_hours."""
    hours = load_settings(synth.env).gateway.dead_letter_after_hours
    _, queue, _, _ = _queues(synth.template_json("gateway"))
    receives = queue["RedrivePolicy"]["maxReceiveCount"]
    waited = [sum(gateway_env.redelivery_delay(n) for n in range(1, count + 1)) for count in (receives - 1, receives)]
    assert waited[0] < hours * 3600 <= waited[1]
    assert (hours, receives) == (4, 20)  # cdk.json's 4 hours: 30 s doubling to 15 min, 20 receives


def test_gateway_alarms_live_in_the_monitoring_stack(synth):
    """Every alarm lives with its action in the monitoring stack (tests/stacks/monitoring)."""
    assert by_type(synth.template_json("gateway"), "AWS::CloudWatch::Alarm") == {}


def test_archive_bucket_is_kms_encrypted_versioned_tls_only_and_logged(synth):
    tpl, data_lake = synth.template_json("gateway"), synth.template_json("data_lake")
    key_id, key = one(tpl, "AWS::KMS::Key")
    assert key["Properties"]["EnableKeyRotation"] is True
    bucket_id, bucket = one(tpl, "AWS::S3::Bucket")
    props = bucket["Properties"]
    (encryption,) = props["BucketEncryption"]["ServerSideEncryptionConfiguration"]
    assert encryption["ServerSideEncryptionByDefault"] == {
        "KMSMasterKeyID": {"Fn::GetAtt": [key_id, "Arn"]},
        "SSEAlgorithm": "aws:kms",
    }
    assert props["VersioningConfiguration"] == {"Status": "Enabled"}
    assert set(props["PublicAccessBlockConfiguration"].values()) == {True}
    logs_bucket = logical_id(data_lake, "ServerAccessLogsBucket", "AWS::S3::Bucket")
    assert props["LoggingConfiguration"] == {
        "DestinationBucketName": {"Fn::ImportValue": export_name(data_lake, {"Ref": logs_bucket})},
        "LogFilePrefix": "gateway-archive/",
    }
    # The archive's rule; Athena's results expire under their prefix (test_archive_catalog.py).
    (rule,) = [r for r in props["LifecycleConfiguration"]["Rules"] if "Prefix" not in r]
    assert rule["Transitions"] == [{"StorageClass": "STANDARD_IA", "TransitionInDays": 30}]
    assert "NoncurrentVersionExpiration" in rule
    _, policy = one(tpl, "AWS::S3::BucketPolicy")
    assert policy["Properties"]["Bucket"] == {"Ref": bucket_id}
    assert _denies_insecure_transport(policy["Properties"]["PolicyDocument"]["Statement"])


def test_removal_policy_follows_the_settings(synths):
    dev, prod = synths["dev"].template_json("gateway"), synths["prod"].template_json("gateway")
    for kind in ("AWS::S3::Bucket", "AWS::KMS::Key", QUEUE, "AWS::SecretsManager::Secret"):
        assert {r["DeletionPolicy"] for r in by_type(dev, kind).values()} == {"Delete"}, kind
        # prod's "snapshot" means retain where a resource cannot snapshot.
        assert {r["DeletionPolicy"] for r in by_type(prod, kind).values()} == {"Retain"}, kind


def test_api_key_is_a_generated_header_safe_secret(synth):
    tpl = synth.template_json("gateway")
    key_id, _ = one(tpl, "AWS::KMS::Key")
    secret_id, secret = one(tpl, "AWS::SecretsManager::Secret")
    generated = secret["Properties"]["GenerateSecretString"]
    assert generated["PasswordLength"] >= 40
    assert generated["ExcludePunctuation"] is True and generated["IncludeSpace"] is False
    assert "SecretStringTemplate" not in generated  # the key itself, not a JSON document
    assert secret["Properties"]["KmsKeyId"] == {"Fn::GetAtt": [key_id, "Arn"]}
    _, ingest = _function(tpl, "Ingest")
    assert ingest["Environment"]["Variables"][gateway_env.API_KEY_SECRET_ARN] == {"Ref": secret_id}


def test_emr_serverless_may_read_the_api_key_where_serverless_is_on(synth, render):
    """Job runs name the secret (EMR.secret@<ARN>) and EMR Serverless reads it as AWS's page asks: the
    secret's policy for this account's applications, the key's for decrypting through Secrets Manager."""
    tpl = synth.template_json("gateway")
    secret_id, _ = one(tpl, "AWS::SecretsManager::Secret")
    _, key = one(tpl, "AWS::KMS::Key")
    key_statements = [s for s in key["Properties"]["KeyPolicy"]["Statement"] if "emr-serverless" in json.dumps(s)]
    policies = by_type(tpl, "AWS::SecretsManager::ResourcePolicy")
    if not load_settings(synth.env).emr_serverless.enabled:
        assert not policies and not key_statements
        return
    ((_, policy),) = policies.items()
    assert policy["Properties"]["SecretId"] == {"Ref": secret_id}
    (read,) = policy["Properties"]["ResourcePolicy"]["Statement"]
    assert read["Principal"] == {"Service": "emr-serverless.amazonaws.com"}
    assert read["Action"] == ["secretsmanager:GetSecretValue", "secretsmanager:DescribeSecret"]
    assert read["Condition"]["StringEquals"] == {"aws:SourceAccount": {"Ref": "AWS::AccountId"}}
    assert render(read["Condition"]["ArnLike"]["aws:SourceArn"]) == (
        "arn:{Ref:AWS::Partition}:emr-serverless:{Ref:AWS::Region}:{Ref:AWS::AccountId}:/applications/*"
    )
    (decrypt,) = key_statements
    assert decrypt["Principal"] == {"Service": "emr-serverless.amazonaws.com"}
    assert decrypt["Action"] == ["kms:Decrypt", "kms:DescribeKey"]
    assert (
        render(decrypt["Condition"]["StringEquals"]["kms:ViaService"])
        == "secretsmanager.{Ref:AWS::Region}.amazonaws.com"
    )


def test_functions_run_the_gateway_handlers_with_their_settings(synth):
    tpl = synth.template_json("gateway")
    gateway = load_settings(synth.env).gateway
    bucket_id, _ = one(tpl, "AWS::S3::Bucket")
    queue_id, _, _, _ = _queues(tpl)
    _, ingest = _function(tpl, "Ingest")
    _, forward = _function(tpl, "Forward")
    assert (ingest["Handler"], forward["Handler"]) == (gateway_env.INGEST_HANDLER, gateway_env.FORWARD_HANDLER)
    assert ingest["Runtime"] == forward["Runtime"] == f"python{gateway_env.LAMBDA_PYTHON}"
    assert ingest["Architectures"] == forward["Architectures"] == [gateway_env.LAMBDA_ARCHITECTURE]
    variables = ingest["Environment"]["Variables"]
    assert sorted(variables) == sorted(gateway_env.INGEST_ENV)
    assert variables[gateway_env.ARCHIVE_BUCKET] == {"Ref": bucket_id}
    assert variables[gateway_env.QUEUE_URL] == {"Ref": queue_id}
    assert variables[gateway_env.MAX_EVENT_BYTES] == str(gateway.max_event_bytes)
    variables = forward["Environment"]["Variables"]
    assert sorted(variables) == sorted(gateway_env.FORWARD_ENV)
    assert variables[gateway_env.FORWARD_RETRIES] == str(gateway.forward_retries)
    _, _, dlq_id, _ = _queues(tpl)
    assert variables[gateway_env.QUEUE_URL] == {"Ref": queue_id}
    assert variables[gateway_env.DEAD_LETTER_QUEUE_URL] == {"Ref": dlq_id}
    # Every try of a full batch fits in the function's timeout.
    assert forward["Timeout"] >= 10 * (gateway.forward_retries + 1) * float(
        variables[gateway_env.FORWARD_TIMEOUT_SECONDS]
    )
    assert "VpcConfig" not in ingest  # S3, SQS and Secrets Manager over their public endpoints


def test_functions_log_to_their_own_encrypted_groups_with_the_configured_retention(synth):
    tpl = synth.template_json("gateway")
    key_id, _ = one(tpl, "AWS::KMS::Key")
    groups = by_type(tpl, "AWS::Logs::LogGroup")
    retention = load_settings(synth.env).log_retention_days
    assert {g["Properties"]["RetentionInDays"] for g in groups.values()} == {retention}
    assert [g["Properties"]["KmsKeyId"] for g in groups.values()] == [{"Fn::GetAtt": [key_id, "Arn"]}] * 2
    used = [p["LoggingConfig"]["LogGroup"]["Ref"] for p in (_function(tpl, n)[1] for n in ("Ingest", "Forward"))]
    assert sorted(used) == sorted(groups)


def test_functions_settings_are_encrypted_with_the_gateway_key_their_roles_may_decrypt_with(synth):
    tpl = synth.template_json("gateway")
    key_id, _ = one(tpl, "AWS::KMS::Key")
    key_arn = {"Fn::GetAtt": [key_id, "Arn"]}
    for name in ("Ingest", "Forward"):
        _, props = _function(tpl, name)
        assert props["KmsKeyArn"] == key_arn
        role = props["Role"]["Fn::GetAtt"][0]
        assert any("kms:Decrypt" in as_list(s["Action"]) and s["Resource"] == key_arn for s in statements(tpl, role))


def test_forwarder_consumes_the_queue_in_batches_with_partial_failures(synth):
    tpl = synth.template_json("gateway")
    queue_id, _, _, _ = _queues(tpl)
    forward_id, _ = _function(tpl, "Forward")
    _, mapping = one(tpl, "AWS::Lambda::EventSourceMapping")
    props = mapping["Properties"]
    assert props["EventSourceArn"] == {"Fn::GetAtt": [queue_id, "Arn"]}
    assert props["FunctionName"] == {"Ref": forward_id}
    assert props["FunctionResponseTypes"] == ["ReportBatchItemFailures"]
    assert props["BatchSize"] == 10


def test_forwarder_reaches_marquez_through_its_own_listener_not_the_lineage_rule(synth, render):
    """No loop: the forwarder's listener has no rules and forwards straight to the Marquez API tasks."""
    gateway, lineage = synth.template_json("gateway"), synth.template_json("lineage")
    alb_id, _ = one(lineage, "AWS::ElasticLoadBalancingV2::LoadBalancer")
    _, listener = one(gateway, "AWS::ElasticLoadBalancingV2::Listener")
    props = listener["Properties"]
    api_group = _lineage_target_group_on_port(lineage, API_PORT)
    assert props["LoadBalancerArn"] == {"Fn::ImportValue": export_name(lineage, {"Ref": alb_id})}
    assert props["Port"] == FORWARD_LISTENER_PORT
    assert props["DefaultActions"] == [
        {"Type": "forward", "TargetGroupArn": {"Fn::ImportValue": export_name(lineage, {"Ref": api_group})}}
    ]
    # No rule of the gateway (ingest, deny writes) is on the forwarder's listener: its posts reach Marquez.
    forward_listener_id, _ = one(gateway, LISTENER)
    serving = {"Fn::ImportValue": export_name(lineage, {"Ref": serving_listener(lineage)})}
    assert [r["Properties"]["ListenerArn"] for r in by_type(gateway, RULE).values()] == [serving, serving]
    assert forward_listener_id not in json.dumps(by_type(gateway, RULE))
    _, forward = _function(gateway, "Forward")
    dns = export_name(lineage, {"Fn::GetAtt": [alb_id, "DNSName"]})
    assert render(forward["Environment"]["Variables"][gateway_env.MARQUEZ_URL]) == (
        f"http://{{Import:{dns}}}:{FORWARD_LISTENER_PORT}"
    )
    # In the private subnets, in a group that may only reach that listener, and only it may.
    group_id = logical_id(gateway, "ForwardSecurityGroup", "AWS::EC2::SecurityGroup")
    assert forward["VpcConfig"]["SecurityGroupIds"] == [{"Fn::GetAtt": [group_id, "GroupId"]}]
    assert all("privateSubnet" in render(s) for s in forward["VpcConfig"]["SubnetIds"])
    alb_group = logical_id(lineage, "LoadBalancerSecurityGroup", "AWS::EC2::SecurityGroup")
    alb_group_import = {"Fn::ImportValue": export_name(lineage, {"Fn::GetAtt": [alb_group, "GroupId"]})}
    # Its other way out: the SQS API over HTTPS (dead-letter sends, visibility changes).
    assert gateway["Resources"][group_id]["Properties"]["SecurityGroupEgress"] == [
        {
            "CidrIp": "0.0.0.0/0",
            "Description": "Gateway forwarder to the SQS API (HTTPS)",
            "FromPort": 443,
            "IpProtocol": "tcp",
            "ToPort": 443,
        }
    ]
    (egress,) = by_type(gateway, "AWS::EC2::SecurityGroupEgress").values()
    assert egress["Properties"]["GroupId"] == {"Fn::GetAtt": [group_id, "GroupId"]}
    assert egress["Properties"]["DestinationSecurityGroupId"] == alb_group_import
    assert (egress["Properties"]["FromPort"], egress["Properties"]["ToPort"]) == (FORWARD_LISTENER_PORT,) * 2
    (rule_in,) = by_type(gateway, "AWS::EC2::SecurityGroupIngress").values()
    assert rule_in["Properties"]["GroupId"] == alb_group_import
    assert rule_in["Properties"]["SourceSecurityGroupId"] == {"Fn::GetAtt": [group_id, "GroupId"]}
    assert (rule_in["Properties"]["FromPort"], rule_in["Properties"]["ToPort"]) == (FORWARD_LISTENER_PORT,) * 2
    # Nobody else may reach that listener (the lineage stack opens only its own port to its clients).
    assert not [r for r in ingress(lineage, alb_group) if r["FromPort"] <= FORWARD_LISTENER_PORT <= r["ToPort"]]
    # The load balancer already reaches the API tasks on their port (the lineage stack's own rule).
    tasks = logical_id(lineage, "MarquezSecurityGroup", "AWS::EC2::SecurityGroup")
    assert any(
        r.get("SourceSecurityGroupId") == {"Fn::GetAtt": [alb_group, "GroupId"]} and r["FromPort"] == API_PORT
        for r in ingress(lineage, tasks)
    )


def test_ingest_may_only_archive_enqueue_and_read_its_key(synth):
    tpl = synth.template_json("gateway")
    role = tpl["Resources"][_function(tpl, "Ingest")[0]]["Properties"]["Role"]["Fn::GetAtt"][0]
    bucket_id, _ = one(tpl, "AWS::S3::Bucket")
    queue_id, _, _, _ = _queues(tpl)
    key_id, _ = one(tpl, "AWS::KMS::Key")
    secret_id, _ = one(tpl, "AWS::SecretsManager::Secret")
    granted = {
        (action, json.dumps(s["Resource"], sort_keys=True))
        for s in statements(tpl, role)
        for action in as_list(s["Action"])
    }
    bucket_objects = {"Fn::Join": ["", [{"Fn::GetAtt": [bucket_id, "Arn"]}, "/*"]]}
    expected = [
        ("s3:PutObject", bucket_objects),
        ("sqs:SendMessage", {"Fn::GetAtt": [queue_id, "Arn"]}),
        ("kms:GenerateDataKey", {"Fn::GetAtt": [key_id, "Arn"]}),
        ("kms:Decrypt", {"Fn::GetAtt": [key_id, "Arn"]}),
        ("secretsmanager:GetSecretValue", {"Ref": secret_id}),
        ("secretsmanager:DescribeSecret", {"Ref": secret_id}),
    ]
    assert granted == {(a, json.dumps(r, sort_keys=True)) for a, r in expected}


def test_forwarder_may_only_consume_the_queue_and_dead_letter_refused_events(synth):
    tpl = synth.template_json("gateway")
    role = tpl["Resources"][_function(tpl, "Forward")[0]]["Properties"]["Role"]["Fn::GetAtt"][0]
    queue_id, _, dlq_id, _ = _queues(tpl)
    key_id, _ = one(tpl, "AWS::KMS::Key")
    granted = {(a, json.dumps(s["Resource"])) for s in statements(tpl, role) for a in as_list(s["Action"])}
    queue = json.dumps({"Fn::GetAtt": [queue_id, "Arn"]})
    assert granted == {
        *(
            (a, queue)
            for a in (
                "sqs:ReceiveMessage",
                "sqs:ChangeMessageVisibility",
                "sqs:GetQueueUrl",
                "sqs:DeleteMessage",
                "sqs:GetQueueAttributes",
            )
        ),
        ("kms:Decrypt", json.dumps({"Fn::GetAtt": [key_id, "Arn"]})),
        # Sends to the dead-letter queue (encrypted with the gateway key), nothing else there.
        ("sqs:SendMessage", json.dumps({"Fn::GetAtt": [dlq_id, "Arn"]})),
        ("kms:GenerateDataKey", json.dumps({"Fn::GetAtt": [key_id, "Arn"]})),
    }


def test_lambda_asset_holds_exactly_the_allowed_files(synth):
    tpl = synth.template_json("gateway")
    keys = {f["Properties"]["Code"]["S3Key"] for f in by_type(tpl, FUNCTION).values()}
    assert len(by_type(tpl, FUNCTION)) == 2 and len(keys) == 1  # one asset for both functions
    manifest = json.loads((Path(synth.outdir) / f"{synth.stack_names['gateway']}.assets.json").read_text())
    (asset,) = [
        a["source"]["path"]
        for a in manifest["files"].values()
        if {d["objectKey"] for d in a["destinations"].values()} == keys
    ]
    directory = Path(synth.outdir) / asset
    files = sorted(p.relative_to(directory).as_posix() for p in directory.rglob("*") if p.is_file())
    package = REPO_ROOT / "emr_lineage" / "gateway"
    gateway_files = [
        p.relative_to(REPO_ROOT).as_posix()
        for p in package.rglob("*")
        if p.is_file() and "__pycache__" not in p.parts and p.suffix != ".pyc"
    ]
    assert "emr_lineage/gateway/config.py" in gateway_files
    repository = [name for name in files if name.startswith("emr_lineage/")]
    assert repository == sorted([*gateway_env.ASSET_FILES, *gateway_files]) == asset_files()
    schemas = [name for name in files if name.startswith(f"{gateway_env.SCHEMA_ASSET_DIR}/")]
    assert schemas == sorted(f"{gateway_env.SCHEMA_ASSET_DIR}/{pinned.filename}" for pinned in PINNED_SCHEMAS)
    unpacked = set()
    for wheel in wheels(download=False):  # the Lambda's, for its Python and architecture
        with zipfile.ZipFile(wheel) as archive:
            unpacked |= {name for name in archive.namelist() if not name.endswith("/")}
    assert set(files) - {*repository, *schemas} == unpacked
    for handler in (gateway_env.INGEST_HANDLER, gateway_env.FORWARD_HANDLER):
        module, _ = handler.rsplit(".", 1)
        assert module.replace(".", "/") + ".py" in files, handler


def test_gateway_names_are_published_for_the_tools(synth):
    tpl = synth.template_json("gateway")
    bucket_id, _ = one(tpl, "AWS::S3::Bucket")
    queue_id, _, dlq_id, _ = _queues(tpl)
    secret_id, _ = one(tpl, "AWS::SecretsManager::Secret")
    workgroup_id, _ = one(tpl, "AWS::Athena::WorkGroup")
    published = {
        p["Properties"]["Name"]: p["Properties"]["Value"] for p in by_type(tpl, "AWS::SSM::Parameter").values()
    }
    assert published == {
        parameters.gateway_archive_bucket(synth.env): {"Ref": bucket_id},
        parameters.gateway_queue_url(synth.env): {"Ref": queue_id},
        parameters.gateway_dead_letter_queue_url(synth.env): {"Ref": dlq_id},
        parameters.gateway_api_key_secret(synth.env): {"Ref": secret_id},
        parameters.gateway_athena_workgroup(synth.env): {"Ref": workgroup_id},
        parameters.gateway_archive_database(synth.env): f"emr_lineage_{synth.env}_lineage_archive",
        parameters.gateway_athena_results(synth.env): {
            "Fn::Join": ["", ["s3://", {"Ref": bucket_id}, "/athena-results/"]]
        },
    }
    outputs = [o["Value"] for o in tpl["Outputs"].values() if "Export" not in o]
    assert sorted(map(json.dumps, outputs)) == sorted(map(json.dumps, published.values()))


def test_a_disabled_gateway_adds_no_stack(cdk_context):
    """Construction only (no synth): with ``enabled: false`` the app has no gateway stack."""
    context = copy.deepcopy(cdk_context)
    context["emr-lineage"]["environments"]["dev"]["gateway"]["enabled"] = False
    app = cdk.App(context={**context, "env": "dev"})
    stacks = cdk_app.build_app(app)
    assert sorted(stacks) == ["data_lake", "emr", "lineage", "monitoring", "network"]
    assert not [s for s in app.node.children if isinstance(s, cdk.Stack) and s.stack_name.endswith("-Gateway")]
    # Monitoring watches Marquez only: no gateway alarms.
    alarms = set(stacks["monitoring"].alarms)
    assert "RdsCpu" in alarms and alarms.isdisjoint({"DeadLetterMessages", "IngestErrors", "ForwardErrors"})
    # Without a gateway the clusters' bootstrap reads no key and the nodes get no secret access.
    emr = stacks["emr"]
    (action,) = emr.resolve(emr.launch_spec)["BootstrapActions"]
    assert "--api-key-secret" not in action["ScriptBootstrapAction"]["Args"]
    policy = emr.resolve(emr.roles.instance_role.node.find_child("DefaultPolicy").document)
    assert policy["Statement"] and "secretsmanager" not in json.dumps(policy)
