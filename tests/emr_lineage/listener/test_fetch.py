"""Fetching the listener jar (and the Iceberg runtime) with the real ``mvn``: the real 1.53.0 jar and the real
runtime against the committed pins, refusals
that keep nothing, Maven's strict checksums on a throwaway file:// repository, Maven missing, failing,
too slow or interrupted, and ``emr-lineage listener fetch`` as one line and exit 2."""

from __future__ import annotations

import hashlib
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner

from emr_lineage.cli.app import main
from emr_lineage.listener.jar import (
    ChecksumMismatchError,
    ListenerError,
    ListenerNotPinnedError,
    NotAJarError,
    check_jar,
)
from emr_lineage.listener.maven import (
    LISTENER_DIR_ENV_VAR,
    fetch_jar,
    listener_cache_dir,
    local_jar,
    maven_candidates,
)
from emr_lineage.listener.mvn import MavenError, maven_copy, maven_problem
from tests.emr_lineage.listener.maven import THROWAWAY_GROUP, VERSION, build_test_jar, fake_mvn, throwaway
from tests.helpers import ctrl_c_as_in_a_terminal, one_error_line
from tests.versions import ICEBERG_RUNTIME, LISTENER, LISTENER_JAR, RUNTIME_JAR

# The pin committed in cdk.json: the SHA-256 of Maven Central's openlineage-spark_2.12-1.53.0.jar.
COMMITTED_PIN = "9fe28ee2e5b2cb535cd51b6572394bddeb684bf0c58650a698cf7724ce62d94d"
# And of its iceberg-spark-runtime-3.5_2.12-1.10.2.jar.
COMMITTED_RUNTIME_PIN = "c562d482dcd16b666e808b755469fbc4b2604284b41622c9d87e2c02b7cc6c5f"


def fetch_cli(*args: str):
    return CliRunner().invoke(main, ["listener", "fetch", *args])


def files_in(directory: Path) -> list[str]:
    """The names of the files under ``directory``, at any depth."""
    return sorted(path.name for path in directory.rglob("*") if path.is_file())


# --- the real jar -------------------------------------------------------------------------------


@pytest.mark.maven
def test_the_real_jar_is_fetched_with_maven_and_matches_the_committed_pin(real_jar):
    assert (LISTENER.version, LISTENER.sha256) == ("1.53.0", COMMITTED_PIN)
    assert real_jar.fetched and real_jar.sha256 == COMMITTED_PIN
    assert real_jar.coordinates == "io.openlineage:openlineage-spark_2.12:1.53.0"
    assert real_jar.path.name == LISTENER_JAR and real_jar.size == real_jar.path.stat().st_size > 40_000_000
    assert sorted(p.name for p in real_jar.path.parent.iterdir()) == [RUNTIME_JAR, LISTENER_JAR]  # no temporary


@pytest.mark.maven
def test_the_real_iceberg_runtime_is_fetched_beside_the_listener_and_matches_the_committed_pin(real_runtime):
    assert (ICEBERG_RUNTIME.version, ICEBERG_RUNTIME.sha256) == ("1.10.2", COMMITTED_RUNTIME_PIN)
    assert real_runtime.fetched and real_runtime.sha256 == COMMITTED_RUNTIME_PIN
    assert real_runtime.coordinates == "org.apache.iceberg:iceberg-spark-runtime-3.5_2.12:1.10.2"
    assert real_runtime.path.name == RUNTIME_JAR and real_runtime.size == real_runtime.path.stat().st_size
    check_jar(real_runtime.path, real_runtime.coordinates, type(ICEBERG_RUNTIME))  # its SparkCatalog class


def test_a_verified_jar_in_place_is_used_without_maven(pinned_jar, no_mvn):
    again = fetch_jar(LISTENER, directory=pinned_jar.path.parent)
    assert not again.fetched and (again.path, again.sha256) == (pinned_jar.path, COMMITTED_PIN)


