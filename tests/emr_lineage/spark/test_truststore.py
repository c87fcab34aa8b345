"""emr_lineage.spark.truststore: the trusted CA for a driver no bootstrap prepared. The properties that point
its JVM at a truststore (shared by EMR Serverless job runs and ``attach``), the PKCS12 store Java reads (checked
with the machine's keytool), and its staging in the artifacts bucket (moto's S3)."""

from __future__ import annotations

import io
import os
import shutil
import subprocess
import zipfile
from collections.abc import Iterator

import boto3
import pytest
from moto import mock_aws

from emr_lineage.aws.trusted_ca import ca_bundle
from emr_lineage.spark.truststore import (
    APP_MASTER_JAVA_TOOL_OPTIONS,
    DRIVER_JAVA_OPTIONS,
    SPARK_ARCHIVES,
    TrustStore,
    cluster_mode_properties,
    java_truststore,
    public_roots,
    stage_truststore,
    truststore_key,
    truststore_properties,
)
from tests import pki
from tests.helpers import fake_aws_credentials

SHIPPED = TrustStore(
    path="emr-lineage-truststore/truststore.p12",
    archive="s3://artifacts/truststores/0123.zip#emr-lineage-truststore",
)
OURS = (
    "-Djavax.net.ssl.trustStore=emr-lineage-truststore/truststore.p12 -Djavax.net.ssl.trustStorePassword=changeit "
    "-Djavax.net.ssl.trustStoreType=PKCS12"
)
BUCKET = "emr-lineage-dev-artifacts"


@pytest.fixture(scope="module")
def estate() -> tuple[pki.Issued, pki.Issued]:
    return pki.estate_cas()


@pytest.fixture(scope="module")
def bundle(estate):
    return ca_bundle(pki.bundle(*estate), "s3://estate-pki/ca/estate.pem")


def test_the_driver_alone_is_pointed_at_the_shipped_store() -> None:
    assert truststore_properties(SHIPPED) == {DRIVER_JAVA_OPTIONS: OURS, SPARK_ARCHIVES: SHIPPED.archive}


def test_a_store_on_the_node_ships_nothing() -> None:
    on_node = TrustStore(path="/usr/local/lib/emr-lineage/truststore.p12")
    assert truststore_properties(on_node) == {DRIVER_JAVA_OPTIONS: OURS.replace(SHIPPED.path, on_node.path)}


def test_options_and_archives_already_there_are_kept_and_a_second_call_changes_nothing() -> None:
    """EMR's own driver options (spark-defaults) would be lost: a value set at submit time replaces them."""
    emr = {
        DRIVER_JAVA_OPTIONS: "-XX:+UseG1GC -XX:OnOutOfMemoryError='kill -9 %p'",
        SPARK_ARCHIVES: "s3://mine/venv.tar.gz#environment",
        "spark.executor.memory": "4g",
    }
    first = truststore_properties(SHIPPED, emr)
    assert first == {
        DRIVER_JAVA_OPTIONS: f"-XX:+UseG1GC -XX:OnOutOfMemoryError='kill -9 %p' {OURS}",
        SPARK_ARCHIVES: f"s3://mine/venv.tar.gz#environment,{SHIPPED.archive}",
    }
    rotated = TrustStore(path=SHIPPED.path, archive="s3://artifacts/truststores/4567.zip#emr-lineage-truststore")
    assert truststore_properties(SHIPPED, {**emr, **first}) == first
    assert truststore_properties(rotated, {**emr, **first})[SPARK_ARCHIVES] == (
        f"s3://mine/venv.tar.gz#environment,{rotated.archive}"
    )


def test_a_truststore_of_the_callers_own_wins() -> None:
    theirs = {DRIVER_JAVA_OPTIONS: "-Djavax.net.ssl.trustStore=/etc/pki/mine.jks -Djavax.net.ssl.trustStorePassword=x"}
    assert truststore_properties(SHIPPED, theirs) == {}


