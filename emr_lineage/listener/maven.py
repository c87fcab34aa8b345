"""The pinned jars of local Spark in the user cache: fetched with Maven, used only when they match their pins.

Two jars: the OpenLineage Spark listener (``io.openlineage:openlineage-spark_<scala>:<version>``) and the
Iceberg Spark runtime (``org.apache.iceberg:iceberg-spark-runtime-<spark>_<scala>:<version>``), each a
:class:`~emr_lineage.settings.versions.MavenJar` of cdk.json's ``versions``, and each fetched the same way.
:func:`fetch_jars` has Maven copy the jars not already in place, both in one run (:mod:`emr_lineage.listener.mvn`;
Maven checks the repository's ``.sha1`` with ``--strict-checksums``), into a temporary directory beside
:func:`listener_cache_dir`, checks that each is the jar it should be (its marker class) and that its SHA-256
is the one pinned in cdk.json, and only then moves them into place (a rename: the cache never holds half a
file or an unverified one). A jar already in place with the pinned SHA-256 is used as it is, without running
Maven. :func:`local_jar` is the cheap check before a local Spark run: the cached jar, verified, or one line
saying how to get it.

``emr-lineage listener fetch --pin`` fetches without a pin through :func:`maven_candidates` instead: the
jar's SHA-1 is checked against the ``.sha1`` the repository published (copied in the same Maven run), and
:mod:`emr_lineage.listener.pin` records the SHA-256. See docs/listener.md.
"""

from __future__ import annotations

import hashlib
import os
import re
import tempfile
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, replace
from pathlib import Path

from emr_lineage.listener.jar import (
    ChecksumMismatchError,
    FetchedJar,
    ListenerError,
    check_jar,
    file_sha256,
    not_pinned,
)
from emr_lineage.listener.mvn import maven_copy
from emr_lineage.settings.versions import MavenJar, Versions

# Where the verified jars are kept, instead of the user cache (tests, CI caches).
LISTENER_DIR_ENV_VAR = "EMR_LINEAGE_LISTENER_DIR"
FETCH_COMMAND = "emr-lineage listener fetch"
_SHA1 = re.compile(r"[0-9a-f]{40}")


def listener_cache_dir() -> Path:
    """``$EMR_LINEAGE_LISTENER_DIR``, else ``platformdirs.user_cache_dir("emr-lineage")/listener``.

    An empty environment variable counts as unset.
    """
    configured = os.environ.get(LISTENER_DIR_ENV_VAR)
    if configured:
        return Path(configured).expanduser()
    from platformdirs import user_cache_dir

    return Path(user_cache_dir("emr-lineage")) / "listener"


def fetch_jar(artifact: MavenJar, *, directory: Path | None = None) -> FetchedJar:
    """The verified jar of ``artifact`` in ``directory`` (default :func:`listener_cache_dir`), fetched with Maven
    unless it is already there. The jar must have the SHA-256 cdk.json pins (:class:`ListenerNotPinnedError`
    when there is none, :class:`ChecksumMismatchError` when it differs: then nothing is kept)."""
    (jar,) = _fetch([artifact], directory)
    return jar


def local_jar(artifact: MavenJar) -> Path:
    """The verified jar of ``artifact`` in :func:`listener_cache_dir` (Maven is not run): a :class:`ListenerError`
    when it is not there, :class:`ChecksumMismatchError` when it is not the pinned one."""
    if artifact.sha256 is None:
        raise not_pinned(artifact)
    path = listener_cache_dir() / artifact.file_name
    if not path.is_file():
        raise ListenerError(
            f"{path}: {artifact.title} ({artifact.coordinates}) is not fetched yet: "
            f"run `make setup` or `{FETCH_COMMAND}`"
        )
    sha256, _ = file_sha256(path)
    if sha256 != artifact.sha256:
        raise ChecksumMismatchError(
            f"{path}: SHA-256 {sha256}, but cdk.json pins {artifact.sha256}; run `{FETCH_COMMAND}` "
            "to replace it with the pinned jar"
        )
    return path


@dataclass(frozen=True)
class LocalJars:
    """The verified jars of a local Spark run: the listener, and the Iceberg runtime beside it."""

    listener: Path
    iceberg_runtime: Path


def local_jars(versions: Versions) -> LocalJars:
    """:func:`local_jar` of the listener and of the Iceberg runtime ``versions`` pins."""
    return LocalJars(local_jar(versions.openlineage_spark), local_jar(versions.iceberg_spark_runtime))


def fetch_jars(versions: Versions, *, directory: Path | None = None) -> list[FetchedJar]:
    """:func:`fetch_jar` of the listener and of the Iceberg runtime: one Maven run for those not in place, and
    none is kept unless all match their pins."""
    return _fetch([versions.openlineage_spark, versions.iceberg_spark_runtime], directory)


def _fetch(artifacts: Sequence[MavenJar], directory: Path | None) -> list[FetchedJar]:
    directory = listener_cache_dir() if directory is None else directory
    for artifact in artifacts:
        if artifact.sha256 is None:
            raise not_pinned(artifact)
    jars = [_verified_in_place(artifact, directory) for artifact in artifacts]
    missing = [artifact for artifact, jar in zip(artifacts, jars, strict=True) if jar is None]
    if not missing:
        return [jar for jar in jars if jar is not None]
    with maven_candidates(missing, directory) as candidates:
        for candidate in candidates:
            _check_pin(candidate.jar, candidate.artifact, directory)
        fetched = iter([candidate.keep() for candidate in candidates])
    return [jar or next(fetched) for jar in jars]


