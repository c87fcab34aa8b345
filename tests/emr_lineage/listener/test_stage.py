"""Staging the OpenLineage listener jar: a local HTTP server stands in for Maven Central, moto for S3."""

from __future__ import annotations

import functools
import hashlib
import json
import time
from pathlib import Path
from urllib.parse import urlsplit

import boto3
import pytest
from click.testing import CliRunner

from emr_lineage.aws import parameters
from emr_lineage.aws.clients import AwsError
from emr_lineage.cli.app import main
from emr_lineage.http import HttpClient
from emr_lineage.listener.artifact import UNPINNED, bootstrap_arguments, bootstrap_script_uri, listener_s3_key
from emr_lineage.listener.stage import (
    ChecksumMismatchError,
    DownloadError,
    ListenerNotPinnedError,
    NotAJarError,
    download,
    download_client,
    stage_listener,
)
from emr_lineage.settings.loader import load_settings
from tests.emr_lineage.fake_marquez import Answer
from tests.emr_lineage.listener.maven import BUCKET, REGION, build_test_jar, keys
from tests.helpers import one_error_line
from tests.paths import BOOTSTRAP_SCRIPT
from tests.versions import EMR_RELEASE, LISTENER_JAR, OPENLINEAGE_VERSION, SCALA_VERSION


def pinned(sha256: str | None):
    return load_settings("dev").versions.openlineage_spark.model_copy(update={"sha256": sha256})


fast_http = functools.partial(download_client, backoff=0.01)


# --- stage_listener -----------------------------------------------------------------------------


def test_stage_verifies_and_uploads_with_checksum_metadata(maven, s3, test_jar, test_jar_sha256):
    artifact = pinned(test_jar_sha256)
    result = stage_listener(artifact, BUCKET, s3_client=s3, http=fast_http(), maven_repository=maven.url)

    assert result.uploaded
    assert result.key == f"listener/{LISTENER_JAR}" == listener_s3_key(artifact)
    stored = s3.get_object(Bucket=BUCKET, Key=result.key)
    assert stored["Body"].read() == test_jar
    assert stored["Metadata"] == {"sha256": test_jar_sha256}
    assert maven.requests == [
        f"/maven2/io/openlineage/openlineage-spark_{SCALA_VERSION}/{OPENLINEAGE_VERSION}/{LISTENER_JAR}"
    ]


def test_second_stage_changes_nothing(maven, s3, test_jar_sha256):
    artifact = pinned(test_jar_sha256)
    first = stage_listener(artifact, BUCKET, s3_client=s3, http=fast_http(), maven_repository=maven.url)
    etag = s3.head_object(Bucket=BUCKET, Key=first.key)["LastModified"]
    second = stage_listener(artifact, BUCKET, s3_client=s3, http=fast_http(), maven_repository=maven.url)

    assert first.uploaded and not second.uploaded
    assert s3.head_object(Bucket=BUCKET, Key=first.key)["LastModified"] == etag
    assert keys(s3) == [first.key]


def test_checksum_mismatch_uploads_nothing(maven, s3, test_jar_sha256):
    wrong = "0" * 64
    with pytest.raises(ChecksumMismatchError, match=f"SHA-256 mismatch, downloaded {test_jar_sha256}.*pins {wrong}"):
        stage_listener(pinned(wrong), BUCKET, s3_client=s3, http=fast_http(), maven_repository=maven.url)
    assert keys(s3) == []


def test_missing_artifact_is_a_download_error_and_uploads_nothing(maven, s3, test_jar_sha256):
    maven.files.clear()
    with pytest.raises(DownloadError, match=r"download failed: GET http://127\.0\.0\.1:\d+/maven2/.* -> HTTP 404"):
        stage_listener(pinned(test_jar_sha256), BUCKET, s3_client=s3, http=fast_http(), maven_repository=maven.url)
    assert keys(s3) == []


def test_unreachable_repository_is_a_download_error(s3, test_jar_sha256):
    import socket

    with socket.socket() as sock:  # a port nobody listens on
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    with pytest.raises(
        DownloadError,
        match=rf"download failed: http://127.0.0.1:{port} is unreachable: .*\(GET http://127.0.0.1:{port}/",
    ):
        stage_listener(
            pinned(test_jar_sha256),
            BUCKET,
            s3_client=s3,
            http=fast_http(retries=1),
            maven_repository=f"http://127.0.0.1:{port}",
        )
    assert keys(s3) == []


def test_transient_server_errors_are_retried(maven, s3, test_jar_sha256):
    maven.fail_next = 2
    result = stage_listener(pinned(test_jar_sha256), BUCKET, s3_client=s3, http=fast_http(), maven_repository=maven.url)
    assert result.uploaded
    assert len(maven.requests) == 3


