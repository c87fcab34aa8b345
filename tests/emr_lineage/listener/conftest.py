"""Fixtures of the listener tests: the fake Maven repository, the test jar, moto S3, PGP keys."""

from __future__ import annotations

import hashlib
from collections.abc import Iterator

import boto3
import pytest
from moto import mock_aws

from emr_lineage.settings.loader import load_settings
from tests.emr_lineage.listener.maven import BUCKET, REGION, FakeMaven, TestKey, build_test_jar
from tests.helpers import fake_aws_credentials


@pytest.fixture(scope="session")
def test_jar() -> bytes:
    return build_test_jar()


@pytest.fixture(scope="session")
def test_jar_sha256(test_jar: bytes) -> str:
    return hashlib.sha256(test_jar).hexdigest()


@pytest.fixture(scope="session")
def maven_server() -> Iterator[FakeMaven]:
    server = FakeMaven()
    yield server
    server.close()


@pytest.fixture
def maven(maven_server: FakeMaven, test_jar: bytes) -> Iterator[FakeMaven]:
    """The fake Maven repository, serving the configured artifact's path with the test jar."""
    maven_server.reset()
    maven_server.publish(load_settings("dev").versions.openlineage_spark, test_jar)
    yield maven_server
    maven_server.reset()


@pytest.fixture
def s3(monkeypatch: pytest.MonkeyPatch):
    fake_aws_credentials(monkeypatch, REGION)
    monkeypatch.delenv("AWS_ENDPOINT_URL", raising=False)
    with mock_aws():
        client = boto3.client("s3", region_name=REGION)
        client.create_bucket(Bucket=BUCKET)
        yield client


@pytest.fixture(scope="session")
def signer(tmp_path_factory: pytest.TempPathFactory) -> Iterator[TestKey]:
    """The release key the tests trust (its fingerprint goes into cdk.json)."""
    key = TestKey(tmp_path_factory.mktemp("keys") / "signer", "Signer")
    yield key
    key.close()


@pytest.fixture(scope="session")
def stranger(tmp_path_factory: pytest.TempPathFactory) -> Iterator[TestKey]:
    """Another key: its signatures must not count."""
    key = TestKey(tmp_path_factory.mktemp("keys") / "stranger", "Stranger")
    yield key
    key.close()
