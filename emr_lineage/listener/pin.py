"""``stage-listener --pin``: verify the listener jar against its repository, stage it, pin it in cdk.json.

The jar must match the strongest checksum the Maven repository publishes next to it and, when
cdk.json names the release key's fingerprint, carry a good ``.asc`` signature by that key (the
key from a file the user names, see :mod:`emr_lineage.listener.signature`). Only then is it
uploaded (the same guarded upload as a pinned stage) and its SHA-256 written into cdk.json
(:mod:`emr_lineage.settings.pin`). Everything that can be checked without the network (the options,
the key file, whether cdk.json can take the pin) is checked before the first download; any
failure leaves the bucket and cdk.json as they were.
"""

from __future__ import annotations

import tempfile
from contextlib import ExitStack
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from emr_lineage.http import HttpClient, HttpError
from emr_lineage.listener.checksums import PublishedChecksum, check_checksum, published_checksum
from emr_lineage.listener.signature import GoodSignature, Keyring
from emr_lineage.listener.stage import ListenerError, StageResult, download_client, fetch_jar, upload_jar
from emr_lineage.settings.model import ListenerArtifact
from emr_lineage.settings.pin import PIN_KEY, locate_pin, write_pin

_SIGNATURE_MAX_BYTES = 64 * 1024
FINGERPRINT_KEY = "versions.openlineage_spark.pgp_fingerprint"


class PinConflictError(ListenerError):
    """cdk.json already pins another SHA-256 (replace it only when asked to)."""


class SignatureMissingError(ListenerError):
    """A fingerprint is configured but the repository has no ``.asc`` for the jar."""


@dataclass(frozen=True)
class PinResult:
    staged: StageResult
    checksum: PublishedChecksum
    signature: GoodSignature | None  # None: no fingerprint configured, checksums only
    previous: str | None  # the SHA-256 cdk.json pinned before
    cdk_json: Path

    @property
    def changed(self) -> bool:
        return self.previous != self.staged.sha256


def pin_listener(
    artifact: ListenerArtifact,
    bucket: str,
    cdk_json: Path,
    *,
    s3_client: Any,
    http: HttpClient | None = None,
    maven_repository: str | None = None,
    pgp_key: Path | None = None,
    replace: bool = False,
) -> PinResult:
    """Verify the listener jar against its repository, upload it to ``bucket``, pin it in ``cdk_json``.

    ``pgp_key`` is an armored public key file; it is required when ``artifact.pgp_fingerprint``
    is set and refused when it is not (the fingerprint is the trust anchor, the file only carries
    the key). A different SHA-256 already pinned is a :class:`PinConflictError` unless ``replace``.
    """
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
    slot = locate_pin(cdk_json)
    if maven_repository:
        artifact = artifact.model_copy(update={"maven_repository": maven_repository})
    with ExitStack() as stack:
        keyring = stack.enter_context(Keyring(pgp_key, fingerprint)) if pgp_key and fingerprint else None
        client = http or stack.enter_context(download_client())
        tmp = Path(stack.enter_context(tempfile.TemporaryDirectory(prefix="emr-lineage-listener-")))
        checksum = published_checksum(artifact.download_url, http=client)
        signature_path = _fetch_signature(artifact.download_url + ".asc", tmp, http=client) if keyring else None
        jar = fetch_jar(artifact, tmp, http=client)
        check_checksum(jar.path, checksum, jar.url)
        good = keyring.verify(jar.path, signature_path, what=artifact.download_url + ".asc") if keyring else None
        if slot.current not in (None, jar.sha256) and not replace:
            raise PinConflictError(
                f"{cdk_json}: {PIN_KEY} pins {slot.current}, but {jar.url} (verified against its "
                f"{checksum.label}) is {jar.sha256}; nothing uploaded, cdk.json unchanged; "
                "pass --replace-pin to replace the pin (e.g. after changing the version)"
            )
        staged = upload_jar(jar, artifact, bucket, s3_client=s3_client)
    result = PinResult(staged, checksum, good, slot.current, cdk_json)
    if result.changed:
        write_pin(slot, staged.sha256)
    return result


def _fetch_signature(url: str, directory: Path, *, http: HttpClient) -> Path:
    try:
        reply = http.get(url, max_bytes=_SIGNATURE_MAX_BYTES)
    except HttpError as exc:
        raise ListenerError(f"cannot read the signature: {exc}") from None
    if reply.status == 404:
        raise SignatureMissingError(
            f"{url}: not found (HTTP 404); cdk.json sets {FINGERPRINT_KEY}, so the jar must be signed; nothing uploaded"
        )
    if not reply.ok:
        raise ListenerError(f"cannot read the signature: {reply.error()}")
    path = directory / url.rsplit("/", 1)[-1]
    path.write_bytes(reply.body)
    return path
