"""A pinned jar as a file (the listener's, the Iceberg runtime's): the errors about it, the check that it is the
jar it should be, its SHA-256."""

from __future__ import annotations

import hashlib
import os
import zipfile
from dataclasses import dataclass
from pathlib import Path

from emr_lineage.errors import EmrLineageError
from emr_lineage.settings.versions import ListenerArtifact, MavenJar

MANIFEST = "META-INF/MANIFEST.MF"
LISTENER_CLASS = ListenerArtifact.marker_class


class ListenerError(EmrLineageError):
    """Fetching, checking or staging the listener (or the Iceberg runtime) failed; the message is one line that
    says what and where."""


class ListenerNotPinnedError(ListenerError):
    """cdk.json carries no SHA-256 for the jar yet."""


class ChecksumMismatchError(ListenerError):
    """The jar is not the pinned one (or not the one the repository published)."""


class NotAJarError(ListenerError):
    """The file is not the listener's jar (another artifact, a proxy's HTML page)."""


@dataclass(frozen=True)
class FetchedJar:
    path: Path
    coordinates: str  # Maven's groupId:artifactId:version
    sha256: str
    size: int
    fetched: bool = True  # False: the verified jar was already in place, Maven was not run


def check_jar(path: Path, what: str, artifact: type[MavenJar] = ListenerArtifact) -> None:
    """The ``artifact``'s jar is a zip file with ``META-INF/MANIFEST.MF`` and its marker class (the listener's:
    the listener class); anything else is refused. ``what`` names the file's origin in the message (its Maven
    coordinates)."""
    try:
        with zipfile.ZipFile(path) as jar:
            names = set(jar.namelist())
    except (zipfile.BadZipFile, OSError):
        problem = "not a zip file"
    else:
        missing = [entry for entry in (MANIFEST, artifact.marker_class) if entry not in names]
        if not missing:
            return
        problem = f"a zip file without {' and '.join(missing)}"
    raise NotAJarError(f"{what} is not {artifact.title} ({problem}); check the coordinates in cdk.json")


# (path, size, mtime, inode, ctime) -> SHA-256: a file replaced or touched since is hashed again.
_DIGESTS: dict[tuple[str, int, int, int, int], str] = {}


def file_sha256(path: Path) -> tuple[str, int]:
    """(SHA-256 hex, size) of ``path``; remembered in this process while the file stays as it was."""
    stat = path.stat()
    key = (os.fspath(path.resolve()), stat.st_size, stat.st_mtime_ns, stat.st_ino, stat.st_ctime_ns)
    if key not in _DIGESTS:
        with path.open("rb") as handle:
            _DIGESTS[key] = hashlib.file_digest(handle, "sha256").hexdigest()
    return _DIGESTS[key], stat.st_size


def not_pinned(artifact: MavenJar) -> ListenerNotPinnedError:
    key = ".".join(artifact.pin_path[1:])
    return ListenerNotPinnedError(
        f"{artifact.file_name}: no SHA-256 pinned in cdk.json ({key} is null); run `emr-lineage listener fetch --pin` "
        "to fetch it with Maven and write the pin (docs/listener.md)"
    )
