"""Fixtures for running bootstrap/install-openlineage.sh for real: a moto_server S3 on 127.0.0.1,
the AWS CLI from .venv/bin, and a sandbox root that mimics an EMR node's directories (JDKs with a
truststore each, for the trusted CA, whose keytool is the machine's: tests/pki.py)."""

from __future__ import annotations

import hashlib
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import threading
import time
import uuid
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

import boto3
import pytest

from emr_lineage.listener.artifact import bootstrap_arguments, listener_s3_key
from emr_lineage.settings.loader import load_settings
from emr_lineage.settings.trusted_ca import TrustedCa
from emr_lineage.spark.conf import LISTENER_CLASS, TRANSPORT_URL_PROPERTY
from tests import pki
from tests.emr_lineage.listener.maven import build_test_jar
from tests.paths import BOOTSTRAP_SCRIPT
from tests.pki import issuing, root  # noqa: F401 - fixtures

BIN = Path(sys.executable).parent
REGION = "us-east-1"
AWS_ENV = {"AWS_ACCESS_KEY_ID": "testing", "AWS_SECRET_ACCESS_KEY": "testing", "AWS_DEFAULT_REGION": REGION}


def start_moto_server(log_path: Path) -> tuple[subprocess.Popen, str]:
    """moto_server on port 0: the kernel picks a free port and moto prints it, so no other
    process can take the port between choosing and binding it."""
    process = subprocess.Popen(
        [str(BIN / "moto_server"), "-H", "127.0.0.1", "-p", "0"],
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )
    url = None
    with log_path.open("w") as log:
        deadline = time.monotonic() + 60
        while url is None and time.monotonic() < deadline:
            line = process.stdout.readline()
            if not line:
                break
            log.write(line)
            found = re.search(r"Running on (http://127\.0\.0\.1:\d+)", line)
            url = found.group(1) if found else None
    if url is None:
        process.kill()
        pytest.fail(f"moto_server did not start; see {log_path}")

    def drain() -> None:  # keep reading its request log so the pipe never fills up
        with log_path.open("a") as log:
            for line in process.stdout:
                log.write(line)

    threading.Thread(target=drain, daemon=True).start()
    return process, url


@pytest.fixture(scope="session")
def moto_s3_url(tmp_path_factory) -> str:
    """A moto_server on a free loopback port for the whole session; stopped at the end."""
    process, url = start_moto_server(tmp_path_factory.mktemp("moto") / "moto_server.log")
    yield url
    process.terminate()
    process.wait(timeout=10)


@pytest.fixture(scope="session")
def listener_jar() -> bytes:
    return build_test_jar()


@pytest.fixture(scope="session")
def listener_sha256(listener_jar: bytes) -> str:
    return hashlib.sha256(listener_jar).hexdigest()


@pytest.fixture(scope="session")
def s3_client(moto_s3_url):
    return boto3.client(
        "s3", endpoint_url=moto_s3_url, region_name=REGION, aws_access_key_id="testing", aws_secret_access_key="testing"
    )


@pytest.fixture(scope="session")
def secrets_client(moto_s3_url):
    """Secrets Manager on the same moto_server (it serves every service)."""
    return boto3.client(
        "secretsmanager",
        endpoint_url=moto_s3_url,
        region_name=REGION,
        aws_access_key_id="testing",
        aws_secret_access_key="testing",
    )


@pytest.fixture(scope="session")
def acm_pca_client(moto_s3_url):
    """AWS Private CA on the same moto_server, in a central PKI's region: not the node's."""
    return boto3.client(
        "acm-pca",
        endpoint_url=moto_s3_url,
        region_name="eu-central-1",
        aws_access_key_id="testing",
        aws_secret_access_key="testing",
    )


def settings_with(
    sha256: str | None,
    *,
    listener_source: str = "bundle",
    fail_open: bool = False,
    trusted_ca: TrustedCa | None = None,
):
    settings = load_settings("dev")
    artifact = settings.versions.openlineage_spark.model_copy(update={"sha256": sha256})
    return settings.model_copy(
        update={
            "versions": settings.versions.model_copy(update={"openlineage_spark": artifact}),
            "openlineage": settings.openlineage.model_copy(
                update={"listener_source": listener_source, "fail_open": fail_open, "trusted_ca": trusted_ca}
            ),
        }
    )