@pytest.mark.maven
def test_a_wrong_pin_keeps_nothing_and_leaves_the_file_in_place_alone(tmp_path):
    stale = tmp_path / LISTENER_JAR
    stale.write_bytes(b"an older download")
    wrong = LISTENER.model_copy(update={"sha256": "0" * 64})
    with pytest.raises(
        ChecksumMismatchError, match=f"Maven gave {COMMITTED_PIN} but cdk.json pins {'0' * 64}; not kept"
    ):
        fetch_jar(wrong, directory=tmp_path)
    assert [p.name for p in tmp_path.iterdir()] == [LISTENER_JAR]
    assert stale.read_bytes() == b"an older download"


@pytest.mark.parametrize("artifact", [LISTENER, ICEBERG_RUNTIME], ids=["listener", "iceberg-runtime"])
def test_unpinned_is_refused_before_maven(artifact, tmp_path, no_mvn):
    key = f"emr-lineage.versions.{artifact.versions_key}.sha256"
    with pytest.raises(
        ListenerNotPinnedError, match=rf"no SHA-256 pinned in cdk.json \({key} is null\).*listener fetch --pin`"
    ):
        fetch_jar(artifact.model_copy(update={"sha256": None}), directory=tmp_path / "cache")
    assert not (tmp_path / "cache").exists()


# --- the cache and local_jar -----------------------------------------------------------


def test_the_cache_is_the_user_cache_unless_the_environment_names_one(monkeypatch, tmp_path):
    monkeypatch.setenv(LISTENER_DIR_ENV_VAR, "")
    assert listener_cache_dir().parts[-2:] == ("emr-lineage", "listener")
    monkeypatch.setenv(LISTENER_DIR_ENV_VAR, str(tmp_path))
    assert listener_cache_dir() == tmp_path


def test_local_jar_is_the_verified_jar_of_the_cache(pinned_jar, monkeypatch, no_mvn):
    monkeypatch.setenv(LISTENER_DIR_ENV_VAR, str(pinned_jar.path.parent))
    assert local_jar(LISTENER) == pinned_jar.path


def test_local_jar_of_the_runtime_is_the_verified_runtime_of_the_cache(pinned_runtime, monkeypatch, no_mvn):
    monkeypatch.setenv(LISTENER_DIR_ENV_VAR, str(pinned_runtime.path.parent))
    assert local_jar(ICEBERG_RUNTIME) == pinned_runtime.path


def test_local_jar_not_fetched_yet(cache_dir):
    with pytest.raises(ListenerError, match=r"not fetched yet: run `make setup` or `emr-lineage listener fetch`$"):
        local_jar(LISTENER)
    with pytest.raises(ListenerError, match=r"the Iceberg Spark runtime jar \(org.apache.iceberg:.*\) is not fetched"):
        local_jar(ICEBERG_RUNTIME)


def test_local_jar_that_is_not_the_pinned_one(cache_dir):
    cache_dir.mkdir()
    (cache_dir / LISTENER_JAR).write_bytes(build_test_jar())
    with pytest.raises(ChecksumMismatchError, match=f"{LISTENER_JAR}: SHA-256 .*, but cdk.json pins {COMMITTED_PIN}"):
        local_jar(LISTENER)


def test_local_jar_unpinned(cache_dir):
    with pytest.raises(ListenerNotPinnedError, match="listener fetch --pin"):
        local_jar(LISTENER.model_copy(update={"sha256": None}))


# --- Maven's checks, on a throwaway repository --------------------------------------------------