class Candidate:
    """A jar Maven copied into a temporary directory beside its destination, with the files published beside it
    that were asked for: the jar it should be, hashed, not in place until :meth:`keep`."""

    def __init__(self, artifact: MavenJar, jar: FetchedJar, target: Path, companions: dict[str, Path]) -> None:
        self.artifact = artifact
        self.jar = jar
        self.target = target
        self.companions = companions  # extension (jar.sha1, jar.asc) -> the file Maven copied

    def companion(self, extension: str) -> Path:
        """A file published beside the jar (``jar.asc``, ``jar.sha1``), copied in the same Maven run."""
        return self.companions[extension]

    def check_published_sha1(self) -> str:
        """The repository's SHA-1 of the jar, checked against the jar Maven copied.

        Maven checks it when it downloads into its local repository, not for a file already there
        (which an earlier run without ``--strict-checksums`` may have kept after a mere warning).
        """
        published = _sha1_file(self.companion("jar.sha1"), self.artifact.coordinates)
        with self.jar.path.open("rb") as handle:
            actual = hashlib.file_digest(handle, "sha1").hexdigest()
        if actual != published:
            raise ChecksumMismatchError(
                f"{self.artifact.coordinates}: SHA-1 {actual}, but the repository published {published}: the "
                "copy in Maven's local repository (~/.m2 by default) is not the published file; delete it and "
                "run again; nothing kept, cdk.json unchanged"
            )
        return published

    def keep(self) -> FetchedJar:
        """Move the jar into place (atomically, replacing an older file of that name)."""
        os.replace(self.jar.path, self.target)
        return replace(self.jar, path=self.target)


@contextmanager
def maven_candidates(
    artifacts: Sequence[MavenJar],
    directory: Path,
    *,
    sha1: bool = False,
    signed: MavenJar | None = None,
    maven_settings: Path | None = None,
) -> Iterator[list[Candidate]]:
    """Copy the jars of ``artifacts`` with one Maven run (:func:`~emr_lineage.listener.mvn.maven_copy`) into
    a temporary directory in ``directory`` and check each is its artifact's jar; the temporary directory,
    and whatever is still in it, goes on exit (Ctrl-C included).

    ``sha1``: each jar's ``.sha1`` too; ``signed``: one of ``artifacts`` whose ``.asc`` is copied too.
    ``maven_settings``: a settings.xml for Maven instead of the user's (tests)."""
    wanted = [(index, "jar") for index in range(len(artifacts))]
    wanted += [(index, "jar.sha1") for index in range(len(artifacts)) if sha1]
    wanted += [(index, "jar.asc") for index, artifact in enumerate(artifacts) if artifact is signed]
    coordinates = [artifacts[index].coordinates + ("" if kind == "jar" else f":{kind}") for index, kind in wanted]
    directory.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(prefix=".fetch-", dir=directory) as tmp:
        files = maven_copy(coordinates, Path(tmp) / "maven", settings=maven_settings)
        copied: list[dict[str, Path]] = [{} for _ in artifacts]
        for (index, kind), path in zip(wanted, files, strict=True):
            copied[index][kind] = path
        candidates = []
        for artifact, files_of in zip(artifacts, copied, strict=True):
            path = files_of.pop("jar")
            check_jar(path, artifact.coordinates, type(artifact))
            sha256, size = file_sha256(path)
            jar = FetchedJar(path, artifact.coordinates, sha256, size)
            candidates.append(Candidate(artifact, jar, directory / artifact.file_name, files_of))
        yield candidates


def _verified_in_place(artifact: MavenJar, directory: Path) -> FetchedJar | None:
    path = directory / artifact.file_name
    if not path.is_file():
        return None
    sha256, size = file_sha256(path)
    if sha256 != artifact.sha256:
        return None  # another file (an older version's, a broken one): fetched again, then replaced
    return FetchedJar(path, artifact.coordinates, sha256, size, fetched=False)


def _check_pin(jar: FetchedJar, artifact: MavenJar, directory: Path) -> None:
    if jar.sha256 != artifact.sha256:
        raise ChecksumMismatchError(
            f"{jar.coordinates}: SHA-256 mismatch, Maven gave {jar.sha256} but cdk.json pins {artifact.sha256}; "
            f"not kept ({directory} unchanged); a different file than the pinned one: find out why before "
            "pinning it (`emr-lineage listener fetch --pin --replace-pin`)"
        )


def _sha1_file(path: Path, coordinates: str) -> str:
    """The digest in a ``.sha1`` file: the hex digest alone, or ``<digest>  <file name>``."""
    words = path.read_text(encoding="ascii", errors="replace").split()
    digest = words[0].lower() if words else ""
    if not _SHA1.fullmatch(digest):
        raise ChecksumMismatchError(f"{coordinates}:jar.sha1 holds no SHA-1 digest: {' '.join(words)[:80]!r}")
    return digest
