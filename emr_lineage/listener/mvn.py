"""Copy artifacts out of a Maven repository with the ``mvn`` the machine has, as it is configured: all that one
fetch needs in one Maven run.

:func:`maven_copy` writes a ``pom.xml`` that lists each artifact as an ``artifactItem`` of the dependency
plugin's ``copy`` goal, each into a folder of its own, and runs ``mvn -B -q -U -C -f <pom.xml> <dependency
plugin>:copy``. The plugin resolves the artifacts in turn (downloading each into the local repository,
``~/.m2``, when it is not there) and copies them once all are resolved. ``-C`` (``--strict-checksums``)
makes a checksum mismatch fail the download instead of Maven's default warning; ``-U`` retries what an
earlier run found missing. The repository, a mirror or a proxy are Maven's own settings
(``~/.m2/settings.xml``), never ours. A failure is one :class:`MavenError` line with the last meaningful
``[ERROR]`` line of Maven's output, for the artifact that line names.
"""

from __future__ import annotations

import os
import re
import subprocess
import xml.etree.ElementTree as ET
from collections.abc import Sequence
from pathlib import Path

from emr_lineage.listener.jar import ListenerError
from emr_lineage.processes import SHORT_LIVED_JVM, stop_group

MAVEN = "mvn"
# Pinned, so that what runs does not depend on the default plugin version of the installed Maven.
DEPENDENCY_PLUGIN = "org.apache.maven.plugins:maven-dependency-plugin:3.8.1"
# One Maven run: JVM start-up, resolving, downloading two jars of 40-50 MB on a slow link.
MAVEN_TIMEOUT = 900.0
POM = "pom.xml"
# Files about another file, which no checksum of their own covers: a checksum file, a signature.
COMPANION_TYPES = (".sha1", ".asc")
# Maven 3.8's refusal of such a file under --strict-checksums (3.9 asks no checksum for it).
NO_CHECKSUMS = "Checksum validation failed, no checksums available"
_STOP_SECONDS = 5.0
_ANSI = re.compile(r"\x1b\[[0-9;]*[A-Za-z]")
# Maven's advice after every failure, not the failure itself.
_BOILERPLATE = (
    "To see the full stack trace",
    "Re-run Maven using",
    "For more information about the errors",
    "[Help ",
)
_WRAPPERS = (
    re.compile(r"^Failed to execute goal \S+ \([^)]*\) on project [^:]+: "),
    re.compile(r"^Unable to find/resolve artifact\.\s*"),
    re.compile(r"^The following artifacts could not be resolved: (?:\S+ \([^)]*\)(?:, )?)+: "),  # Maven 3.9's resolver
    re.compile(r"\s*-> \[Help \d+\]$"),
)


class MavenError(ListenerError):
    """Maven is missing, failed or did not finish. ``coordinates``: the artifact Maven's error names, if one
    does; ``problem``: Maven's own words."""

    def __init__(self, message: str, *, coordinates: str | None = None, problem: str = "") -> None:
        super().__init__(message)
        self.coordinates = coordinates
        self.problem = problem


def maven_command(pom: Path, *, settings: Path | None = None, strict: bool = True) -> list[str]:
    """The ``mvn`` command line that copies the artifacts ``pom`` lists (:func:`maven_pom`).

    ``strict``: ``--strict-checksums`` (``-C``), a checksum mismatch fails (Maven's default only warns).
    """
    return [
        MAVEN,
        "--batch-mode",
        "--quiet",
        "--update-snapshots",  # -U: also retries an artifact an earlier run did not find
        *(["--strict-checksums"] if strict else []),
        "-Dstyle.color=never",
        *(["--settings", str(settings)] if settings else []),
        "--file",
        str(pom),  # our pom, never one in the current directory
        f"{DEPENDENCY_PLUGIN}:copy",
    ]


def maven_pom(coordinates: Sequence[str]) -> bytes:
    """A pom.xml whose dependency plugin copies each of ``coordinates`` (``g:a:v[:type]``, type ``jar`` by
    default) into the folder ``1``, ``2``... beside it (relative to the pom: no path of ours in it)."""
    project = ET.Element("project")
    _children(project, modelVersion="4.0.0", groupId="local.emr-lineage", artifactId="fetch", version="0")
    _children(project, packaging="pom")
    plugin = ET.SubElement(ET.SubElement(ET.SubElement(project, "build"), "plugins"), "plugin")
    group, artifact, version = DEPENDENCY_PLUGIN.split(":")
    _children(plugin, groupId=group, artifactId=artifact, version=version)
    items = ET.SubElement(ET.SubElement(plugin, "configuration"), "artifactItems")
    for number, item in enumerate(coordinates, start=1):
        parts = item.split(":")
        if len(parts) not in (3, 4) or not all(parts):
            raise ValueError(f"not Maven coordinates g:a:v[:type]: {item!r}")
        group, artifact, version, kind = (*parts, "jar") if len(parts) == 3 else parts
        fields = {"groupId": group, "artifactId": artifact, "version": version, "type": kind}
        _children(ET.SubElement(items, "artifactItem"), **fields, outputDirectory=str(number))
    return ET.tostring(project, encoding="utf-8", xml_declaration=True) + b"\n"


