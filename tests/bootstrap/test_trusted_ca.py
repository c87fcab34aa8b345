"""bootstrap/install-openlineage.sh --trusted-ca-*: the CA of the load balancer's certificate goes into every
JDK's truststore, verified, once. Run for real with bash, the AWS CLI (S3 and AWS Private CA on moto_server)
and the machine's keytool, against JDKs in the sandbox node; the CAs are made in the test (tests/pki.py)."""

from __future__ import annotations

import hashlib
import subprocess
import uuid

import pytest

from emr_lineage.listener.artifact import trusted_ca_only_arguments
from emr_lineage.settings.trusted_ca import PrivateCa, S3CaBundle
from tests import pki
from tests.bootstrap.conftest import trusted_aliases
from tests.versions import LISTENER_JAR

JDK17 = "java-17-amazon-corretto.x86_64"
JDK8 = "java-1.8.0-amazon-corretto.x86_64"


def alias(ca: pki.Issued) -> str:
    return "emr-lineage-ca-" + ca.fingerprint[:16]


def stage_bundle(s3_client, bucket: str, data: bytes, key: str = "pki/estate-ca.pem") -> S3CaBundle:
    s3_client.put_object(Bucket=bucket, Key=key, Body=data)
    return S3CaBundle(type="s3", uri=f"s3://{bucket}/{key}", sha256=hashlib.sha256(data).hexdigest())


def one_error_line(result: subprocess.CompletedProcess) -> str:
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1, result.stderr
    return lines[0]


def test_every_jdks_truststore_gets_the_bundle_once_and_a_second_run_changes_nothing(
    node, bucket, s3_client, args_for, listener_sha256, seed_truststore, root, issuing, wait, alive
):
    node.set_release("emr-7.10.0")
    node.install_spark()
    own = node.install_jdk(JDK17, seed_truststore)
    (node.root / "usr/lib/jvm/jre-17").symlink_to(node.root / "usr/lib/jvm" / JDK17)  # an alias: the same store
    system = node.root / "etc/pki/java/cacerts"
    linked = node.install_jdk(JDK8, seed_truststore, java8=True, store=system)
    ca = stage_bundle(s3_client, bucket, pki.bundle(root, issuing, text=b"# the estate's CAs\n"))

    result = node.run(args_for(listener_sha256, bucket, trusted_ca=ca))

    assert result.returncode == 0, result.stderr
    assert result.stderr == ""
    for store in (own, system):
        assert trusted_aliases(store) == {alias(root), alias(issuing)}
    assert linked.is_symlink() and linked.resolve() == system  # the JDK's link to the system store is kept
    assert (
        "publicroot"
        in subprocess.run(
            [pki.keytool(), "-list", "-keystore", str(own), "-storepass", "changeit"], capture_output=True, text=True
        ).stdout
    )
    assert f"fetched and verified {ca.uri} (2 certificate(s))" in result.stdout
    assert (node.spark_jars / LISTENER_JAR).exists()
    # EMR has not configured Spark yet: the watcher imports again then, for a JDK that came meanwhile.
    pid = node.watchers[-1]
    node.configure_spark()
    wait(lambda: not alive(pid), "the watcher to exit once EMR has configured Spark")
    assert f"every Java truststore trusts {ca.uri}" in node.log_file.read_text()

    before = node.snapshot()
    s3_client.delete_object(Bucket=bucket, Key=ca.key)  # proof that the second run does not download

    second = node.run(args_for(listener_sha256, bucket, trusted_ca=ca))

    assert second.returncode == 0, second.stderr
    assert "already holds the pinned bundle" in second.stdout and "nothing changed" in second.stdout
    assert node.snapshot() == before
    assert "started watcher" not in second.stdout


def test_a_new_ca_in_the_bundle_adds_its_alias_and_keeps_the_old(
    node, bucket, s3_client, args_for, listener_sha256, seed_truststore, root
):
    node.set_release("emr-7.10.0")
    node.install_spark()
    node.configure_spark()
    store = node.install_jdk(JDK17, seed_truststore)
    node.run(args_for(listener_sha256, bucket, trusted_ca=stage_bundle(s3_client, bucket, root.pem)))
    successor = pki.certificate_authority("Estate Root CA G2")

    rotated = stage_bundle(s3_client, bucket, pki.bundle(root, successor))
    result = node.run(args_for(listener_sha256, bucket, trusted_ca=rotated))

    assert result.returncode == 0, result.stderr
    assert trusted_aliases(store) == {alias(root), alias(successor)}
    assert f"added {alias(successor)} ({rotated.uri}) to the truststore {store}" in result.stdout


