"""``listener fetch --pin``: fetch the listener jar (and the Iceberg runtime) with Maven, verify each, pin their
SHA-256 in cdk.json.

One Maven run copies the jars and their ``.sha1`` with ``--strict-checksums``: each jar must match the SHA-1
the repository published. When cdk.json names the release key's fingerprint, the listener's ``.asc`` (asked
in the same run; Maven 3.8 copies it in a second one, see :func:`~emr_lineage.listener.mvn.maven_copy`) must
be a good signature by that key (the key from a file the user names, see :mod:`emr_lineage.listener.signature`).
Only then are the jars moved into the cache and their SHA-256 written into cdk.json
(:mod:`emr_lineage.settings.pin`). What can be checked before Maven runs (the options, the key file, whether
cdk.json can take the pin) is checked first; any failure leaves the cache and cdk.json as they were.
"""

from __future__ import annotations

from collections.abc import Sequence
from contextlib import ExitStack
from dataclasses import dataclass
from pathlib import Path

from emr_lineage.listener.jar import FetchedJar, ListenerError
from emr_lineage.listener.maven import Candidate, listener_cache_dir, maven_candidates
from emr_lineage.listener.signature import GoodSignature, Keyring
from emr_lineage.settings.pin import PinSlot, locate_pin, write_pin
from emr_lineage.settings.versions import ListenerArtifact, MavenJar

FINGERPRINT_KEY = "versions.openlineage_spark.pgp_fingerprint"


class PinConflictError(ListenerError):
    """cdk.json already pins another SHA-256 (replace it only when asked to)."""


@dataclass(frozen=True)
class PinResult:
    jar: FetchedJar
    published_sha1: str  # the repository's .sha1 the jar matched
    signature: GoodSignature | None  # None: no fingerprint configured, Maven's checksums only
    previous: str | None  # the SHA-256 cdk.json pinned before
    cdk_json: Path

    @property
    def changed(self) -> bool:
        return self.previous != self.jar.sha256


def pin_listener(
    artifact: ListenerArtifact,
    cdk_json: Path,
    *,
    directory: Path | None = None,
    pgp_key: Path | None = None,
    replace: bool = False,
    maven_settings: Path | None = None,
) -> PinResult:
    """Fetch and verify the listener jar into ``directory`` (default: the cache), pin it in ``cdk_json``.

    ``pgp_key`` is an armored public key file; it is required when ``artifact.pgp_fingerprint``
    is set and refused when it is not (the fingerprint is the trust anchor, the file only carries
    the key). A different SHA-256 already pinned is a :class:`PinConflictError` unless ``replace``.
    ``maven_settings`` is a settings.xml for Maven instead of the user's (tests).
    """
    (result,) = pin_jars(
        artifact, (), cdk_json, directory=directory, pgp_key=pgp_key, replace=replace, maven_settings=maven_settings
    )
    return result


def pin_jars(
    listener: ListenerArtifact,
    others: Sequence[MavenJar],
    cdk_json: Path,
    *,
    directory: Path | None = None,
    pgp_key: Path | None = None,
    replace: bool = False,
    maven_settings: Path | None = None,
) -> list[PinResult]:
    """:func:`pin_listener` for the listener and ``others`` (the Iceberg runtime) at once: every jar is fetched
    (in one Maven run) and verified (the signature: the listener's) before any is kept or pinned, so a refusal
    of one keeps nothing and leaves cdk.json as it was."""
    fingerprint = _key_options(listener, pgp_key)
    artifacts: list[MavenJar] = [listener, *others]
    for artifact in artifacts:
        locate_pin(cdk_json, artifact.pin_path)  # cdk.json can take every pin: checked before Maven runs
    with ExitStack() as stack:
        keyring = stack.enter_context(Keyring(pgp_key, fingerprint)) if pgp_key and fingerprint else None
        directory = listener_cache_dir() if directory is None else directory
        signed = listener if keyring else None
        candidates = stack.enter_context(
            maven_candidates(artifacts, directory, sha1=True, signed=signed, maven_settings=maven_settings)
        )
        verified = []
        for artifact, candidate in zip(artifacts, candidates, strict=True):
            sha1 = candidate.check_published_sha1()
            good = _verify_signature(candidate, keyring) if keyring and artifact is signed else None
            slot = locate_pin(cdk_json, artifact.pin_path)
            if slot.current not in (None, candidate.jar.sha256) and not replace:
                raise _conflict(slot, candidate.jar)
            verified.append((candidate, sha1, good, slot.current))
        results = [PinResult(c.keep(), sha1, good, current, cdk_json) for c, sha1, good, current in verified]
    for artifact, result in zip(artifacts, results, strict=True):
        if result.changed:  # located again: the file changed with the pin written before
            write_pin(locate_pin(cdk_json, artifact.pin_path), result.jar.sha256)
    return results


def _key_options(artifact: ListenerArtifact, pgp_key: Path | None) -> str | None:
    fingerprint = artifact.pgp_fingerprint
    if fingerprint and pgp_key is None:
        raise ListenerError(
            f"cdk.json sets {FINGERPRINT_KEY} ({fingerprint}): pass --pgp-key FILE, the armored public key "
            "with that fingerprint, to check the jar's signature"
        )
    if pgp_key is not None and not fingerprint:
        raise ListenerError(
            f"--pgp-key needs {FINGERPRINT_KEY} in cdk.json: the fingerprint there is what the key is trusted for"
        )
    return fingerprint


def _verify_signature(candidate: Candidate, keyring: Keyring) -> GoodSignature:
    signature = candidate.companion("jar.asc")
    return keyring.verify(candidate.jar.path, signature, what=f"{candidate.artifact.coordinates}:jar.asc")


def _conflict(slot: PinSlot, jar: FetchedJar) -> PinConflictError:
    return PinConflictError(
        f"{slot.path}: {slot.key} pins {slot.current}, but {jar.coordinates} (verified by Maven against the "
        f"repository's SHA-1) is {jar.sha256}; nothing kept, cdk.json unchanged; "
        "pass --replace-pin to replace the pin (e.g. after changing the version)"
    )
