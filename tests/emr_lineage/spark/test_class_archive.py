"""The class archive of local Spark: one per driver classpath, used when it is there, never required."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from emr_lineage.spark import class_archive
from emr_lineage.spark.conf import DRIVER_CLASSPATH
from emr_lineage.spark.local import LocalSparkError, java_command, prepare_class_archive, spark_home, submit_environment


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


def _jar(folder: Path, name: str) -> str:
    jar = folder / name
    jar.write_bytes(name.encode())
    return str(jar)


def _archived(properties: dict[str, str], *, recorded: bool = True) -> Path:
    """An archive of ``properties`` in the archive folder (its content does not matter here)."""
    archive = _archive(properties)
    archive.write_bytes(b"an archive")
    if recorded:
        class_archive.record(archive, java_command(), spark_home(), properties)
    return archive


def test_preparing_removes_the_archives_no_run_can_use_and_keeps_the_others(archives: Path, tmp_path: Path) -> None:
    jars = tmp_path / "jars"
    jars.mkdir()
    current = {DRIVER_CLASSPATH: _jar(jars, "listener.jar")}
    other = _archived({DRIVER_CLASSPATH: _jar(jars, "other.jar")})  # another classpath, still as it was
    refetched = {DRIVER_CLASSPATH: _jar(jars, "refetched.jar")}
    stale = _archived(refetched)
    Path(refetched[DRIVER_CLASSPATH]).write_bytes(b"the jar fetched again")
    gone = _archived({DRIVER_CLASSPATH: _jar(jars, "deleted.jar")})
    Path(jars / "deleted.jar").unlink()
    unrecorded = _archived({DRIVER_CLASSPATH: _jar(jars, "older.jar")}, recorded=False)
    archive = _archived(current, recorded=False)  # made before archives had records: adopted, not made again

    assert prepare_class_archive(current) == (archive, False)
    assert sorted(archives.glob("*.jsa")) == sorted([archive, other])
    assert sorted(archives.glob("*.json")) == sorted([archive.with_suffix(".json"), other.with_suffix(".json")])
    assert not any(path.exists() for path in (stale, gone, unrecorded, stale.with_suffix(".json")))
    assert prepare_class_archive(current) == (archive, False)  # and again: nothing else to remove
    assert sorted(archives.glob("*.jsa")) == sorted([archive, other])


def test_an_archive_made_now_has_its_record_and_the_stale_ones_go(
    archives: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    def run_script(script, args, properties, *, stdout, stderr, env):  # the JVM writing the archive at its exit
        (path,) = (
            option.split("=", 1)[1] for option in env["SPARK_SUBMIT_OPTS"].split() if "ArchiveClassesAtExit" in option
        )
        Path(path).write_bytes(b"classes")
        return 0

    monkeypatch.setattr("emr_lineage.spark.local.run_script", run_script)
    unrecorded = _archived({DRIVER_CLASSPATH: "/old/listener.jar"}, recorded=False)
    (tmp_path / "jars").mkdir()
    properties = {DRIVER_CLASSPATH: _jar(tmp_path / "jars", "listener.jar")}
    archive, made = prepare_class_archive(properties)
    assert (archive, made) == (_archive(properties), True) and archive.read_bytes() == b"classes"
    assert json.loads(archive.with_suffix(".json").read_text()) == {
        "java": os.path.realpath(java_command()),
        "spark_home": str(spark_home()),
        "classpath": properties[DRIVER_CLASSPATH],
    }
    assert not unrecorded.exists() and sorted(archives.glob("*.js*")) == [archive, archive.with_suffix(".json")]


def test_a_warm_up_that_fails_names_the_cause_spark_gave(
    archives: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    def run_script(script, args, properties, *, stdout, stderr, env):  # a JVM that cannot resolve its host name
        stderr.write(
            b'Exception in thread "main" java.lang.ExceptionInInitializerError\n'
            b"\tat org.apache.spark.SparkConf.<init>(SparkConf.scala:71)\n"
            b"Caused by: java.net.UnknownHostException: vm: vm: Name or service not known\n"
            b"\tat java.base/java.net.InetAddress.getLocalHost(InetAddress.java:1913)\n"
            b"\t... 18 more\n"
        )
        return 1

    monkeypatch.setattr("emr_lineage.spark.local.run_script", run_script)
    (tmp_path / "jars").mkdir()
    properties = {DRIVER_CLASSPATH: _jar(tmp_path / "jars", "listener.jar")}
    with pytest.raises(LocalSparkError) as refused:
        prepare_class_archive(properties)
    assert str(refused.value) == "could not make the class archive for local Spark: vm: vm: Name or service not known"
    assert not _archive(properties).exists()


def test_pruning_survives_records_not_of_its_making_and_touches_only_its_own_files(
    archives: Path, tmp_path: Path
) -> None:
    jars = tmp_path / "jars"
    jars.mkdir()
    current = {DRIVER_CLASSPATH: _jar(jars, "listener.jar")}
    archive = _archived(current)
    bad_records = ['{"java": "/usr/bin/java", "spark_home": "/x", "classpath": 1}', "[1, 2]", "not json", '"text"']
    malformed = []
    for number, text in enumerate(bad_records):
        made = archives / f"{number:020x}.jsa"
        made.write_bytes(b"an archive")
        made.with_suffix(".json").write_text(text)
        malformed.append(made)
    foreign = [archives / "notes.jsa", archives / "settings.json", archives / "0123456789abcdef0123.JSA"]
    for path in foreign:
        path.write_text("the user's")
    folder = archives / "0123456789abcdef0123.jsa"
    folder.mkdir()
    refetched = {DRIVER_CLASSPATH: _jar(jars, "refetched.jar")}
    orphan = _archive(refetched).with_suffix(".json")  # an archive that was never made, for a jar since fetched again
    class_archive.record(_archive(refetched), java_command(), spark_home(), refetched)
    Path(refetched[DRIVER_CLASSPATH]).write_bytes(b"the jar fetched again")
    pending = {DRIVER_CLASSPATH: _jar(jars, "pending.jar")}  # an archive being made now: its record goes first
    class_archive.record(_archive(pending), java_command(), spark_home(), pending)
    abandoned, fresh = archives / ".making-killed", archives / ".making-now"
    for making in (abandoned, fresh):
        making.mkdir()
        (making / "half.jsa").write_bytes(b"half")
    os.utime(abandoned, (0, 0))

    assert prepare_class_archive(current) == (archive, False)
    assert not any(path.exists() for path in [*malformed, orphan, abandoned])
    assert all(path.exists() for path in [*foreign, folder, fresh, _archive(pending).with_suffix(".json")])
    assert archive.exists() and archive.with_suffix(".json").exists()


def test_a_record_that_cannot_be_written_is_no_error(tmp_path: Path) -> None:
    archive = tmp_path / "no-such-folder" / "0123456789abcdef0123.jsa"
    class_archive.record(archive, java_command(), spark_home(), {})
    assert not archive.parent.exists()
