"""Copy one artifact out of a Maven repository with the ``mvn`` the machine has, as it is configured.

``mvn -B -q -U -C <dependency plugin>:copy -Dartifact=<coordinates> -DoutputDirectory=<dir>``
resolves the artifact (downloading it into the local repository, ``~/.m2``, when it is not there)
and copies it into ``<dir>``. ``-C`` (``--strict-checksums``) makes a checksum mismatch fail the
download instead of Maven's default warning; ``-U`` retries what an earlier run found missing. The
repository, a mirror or a proxy are Maven's own settings (``~/.m2/settings.xml``), never ours. A
failure is one :class:`MavenError` line with the last meaningful ``[ERROR]`` line of Maven's output.
"""

from __future__ import annotations

import os
import re
import subprocess
from pathlib import Path

from emr_lineage.listener.jar import ListenerError
from emr_lineage.processes import SHORT_LIVED_JVM, stop_group

MAVEN = "mvn"
# Pinned, so that what runs does not depend on the default plugin version of the installed Maven.
DEPENDENCY_PLUGIN = "org.apache.maven.plugins:maven-dependency-plugin:3.8.1"
# One Maven run: JVM start-up, resolving, downloading a 43 MB jar on a slow link.
MAVEN_TIMEOUT = 900.0
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
    re.compile(r"\s*-> \[Help \d+\]$"),
)


class MavenError(ListenerError):
    """Maven is missing, failed or did not finish."""


def maven_command(coordinates: str, directory: Path, *, settings: Path | None = None, strict: bool = True) -> list[str]:
    """The ``mvn`` command line that copies ``coordinates`` (``g:a:v[:type]``) into ``directory``.

    ``strict``: ``--strict-checksums`` (``-C``), a checksum mismatch fails (Maven's default only
    warns). Off only for a file no checksum can cover: Maven 3.8 asks none for a ``.asc`` signature
    and fails it with "Checksum validation failed, no checksums available" under ``-C``.
    """
    return [
        MAVEN,
        "--batch-mode",
        "--quiet",
        "--update-snapshots",  # -U: also retries an artifact an earlier run did not find
        *(["--strict-checksums"] if strict else []),
        "-Dstyle.color=never",
        *(["--settings", str(settings)] if settings else []),
        f"{DEPENDENCY_PLUGIN}:copy",
        f"-Dartifact={coordinates}",
        f"-DoutputDirectory={directory}",
    ]


def maven_copy(
    coordinates: str,
    directory: Path,
    *,
    settings: Path | None = None,
    strict: bool = True,
    timeout: float = MAVEN_TIMEOUT,
) -> Path:
    """Copy the artifact ``coordinates`` into the new, empty ``directory`` with Maven; return its file.

    ``settings`` is a Maven settings.xml to use instead of the user's (tests); ``strict``: see
    :func:`maven_command`. On a failure,
    a timeout or Ctrl-C, Maven is stopped and whatever it left in ``directory`` stays there:
    the caller's temporary directory.
    """
    directory.mkdir(parents=True)
    _run(maven_command(coordinates, directory, settings=settings, strict=strict), coordinates, timeout)
    files = sorted(directory.iterdir())
    if len(files) != 1:
        raise MavenError(f"{coordinates}: mvn copied {len(files)} files into {directory}, not one")
    return files[0]


def _run(command: list[str], coordinates: str, timeout: float) -> None:
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
            f"cannot fetch {coordinates}: {MAVEN} not found; install Maven (Debian: apt-get install maven; "
            "make setup does)"
        ) from None
    try:
        output, _ = process.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        stop_group(process, _STOP_SECONDS)
        raise MavenError(f"cannot fetch {coordinates}: mvn did not finish within {timeout:g}s") from None
    except BaseException:  # Ctrl-C, SIGTERM: Maven goes too
        stop_group(process, _STOP_SECONDS)
        raise
    if process.returncode != 0:
        raise MavenError(f"cannot fetch {coordinates} with Maven: {maven_problem(output, process.returncode)}")


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
