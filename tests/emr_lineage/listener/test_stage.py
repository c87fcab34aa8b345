"""Staging the listener jar: the verified jar of the cache uploaded once to a moto S3 bucket (the cache holds
a test jar pinned by its SHA-256, so Maven never runs here; a mismatch: test_fetch.py), and the bootstrap
action's arguments."""

from __future__ import annotations

import json
from pathlib import Path

import boto3
import pytest
from click.testing import CliRunner

from emr_lineage.aws import parameters
from emr_lineage.aws.clients import AwsError
from emr_lineage.cli.app import main
from emr_lineage.listener.artifact import UNPINNED, bootstrap_arguments, bootstrap_script_uri, listener_s3_key
from emr_lineage.listener.jar import ListenerNotPinnedError
from emr_lineage.listener.maven import fetch_jar
from emr_lineage.listener.stage import upload_jar
from emr_lineage.settings.loader import load_settings
from emr_lineage.settings.trusted_ca import PrivateCa, S3CaBundle
from tests.emr_lineage.listener.maven import BUCKET, REGION, keys
from tests.helpers import one_error_line
from tests.paths import BOOTSTRAP_SCRIPT
from tests.versions import EMR_RELEASE, LISTENER, LISTENER_JAR


def pinned(sha256: str | None):
    return LISTENER.model_copy(update={"sha256": sha256})


@pytest.fixture
def cached(cache_dir: Path, test_jar: bytes) -> Path:
    """The cache (EMR_LINEAGE_LISTENER_DIR) holding the test jar under the listener's file name."""
    cache_dir.mkdir()
    (cache_dir / LISTENER_JAR).write_bytes(test_jar)
    return cache_dir


# --- staging: the verified jar, uploaded ----------------------------------------------------------


def stage_listener(artifact, bucket: str, *, s3_client):
    """What listener stage does: fetch (and verify) the pinned jar, then upload it."""
    return upload_jar(fetch_jar(artifact), artifact, bucket, s3_client=s3_client)


def test_stage_uploads_the_verified_jar_with_its_checksum_once(cached, s3, test_jar, test_jar_sha256, no_mvn):
    artifact = pinned(test_jar_sha256)
    first = stage_listener(artifact, BUCKET, s3_client=s3)
    assert first.uploaded and first.key == f"listener/{LISTENER_JAR}" == listener_s3_key(artifact)
    stored = s3.get_object(Bucket=BUCKET, Key=first.key)
    assert stored["Body"].read() == test_jar and stored["Metadata"] == {"sha256": test_jar_sha256}
    modified = s3.head_object(Bucket=BUCKET, Key=first.key)["LastModified"]

    second = stage_listener(artifact, BUCKET, s3_client=s3)
    assert not second.uploaded and s3.head_object(Bucket=BUCKET, Key=first.key)["LastModified"] == modified
    assert keys(s3) == [first.key]


def test_a_changed_object_in_the_bucket_is_replaced(cached, s3, test_jar, test_jar_sha256, no_mvn):
    key = listener_s3_key(pinned(test_jar_sha256))
    s3.put_object(Bucket=BUCKET, Key=key, Body=b"tampered", Metadata={"sha256": "f" * 64})
    assert stage_listener(pinned(test_jar_sha256), BUCKET, s3_client=s3).uploaded
    assert s3.get_object(Bucket=BUCKET, Key=key)["Body"].read() == test_jar


def test_unpinned_is_refused_before_maven_and_uploads_nothing(cached, s3, no_mvn):
    with pytest.raises(ListenerNotPinnedError, match="no SHA-256 pinned in cdk.json.*listener fetch --pin"):
        stage_listener(pinned(None), BUCKET, s3_client=s3)
    assert keys(s3) == []


def test_staging_to_a_missing_bucket_is_one_aws_error(cached, s3, test_jar_sha256, no_mvn):
    with pytest.raises(
        AwsError, match=r"s3://no-such-bucket/listener/.*\.jar \(bucket 'no-such-bucket' does not exist\)"
    ):
        stage_listener(pinned(test_jar_sha256), "no-such-bucket", s3_client=s3)


# --- the CLI ------------------------------------------------------------------------------------


@pytest.fixture
def cdk_json_pinned(tmp_path: Path, repo_root: Path, test_jar_sha256) -> str:
    """A copy of cdk.json whose listener checksum is pinned to the test jar's (for --cdk-json)."""
    document = json.loads((repo_root / "cdk.json").read_text())
    document["context"]["emr-lineage"]["versions"]["openlineage_spark"]["sha256"] = test_jar_sha256
    path = tmp_path / "cdk.json"
    path.write_text(json.dumps(document))
    return str(path)


def stage(*args: str):
    return CliRunner().invoke(main, ["listener", "stage", *args])


def test_cli_stages_to_the_bucket_named_in_ssm(cached, s3, cdk_json_pinned, test_jar, test_jar_sha256, no_mvn):
    boto3.client("ssm", region_name=REGION).put_parameter(
        Name=parameters.artifacts_bucket("dev"), Value=BUCKET, Type="String"
    )
    result = stage("--env", "dev", "--cdk-json", cdk_json_pinned)
    assert result.exit_code == 0, result.output
    assert result.stdout.splitlines() == [
        f"{cached / LISTENER_JAR}: already fetched, verified against the pin ({len(test_jar)} bytes, "
        f"sha256 {test_jar_sha256})",
        f"s3://{BUCKET}/listener/{LISTENER_JAR}: uploaded ({len(test_jar)} bytes, sha256 {test_jar_sha256})",
    ]
    again = stage("--env", "dev", "--cdk-json", cdk_json_pinned)
    assert again.exit_code == 0 and f"s3://{BUCKET}/listener/{LISTENER_JAR}: already staged, unchanged" in again.stdout


