"""The checksum a Maven repository publishes next to an artifact (``<file>.sha512``, ``.sha256``, ``.sha1``).

Maven Central always publishes ``.sha1`` (and ``.md5``, too weak to use), and ``.sha256`` and
``.sha512`` for newer uploads. The strongest one present is used; a 404 means "not published",
any other failure stops the pin. A file holds the hex digest alone or ``<digest>  <file name>``.
"""

from __future__ import annotations

import hashlib
import re
from dataclasses import dataclass
from pathlib import Path

from emr_lineage.errors import EmrLineageError
from emr_lineage.http import HttpClient, HttpError

# Strongest first: (file suffix, hashlib name, the name people read).
ALGORITHMS = (("sha512", "sha512", "SHA-512"), ("sha256", "sha256", "SHA-256"), ("sha1", "sha1", "SHA-1"))
_CHECKSUM_MAX_BYTES = 64 * 1024  # a digest is tiny; room for an error page to be reported as such


class ChecksumError(EmrLineageError):
    """No usable published checksum, or the download does not match it."""


@dataclass(frozen=True)
class PublishedChecksum:
    algorithm: str  # hashlib name
    label: str  # SHA-512, SHA-256, SHA-1
    url: str
    digest: str  # lowercase hex


def published_checksum(artifact_url: str, *, http: HttpClient) -> PublishedChecksum:
    """The strongest checksum published for ``artifact_url`` (:class:`ChecksumError` when there is none)."""
    tried = []
    for suffix, algorithm, label in ALGORITHMS:
        url = f"{artifact_url}.{suffix}"
        try:
            reply = http.get(url, max_bytes=_CHECKSUM_MAX_BYTES)
        except HttpError as exc:
            raise ChecksumError(f"cannot read the published checksum: {exc}") from None
        if reply.status == 404:
            tried.append(url)
            continue
        if not reply.ok:
            raise ChecksumError(f"cannot read the published checksum: {reply.error()}")
        return PublishedChecksum(algorithm, label, url, _digest(reply.body, url, algorithm, label))
    raise ChecksumError(
        f"the repository publishes no checksum for {artifact_url} (HTTP 404 for {', '.join(tried)}); "
        "cannot pin an artifact nobody vouches for"
    )


def check_checksum(path: Path, published: PublishedChecksum, url: str) -> None:
    """Refuse ``path`` (downloaded from ``url``) unless its digest is the published one."""
    with path.open("rb") as handle:
        actual = hashlib.file_digest(handle, published.algorithm).hexdigest()
    if actual != published.digest:
        raise ChecksumError(
            f"{published.label} mismatch: {url} hashes to {actual} but {published.url} says {published.digest}; "
            "nothing uploaded, cdk.json unchanged"
        )


def _digest(body: bytes, url: str, algorithm: str, label: str) -> str:
    length = hashlib.new(algorithm).digest_size * 2
    words = body.decode("ascii", "replace").split()
    digest = words[0].lower() if words else ""
    if not re.fullmatch(rf"[0-9a-f]{{{length}}}", digest):
        shown = " ".join(words)[:80] or "nothing"
        raise ChecksumError(f"{url} does not hold a {label} digest ({length} hex digits), it holds: {shown!r}")
    return digest
