"""bootstrap/install-openlineage.sh, run for real with bash and the AWS CLI against moto_server S3,
in a sandbox tree that mimics an EMR node (EMR_NODE_ROOT)."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest

from emr_lineage.gateway import config as gateway_config
from emr_lineage.spark import conf as spark_conf
from emr_lineage.spark import truststore
from emr_lineage.spark.conf import LISTENER_CLASS
from tests.paths import BOOTSTRAP_SCRIPT
from tests.versions import EMR_RELEASE, LISTENER_JAR

JAR = LISTENER_JAR


def one_error_line(result: subprocess.CompletedProcess) -> str:
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1, result.stderr
    assert lines[0].startswith("install-openlineage: ERROR: "), lines[0]
    return lines[0]


def test_good_jar_is_installed_where_spark_loads_it_and_a_second_run_changes_nothing(
    node, bucket, s3_client, args_for, listener_jar, listener_sha256
):
    node.set_release("emr-7.10.0")
    node.install_spark()

    result = node.run(args_for(listener_sha256, bucket))

    assert result.returncode == 0, result.stderr
    assert result.stderr == ""
    assert (node.spark_jars / JAR).read_bytes() == listener_jar
    assert (node.install_dir / JAR).read_bytes() == listener_jar
    assert node.listener_jars_on_classpath() == [node.spark_jars / JAR]
    log = node.log_file.read_text()
    assert f"downloaded and verified s3://{bucket}/listener/{JAR}" in log
    assert f"installed {node.spark_jars / JAR}" in log
    assert not node.pid_file.exists()  # EMR 7.10 ships no listener and Spark is there: nothing to wait for

    before = node.snapshot()
    # Proof that the second run does not download: the object is gone and the run still succeeds.
    s3_client.delete_object(Bucket=bucket, Key=f"listener/{JAR}")

    second = node.run(args_for(listener_sha256, bucket))

    assert second.returncode == 0, second.stderr
    assert "nothing changed: the listener was already installed" in second.stdout
    assert "not downloading" in second.stdout
    assert node.snapshot() == before


def test_before_spark_is_installed_a_watcher_finishes_the_install(
    node, bucket, args_for, listener_jar, listener_sha256, wait, alive
):
    # The real boot order: the bootstrap runs before EMR installs Spark.
    node.set_release("emr-7.10.0")

    result = node.run(args_for(listener_sha256, bucket))

    assert result.returncode == 0, result.stderr
    assert "started watcher pid" in result.stdout
    assert (node.install_dir / JAR).read_bytes() == listener_jar
    assert not node.spark_jars.exists()
    pid = node.watchers[-1]
    # run() waits for EOF on stdout/stderr: returning while the watcher lives proves the watcher
    # does not hold the bootstrap's output open (EMR would otherwise wait for it).
    assert alive(pid)

    node.install_spark()
    wait(lambda: (node.spark_jars / JAR).exists(), "the watcher to install the jar into Spark's jars")
    wait(lambda: not alive(pid), "the watcher to exit")
    assert (node.spark_jars / JAR).read_bytes() == listener_jar
    assert not node.pid_file.exists()
    assert "watcher done" in node.log_file.read_text()


def test_region_comes_from_the_node_when_not_given(node, bucket, args_for, listener_sha256):
    node.set_release("emr-7.10.0")  # instance data says us-east-1
    node.install_spark()
    del node.env["AWS_DEFAULT_REGION"]

    result = node.run(args_for(listener_sha256, bucket))

    assert result.returncode == 0, result.stderr
    assert "region us-east-1" in result.stdout
    assert node.listener_jars_on_classpath() == [node.spark_jars / JAR]


def test_bad_checksum_fails_with_one_line_and_installs_nothing(node, bucket, args_for):
    node.set_release("emr-7.10.0")
    node.install_spark()
    wrong = "ab" * 32

    result = node.run(args_for(wrong, bucket))

    assert result.returncode == 1
    line = one_error_line(result)
    assert f"SHA-256 mismatch for s3://{bucket}/listener/{JAR}" in line and f"expected {wrong}" in line
    assert node.listener_jars_on_classpath() == []
    assert list(node.install_dir.iterdir()) == []
    assert line.removeprefix("install-openlineage: ") in node.log_file.read_text()


def test_missing_object_retries_then_fails_with_one_line(node, s3_client, args_for, listener_sha256):
    node.set_release("emr-7.10.0")
    node.install_spark()
    empty = "artifacts-empty-bucket"
    s3_client.create_bucket(Bucket=empty)

    result = node.run(args_for(listener_sha256, empty, extra=("--attempts", "3", "--retry-delay", "0.05")))

    assert result.returncode == 1
    line = one_error_line(result)
    assert f"could not download s3://{empty}/listener/{JAR} after 3 attempts" in line
    assert "404" in line
    assert re.findall(r"download attempt (\d)/3 failed", result.stdout) == ["1", "2"]
    assert "retrying in 0.05s" in result.stdout and "retrying in 0.1s" in result.stdout  # exponential backoff
    assert node.listener_jars_on_classpath() == []


def test_emr_shipped_jar_present_bundle_wins(node, bucket, args_for, listener_jar, listener_sha256):
    node.set_release(EMR_RELEASE)
    node.install_spark()
    emr_jar = node.ship_emr_listener()

    result = node.run(args_for(listener_sha256, bucket, listener_source="bundle"))

    assert result.returncode == 0, result.stderr
    assert node.listener_jars_on_classpath() == [node.spark_jars / JAR]
    assert not emr_jar.exists()
    assert emr_jar.with_name(emr_jar.name + ".disabled-by-emr-lineage").exists()
    assert f"disabled {emr_jar}" in result.stdout
    assert not node.pid_file.exists()

    again = node.run(args_for(listener_sha256, bucket, listener_source="bundle"))
    assert again.returncode == 0 and "nothing changed" in again.stdout


def test_emr_jar_that_appears_after_the_bootstrap_is_disabled_by_the_watcher(
    node, bucket, args_for, listener_sha256, wait, alive
):
    node.set_release(EMR_RELEASE)

    result = node.run(args_for(listener_sha256, bucket, listener_source="bundle"))
    assert result.returncode == 0, result.stderr
    pid = node.watchers[-1]

    node.install_spark()
    wait(lambda: (node.spark_jars / JAR).exists(), "the watcher to install the jar")
    assert alive(pid), "on 7.11+ the watcher must stay until EMR's own jar is dealt with"
    emr_jar = node.ship_emr_listener()
    wait(lambda: not emr_jar.exists(), "the watcher to disable EMR's jar")
    wait(lambda: not alive(pid), "the watcher to exit")
    assert node.listener_jars_on_classpath() == [node.spark_jars / JAR]


def test_emr_shipped_jar_present_emr_wins(node, s3_client, args_for, listener_sha256):
    node.set_release(EMR_RELEASE)
    node.install_spark()
    emr_jar = node.ship_emr_listener()
    stale = node.spark_jars / JAR  # e.g. left by an earlier bootstrap with listener-source bundle
    stale.write_bytes(b"old")
    empty = "artifacts-nothing-staged"
    s3_client.create_bucket(Bucket=empty)  # nothing is downloaded when EMR's jar wins

    result = node.run(args_for(listener_sha256, empty, listener_source="emr"))

    assert result.returncode == 0, result.stderr
    assert node.listener_jars_on_classpath() == [emr_jar]
    assert f"using the OpenLineage jar {EMR_RELEASE} ships" in result.stdout
    assert not node.install_dir.exists()


def test_listener_source_emr_on_a_release_without_one_fails(node, bucket, args_for, listener_sha256):
    node.set_release("emr-7.10.0")
    result = node.run(args_for(listener_sha256, bucket, listener_source="emr"))
    assert result.returncode == 1
    assert "emr-7.10.0 ships no OpenLineage jar" in one_error_line(result)


def test_release_from_arguments_wins_over_instance_data(node, bucket, args_for, listener_sha256):
    node.set_release(EMR_RELEASE)
    result = node.run(args_for(listener_sha256, bucket, listener_source="emr", extra=("--emr-release", "emr-6.15.0")))
    assert result.returncode == 1
    assert "emr-6.15.0 ships no OpenLineage jar" in one_error_line(result)


def test_an_unexpected_failure_is_still_one_line(node, bucket, args_for, listener_sha256):
    node.set_release("emr-7.10.0")
    blocker = node.root / "usr/local/lib/emr-lineage"  # a file where the install directory must go
    blocker.parent.mkdir(parents=True)
    blocker.write_text("not a directory")

    result = node.run(args_for(listener_sha256, bucket))

    assert result.returncode == 1
    line = one_error_line(result)
    assert re.search(r"unexpected failure \(exit 1\) at line \d+: mkdir -p ", line), line
    assert "File exists" in node.log_file.read_text()  # the tool's own message went to the log


def test_unpinned_checksum_stops_the_node(node, bucket, args_for):
    node.set_release("emr-7.10.0")
    result = node.run(args_for(None, bucket))
    assert result.returncode == 1
    assert "SHA-256 is not pinned" in one_error_line(result)
    assert node.listener_jars_on_classpath() == []


def test_fail_open_warns_exits_zero_and_takes_the_listener_out_of_spark_defaults(
    node, s3_client, args_for, listener_sha256, wait, alive
):
    node.set_release("emr-7.10.0")
    empty = "artifacts-fail-open"
    s3_client.create_bucket(Bucket=empty)

    result = node.run(args_for(listener_sha256, empty, fail_open=True, extra=("--attempts", "1")))

    assert result.returncode == 0
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("install-openlineage: WARNING: could not download")
    assert lines[0].endswith("continuing WITHOUT lineage (--fail-open)")
    assert node.listener_jars_on_classpath() == []
    pid = node.watchers[-1]

    # Later in provisioning EMR writes spark-defaults with the listener the stack configured.
    node.install_spark()
    node.spark_defaults.parent.mkdir(parents=True)
    node.spark_defaults.write_text(
        "spark.master                     yarn\n"
        f"spark.extraListeners             com.example.AuditListener,{LISTENER_CLASS}\n"
        "spark.openlineage.namespace      emr-lineage-dev\n"
    )
    wait(lambda: LISTENER_CLASS not in node.spark_defaults.read_text(), "the watcher to drop the listener")
    wait(lambda: not alive(pid), "the watcher to exit")
    assert node.spark_defaults.read_text() == (
        "spark.master                     yarn\n"
        "spark.extraListeners com.example.AuditListener\n"
        "spark.openlineage.namespace      emr-lineage-dev\n"
    )


def test_fail_open_with_only_our_listener_removes_the_property(node, bucket, args_for, wait, alive):
    node.set_release("emr-7.10.0")
    node.spark_defaults.parent.mkdir(parents=True)
    node.spark_defaults.write_text(f"spark.extraListeners {LISTENER_CLASS}\nspark.executor.cores 4\n")

    result = node.run(args_for("cd" * 32, bucket, fail_open=True))  # wrong checksum

    assert result.returncode == 0
    assert "WARNING: SHA-256 mismatch" in result.stderr
    wait(lambda: not alive(node.watchers[-1]), "the watcher to exit")
    assert node.spark_defaults.read_text() == "spark.executor.cores 4\n"


@pytest.mark.parametrize(
    ("args", "message"),
    [
        ([], "--jar-uri is required"),
        (["--jar-uri", "s3://bucket-a/listener/x.jar"], "--sha256 is required"),
        (["--jar-uri", "https://example.com/x.jar", "--sha256", "a" * 64], "is not an s3://bucket/key.jar URI"),
        (["--jar-uri", "s3://bucket-a/x.jar", "--sha256", "ABC"], "--sha256 'ABC' is not 64 lowercase hex digits"),
        (
            ["--jar-uri", "s3://bucket-a/x.jar", "--sha256", "a" * 64, "--listener-source", "both"],
            "--listener-source 'both' must be bundle or emr",
        ),
        (
            ["--jar-uri", "s3://bucket-a/x.jar", "--sha256", "a" * 64, "--emr-release", "7.13"],
            "--emr-release '7.13' is not a release label",
        ),
        (
            ["--jar-uri", "s3://bucket-a/x.jar", "--sha256", "a" * 64, "--attempts", "0"],
            "--attempts '0' must be a positive integer",
        ),
        (
            ["--jar-uri", "s3://bucket-a/x.jar", "--sha256", "a" * 64, "--retry-delay", "soon"],
            "--retry-delay 'soon' must be",
        ),
        (["--jar-uri", "s3://bucket-a/x.jar", "--sha256"], "--sha256 needs a value"),
        (["--jar-uri", "s3://bucket-a/x.jar", "--sha256", "a" * 64, "--verbose"], "unknown argument '--verbose'"),
    ],
)
def test_bad_arguments_exit_2_with_one_line(node, args, message):
    result = node.run(args)
    assert result.returncode == 2
    line = one_error_line(result)
    assert message in line and line.endswith("(see --help)")
    assert not (node.root / "var").exists()  # nothing touched


def test_help(node):
    result = node.run(["--help"])
    assert result.returncode == 0
    assert result.stdout.startswith("Usage: install-openlineage.sh --jar-uri")
    for option in (
        "--listener-source",
        "--fail-open",
        "--fail-closed",
        "--emr-release",
        "--region",
        "--attempts",
        "--trusted-ca-uri",
        "--trusted-ca-sha256",
        "--trusted-ca-arn",
    ):
        assert option in result.stdout


def test_shellcheck_clean():
    shellcheck = Path(sys.executable).parent / "shellcheck"
    result = subprocess.run(
        [str(shellcheck), "--severity=style", str(BOOTSTRAP_SCRIPT)], capture_output=True, text=True
    )
    assert result.returncode == 0, result.stdout + result.stderr


def test_script_spells_the_shared_names_as_the_package_does():
    """Bash cannot import the package; this keeps the script's spellings in step with it."""
    script = BOOTSTRAP_SCRIPT.read_text()
    for name, value in (
        ("LISTENER_CLASS", spark_conf.LISTENER_CLASS),
        ("AUTH_TYPE_PROPERTY", spark_conf.AUTH_TYPE_PROPERTY),
        ("AUTH_KEY_PROPERTY", spark_conf.AUTH_KEY_PROPERTY),
        ("TRANSPORT_URL_PROPERTY", spark_conf.TRANSPORT_URL_PROPERTY),
        ("SECRET_JSON_FIELD", gateway_config.SECRET_JSON_FIELD),
        ("TRUSTSTORE_PASSWORD", truststore.TRUSTSTORE_PASSWORD),
        ("CA_ALIAS_PREFIX", truststore.CA_ALIAS_PREFIX),
    ):
        assert f"readonly {name}={value}\n" in script
    assert f'"$AUTH_TYPE_PROPERTY" {spark_conf.AUTH_TYPE_API_KEY} ' in script
