"""Write a jar's SHA-256 pin into cdk.json, changing that one value and nothing else.

``emr-lineage listener fetch --pin`` records the checksum it verified in
``context.emr-lineage.versions.<jar>.sha256`` (the listener's by default, :data:`PIN_PATH`). cdk.json
is a file people edit and review, so it is not re-serialised: the current value's span in the text is found, replaced,
the result is parsed again and compared with the original (only that key may differ), and the
file is replaced atomically (temp file in the same directory + rename) with its mode kept.
"""

from __future__ import annotations

import json
import os
import re
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from emr_lineage.errors import EmrLineageError

PIN_PATH = ("context", "emr-lineage", "versions", "openlineage_spark", "sha256")
PIN_KEY = ".".join(PIN_PATH)
_BOM = "\ufeff"
_WHITESPACE = re.compile(r"[ \t\n\r]*")
_SHA256 = re.compile(r"^[0-9a-f]{64}$")


class PinFileError(EmrLineageError):
    """cdk.json cannot take the pin (unreadable, no such key, not writable)."""


@dataclass(frozen=True)
class PinSlot:
    """Where the pin's value sits in one cdk.json text, and what it is now."""

    path: Path
    keys: tuple[str, ...]  # the pin's key path from the root
    text: str  # without a byte order mark
    bom: bool
    start: int  # the JSON value's span in ``text`` (``null`` or ``"<hex>"``)
    end: int
    current: str | None

    @property
    def key(self) -> str:
        return ".".join(self.keys)

    def with_pin(self, sha256: str) -> str:
        """The whole file's text with the pin set to ``sha256``; checked: only that value differs."""
        if not _SHA256.match(sha256):
            raise ValueError(f"not a lowercase hex SHA-256: {sha256!r}")
        text = self.text[: self.start] + json.dumps(sha256) + self.text[self.end :]
        before, after = json.loads(self.text), json.loads(text)
        _set(before, self.keys, sha256)
        if before != after:  # a bug in the span search, never a user's problem: refuse to write
            raise PinFileError(f"{self.path}: editing {self.key} would change other keys; cdk.json left unchanged")
        return text


def locate_pin(path: Path, keys: tuple[str, ...] = PIN_PATH) -> PinSlot:
    """Find the pin's value at ``keys`` in ``path``; :class:`PinFileError` when the file cannot take it."""
    key = ".".join(keys)
    try:
        raw = path.read_bytes()
    except OSError as exc:
        raise PinFileError(f"{path}: cannot read: {exc.strerror or exc}") from None
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise PinFileError(f"{path}: not UTF-8 text (byte {exc.start})") from None
    bom = text.startswith(_BOM)
    text = text.removeprefix(_BOM)
    try:
        start, end = _value_span(text, keys)
        current = json.loads(text[start:end])
    except json.JSONDecodeError as exc:
        raise PinFileError(f"{path}:{exc.lineno}:{exc.colno}: invalid JSON ({exc.msg})") from None
    except _NoSuchKey as exc:
        raise PinFileError(f'{path}: cannot pin: {exc} (add "sha256": null to {".".join(keys[2:-1])})') from None
    if current is not None and not (isinstance(current, str) and _SHA256.match(current)):
        raise PinFileError(f"{path}: {key} is {text[start:end]}, neither null nor a SHA-256; fix it by hand first")
    return PinSlot(path, keys, text, bom, start, end, current)


def write_pin(slot: PinSlot, sha256: str) -> None:
    """Replace ``slot.path`` with the pinned text, atomically, keeping the file's mode."""
    data = ((_BOM if slot.bom else "") + slot.with_pin(sha256)).encode("utf-8")
    target = slot.path.resolve()  # a symlinked cdk.json stays a symlink; its target is replaced
    try:
        mode = target.stat().st_mode & 0o7777
        fd, temp = tempfile.mkstemp(prefix=f".{target.name}.", suffix=".tmp", dir=target.parent)
    except OSError as exc:
        raise PinFileError(f"{slot.path}: cannot write next to it: {exc.strerror or exc}") from None
    try:
        with os.fdopen(fd, "wb") as out:
            out.write(data)
            out.flush()
            os.fsync(out.fileno())
        os.chmod(temp, mode)
        if target.read_bytes() != ((_BOM if slot.bom else "") + slot.text).encode("utf-8"):
            raise PinFileError(f"{slot.path}: changed while emr-lineage was running; run the command again")
        os.replace(temp, target)
    except OSError as exc:
        raise PinFileError(f"{slot.path}: cannot write: {exc.strerror or exc}") from None
    finally:
        if os.path.exists(temp):
            os.unlink(temp)


class _NoSuchKey(Exception):
    pass


def _value_span(text: str, keys: tuple[str, ...]) -> tuple[int, int]:
    """The (start, end) offsets of the value at ``keys`` (object keys from the root) in JSON ``text``."""
    decoder = json.JSONDecoder()
    document, end = decoder.raw_decode(text, _skip(text, 0))  # validates the whole text once
    if _skip(text, end) != len(text):
        raise json.JSONDecodeError("Extra data", text, _skip(text, end))
    index = _skip(text, 0)
    walked: list[str] = []
    for key in keys:
        if not isinstance(document, dict):
            raise _NoSuchKey(f"{'.'.join(walked) or 'the document'} is not an object")
        if key not in document:
            raise _NoSuchKey(f"{'.'.join([*walked, key])} is missing")
        index = _member_value(text, index, key, decoder)
        document = document[key]
        walked.append(key)
    _, end = decoder.raw_decode(text, index)
    return index, end


def _member_value(text: str, index: int, key: str, decoder: json.JSONDecoder) -> int:
    """In the object starting at ``index``, the offset of ``key``'s value (the last one, as json.loads)."""
    found = None
    index = _skip(text, index + 1)  # past "{"
    while text[index] != "}":
        name, index = json.decoder.scanstring(text, index + 1)  # type: ignore[attr-defined]
        index = _skip(text, _skip(text, index) + 1)  # past ":"
        if name == key:
            found = index
        _, index = decoder.raw_decode(text, index)
        index = _skip(text, index)
        if text[index] == ",":
            index = _skip(text, index + 1)
    if found is None:
        raise _NoSuchKey(f"{key} is missing")
    return found


def _skip(text: str, index: int) -> int:
    match = _WHITESPACE.match(text, index)
    return match.end() if match else index


def _set(document: Any, keys: tuple[str, ...], value: Any) -> None:
    for key in keys[:-1]:
        document = document[key]
    document[keys[-1]] = value
