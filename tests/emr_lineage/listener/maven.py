"""Stand-ins for the listener tests: a Maven repository on 127.0.0.1, a real jar, PGP test keys."""

from __future__ import annotations

import hashlib
import http.server
import io
import os
import subprocess
import threading
import zipfile
from pathlib import Path

from emr_lineage.listener.stage import LISTENER_CLASS, MANIFEST
from emr_lineage.settings.model import ListenerArtifact

BUCKET = "emr-lineage-dev-artifacts-test"
REGION = "us-east-1"


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


class FakeMaven:
    """Serves files under the Maven layout (404 for the rest); can fail the next N requests with 503
    or answer one path with a fixed status."""

    def __init__(self) -> None:
        self.files: dict[str, bytes] = {}
        self.statuses: dict[str, int] = {}
        self.requests: list[str] = []
        self.fail_next = 0
        fake = self

        class Handler(http.server.BaseHTTPRequestHandler):
            def do_GET(self) -> None:  # noqa: N802 (http.server API)
                fake.requests.append(self.path)
                status = fake.statuses.get(self.path)
                if fake.fail_next > 0:
                    fake.fail_next -= 1
                    status = 503
                body = fake.files.get(self.path)
                if status is None and body is None:
                    status = 404
                if status is not None:
                    self.send_response(status)
                    self.send_header("Content-Length", "0")
                    self.end_headers()
                    return
                self.send_response(200)
                self.send_header("Content-Type", "application/octet-stream")
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            def log_message(self, *args) -> None:
                pass

        self.server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)
        self.thread.start()
        self.root = f"http://127.0.0.1:{self.server.server_address[1]}"
        self.url = f"{self.root}/maven2"

    def path_of(self, artifact: ListenerArtifact, suffix: str = "") -> str:
        """The request path of the artifact's jar (``suffix`` ``.sha1``, ``.asc``... for its companions)."""
        url = artifact.model_copy(update={"maven_repository": self.url}).download_url + suffix
        return url.removeprefix(self.root)

    def publish(self, artifact: ListenerArtifact, body: bytes, suffix: str = "") -> None:
        self.files[self.path_of(artifact, suffix)] = body

    def publish_checksums(self, artifact: ListenerArtifact, body: bytes, *algorithms: str) -> None:
        """``<jar>.<algorithm>`` for each algorithm, in Maven Central's form: the hex digest alone."""
        for algorithm in algorithms:
            self.publish(artifact, hashlib.new(algorithm, body).hexdigest().encode(), f".{algorithm}")

    def reset(self) -> None:
        self.files.clear()
        self.statuses.clear()
        self.requests.clear()
        self.fail_next = 0

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()


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