@pytest.mark.maven
def test_strict_checksums_refuse_an_artifact_whose_published_sha1_is_wrong(repositories, tmp_path):
    artifact = throwaway()
    repositories.publish(artifact, {"jar": build_test_jar()}, sha1={"jar": "0" * 40})
    with pytest.raises(MavenError) as raised:
        maven_copy([artifact.coordinates], tmp_path / "out", settings=repositories.settings)
    assert str(raised.value).startswith(f"cannot fetch {THROWAWAY_GROUP}:{artifact.name}:{VERSION} with Maven: ")
    # Maven 3.8: "expected 00.. but is 15..."; 3.9: "expected '00..' (REMOTE_EXTERNAL) but is actually '15..'"
    checksum = r"Checksum validation failed, expected '?0{40}'?(?: \(\w+\))? but is (?:actually )?'?[0-9a-f]{40}"
    assert re.search(checksum, str(raised.value))
    assert files_in(tmp_path / "out") == ["pom.xml"]  # Maven copied nothing


@pytest.mark.maven
def test_pinning_refuses_a_local_copy_maven_kept_despite_a_wrong_sha1(repositories, tmp_path):
    # What Maven's default policy leaves behind (a mismatch only warned about): Maven does not check a
    # file already in its local repository again, even with --strict-checksums; the pin's SHA-1 check does.
    artifact = throwaway()
    repositories.install_locally(artifact, {"jar": build_test_jar()}, sha1={"jar": "1" * 40})
    with maven_candidates([artifact], tmp_path, sha1=True, maven_settings=repositories.settings) as (candidate,):
        with pytest.raises(
            ChecksumMismatchError, match=f"SHA-1 [0-9a-f]{{40}}, but the repository published {'1' * 40}"
        ):
            candidate.check_published_sha1()
    assert list(tmp_path.iterdir()) == []


@pytest.mark.maven
def test_pinning_checks_a_local_copy_without_its_sha1_against_the_repository_s(repositories, tmp_path):
    # A jar in the local repository that Maven did not download has no .sha1 beside it: the repository's is
    # copied (Maven 3.8 asks a .sha1 for a checksum of its own under -C: then in a second run without -C).
    artifact, published = throwaway(), build_test_jar()
    repositories.publish(artifact, {"jar": published})
    repositories.install_locally(artifact, {"jar": build_test_jar(created_by="another build")}, sha1={"jar": None})
    with maven_candidates([artifact], tmp_path, sha1=True, maven_settings=repositories.settings) as (candidate,):
        with pytest.raises(
            ChecksumMismatchError, match=f"but the repository published {hashlib.sha1(published).hexdigest()}"
        ):
            candidate.check_published_sha1()
    assert list(tmp_path.iterdir()) == []


@pytest.mark.parametrize(
    ("body", "problem"),
    [
        (b"<html>Proxy login</html>", "not a zip file"),
        (build_test_jar(manifest=False), "a zip file without META-INF/MANIFEST.MF"),
        (
            build_test_jar(listener=False),
            "a zip file without io/openlineage/spark/agent/OpenLineageSparkListener.class",
        ),
    ],
    ids=["html", "no-manifest", "no-listener-class"],  # a zip's bytes hold its time
)
def test_a_file_that_is_not_the_listener_jar_is_refused(tmp_path, body, problem):
    # What Maven copied is checked before anything else (maven_candidate): e.g. a wrong artifact id.
    (tmp_path / "x.jar").write_bytes(body)
    with pytest.raises(NotAJarError, match=rf"^g:a:1 is not the OpenLineage listener jar \({problem}\)"):
        check_jar(tmp_path / "x.jar", "g:a:1")


def test_the_listener_jar_is_not_the_iceberg_runtime(tmp_path):
    (tmp_path / "x.jar").write_bytes(build_test_jar())
    with pytest.raises(
        NotAJarError,
        match=r"^g:a:1 is not the Iceberg Spark runtime jar \(a zip file without org/apache/iceberg/spark/SparkCatalog",
    ):
        check_jar(tmp_path / "x.jar", "g:a:1", type(ICEBERG_RUNTIME))


# --- Maven missing, failing, slow, interrupted --------------------------------------------------


