"""The class archive of local Spark: one per driver classpath, used when it is there, never required."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from emr_lineage.spark import class_archive
from emr_lineage.spark.conf import DRIVER_CLASSPATH
from emr_lineage.spark.local import java_command, prepare_class_archive, spark_home, submit_environment


@pytest.fixture
def archives(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv(class_archive.ARCHIVE_DIR_ENV_VAR, str(tmp_path))
    monkeypatch.setenv(class_archive.JVM_OPTIONS_ENV_VAR, "-XX:+UseSerialGC")
    return tmp_path


def _archive(properties: dict[str, str]) -> Path:
    return class_archive.archive_path(java_command(), spark_home(), properties)


def test_one_archive_per_driver_classpath(archives: Path) -> None:
    listener, other = _archive({DRIVER_CLASSPATH: "/cache/listener.jar"}), _archive({DRIVER_CLASSPATH: "/x.jar"})
    assert listener.parent == archives and listener.suffix == ".jsa"
    assert listener != other != _archive({})
    assert listener == _archive({DRIVER_CLASSPATH: "/cache/listener.jar", "spark.master": "local[4]"})


def test_a_jar_of_the_classpath_fetched_again_needs_another_archive(archives: Path, tmp_path: Path) -> None:
    """The JVM refuses an archive once a jar of its classpath has another size or modification time (the
    listener fetched again after its cache was cleared): such a run must not name the old archive."""
    jar = tmp_path / "listener.jar"
    jar.write_bytes(b"the jar")
    properties = {DRIVER_CLASSPATH: str(jar)}
    before = _archive(properties)
    assert _archive(properties) == before
    os.utime(jar, ns=(jar.stat().st_atime_ns, jar.stat().st_mtime_ns + 1_000_000_000))
    assert _archive(properties) != before
    again = _archive(properties)
    jar.write_bytes(b"another jar")
    assert _archive(properties) != again


def test_a_run_maps_its_classpath_s_archive_when_there_is_one(archives: Path) -> None:
    properties = {DRIVER_CLASSPATH: "/cache/listener.jar"}
    assert submit_environment(properties)[class_archive.JVM_OPTIONS_ENV_VAR] == "-XX:+UseSerialGC"
    _archive(properties).write_bytes(b"an archive")
    options = submit_environment(properties)[class_archive.JVM_OPTIONS_ENV_VAR]
    assert (
        options == f"-XX:+UseSerialGC -XX:SharedArchiveFile={_archive(properties)} -Xlog:cds=off -Xlog:cds+dynamic=off"
    )
    assert submit_environment(properties, class_archive=False)[class_archive.JVM_OPTIONS_ENV_VAR] == "-XX:+UseSerialGC"
    assert "SharedArchiveFile" not in submit_environment({})[class_archive.JVM_OPTIONS_ENV_VAR]


def test_an_archive_already_made_is_not_made_again(archives: Path) -> None:
    properties = {DRIVER_CLASSPATH: "/cache/listener.jar"}
    _archive(properties).write_bytes(b"an archive")
    assert prepare_class_archive(properties) == (_archive(properties), False)
