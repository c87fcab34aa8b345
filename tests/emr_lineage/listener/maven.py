"""Stand-ins for the listener tests: a real jar, a throwaway Maven repository on disk (file://) with a
settings.xml that makes the real ``mvn`` read it, fake ``mvn`` scripts, PGP test keys."""

from __future__ import annotations

import hashlib
import io
import os
import shutil
import subprocess
import time
import uuid
import zipfile
from pathlib import Path
from typing import ClassVar

from emr_lineage.listener.jar import LISTENER_CLASS, MANIFEST
from emr_lineage.settings.versions import ListenerArtifact

BUCKET = "emr-lineage-dev-artifacts-test"
REGION = "us-east-1"
# The group of every throwaway artifact: its folder in the local repository is removed after the tests.
THROWAWAY_GROUP = "test.emr-lineage"
VERSION = "1.0.0"
STALE_SECONDS = 3600


def keys(s3_client) -> list[str]:
    """The object keys in the test bucket."""
    return [o["Key"] for o in s3_client.list_objects_v2(Bucket=BUCKET).get("Contents", [])]


def build_test_jar(created_by: str = "emr-lineage tests", manifest: bool = True, listener: bool = True) -> bytes:
    """A small real jar (zip with a manifest and the listener class's entry)."""
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED) as jar:
        if manifest:
            jar.writestr(MANIFEST, f"Manifest-Version: 1.0\nCreated-By: {created_by}\n")
        if listener:
            jar.writestr(LISTENER_CLASS, b"\xca\xfe\xba\xbe" + b"\0" * 64)
        jar.writestr("io/openlineage/spark/agent/Versions.class", b"\xca\xfe\xba\xbe")
    return buffer.getvalue()


class ThrowawayArtifact(ListenerArtifact):
    """A listener artifact under the throwaway group, with an artifact id of its own."""

    group_id: ClassVar[str] = THROWAWAY_GROUP
    name: str

    @property
    def artifact_id(self) -> str:
        return self.name


def throwaway(**fields) -> ThrowawayArtifact:
    return ThrowawayArtifact(name=f"listener-{uuid.uuid4().hex}", version=VERSION, scala_version="2.12", **fields)


class MavenRepositories:
    """A file:// Maven repository in ``root`` and a settings.xml that makes ``mvn`` read it (besides Central,
    through the user's local repository ``~/.m2/repository``, where the dependency plugin already is).

    Artifacts are published remotely (:meth:`publish`: Maven downloads and checks them) or put straight
    into the local repository (:meth:`install_locally`: Maven takes them as they are). :meth:`close`
    removes every throwaway artifact from the local repository.
    """

    def __init__(self, root: Path) -> None:
        self.remote = root / "remote"
        self.local = Path.home() / ".m2" / "repository"
        self._sweep()
        self.settings = root / "settings.xml"
        self.settings.write_text(
            f"<settings><localRepository>{self.local}</localRepository>"
            "<profiles><profile><id>throwaway</id><repositories><repository><id>throwaway</id>"
            f"<url>{self.remote.as_uri()}</url></repository></repositories></profile></profiles>"
            "<activeProfiles><activeProfile>throwaway</activeProfile></activeProfiles></settings>\n"
        )
        self.names: list[str] = []

    def publish(
        self, artifact: ThrowawayArtifact, files: dict[str, bytes], *, sha1: dict[str, str | None] | None = None
    ):
        """Publish ``files`` (extension -> content, e.g. ``{"jar": ..., "jar.asc": ...}``) with a pom and a
        ``.sha1`` for each: the right digest unless ``sha1`` gives another one."""
        self._write(self.remote, artifact, files, sha1 or {})

    def install_locally(self, artifact: ThrowawayArtifact, files: dict[str, bytes], *, sha1: dict[str, str | None]):
        """Put ``files`` and their ``.sha1`` files (``sha1`` overrides; None: no ``.sha1``) into the local
        repository directly."""
        self._write(self.local, artifact, files, sha1)

    def _write(
        self, repository: Path, artifact: ThrowawayArtifact, files: dict[str, bytes], sha1: dict[str, str | None]
    ):
        self.names.append(artifact.name)
        folder = repository / THROWAWAY_GROUP.replace(".", "/") / artifact.name / VERSION
        folder.mkdir(parents=True)
        pom = (
            "<project><modelVersion>4.0.0</modelVersion>"
            f"<groupId>{THROWAWAY_GROUP}</groupId><artifactId>{artifact.name}</artifactId>"
            f"<version>{VERSION}</version></project>\n"
        ).encode()
        for extension, content in {"pom": pom, **files}.items():
            path = folder / f"{artifact.name}-{VERSION}.{extension}"
            path.write_bytes(content)
            digest = sha1.get(extension, hashlib.sha1(content).hexdigest())
            if digest is not None:
                path.with_name(path.name + ".sha1").write_text(digest)

    def _sweep(self) -> None:
        """Remove throwaway artifacts a run that could not clean up (killed) left over an hour ago."""
        group = self.local / THROWAWAY_GROUP.replace(".", "/")
        stale = time.time() - STALE_SECONDS
        for folder in group.glob("listener-*") if group.is_dir() else []:
            if folder.stat().st_mtime < stale:
                shutil.rmtree(folder, ignore_errors=True)

    def close(self) -> None:
        group = self.local / THROWAWAY_GROUP.replace(".", "/")
        for name in self.names:
            shutil.rmtree(group / name, ignore_errors=True)
        for folder in (group, group.parent):  # test/emr-lineage, then test: only when nothing else is there
            try:
                folder.rmdir()
            except OSError:
                break