def _children(parent: ET.Element, **texts: str) -> None:
    for tag, text in texts.items():
        ET.SubElement(parent, tag).text = text


def maven_copy(
    coordinates: Sequence[str],
    directory: Path,
    *,
    settings: Path | None = None,
    timeout: float = MAVEN_TIMEOUT,
) -> list[Path]:
    """Copy the artifacts ``coordinates`` (``g:a:v[:type]``) with one Maven run into the new ``directory``;
    return their files, in that order.

    Under ``--strict-checksums``; companions (a ``.sha1``, a ``.asc``) are listed after the other artifacts.
    When Maven 3.8 refuses a companion only for want of a checksum of its own, it runs once more without
    ``-C``: the other artifacts were resolved under ``-C`` before it (they are in the local repository now,
    not downloaded again), and a companion is checked by what it is checked against. ``settings`` is a
    Maven settings.xml to use instead of the user's (tests). On a failure, a timeout or Ctrl-C, Maven is
    stopped and whatever it left in ``directory`` stays there: the caller's temporary directory.
    """
    order = sorted(range(len(coordinates)), key=lambda index: _is_companion(coordinates[index]))
    listed = [coordinates[index] for index in order]
    directory.mkdir(parents=True)
    try:
        files = _copy_once(listed, directory / "strict", settings, strict=True, timeout=timeout)
    except MavenError as error:
        if not (error.coordinates and _is_companion(error.coordinates) and NO_CHECKSUMS in error.problem):
            raise
        files = _copy_once(listed, directory / "lenient", settings, strict=False, timeout=timeout)
    by_index = dict(zip(order, files, strict=True))
    return [by_index[index] for index in range(len(coordinates))]


def _is_companion(coordinates: str) -> bool:
    return coordinates.count(":") == 3 and coordinates.endswith(COMPANION_TYPES)


def _copy_once(
    coordinates: list[str], directory: Path, settings: Path | None, *, strict: bool, timeout: float
) -> list[Path]:
    directory.mkdir()
    pom = directory / POM
    pom.write_bytes(maven_pom(coordinates))
    _run(maven_command(pom, settings=settings, strict=strict), coordinates, timeout)
    files = []
    for number, item in enumerate(coordinates, start=1):
        folder = directory / str(number)
        copied = sorted(folder.iterdir()) if folder.is_dir() else []
        if len(copied) != 1:
            raise MavenError(f"{item}: mvn copied {len(copied)} files into {folder}, not one")
        files.append(copied[0])
    return files


def _run(command: list[str], coordinates: list[str], timeout: float) -> None:
    what = ", ".join(dict.fromkeys(":".join(item.split(":")[:3]) for item in coordinates))
    try:
        process = subprocess.Popen(
            command,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            text=True,
            errors="replace",
            start_new_session=True,  # its own process group: stopped as a whole, below
            # A Maven run lives seconds; put first, so the user's own MAVEN_OPTS win.
            env={**os.environ, "MAVEN_OPTS": f"{SHORT_LIVED_JVM} {os.environ.get('MAVEN_OPTS', '')}".strip()},
        )
    except FileNotFoundError:
        raise MavenError(
            f"cannot fetch {what}: {MAVEN} not found; install Maven (Debian: apt-get install maven; make setup does)"
        ) from None
    try:
        output, _ = process.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        stop_group(process, _STOP_SECONDS)
        raise MavenError(f"cannot fetch {what}: mvn did not finish within {timeout:g}s") from None
    except BaseException:  # Ctrl-C, SIGTERM: Maven goes too
        stop_group(process, _STOP_SECONDS)
        raise
    if process.returncode != 0:
        problem = maven_problem(output, process.returncode)
        named = named_artifact(problem, coordinates)
        raise MavenError(f"cannot fetch {named or what} with Maven: {problem}", coordinates=named, problem=problem)


def named_artifact(problem: str, coordinates: Sequence[str]) -> str | None:
    """The one of ``coordinates`` that Maven's ``problem`` names first, as Maven writes an artifact
    (``g:a:type:v``: ``Could not find artifact io.openlineage:openlineage-spark_2.12:jar:1.54.0``)."""
    found = []
    for item in coordinates:
        group, artifact, version, *kind = item.split(":")
        spelled = f"{group}:{artifact}:{kind[0] if kind else 'jar'}:{version}"
        match = re.search(rf"(?<![\w.:-]){re.escape(spelled)}(?![\w.:-])", problem)
        if match:
            found.append((match.start(), item))
    return min(found)[1] if found else None


def maven_problem(output: str, returncode: int) -> str:
    """The last meaningful ``[ERROR]`` line of Maven's output, without Maven's wrapping around it."""
    lines = [_ANSI.sub("", line).strip() for line in output.splitlines()]
    errors = [
        text
        for line in lines
        if line.startswith("[ERROR]") and (text := line.removeprefix("[ERROR]").strip())
        if not text.startswith(_BOILERPLATE)
    ]
    if not errors:
        others = [line for line in lines if line]
        return others[-1] if others else f"mvn exited with status {returncode} and printed nothing"
    problem = errors[-1]
    for wrapper in _WRAPPERS:
        problem = wrapper.sub("", problem)
    return problem