@pytest.mark.maven
def test_mvn_missing_is_one_line_exit_2(cache_dir, monkeypatch):
    monkeypatch.setenv("PATH", str(cache_dir.parent / "no-such-bin"))
    line = one_error_line(fetch_cli(), stdout_empty=True)
    assert line == (  # one Maven run for both jars
        f"error: cannot fetch {LISTENER.coordinates}, {ICEBERG_RUNTIME.coordinates}: mvn not found; install Maven "
        "(Debian: apt-get install maven; make setup does)"
    )
    assert not cache_dir.exists() or list(cache_dir.iterdir()) == []


@pytest.mark.maven
def test_a_version_the_repository_does_not_have_is_maven_s_own_error(cache_dir, make_cdk_json):
    cdk_json = make_cdk_json(sha256=COMMITTED_PIN)
    cdk_json.write_text(cdk_json.read_text().replace('"version": "1.53.0"', '"version": "1.54.0"'))
    line = one_error_line(fetch_cli("--cdk-json", str(cdk_json)), stdout_empty=True)
    assert line == (
        "error: cannot fetch io.openlineage:openlineage-spark_2.12:1.54.0 with Maven: Could not find artifact "
        "io.openlineage:openlineage-spark_2.12:jar:1.54.0 in central (https://repo.maven.apache.org/maven2)"
    )
    assert list(cache_dir.iterdir()) == []


@pytest.mark.parametrize(
    "output, problem",
    [
        (
            "\x1b[0m[ERROR] Failed to execute goal org.apache.maven.plugins:maven-dependency-plugin:3.8.1:copy "
            "(default-cli) on project standalone-pom: Unable to find/resolve artifact. Could not transfer artifact "
            "g:a:jar:1 from/to central (https://repo.maven.apache.org/maven2): Connect timed out -> [Help 1]\n"
            "[ERROR] \n[ERROR] To see the full stack trace of the errors, re-run Maven with the -e switch.\n"
            "[ERROR] Re-run Maven using the -X switch to enable full debug logging.\n[ERROR] \n"
            "[ERROR] For more information about the errors and possible solutions, please read the following "
            "articles:\n[ERROR] [Help 1] http://cwiki.apache.org/confluence/display/MAVEN/MojoExecutionException\n"
            "\x1b[0m",
            "Could not transfer artifact g:a:jar:1 from/to central (https://repo.maven.apache.org/maven2): "
            "Connect timed out",
        ),
        ("The JAVA_HOME environment variable is not defined correctly\n\n", "The JAVA_HOME environment variable"),
        ("", "mvn exited with status 1 and printed nothing"),
    ],
)
def test_the_problem_is_the_last_meaningful_line_of_maven_s_output(output, problem):
    assert maven_problem(output, 1).startswith(problem)


@pytest.mark.maven
def test_a_failing_mvn_leaves_no_half_file(tmp_path, monkeypatch):
    bin_dir = fake_mvn(tmp_path / "bin", 'head -c 100 /dev/zero > "$out/half.jar"; echo "[ERROR] disk full"; exit 1')
    monkeypatch.setenv("PATH", f"{bin_dir}{os.pathsep}{os.environ['PATH']}")
    with pytest.raises(MavenError, match=f"cannot fetch {LISTENER.coordinates} with Maven: disk full$"):
        fetch_jar(LISTENER, directory=tmp_path / "cache")
    assert list((tmp_path / "cache").iterdir()) == []


@pytest.mark.maven
def test_a_maven_run_past_its_deadline_is_stopped(tmp_path, monkeypatch):
    bin_dir = fake_mvn(tmp_path / "bin", f"echo $$ > {tmp_path}/pid; exec tail -f /dev/null")
    monkeypatch.setenv("PATH", f"{bin_dir}{os.pathsep}{os.environ['PATH']}")
    with pytest.raises(MavenError, match=r"cannot fetch g:a:1: mvn did not finish within 0\.5s"):
        maven_copy(["g:a:1"], tmp_path / "out", timeout=0.5)
    with pytest.raises(ProcessLookupError):
        os.kill(int((tmp_path / "pid").read_text()), 0)