@pytest.fixture
def bucket(s3_client, listener_jar) -> str:
    """A fresh artifacts bucket holding the staged test jar at the key listener stage uses."""
    name = f"artifacts-{uuid.uuid4().hex[:12]}"
    s3_client.create_bucket(Bucket=name)
    key = listener_s3_key(load_settings("dev").versions.openlineage_spark)
    s3_client.put_object(Bucket=name, Key=key, Body=listener_jar)
    return name


@dataclass
class EmrNode:
    """A sandbox tree with an EMR node's directories; runs the bootstrap script against it."""

    root: Path
    env: dict[str, str]
    watchers: list[int] = field(default_factory=list)

    spark_jars = property(lambda self: self.root / "usr/lib/spark/jars")
    emr_listener_dir = property(lambda self: self.root / "usr/share/aws/datazone-openlineage-spark/lib")
    install_dir = property(lambda self: self.root / "usr/local/lib/emr-lineage")
    log_file = property(lambda self: self.root / "var/log/emr-lineage/install-openlineage.log")
    pid_file = property(lambda self: self.root / "var/lib/emr-lineage/watcher.pid")
    spark_defaults = property(lambda self: self.root / "etc/spark/conf/spark-defaults.conf")

    def set_release(self, label: str) -> None:
        info = self.root / "mnt/var/lib/info/extraInstanceData.json"
        info.parent.mkdir(parents=True, exist_ok=True)
        info.write_text(json.dumps({"jobFlowId": "j-TEST", "releaseLabel": label, "region": REGION}, indent=2))

    def install_spark(self) -> None:
        """What the Spark package does later in provisioning: create SPARK_HOME/jars."""
        self.spark_jars.mkdir(parents=True, exist_ok=True)
        (self.spark_jars / "spark-core_2.12-3.5.6-amzn-2.jar").write_bytes(b"PK\x05\x06" + b"\0" * 18)

    def ship_emr_listener(self) -> Path:
        """What EMR 7.11+ is reported to install: its own OpenLineage jar."""
        self.emr_listener_dir.mkdir(parents=True, exist_ok=True)
        jar = self.emr_listener_dir / "openlineage-spark_2.12-1.33.0-amzn-0.jar"
        jar.write_bytes(build_test_jar(created_by="EMR"))
        return jar

    def install_jdk(self, name: str, seed_truststore: Path, *, java8: bool = False, store: Path | None = None) -> Path:
        """A JDK under /usr/lib/jvm as Amazon Linux installs Corretto: its truststore (``lib/security/cacerts``,
        ``jre/...`` for Java 8) a copy of ``seed_truststore``, or a link to ``store`` (the system's), and its
        keytool the machine's. Returns the truststore's path."""
        home = self.root / "usr/lib/jvm" / name
        cacerts = home / ("jre/lib/security/cacerts" if java8 else "lib/security/cacerts")
        cacerts.parent.mkdir(parents=True)
        (home / "bin").mkdir()
        (home / "bin/keytool").symlink_to(pki.keytool())
        if store is None:
            shutil.copy2(seed_truststore, cacerts)
        else:
            store.parent.mkdir(parents=True, exist_ok=True)
            if not store.exists():
                shutil.copy2(seed_truststore, store)
            cacerts.symlink_to(store)
        return cacerts

    def configure_spark(self) -> None:
        """What EMR does once its packages are installed: write spark-defaults.conf with the listener's URL."""
        self.spark_defaults.parent.mkdir(parents=True, exist_ok=True)
        self.spark_defaults.write_text(
            f"spark.extraListeners {LISTENER_CLASS}\n{TRANSPORT_URL_PROPERTY} https://lineage.example.com\n"
        )

    def run(self, args: list[str]) -> subprocess.CompletedProcess:
        result = subprocess.run(
            ["bash", str(BOOTSTRAP_SCRIPT), *args], env=self.env, capture_output=True, text=True, timeout=120
        )
        # From the script's own line, not the pid file: a watcher with nothing to wait for may be done,
        # and have removed its pid file, before the bootstrap returns.
        self.watchers += [int(pid) for pid in re.findall(r"started watcher pid (\d+)", result.stdout)]
        return result

    def listener_jars_on_classpath(self) -> list[Path]:
        """Every *.jar holding an OpenLineage listener in the directories Spark loads jars from."""
        found = []
        for directory in (self.spark_jars, self.emr_listener_dir):
            found += [p for p in sorted(directory.glob("*.jar")) if "openlineage" in p.name]
        return found

    def snapshot(self) -> dict[str, tuple[str, int]]:
        """Every file but the log: relative path -> (sha256, mtime_ns)."""
        return {
            str(p.relative_to(self.root)): (hashlib.sha256(p.read_bytes()).hexdigest(), p.stat().st_mtime_ns)
            for p in sorted(self.root.rglob("*"))
            if p.is_file() and p != self.log_file
        }


