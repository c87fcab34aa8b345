"""A request's body as the producers send it: plain or gzip, one event or a batch, within the limits.

Standard library only (the ingest Lambda's asset). What the OpenLineage clients send:

* openlineage-python's HttpTransport with ``compression: gzip`` gzips the body and says so in
  ``Content-Encoding: gzip``; the Java client (``spark.openlineage.transport.compression=gzip``)
  says so only since OpenLineage PR #4282, older jars send the gzip bytes without the header
  (https://github.com/OpenLineage/OpenLineage/pull/4282). A gzip body is therefore recognised by
  its magic bytes too (RFC 1952 section 2.3.1: ID1 31, ID2 139; a JSON text never starts so).
* The limit counts the decompressed bytes, and decompression stops one byte past it, so a small
  gzip of a huge body is a 413, never a memory blow-up.
"""

from __future__ import annotations

import zlib
from collections.abc import Mapping
from typing import Any

from emr_lineage.lineage.door.verdict import Rejected, one_line
from emr_lineage.lineage.event_json import JsonRuleError, decode_batch, decode_event

GZIP_MAGIC = b"\x1f\x8b"  # RFC 1952, https://www.rfc-editor.org/rfc/rfc1952#section-2.3.1
GZIP_ENCODINGS = frozenset({"gzip", "x-gzip"})  # x-gzip: RFC 9110 section 8.4.1.3
PLAIN_ENCODINGS = frozenset({"", "identity"})
_GZIP_WBITS = 16 + zlib.MAX_WBITS  # zlib's "gzip header and trailer" mode


def header(headers: Mapping[str, str] | None, name: str) -> str | None:
    """The value of header ``name`` (lower case), whatever the case the client sent it in."""
    for key, value in (headers or {}).items():
        if key.lower() == name:
            return value
    return None


def _gunzip(data: bytes, max_bytes: int) -> bytes | Rejected:
    """Every gzip member of ``data`` (RFC 1952 allows several), at most ``max_bytes`` of output."""
    out = bytearray()
    while data:
        inflater = zlib.decompressobj(wbits=_GZIP_WBITS)
        try:
            out += inflater.decompress(data, max_bytes + 1 - len(out))
        except zlib.error as exc:
            return Rejected(400, f"the gzip body is corrupt ({exc})")
        if len(out) > max_bytes:
            return Rejected(413, f"the body is over {max_bytes} bytes once decompressed; the limit is {max_bytes}")
        if not inflater.eof:
            return Rejected(400, "the gzip body is truncated")
        data = inflater.unused_data
        if data and not data.startswith(GZIP_MAGIC):
            return Rejected(400, "the gzip body has bytes after its end that are not another gzip member")
    return bytes(out)


def decoded(headers: Mapping[str, str] | None, body: bytes, *, max_bytes: int) -> bytes | Rejected:
    """The body's JSON bytes: decompressed when it is gzip (by header or by its magic bytes), at
    most ``max_bytes`` before and after decompression (413 above)."""
    encoding = (header(headers, "content-encoding") or "").strip().lower()
    if encoding not in PLAIN_ENCODINGS | GZIP_ENCODINGS:
        return Rejected(415, f"Content-Encoding {one_line(encoding, 40)!r} is not supported; send gzip or none")
    if len(body) > max_bytes:
        return Rejected(413, f"the body is {len(body)} bytes; the limit is {max_bytes}")
    if encoding in GZIP_ENCODINGS or body.startswith(GZIP_MAGIC):
        return _gunzip(body, max_bytes)
    return body


def _text(data: bytes) -> str | Rejected:
    """UTF-8 text (a leading byte order mark is allowed, as RFC 8259 section 8.1 lets a parser do)."""
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        return Rejected(400, f"the body is not UTF-8 (byte {exc.start} is {data[exc.start : exc.start + 1]!r})")


def parsed(data: bytes) -> Any | Rejected:
    """The JSON value of UTF-8 bytes, held to the JSON rule of every door (:mod:`emr_lineage.lineage.event_json`)."""
    text = _text(data)
    if isinstance(text, Rejected):
        return text
    try:
        return decode_event(text)
    except JsonRuleError as exc:
        return Rejected(400, f"the body {_reason(exc)}")


def parsed_batch(data: bytes) -> Any | Rejected:
    """A batch's JSON value: a list whose events are each the value or the :class:`Rejected` of what it
    broke (so it is refused alone), or any other JSON value as it is."""
    text = _text(data)
    if isinstance(text, Rejected):
        return text
    try:
        value = decode_batch(text)
    except JsonRuleError as exc:
        return Rejected(400, f"the body {_reason(exc)}")
    if not isinstance(value, list):
        return value
    return [Rejected(400, f"the event {_reason(item)}") if isinstance(item, JsonRuleError) else item for item in value]


def _reason(error: JsonRuleError) -> str:
    """``is not JSON: ...`` or ``breaks the JSON rule: ...``, on one line."""
    reason = one_line(error.reason)
    return f"is {reason}" if error.syntax else f"breaks the JSON rule: {reason}"
