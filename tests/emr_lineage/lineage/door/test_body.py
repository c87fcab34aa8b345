"""The body as producers send it: gzip by header or by magic bytes, limits counted decompressed."""

from __future__ import annotations

import gzip
import json
import zlib

import pytest

from emr_lineage.lineage.door.body import decoded, parsed
from emr_lineage.lineage.door.verdict import Rejected

LIMIT = 4096
TEXT = json.dumps({"eventTime": "2026-11-21T12:00:00Z", "pad": "x" * 100}).encode()


def refused(result: object, status: int) -> str:
    assert isinstance(result, Rejected), result
    assert result.status == status and result.reason and "\n" not in result.reason
    return result.reason


@pytest.mark.parametrize("encoding", ["gzip", "GZIP", " x-gzip "])
def test_a_gzip_body_with_the_header_is_decompressed(encoding: str) -> None:
    assert decoded({"Content-Encoding": encoding}, gzip.compress(TEXT), max_bytes=LIMIT) == TEXT


def test_a_gzip_body_without_the_header_is_recognised_by_its_magic_bytes() -> None:
    """Older Java clients compress without saying so (OpenLineage PR #4282)."""
    assert decoded({}, gzip.compress(TEXT, compresslevel=3), max_bytes=LIMIT) == TEXT
    assert decoded({"content-encoding": "identity"}, gzip.compress(TEXT), max_bytes=LIMIT) == TEXT


def test_a_plain_body_passes_as_it_is() -> None:
    assert decoded({"Content-Encoding": "identity"}, TEXT, max_bytes=LIMIT) == TEXT


def test_several_gzip_members_are_one_body() -> None:
    assert decoded({}, gzip.compress(TEXT[:50]) + gzip.compress(TEXT[50:]), max_bytes=LIMIT) == TEXT


def test_a_small_gzip_of_a_huge_body_is_413_without_inflating_it() -> None:
    bomb = gzip.compress(b" " * (64 << 20))  # 64 MiB of spaces: about 64 KiB compressed
    limit = 1 << 20
    assert len(bomb) < 100_000 < limit
    reason = refused(decoded({"Content-Encoding": "gzip"}, bomb, max_bytes=limit), 413)
    assert "decompressed" in reason and str(limit) in reason


def test_the_compressed_body_itself_is_held_to_the_limit() -> None:
    noise = gzip.compress(bytes(range(256)) * 64, compresslevel=0)
    assert "the limit is 1000" in refused(decoded({"Content-Encoding": "gzip"}, noise, max_bytes=1000), 413)


@pytest.mark.parametrize(
    ("body", "fragment"),
    [
        (gzip.compress(TEXT)[:-10], "truncated"),
        (b"\x1f\x8b" + b"\x00" * 20, "corrupt"),
        (gzip.compress(TEXT) + b"trailing", "bytes after its end"),
    ],
    ids=["truncated", "corrupt", "trailing"],
)
def test_a_broken_gzip_body_is_400(body: bytes, fragment: str) -> None:
    assert fragment in refused(decoded({"Content-Encoding": "gzip"}, body, max_bytes=LIMIT), 400)


def test_gzip_announced_but_not_sent_is_400() -> None:
    assert "corrupt" in refused(decoded({"Content-Encoding": "gzip"}, TEXT, max_bytes=LIMIT), 400)


@pytest.mark.parametrize("encoding", ["br", "deflate", "zstd"])
def test_another_encoding_is_415(encoding: str) -> None:
    body = zlib.compress(TEXT)
    assert repr(encoding) in refused(decoded({"Content-Encoding": encoding}, body, max_bytes=LIMIT), 415)


def test_a_body_that_is_not_utf8_is_400_with_where() -> None:
    assert "byte 2" in refused(parsed(b'{"\xff": 1}'), 400)


def test_a_byte_order_mark_is_allowed() -> None:
    assert parsed(b"\xef\xbb\xbf" + TEXT) == json.loads(TEXT)
