"""The Maven run itself, with fake ``mvn`` scripts (no JVM): the pom.xml that lists every artifact of a fetch,
the second run without ``--strict-checksums`` for a companion file Maven 3.8 refuses only for want of a
checksum of its own, and the failure put on the artifact Maven's error names."""

from __future__ import annotations

import os
import xml.etree.ElementTree as ET

import pytest
from click.testing import CliRunner

from emr_lineage.cli.app import main
from emr_lineage.listener.mvn import (
    DEPENDENCY_PLUGIN,
    NO_CHECKSUMS,
    MavenError,
    maven_copy,
    maven_problem,
    named_artifact,
)
from tests.emr_lineage.listener.maven import fake_mvn
from tests.helpers import one_error_line
from tests.versions import ICEBERG_RUNTIME, LISTENER

FAILED = (
    f"[ERROR] Failed to execute goal {DEPENDENCY_PLUGIN}:copy (default-cli) on project fetch: Unable to find/resolve"
)


def on_path(monkeypatch, bin_dir) -> None:
    monkeypatch.setenv("PATH", f"{bin_dir}{os.pathsep}{os.environ['PATH']}")


def items(pom) -> list[tuple[str, ...]]:
    """(groupId, artifactId, version, type, outputDirectory) of each artifactItem of a pom.xml."""
    fields = ("groupId", "artifactId", "version", "type", "outputDirectory")
    return [tuple(item.findtext(f) for f in fields) for item in ET.parse(pom).getroot().iter("artifactItem")]


def test_a_companion_refused_for_want_of_its_own_checksum_is_copied_in_a_second_run_without_c(tmp_path, monkeypatch):
    log = tmp_path / "runs"
    refusal = (
        f"{FAILED} artifact. Could not transfer artifact g:a:jar.sha1:1 from/to central (https://x): {NO_CHECKSUMS}"
    )
    on_path(
        monkeypatch,
        fake_mvn(
            tmp_path / "bin",
            f'echo "$*" >> "{log}"\n'
            f'case " $* " in *" --strict-checksums "*) echo "{refusal} -> [Help 1]"; exit 1;; esac\n'
            'mkdir "$out/1" "$out/2"; echo jar > "$out/1/a-1.jar"; echo digest > "$out/2/a-1.jar.sha1"',
        ),
    )
    sha1, jar = maven_copy(["g:a:1:jar.sha1", "g:a:1"], tmp_path / "out")
    assert (jar.name, jar.read_text(), sha1.name, sha1.read_text()) == ("a-1.jar", "jar\n", "a-1.jar.sha1", "digest\n")
    runs = log.read_text().splitlines()
    assert len(runs) == 2 and "--strict-checksums" in runs[0] and "--strict-checksums" not in runs[1]
    # The jar is listed first: resolved under -C before Maven got to the companion.
    for run in ("strict", "lenient"):
        pom = tmp_path / "out" / run / "pom.xml"
        assert items(pom) == [("g", "a", "1", "jar", "1"), ("g", "a", "1", "jar.sha1", "2")]


def test_the_same_refusal_of_a_jar_is_not_retried(tmp_path, monkeypatch):
    log = tmp_path / "runs"
    refusal = f"Could not transfer artifact g:a:jar:1 from/to central (https://x): {NO_CHECKSUMS}"
    on_path(
        monkeypatch, fake_mvn(tmp_path / "bin", f'echo "$*" >> "{log}"; echo "{FAILED} artifact. {refusal}"; exit 1')
    )
    with pytest.raises(MavenError) as raised:
        maven_copy(["g:a:1", "g:a:1:jar.sha1"], tmp_path / "out")
    assert str(raised.value) == f"cannot fetch g:a:1 with Maven: {refusal}"
    assert raised.value.coordinates == "g:a:1" and len(log.read_text().splitlines()) == 1


def test_a_failure_of_the_runtime_s_jar_names_the_runtime(cache_dir, monkeypatch):
    # One run for both jars: Maven's error says which one it could not resolve.
    missing = f"Could not find artifact {ICEBERG_RUNTIME.group_id}:{ICEBERG_RUNTIME.artifact_id}:jar:1.10.2 in central"
    on_path(monkeypatch, fake_mvn(cache_dir.parent / "bin", f'echo "{FAILED} artifact. {missing} -> [Help 1]"; exit 1'))
    line = one_error_line(CliRunner().invoke(main, ["listener", "fetch"]), stdout_empty=True)
    assert line == f"error: cannot fetch {ICEBERG_RUNTIME.coordinates} with Maven: {missing}"
    assert list(cache_dir.iterdir()) == []


@pytest.mark.parametrize(
    "resolver",
    [
        "",  # Maven 3.8 (Debian 12's)
        "The following artifacts could not be resolved: g:a:jar:1 (absent), g:b:jar:1 (absent): ",  # Maven 3.9
    ],
    ids=["maven-3.8", "maven-3.9"],
)
def test_the_problem_is_maven_s_reason_whatever_maven_wraps_around_it(resolver):
    reason = "Could not find artifact g:a:jar:1 in central (https://repo.maven.apache.org/maven2)"
    output = f"{FAILED} artifact. {resolver}{reason} -> [Help 1]\n[ERROR] \n[ERROR] Re-run Maven using -X\n"
    assert maven_problem(output, 1) == reason


@pytest.mark.parametrize(
    "problem, named",
    [
        ("Could not find artifact g:a:jar:1.53.0 in central", "g:a:1.53.0"),
        ("Could not transfer artifact g:a:jar.sha1:1.53.0 from/to central", "g:a:1.53.0:jar.sha1"),
        ("Could not find artifact g:a:jar:1.53.1 in central", None),  # another version
        ("Could not find artifact g:a-b:jar:1.53.0 in central", None),  # another artifact
        ("Connect timed out", None),
    ],
)
def test_the_artifact_a_failure_names(problem, named):
    assert named_artifact(problem, ["g:a:1.53.0", "g:a:1.53.0:jar.sha1", "g:a:1.5"]) == named


def test_one_run_lists_both_jars_and_no_path_of_ours(tmp_path, monkeypatch):
    on_path(monkeypatch, fake_mvn(tmp_path / "bin", 'cp "$out/pom.xml" "$out/../../../pom.xml"; exit 1'))
    with pytest.raises(MavenError, match=f"^cannot fetch {LISTENER.coordinates}, {ICEBERG_RUNTIME.coordinates} with"):
        maven_copy([LISTENER.coordinates, ICEBERG_RUNTIME.coordinates], tmp_path / "out" / "maven")
    assert items(tmp_path / "pom.xml") == [
        (LISTENER.group_id, LISTENER.artifact_id, LISTENER.version, "jar", "1"),
        (ICEBERG_RUNTIME.group_id, ICEBERG_RUNTIME.artifact_id, ICEBERG_RUNTIME.version, "jar", "2"),
    ]