@pytest.mark.jvm
def test_java_reads_the_store_with_the_ca_and_the_public_roots(bundle, estate, tmp_path) -> None:
    store = tmp_path / "truststore.p12"
    store.write_bytes(java_truststore(bundle))
    listed = subprocess.run(
        [pki.keytool(), "-list", "-keystore", str(store), "-storepass", "changeit"],
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    entries = [line for line in listed.splitlines() if "trustedCertEntry" in line]
    assert {line.split(",")[0] for line in entries if line.startswith("emr-lineage-ca-")} == {
        "emr-lineage-ca-" + ca.fingerprint[:16] for ca in estate
    }
    assert len(entries) == len(estate) + len(public_roots())
    # AWS's endpoints (S3, Glue, STS...) chain to Amazon's roots: the driver still reaches them.
    assert "CN=Amazon Root CA 1,O=Amazon,C=US" in {r.subject.rfc4514_string() for r in public_roots()}


def test_the_store_is_staged_once_per_set_of_certificates(bundle, estate, monkeypatch) -> None:
    fake_aws_credentials(monkeypatch, "eu-west-1")
    monkeypatch.delenv("AWS_ENDPOINT_URL", raising=False)
    with mock_aws():
        s3 = boto3.client("s3", region_name="eu-west-1")
        s3.create_bucket(Bucket=BUCKET, CreateBucketConfiguration={"LocationConstraint": "eu-west-1"})
        planned = stage_truststore(s3, BUCKET, bundle, upload_it=False)
        assert "Contents" not in s3.list_objects_v2(Bucket=BUCKET)  # a dry run uploads nothing

        staged = stage_truststore(s3, BUCKET, bundle)
        key = truststore_key(bundle)
        first = s3.head_object(Bucket=BUCKET, Key=key)
        again = stage_truststore(s3, BUCKET, bundle)

        assert planned == staged == again
        assert staged.archive == f"s3://{BUCKET}/{key}#emr-lineage-truststore" and key.startswith("truststores/")
        assert staged.path == "emr-lineage-truststore/truststore.p12"
        assert s3.head_object(Bucket=BUCKET, Key=key)["ETag"] == first["ETag"]  # not uploaded again
        body = s3.get_object(Bucket=BUCKET, Key=key)["Body"].read()
        assert zipfile.ZipFile(io.BytesIO(body)).namelist() == ["truststore.p12"]
        other = ca_bundle(pki.certificate_authority("Estate Root CA G2").pem, "s3://estate-pki/ca/g2.pem")
        assert truststore_key(other) != key


HANDSHAKE = """
import javax.net.ssl.HttpsURLConnection;
import java.net.URL;

public class Handshake {
    public static void main(String[] args) throws Exception {
        HttpsURLConnection connection = (HttpsURLConnection) new URL(args[0]).openConnection();
        connection.connect();  // the JVM's default trust: what the listener's HTTP transport uses
        System.out.println("trusted " + connection.getServerCertificates().length);
    }
}
"""


@pytest.fixture
def estate_load_balancer(estate, tmp_path) -> Iterator[int]:
    """An HTTPS server on 127.0.0.1 for ``localhost`` with a leaf of the estate's issuing CA; yields its port."""
    with pki.https_server(pki.server_certificate(estate[1], "localhost"), estate[1], tmp_path) as port:
        yield port


@pytest.mark.jvm
def test_a_cluster_mode_drivers_jvm_trusts_the_ca_through_java_tool_options(
    bundle, estate_load_balancer, tmp_path
) -> None:
    properties = cluster_mode_properties(SHIPPED)
    assert properties[SPARK_ARCHIVES] == SHIPPED.archive
    # The application master's working directory, as YARN leaves it: the archive unpacked under its alias.
    container = tmp_path / "container"
    (container / "emr-lineage-truststore").mkdir(parents=True)
    (container / "emr-lineage-truststore/truststore.p12").write_bytes(java_truststore(bundle))
    (tmp_path / "Handshake.java").write_text(HANDSHAKE)
    java = shutil.which("java")
    assert java, "make setup installs a JDK"
    env = {**os.environ, "JAVA_TOOL_OPTIONS": properties[APP_MASTER_JAVA_TOOL_OPTIONS]}

    result = subprocess.run(
        [java, str(tmp_path / "Handshake.java"), f"https://localhost:{estate_load_balancer}/"],
        cwd=container,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )

    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == "trusted 2"
