"""Fixtures of the listener tests: the real jars fetched once per test run with the real ``mvn`` (make setup's
verified copies for the tests that only read them), a throwaway Maven repository, the test jar, moto S3, PGP
keys, copies of cdk.json."""

from __future__ import annotations

import dataclasses
import hashlib
import json
import os
import shutil
from collections.abc import Iterator
from pathlib import Path

import pytest
from filelock import FileLock

from emr_lineage.listener.jar import FetchedJar, ListenerError
from emr_lineage.listener.maven import LISTENER_DIR_ENV_VAR, fetch_jars, local_jars
from tests.emr_lineage.listener.maven import BUCKET, REGION, MavenRepositories, TestKey, build_test_jar, fake_mvn
from tests.helpers import moto_s3
from tests.paths import run_shared_dir
from tests.versions import DEV, LISTENER


@pytest.fixture(scope="session")
def real_jars(tmp_path_factory: pytest.TempPathFactory) -> list[FetchedJar]:
    """The real listener jar and Iceberg runtime of cdk.json, fetched with Maven (and checked against the
    committed pins) into a directory of their own: one Maven run for both per test run. The first xdist worker
    that asks runs them under a file lock in the run's shared temporary directory and records what it got;
    the others wait for the lock and take the same jars (the tests only read them)."""
    root = run_shared_dir(tmp_path_factory.getbasetemp()) / "shared-listener-jar"
    root.mkdir(parents=True, exist_ok=True)
    recorded = root / "fetched.json"
    with FileLock(root / "fetch.lock"):
        if not recorded.exists():
            jars = fetch_jars(DEV.versions, directory=root / "cache")
            recorded.write_text(json.dumps([dataclasses.asdict(jar) | {"path": str(jar.path)} for jar in jars]))
        fields = json.loads(recorded.read_text())
    return [FetchedJar(**jar | {"path": Path(jar["path"])}) for jar in fields]


@pytest.fixture(scope="session")
def real_jar(real_jars: list[FetchedJar]) -> FetchedJar:
    """The real listener jar (:func:`real_jars`)."""
    return real_jars[0]


@pytest.fixture(scope="session")
def real_runtime(real_jars: list[FetchedJar]) -> FetchedJar:
    """The real Iceberg Spark runtime, beside the listener jar (:func:`real_jars`)."""
    return real_jars[1]


@pytest.fixture(scope="session")
def pinned_jars(tmp_path_factory: pytest.TempPathFactory, request: pytest.FixtureRequest) -> list[FetchedJar]:
    """The real listener jar and Iceberg runtime, verified against the pins, alone in a directory of their own,
    for the tests that only read them: make setup's (linked in, no Maven run), else the ones :func:`real_jars`
    fetches with Maven."""
    try:
        setup = local_jars(DEV.versions)
    except ListenerError:  # not fetched yet, or not the pinned ones
        return request.getfixturevalue("real_jars")
    directory = tmp_path_factory.mktemp("pinned-jars")
    for path in (setup.listener, setup.iceberg_runtime):
        try:
            os.link(path, directory / path.name)
        except OSError:  # another file system
            shutil.copyfile(path, directory / path.name)
    return fetch_jars(DEV.versions, directory=directory)  # verified in place: Maven does not run


@pytest.fixture(scope="session")
def pinned_jar(pinned_jars: list[FetchedJar]) -> FetchedJar:
    """The real listener jar (:func:`pinned_jars`)."""
    return pinned_jars[0]


@pytest.fixture(scope="session")
def pinned_runtime(pinned_jars: list[FetchedJar]) -> FetchedJar:
    """The real Iceberg Spark runtime, beside the listener jar (:func:`pinned_jars`)."""
    return pinned_jars[1]


@pytest.fixture
def cache_dir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """An empty listener cache, named by EMR_LINEAGE_LISTENER_DIR."""
    directory = tmp_path / "cache"
    monkeypatch.setenv(LISTENER_DIR_ENV_VAR, str(directory))
    return directory


@pytest.fixture
def no_mvn(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Iterator[None]:
    """An ``mvn`` first on PATH that fails and leaves a mark: the test fails if Maven ran."""
    marker = tmp_path / "mvn-ran"
    bin_dir = fake_mvn(tmp_path / "no-mvn-bin", f'touch "{marker}"; echo "[ERROR] Maven must not run here"; exit 1')
    monkeypatch.setenv("PATH", f"{bin_dir}{os.pathsep}{os.environ['PATH']}")
    yield
    assert not marker.exists(), "Maven ran"


@pytest.fixture(scope="session")
def repositories(tmp_path_factory: pytest.TempPathFactory) -> Iterator[MavenRepositories]:
    repositories = MavenRepositories(tmp_path_factory.mktemp("maven"))
    yield repositories
    repositories.close()


@pytest.fixture(scope="session")
def test_jar() -> bytes:
    return build_test_jar()


@pytest.fixture(scope="session")
def test_jar_sha256(test_jar: bytes) -> str:
    return hashlib.sha256(test_jar).hexdigest()


@pytest.fixture
def make_cdk_json(tmp_path: Path, repo_root: Path):
    """A copy of the real cdk.json with the listener's pin (and the fingerprint, and the Iceberg runtime's pin) set
    by a targeted text edit."""

    def make(sha256: str | None = None, fingerprint: str | None = None, runtime_sha256: str | None = "pinned") -> Path:
        text = (repo_root / "cdk.json").read_text()
        pin = f'"sha256": "{LISTENER.sha256}"'
        assert pin in text
        text = text.replace(pin, f'"sha256": "{sha256}"' if sha256 else '"sha256": null', 1)
        if runtime_sha256 != "pinned":  # the Iceberg runtime's pin: kept unless asked
            runtime = f'"sha256": "{DEV.versions.iceberg_spark_runtime.sha256}"'
            assert runtime in text
            text = text.replace(runtime, f'"sha256": "{runtime_sha256}"' if runtime_sha256 else '"sha256": null', 1)
        if fingerprint:
            text = text.replace('"pgp_fingerprint": null', f'"pgp_fingerprint": "{fingerprint}"', 1)
        path = tmp_path / "cdk.json"
        path.write_text(text)
        return path

    return make


@pytest.fixture
def s3(monkeypatch: pytest.MonkeyPatch):
    with moto_s3(monkeypatch, REGION, BUCKET) as client:
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