def wait_for(condition: Callable[[], bool], what: str, timeout: float = 20.0) -> None:
    deadline = time.monotonic() + timeout
    while not condition():
        if time.monotonic() > deadline:
            pytest.fail(f"timed out after {timeout}s waiting for {what}")
        time.sleep(0.05)


def process_alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    # A zombie is gone for our purposes.
    try:
        return Path(f"/proc/{pid}/stat").read_text().split()[2] != "Z"
    except FileNotFoundError:
        return False


@pytest.fixture
def node(tmp_path: Path, moto_s3_url: str):
    node_root = tmp_path / "node"
    node_root.mkdir()
    home = tmp_path / "home"
    home.mkdir()
    env = {
        "PATH": f"{BIN}:/usr/bin:/bin",
        "HOME": str(home),
        "LANG": "C.UTF-8",
        "EMR_NODE_ROOT": str(node_root),
        "AWS_ENDPOINT_URL": moto_s3_url,
        "EMR_LINEAGE_POLL_SECONDS": "0.05",
        **AWS_ENV,
    }
    emr_node = EmrNode(root=node_root, env=env)
    yield emr_node
    for pid in emr_node.watchers:  # only the watchers these tests started, by pid
        if process_alive(pid):
            os.kill(pid, signal.SIGTERM)


def trusted_aliases(truststore: Path) -> set[str]:
    """The aliases of a truststore the bootstrap added (``emr-lineage-ca-...``)."""
    listed = subprocess.run(
        [pki.keytool(), "-list", "-keystore", str(truststore), "-storepass", "changeit"],
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    return {line.split(",")[0] for line in listed.splitlines() if line.startswith("emr-lineage-ca-")}


@pytest.fixture(scope="session")
def seed_truststore(tmp_path_factory) -> Path:
    """A JDK's truststore as Corretto 17 ships it (JKS, password changeit) with one public root in it."""
    path = tmp_path_factory.mktemp("jdk") / "cacerts"
    public_root = tmp_path_factory.getbasetemp() / "public-root.pem"
    public_root.write_bytes(pki.certificate_authority("Public Root").pem)
    subprocess.run(
        [pki.keytool(), "-importcert", "-noprompt", "-alias", "publicroot", "-file", str(public_root)]
        + ["-keystore", str(path), "-storetype", "JKS", "-storepass", "changeit"],
        capture_output=True,
        check=True,
    )
    return path


def script_args(
    sha256: str | None,
    bucket: str,
    *,
    extra: tuple[str, ...] = (),
    api_key_secret_arn: str | None = None,
    **options,
) -> list[str]:
    """The bootstrap action's arguments exactly as the EMR stack gets them, plus test-only extras."""
    arguments = bootstrap_arguments(settings_with(sha256, **options), bucket, api_key_secret_arn=api_key_secret_arn)
    return arguments + ["--watch-timeout", "60", *extra]


@pytest.fixture(scope="session")
def args_for():
    return script_args


@pytest.fixture(scope="session")
def wait():
    return wait_for


@pytest.fixture(scope="session")
def alive():
    return process_alive