def test_unpinned_is_refused_before_any_download(maven, s3):
    with pytest.raises(ListenerNotPinnedError, match="no SHA-256 pinned in cdk.json.*stage-listener --pin"):
        stage_listener(pinned(None), BUCKET, s3_client=s3, http=fast_http(), maven_repository=maven.url)
    assert maven.requests == []
    assert keys(s3) == []


def test_a_changed_object_in_the_bucket_is_replaced(maven, s3, test_jar, test_jar_sha256):
    key = listener_s3_key(pinned(test_jar_sha256))
    s3.put_object(Bucket=BUCKET, Key=key, Body=b"tampered", Metadata={"sha256": "f" * 64})
    result = stage_listener(pinned(test_jar_sha256), BUCKET, s3_client=s3, http=fast_http(), maven_repository=maven.url)
    assert result.uploaded
    assert s3.get_object(Bucket=BUCKET, Key=key)["Body"].read() == test_jar


@pytest.mark.parametrize(
    ("body", "problem"),
    [
        (b"<html>Proxy login</html>", "not a zip file"),
        (build_test_jar(manifest=False), "a zip file without META-INF/MANIFEST.MF"),
        (
            build_test_jar(listener=False),
            "a zip file without io/openlineage/spark/agent/OpenLineageSparkListener.class",
        ),
        (
            build_test_jar(manifest=False, listener=False),
            "a zip file without META-INF/MANIFEST.MF and io/openlineage/spark/agent/OpenLineageSparkListener.class",
        ),
    ],
)
def test_a_body_that_is_not_the_listener_jar_is_refused_and_nothing_uploaded(maven, s3, body, problem):
    artifact = pinned(hashlib.sha256(body).hexdigest())  # the pin matches: the jar check alone refuses
    maven.publish(artifact, body)
    with pytest.raises(
        NotAJarError, match=rf"the download from http://127.*\.jar is not the OpenLineage listener jar \({problem}\)"
    ):
        stage_listener(artifact, BUCKET, s3_client=s3, http=fast_http(), maven_repository=maven.url)
    assert keys(s3) == []


def test_a_download_over_the_size_cap_is_refused(maven, s3, test_jar, test_jar_sha256):
    with pytest.raises(
        DownloadError, match=rf"reply too large \({len(test_jar)} bytes announced, the limit is 100 bytes\)"
    ):
        stage_listener(
            pinned(test_jar_sha256), BUCKET, s3_client=s3, http=HttpClient(max_bytes=100), maven_repository=maven.url
        )
    assert keys(s3) == []


def test_a_dripping_repository_is_cut_at_the_deadline(marquez, tmp_path, test_jar):
    # The suite's fake server (tests/emr_lineage/fake_marquez.py) sends the jar one byte every 0.2 s.
    marquez.routes["GET /maven2/listener.jar"] = lambda state, request: Answer(200, test_jar, drip=0.2)
    started = time.monotonic()
    with pytest.raises(DownloadError, match=r"download failed: http://127.0.0.1:\d+ timed out after 1s"):
        download(marquez.url + "/maven2/listener.jar", tmp_path / "x.jar", http=download_client(1.0))
    assert time.monotonic() - started < 2.5


def test_staging_to_a_missing_bucket_is_one_aws_error(maven, s3, test_jar_sha256):
    with pytest.raises(
        AwsError, match=r"s3://no-such-bucket/listener/.*\.jar \(bucket 'no-such-bucket' does not exist\)"
    ):
        stage_listener(
            pinned(test_jar_sha256), "no-such-bucket", s3_client=s3, http=fast_http(), maven_repository=maven.url
        )


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
    return CliRunner().invoke(main, ["stage-listener", *args])


def test_cli_stages_to_the_bucket_named_in_ssm(maven, s3, cdk_json_pinned, test_jar_sha256):
    boto3.client("ssm", region_name=REGION).put_parameter(
        Name=parameters.artifacts_bucket("dev"), Value=BUCKET, Type="String"
    )
    result = stage("--env", "dev", "--cdk-json", cdk_json_pinned, "--maven-repository", maven.url)
    assert result.exit_code == 0, result.output
    assert f"s3://{BUCKET}/listener/{LISTENER_JAR}: uploaded" in result.output
    assert test_jar_sha256 in result.output

    again = stage("--env", "dev", "--cdk-json", cdk_json_pinned, "--maven-repository", maven.url)
    assert again.exit_code == 0
    assert "already staged, unchanged" in again.output


