"""Check a detached OpenPGP signature (``<jar>.asc``) against one key, with the ``gpg`` binary.

The trust anchor is the fingerprint in cdk.json (``versions.openlineage_spark.pgp_fingerprint``);
the key itself comes from a file the user names (an armored public key, e.g. the project's KEYS
file) and must hold that fingerprint. No keyserver is asked for anything, and the user's own
keyring is never read or written: gpg runs with a temporary, empty ``GNUPGHOME`` that holds
only that file's keys, and a signature counts only when it was made by the configured key (or
one of its subkeys) and is valid now (a revoked or expired key is refused).
"""

from __future__ import annotations

import os
import shutil
import subprocess
import tempfile
from dataclasses import dataclass
from pathlib import Path

from emr_lineage.errors import EmrLineageError

GPG = "gpg"
_GPG_SECONDS = 60  # a local operation on one key and one file; far more than it takes
_NOT_GOOD = ("BADSIG", "EXPSIG", "EXPKEYSIG", "REVKEYSIG", "ERRSIG")
_OPTIONS = ("--batch", "--no-tty", "--no-autostart", "--no-auto-key-retrieve", "--status-fd", "1")


class SignatureError(EmrLineageError):
    """The key file or the signature does not prove the artifact came from the configured key."""


@dataclass(frozen=True)
class GoodSignature:
    fingerprint: str  # the configured key's primary fingerprint
    signer: str  # its user id, as the signature names it


class Keyring:
    """A temporary keyring holding ``key_file``'s keys, checked to contain ``fingerprint``.

    Use as a context manager; the keyring is deleted on exit.
    """

    def __init__(self, key_file: Path, fingerprint: str, *, gpg: str = GPG) -> None:
        self.key_file = key_file
        self.fingerprint = fingerprint.upper()
        self.gpg = gpg
        self.home = Path(tempfile.mkdtemp(prefix="emr-lineage-gnupg-"))  # mode 0700, as gpg wants
        try:
            self.primary = self._import()
        except BaseException:
            self.close()
            raise

    def verify(self, data: Path, signature: Path, *, what: str) -> GoodSignature:
        """Refuse ``data`` unless ``signature`` is a good signature of it by the configured key.

        ``what`` names the signature in messages (its URL).
        """
        status, stderr = self._run("--trust-model", "always", "--verify", str(signature), str(data))
        valid = [line.split() for line in status if line.startswith("[GNUPG:] VALIDSIG ")]
        signers = {fields[11] if len(fields) > 11 else fields[2] for fields in valid}  # primary key's fpr
        # VALIDSIG alone also comes with an expired or revoked key: GOODSIG is the "valid now" verdict.
        refused = any(_has(status, keyword) for keyword in _NOT_GOOD)
        if self.primary in signers and _has(status, "GOODSIG") and not refused:
            signer = next((line.split(None, 3)[3] for line in status if line.startswith("[GNUPG:] GOODSIG ")), "")
            return GoodSignature(self.primary, signer)
        raise SignatureError(f"{what}: {_problem(status, stderr, signers, self.primary)}; nothing kept")

    def _import(self) -> str:
        """Import the key file; return the primary fingerprint of the key that holds ``fingerprint``."""
        status, stderr = self._run("--import", str(self.key_file))
        if not _has(status, "IMPORT_OK"):
            reason = stderr.strip().splitlines()[-1:] or ["no key imported"]
            raise SignatureError(f"--pgp-key {self.key_file}: holds no OpenPGP public key ({reason[0]})")
        listing, _ = self._run("--with-colons", "--fixed-list-mode", "--list-keys", status_fd=False)
        keys: dict[str, set[str]] = {}
        primary = ""
        for fields in (line.split(":") for line in listing):
            if fields[0] == "pub":
                primary = ""
            elif fields[0] == "fpr" and len(fields) > 9:
                primary = primary or fields[9]
                keys.setdefault(primary, set()).add(fields[9])
        for key, fingerprints in keys.items():
            if self.fingerprint in fingerprints:
                return key
        raise SignatureError(
            f"--pgp-key {self.key_file}: holds key {', '.join(sorted(keys))}, not the key with fingerprint "
            f"{self.fingerprint} that cdk.json trusts (versions.openlineage_spark.pgp_fingerprint); "
            "get the key that signs OpenLineage releases, or fix the fingerprint"
        )

    def _run(self, *args: str, status_fd: bool = True) -> tuple[list[str], str]:
        options = _OPTIONS if status_fd else _OPTIONS[:-2]
        env = {**os.environ, "GNUPGHOME": str(self.home), "LC_ALL": "C", "LANGUAGE": "C"}
        try:
            done = subprocess.run(
                [self.gpg, *options, *args], capture_output=True, text=True, env=env, timeout=_GPG_SECONDS
            )
        except FileNotFoundError:
            raise SignatureError(
                f"{self.gpg} not found: install GnuPG to check the listener's PGP signature "
                "(Debian: apt-get install gnupg; make setup does)"
            ) from None
        except subprocess.TimeoutExpired:
            raise SignatureError(f"{self.gpg} did not finish within {_GPG_SECONDS}s") from None
        return done.stdout.splitlines(), done.stderr

    def close(self) -> None:
        shutil.rmtree(self.home, ignore_errors=True)

    def __enter__(self) -> Keyring:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def _has(status: list[str], keyword: str) -> bool:
    return any(line.startswith(f"[GNUPG:] {keyword} ") or line == f"[GNUPG:] {keyword}" for line in status)


def _problem(status: list[str], stderr: str, signers: set[str], primary: str) -> str:
    """Why a signature does not count, in words, from gpg's status lines."""
    if _has(status, "BADSIG"):
        return "BAD signature: the file is not the one the key signed"
    if signers - {primary}:
        return f"signed by {', '.join(sorted(signers - {primary}))}, not by the configured key {primary}"
    if _has(status, "REVKEYSIG"):
        return f"signed by a REVOKED key ({primary})"
    if _has(status, "EXPKEYSIG") or _has(status, "EXPSIG"):
        return f"signed by an EXPIRED key or an expired signature ({primary}); get the key with its current expiry"
    # ERRSIG <keyid> <algo> <hash> <class> <time> <rc> [<fingerprint>]; rc 9 = no public key for it
    for fields in (line.split() for line in status if line.startswith("[GNUPG:] ERRSIG ")):
        issuer = fields[8] if len(fields) > 8 else fields[2]
        if len(fields) > 7 and fields[7] == "9":
            return f"signed by key {issuer}, not by the configured key {primary}"
        return f"signature by {issuer} cannot be checked (gpg ERRSIG code {fields[7] if len(fields) > 7 else '?'})"
    if _has(status, "NODATA"):
        return "holds no OpenPGP signature"
    last = stderr.strip().splitlines()[-1:] or ["no signature checked"]
    return f"signature not verified ({last[0]})"