@pytest.mark.maven
@pytest.mark.parametrize("signal_name, code", [("INT", 130), ("TERM", 130)])
def test_ctrl_c_or_sigterm_while_maven_copies_leaves_nothing_in_the_cache(tmp_path, signal_name, code):
    # The fake mvn writes half a jar, then interrupts the command that started it and waits.
    bin_dir = fake_mvn(
        tmp_path / "bin",
        f'head -c 100 /dev/zero > "$out/{LISTENER_JAR}"; kill -{signal_name} $PPID; exec tail -f /dev/null',
    )
    cache = tmp_path / "cache"
    env = {**os.environ, "PATH": f"{bin_dir}{os.pathsep}{os.environ['PATH']}", LISTENER_DIR_ENV_VAR: str(cache)}
    command = [sys.executable, "-m", "emr_lineage", "listener", "fetch"]
    done = subprocess.run(
        command, env=env, capture_output=True, text=True, timeout=60, preexec_fn=ctrl_c_as_in_a_terminal
    )
    assert done.returncode == code, done.stderr
    assert done.stderr.strip() == "error: interrupted"
    assert list(cache.iterdir()) == []


# --- the command line ---------------------------------------------------------------------------


def test_cli_fetch_reports_both_jars_and_a_second_run_does_not_run_maven(
    pinned_jar, pinned_runtime, monkeypatch, no_mvn
):
    monkeypatch.setenv(LISTENER_DIR_ENV_VAR, str(pinned_jar.path.parent))
    result = fetch_cli()
    assert result.exit_code == 0, result.output
    assert result.stdout.splitlines() == [
        f"{pinned_jar.path}: already fetched, verified against the pin ({pinned_jar.size} bytes, sha256 "
        f"{COMMITTED_PIN})",
        f"{pinned_runtime.path}: already fetched, verified against the pin ({pinned_runtime.size} bytes, sha256 "
        f"{COMMITTED_RUNTIME_PIN})",
    ]


def test_cli_class_archive_names_local_spark_s_archive_for_the_jars(
    pinned_jar, pinned_runtime, monkeypatch, no_mvn, tmp_path
):
    """With --class-archive the archive of a classpath with the listener, then the Iceberg runtime, is made once
    (here it already is: a real one takes about 20 s, make setup makes it)."""
    from emr_lineage.spark import class_archive
    from emr_lineage.spark.conf import DRIVER_CLASSPATH
    from emr_lineage.spark.local import java_command, spark_home

    monkeypatch.setenv(LISTENER_DIR_ENV_VAR, str(pinned_jar.path.parent))
    monkeypatch.setenv(class_archive.ARCHIVE_DIR_ENV_VAR, str(tmp_path))
    classpath = f"{pinned_jar.path}{os.pathsep}{pinned_runtime.path}"
    archive = class_archive.archive_path(java_command(), spark_home(), {DRIVER_CLASSPATH: classpath})
    archive.write_bytes(b"made before")
    result = fetch_cli("--class-archive")
    assert result.exit_code == 0, result.output
    assert result.stdout.splitlines()[-1] == (
        f"{archive}: local Spark's class archive for the listener's classpath, already made"
    )


def test_cli_unpinned_is_one_line_exit_2(cache_dir, make_cdk_json, no_mvn):
    line = one_error_line(fetch_cli("--cdk-json", str(make_cdk_json())), stdout_empty=True)
    assert "no SHA-256 pinned in cdk.json" in line and "run `emr-lineage listener fetch --pin`" in line


@pytest.mark.parametrize("option", ["--replace-pin", "--pgp-key"])
def test_cli_pin_options_without_pin_are_usage_errors(option, signer, no_mvn):
    args = [option, str(signer.public_key)] if option == "--pgp-key" else [option]
    assert f"{option} only goes with --pin" in one_error_line(fetch_cli(*args), stdout_empty=True)