def test_cli_missing_ssm_parameter_is_one_clear_line(maven, s3, cdk_json_pinned):
    result = stage("--env", "dev", "--cdk-json", cdk_json_pinned, "--maven-repository", maven.url)
    assert one_error_line(result, stdout_empty=True) == (
        "error: SSM parameter /emr-lineage/dev/emr/artifacts-bucket not found: deploy the EMR stack for env 'dev' "
        "first (make deploy ENV=dev), or pass --bucket"
    )
    assert maven.requests == []


def test_cli_checksum_mismatch_exits_2_and_uploads_nothing(maven, s3, cdk_json_pinned):
    maven.publish(load_settings("dev").versions.openlineage_spark, build_test_jar(created_by="someone else"))
    result = stage("--cdk-json", cdk_json_pinned, "--bucket", BUCKET, "--maven-repository", maven.url)
    line = one_error_line(result, stdout_empty=True)
    assert "SHA-256 mismatch" in line and "nothing uploaded" in line
    assert keys(s3) == []


def test_cli_refuses_a_body_that_is_not_a_jar(maven, s3, tmp_path, repo_root):
    body = b"<html>Sign in to the proxy</html>"
    document = json.loads((repo_root / "cdk.json").read_text())
    document["context"]["emr-lineage"]["versions"]["openlineage_spark"]["sha256"] = hashlib.sha256(body).hexdigest()
    (tmp_path / "cdk.json").write_text(json.dumps(document))
    maven.publish(load_settings("dev").versions.openlineage_spark, body)
    result = stage("--cdk-json", str(tmp_path / "cdk.json"), "--bucket", BUCKET, "--maven-repository", maven.url)
    line = one_error_line(result, stdout_empty=True)
    assert " is not the OpenLineage listener jar (not a zip file); check the Maven repository URL" in line
    assert keys(s3) == []


def test_cli_download_failure_exits_2_and_uploads_nothing(maven, s3, cdk_json_pinned):
    maven.files.clear()
    result = stage("--cdk-json", cdk_json_pinned, "--bucket", BUCKET, "--maven-repository", maven.url)
    line = one_error_line(result, stdout_empty=True)
    assert line.startswith("error: download failed: GET http://127.0.0.1:") and "-> HTTP 404" in line
    assert keys(s3) == []


@pytest.mark.parametrize(
    ("bucket", "problem"),
    [
        ("no-such-bucket", "(bucket 'no-such-bucket' does not exist)"),
        ("Not_A_Bucket!", 'Invalid bucket name "Not_A_Bucket!"'),
    ],
)
def test_cli_missing_or_invalid_bucket_is_one_line_exit_2(maven, s3, cdk_json_pinned, bucket, problem):
    result = stage("--cdk-json", cdk_json_pinned, "--bucket", bucket, "--maven-repository", maven.url)
    line = one_error_line(result, stdout_empty=True)
    assert f"s3://{bucket}/listener/{LISTENER_JAR}" in line and problem in line


def test_cli_download_deadline(marquez, s3, cdk_json_pinned, test_jar):
    path = urlsplit(
        load_settings("dev")
        .versions.openlineage_spark.model_copy(update={"maven_repository": marquez.url + "/maven2"})
        .download_url
    ).path
    marquez.routes[f"GET {path}"] = lambda state, request: Answer(200, test_jar, drip=0.2)
    started = time.monotonic()
    result = stage(
        "--cdk-json",
        cdk_json_pinned,
        "--bucket",
        BUCKET,
        "--maven-repository",
        marquez.url + "/maven2",
        "--timeout",
        "1",
    )
    assert "timed out after 1s" in one_error_line(result, stdout_empty=True)
    assert time.monotonic() - started < 2.5
    assert keys(s3) == []


def test_cli_refuses_unpinned(maven, s3):
    # The real cdk.json: no checksum pinned yet.
    assert load_settings("dev").versions.openlineage_spark.sha256 is None
    refused = stage("--bucket", BUCKET, "--maven-repository", maven.url)
    assert "no SHA-256 pinned" in one_error_line(refused, stdout_empty=True)
    assert maven.requests == []
    assert keys(s3) == []


def test_cli_maven_repository_from_environment(maven, s3, cdk_json_pinned, monkeypatch):
    monkeypatch.setenv("EMR_LINEAGE_MAVEN_REPOSITORY", maven.url)
    result = stage("--cdk-json", cdk_json_pinned, "--bucket", BUCKET)
    assert result.exit_code == 0, result.output
    assert len(maven.requests) == 1


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


def test_bootstrap_arguments_without_a_pin_make_the_script_refuse():
    args = bootstrap_arguments(load_settings("dev"), "bucket-1")
    assert args[args.index("--sha256") + 1] == UNPINNED
    assert BOOTSTRAP_SCRIPT.is_file()
    assert bootstrap_script_uri("bucket-1") == "s3://bucket-1/bootstrap/install-openlineage.sh"