def test_cli_missing_ssm_parameter_is_one_clear_line(cached, s3, cdk_json_pinned, no_mvn):
    assert one_error_line(stage("--cdk-json", cdk_json_pinned), stdout_empty=True) == (
        "error: SSM parameter /emr-lineage/dev/emr/artifacts-bucket not found: deploy the EMR stack for env 'dev' "
        "first (make deploy ENV=dev), or pass --bucket"
    )


def test_cli_missing_or_invalid_bucket_is_one_line_exit_2(cached, s3, cdk_json_pinned, no_mvn):
    line = one_error_line(stage("--cdk-json", cdk_json_pinned, "--bucket", "no-such-bucket"))
    assert f"s3://no-such-bucket/listener/{LISTENER_JAR}" in line and "(bucket 'no-such-bucket' does not exist)" in line
    invalid = one_error_line(stage("--cdk-json", cdk_json_pinned, "--bucket", "Not_A_Bucket!"))
    assert "'Not_A_Bucket!' is not an S3 bucket name" in invalid


def test_cli_refuses_unpinned(cached, s3, make_cdk_json, no_mvn):
    refused = stage("--cdk-json", str(make_cdk_json()), "--bucket", BUCKET)
    assert "no SHA-256 pinned" in one_error_line(refused, stdout_empty=True)
    assert keys(s3) == []


@pytest.mark.parametrize(
    ("args", "fragment"),
    [
        (["--replace-pin"], "--replace-pin only goes with --pin"),
        (["--maven-repository", "https://mirror.example"], "No such option '--maven-repository'"),  # settings.xml now
        (["--timeout", "5"], "No such option '--timeout'"),
    ],
)
def test_cli_pin_options_without_pin_and_dropped_options_are_usage_errors(cdk_json_pinned, args, fragment, no_mvn):
    one_error_line(stage("--cdk-json", cdk_json_pinned, "--bucket", BUCKET, *args), fragment, stdout_empty=True)


# --- bootstrap action arguments -----------------------------------------------------------------


def test_bootstrap_arguments_follow_the_environment_settings(test_jar_sha256):
    settings = load_settings("prod")
    settings = settings.model_copy(
        update={"versions": settings.versions.model_copy(update={"openlineage_spark": pinned(test_jar_sha256)})}
    )
    assert bootstrap_arguments(settings, "bucket-1") == [
        "--jar-uri",
        f"s3://bucket-1/listener/{LISTENER_JAR}",
        "--sha256",
        test_jar_sha256,
        "--listener-source",
        "bundle",
        "--fail-closed",
    ]
    emr_wins = settings.model_copy(
        update={"openlineage": settings.openlineage.model_copy(update={"listener_source": "emr", "fail_open": True})}
    )
    assert bootstrap_arguments(emr_wins, "bucket-1", emr_release=EMR_RELEASE, region="eu-west-1")[4:] == [
        "--listener-source",
        "emr",
        "--fail-open",
        "--emr-release",
        EMR_RELEASE,
        "--region",
        "eu-west-1",
    ]


def test_bootstrap_arguments_carry_the_committed_pin_and_unpinned_makes_the_script_refuse():
    settings = load_settings("dev")
    args = bootstrap_arguments(settings, "bucket-1")
    assert args[args.index("--sha256") + 1] == LISTENER.sha256
    unpinned = settings.model_copy(
        update={"versions": settings.versions.model_copy(update={"openlineage_spark": pinned(None)})}
    )
    args = bootstrap_arguments(unpinned, "bucket-1")
    assert args[args.index("--sha256") + 1] == UNPINNED
    assert BOOTSTRAP_SCRIPT.is_file()
    assert bootstrap_script_uri("bucket-1") == "s3://bucket-1/bootstrap/install-openlineage.sh"


def test_bootstrap_arguments_name_the_trusted_ca_the_nodes_import():
    settings = load_settings("dev")
    bundle = S3CaBundle(type="s3", uri="s3://pki/ca/root.pem", sha256="ab" * 32)
    private_ca = PrivateCa(
        type="aws_private_ca", arn="arn:aws:acm-pca:eu-west-1:123456789012:certificate-authority/" + "0" * 36
    )
    for trusted_ca, expected in (
        (bundle, ["--trusted-ca-uri", "s3://pki/ca/root.pem", "--trusted-ca-sha256", "ab" * 32]),
        (private_ca, ["--trusted-ca-arn", private_ca.arn]),
    ):
        trusting = settings.model_copy(
            update={"openlineage": settings.openlineage.model_copy(update={"trusted_ca": trusted_ca})}
        )
        args = bootstrap_arguments(trusting, "bucket-1", api_key_secret_arn="arn:aws:secretsmanager:x")
        assert args[-len(expected) :] == expected
    assert not [a for a in bootstrap_arguments(settings, "bucket-1") if a.startswith("--trusted-ca")]