@pytest.mark.parametrize("fail_open", [False, True], ids=["fail-closed", "fail-open"])
def test_a_bundle_that_is_not_the_pinned_one_is_refused_and_nothing_imported(
    node, bucket, s3_client, args_for, listener_sha256, seed_truststore, root, fail_open
):
    node.set_release("emr-7.10.0")
    node.install_spark()
    store = node.install_jdk(JDK17, seed_truststore)
    pinned = stage_bundle(s3_client, bucket, root.pem)
    s3_client.put_object(Bucket=bucket, Key=pinned.key, Body=pki.certificate_authority("Someone Else").pem)

    result = node.run(args_for(listener_sha256, bucket, trusted_ca=pinned, fail_open=fail_open))

    line = one_error_line(result)
    assert f"SHA-256 mismatch for the trusted CA bundle {pinned.uri}" in line
    assert f"expected {pinned.sha256}" in line and "nothing imported" in line
    assert (result.returncode, line.startswith("install-openlineage: WARNING: ")) == (
        (0, True) if fail_open else (1, False)
    )
    assert trusted_aliases(store) == set()
    assert not (node.spark_jars / LISTENER_JAR).exists()  # the CA is checked before the jar is installed
    assert not (node.install_dir / "trusted-ca.pem").exists()


@pytest.mark.parametrize(
    ("content", "message"),
    [
        (lambda root: root.pem + root.key_pem, "holds a private key: refused, nothing imported"),
        (lambda root: b"# nothing but words\n", "holds no PEM certificate"),
        (
            lambda root: b"-----BEGIN CERTIFICATE-----\nnot*base64!\n-----END CERTIFICATE-----\n",
            "is not valid PEM (base64)",
        ),
    ],
    ids=["private-key", "no-certificate", "not-base64"],
)
def test_a_bundle_of_anything_but_certificates_is_refused_without_printing_it(
    node, bucket, s3_client, args_for, listener_sha256, seed_truststore, root, content, message
):
    node.set_release("emr-7.10.0")
    node.install_spark()
    store = node.install_jdk(JDK17, seed_truststore)
    data = content(root)
    ca = stage_bundle(s3_client, bucket, data)

    result = node.run(args_for(listener_sha256, bucket, trusted_ca=ca))

    assert result.returncode == 1
    line = one_error_line(result)
    assert message in line and ca.uri in line
    printed = result.stdout + result.stderr + node.log_file.read_text()
    assert not [block for block in data.split(b"\n") if len(block) > 20 and block.decode() in printed]
    assert trusted_aliases(store) == set()


def test_a_private_ca_gives_its_certificate_and_the_chain_above_it(
    node, bucket, acm_pca_client, args_for, listener_sha256, seed_truststore, root, issuing
):
    node.set_release("emr-7.10.0")
    node.install_spark()
    node.configure_spark()
    store = node.install_jdk(JDK17, seed_truststore)
    arn = acm_pca_client.create_certificate_authority(
        CertificateAuthorityConfiguration={
            "KeyAlgorithm": "EC_prime256v1",
            "SigningAlgorithm": "SHA256WITHECDSA",
            "Subject": {"CommonName": "Estate Issuing CA"},
        },
        CertificateAuthorityType="SUBORDINATE",
        IdempotencyToken=uuid.uuid4().hex[:16],
    )["CertificateAuthorityArn"]
    acm_pca_client.import_certificate_authority_certificate(
        CertificateAuthorityArn=arn, Certificate=issuing.pem, CertificateChain=root.pem
    )
    private_ca = PrivateCa(type="aws_private_ca", arn=arn)

    result = node.run(args_for(listener_sha256, bucket, trusted_ca=private_ca))

    assert result.returncode == 0, result.stderr
    assert trusted_aliases(store) == {alias(issuing), alias(root)}
    assert f"fetched and verified {arn} (2 certificate(s))" in result.stdout
    assert not node.pid_file.exists()  # Spark is configured and every store has it: nothing to wait for