def fake_mvn(directory: Path, body: str) -> Path:
    """A directory holding an executable ``mvn`` that runs the shell ``body`` (``$out``: the folder of the pom.xml
    it was given, where the artifacts' folders are)."""
    directory.mkdir(parents=True, exist_ok=True)
    script = directory / "mvn"
    script.write_text(
        "#!/bin/sh\n"
        'previous=; for arg; do [ "$previous" = --file ] && out=$(dirname "$arg"); previous=$arg; done\n'
        f"{body}\n"
    )
    script.chmod(0o755)
    return directory


class TestKey:
    """An ed25519 signing key without a passphrase, in its own temporary GNUPGHOME."""

    __test__ = False  # not a test class for pytest

    def __init__(self, home: Path, name: str, *, made_at: str | None = None, expires: str = "never") -> None:
        self.home = home
        self.made_at = made_at  # gpg's --faked-system-time, e.g. 20200101T000000: a key that expired long ago
        home.mkdir(mode=0o700, parents=True)
        self._gpg(
            "--passphrase", "", "--quick-gen-key", f"{name} <{name.lower()}@example.com>", "ed25519", "sign", expires
        )
        listing = self._gpg("--with-colons", "--list-keys").stdout
        self.fingerprint = next(line.split(":")[9] for line in listing.splitlines() if line.startswith("fpr:"))
        self.public_key = home / "public.asc"
        self._export()

    def revoke(self) -> None:
        """Apply the revocation certificate gpg made with the key; the public key file then says so."""
        certificate = (self.home / "openpgp-revocs.d" / f"{self.fingerprint}.rev").read_text()
        revocation = self.home / "revocation.asc"
        revocation.write_text(certificate.replace(":-----BEGIN", "-----BEGIN"))  # gpg disarms it with a ':'
        self._gpg("--import", str(revocation))
        self._export()

    def _export(self) -> None:
        self.public_key.write_text(self._gpg("--armor", "--export", self.fingerprint).stdout)

    def sign(self, data: bytes) -> bytes:
        """A detached armored signature of ``data`` (what Maven Central serves as ``<file>.asc``)."""
        return self._gpg("--armor", "--detach-sign", "--local-user", self.fingerprint, input=data).stdout

    def _gpg(self, *args: str, input: bytes | None = None) -> subprocess.CompletedProcess:
        env = {**os.environ, "GNUPGHOME": str(self.home)}
        faked = ["--faked-system-time", self.made_at] if self.made_at else []
        return subprocess.run(
            ["gpg", "--batch", "--no-tty", "--pinentry-mode", "loopback", *faked, *args],
            env=env,
            check=True,
            capture_output=True,
            input=input if input is not None else None,
            text=input is None,
        )

    def close(self) -> None:
        # gpg-agent was started for the key generation and signing; stop it with its home.
        subprocess.run(["gpgconf", "--kill", "all"], env={**os.environ, "GNUPGHOME": str(self.home)}, check=False)