def test_without_a_jdk_yet_the_watcher_imports_the_ca_once_emr_has_configured_spark(
    node, bucket, s3_client, args_for, listener_sha256, seed_truststore, root, wait, alive
):
    node.set_release("emr-7.10.0")
    node.install_spark()
    ca = stage_bundle(s3_client, bucket, root.pem)

    result = node.run(args_for(listener_sha256, bucket, trusted_ca=ca))

    assert result.returncode == 0, result.stderr
    assert "no Java truststore under" in result.stdout
    pid = node.watchers[-1]
    store = node.install_jdk(JDK17, seed_truststore)
    node.configure_spark()
    wait(lambda: not alive(pid), "the watcher to import the CA and exit")
    assert trusted_aliases(store) == {alias(root)}


@pytest.mark.parametrize(
    ("extra", "message"),
    [
        (["--trusted-ca-uri", "s3://pki-bucket/ca.pem"], "--trusted-ca-uri needs --trusted-ca-sha256"),
        (["--trusted-ca-sha256", "a" * 64], "--trusted-ca-sha256 goes with --trusted-ca-uri"),
        (["--trusted-ca-uri", "s3://pki-bucket/*.pem", "--trusted-ca-sha256", "a" * 64], "is not an s3://bucket/key"),
        (["--trusted-ca-uri", "s3://pki-bucket/ca.pem", "--trusted-ca-sha256", "A" * 64], "not 64 lowercase hex"),
        (["--trusted-ca-arn", "arn:aws:acm:us-east-1:123456789012:certificate/x"], "is not an AWS Private CA ARN"),
        (
            ["--trusted-ca-arn", f"arn:aws:acm-pca:us-east-1:123456789012:certificate-authority/{uuid.uuid4()}"]
            + ["--trusted-ca-uri", "s3://pki-bucket/ca.pem", "--trusted-ca-sha256", "a" * 64],
            "name two CAs: give one",
        ),
    ],
    ids=["uri-without-pin", "pin-without-uri", "wildcard-key", "uppercase-pin", "not-a-private-ca", "two-cas"],
)
def test_bad_trusted_ca_arguments_exit_2_with_one_line(node, extra, message):
    result = node.run(["--jar-uri", "s3://bucket-a/x.jar", "--sha256", "a" * 64, *extra])
    assert result.returncode == 2
    line = one_error_line(result)
    assert message in line and line.endswith("(see --help)")
    assert not (node.root / "var").exists()


def test_trusted_ca_only_imports_the_ca_at_once_on_a_running_node_and_installs_nothing_else(
    node, bucket, s3_client, seed_truststore, root
):
    node.set_release("emr-7.10.0")
    node.install_spark()
    node.configure_spark()
    store = node.install_jdk(JDK17, seed_truststore)
    ca = stage_bundle(s3_client, bucket, root.pem)
    defaults_before = node.spark_defaults.read_text()

    result = node.run(trusted_ca_only_arguments(ca, region="eu-west-1"))

    assert result.returncode == 0, result.stderr
    assert trusted_aliases(store) == {alias(root)}
    assert f"every Java truststore under {node.root}/usr/lib/jvm trusts {ca.uri}" in result.stdout
    assert node.listener_jars_on_classpath() == [] and not node.pid_file.exists() and not node.watchers
    assert node.spark_defaults.read_text() == defaults_before


def test_trusted_ca_only_fails_the_step_when_it_cannot_import(node, bucket, s3_client, seed_truststore, root):
    node.set_release("emr-7.10.0")
    node.install_spark()
    node.configure_spark()
    store = node.install_jdk(JDK17, seed_truststore)
    pinned = stage_bundle(s3_client, bucket, root.pem)
    s3_client.put_object(Bucket=bucket, Key=pinned.key, Body=pki.certificate_authority("Someone Else").pem)

    result = node.run(trusted_ca_only_arguments(pinned))

    assert result.returncode == 1
    assert f"SHA-256 mismatch for the trusted CA bundle {pinned.uri}" in one_error_line(result)
    assert trusted_aliases(store) == set()


@pytest.mark.parametrize(
    ("extra", "message"),
    [
        ((), "--trusted-ca-only needs --trusted-ca-uri (with --trusted-ca-sha256) or --trusted-ca-arn"),
        (("--jar-uri", "s3://bucket/listener/x.jar"), "--trusted-ca-only imports the CA alone"),
    ],
    ids=["no-ca", "with-a-jar"],
)
def test_trusted_ca_only_refuses_arguments_it_does_not_take(node, extra, message):
    result = node.run(["--trusted-ca-only", *extra])

    assert result.returncode == 2
    assert message in one_error_line(result)
