"""Headless Chromium (Debian ``chromium``) for the HTML report's tests, and a small PNG reader
(standard library and numpy) to look at its screenshots."""

from __future__ import annotations

import html
import re
import shutil
import struct
import subprocess
import zlib
from pathlib import Path

import numpy as np

CHROMIUM = "/usr/bin/chromium"
allowed = False  # whether the running test is marked browser (set by this folder's conftest.py)


def chromium(tmp_path: Path, *args: str) -> subprocess.CompletedProcess:
    """Run headless Chromium once (own profile folder under ``tmp_path``)."""
    assert allowed, "a test that starts Chromium is marked browser (or uses a fixture tests/conftest.py maps to it)"
    assert Path(CHROMIUM).exists() or shutil.which("chromium"), "chromium is installed by make setup"
    profile = tmp_path / f"profile-{len(list(tmp_path.iterdir()))}"
    command = [
        CHROMIUM,
        "--headless",
        "--no-sandbox",
        "--disable-gpu",
        "--disable-quic",
        "--no-first-run",
        "--disable-background-networking",
        "--disable-component-update",
        "--disable-sync",
        f"--user-data-dir={profile}",
        "--enable-logging=stderr",
        "--v=0",
        *args,
    ]
    return subprocess.run(command, capture_output=True, text=True, timeout=120)


def body_tag(dom: str) -> str:
    """The attributes of the rendered <body> tag (where the page reports itself), as text."""
    match = re.search(r"<body([^>]*)>", dom)
    assert match, dom[:500]
    return match.group(1)


def body_attributes(dom: str) -> dict[str, str]:
    """The attributes of the rendered <body> tag, unescaped."""
    return {name: html.unescape(value) for name, value in re.findall(r'([\w-]+)="([^"]*)"', body_tag(dom))}


def console_messages(stderr: str) -> list[str]:
    return [line for line in stderr.splitlines() if "CONSOLE" in line or "Uncaught" in line]


def without_wbr(markup: str) -> str:
    """The page's markup without the line-break opportunities it puts into long names."""
    return markup.replace("<wbr>", "")


def _unfilter(kind: int, line: bytes, previous: bytes, step: int) -> bytes:
    """One scanline, PNG filters undone (filter types 0-4): Sub and Up (most of Chromium's rows) with numpy."""
    if kind == 0:
        return line
    if kind == 1:  # a running sum of each channel along the row (uint8 sums wrap as PNG's do)
        return np.cumsum(np.frombuffer(line, np.uint8).reshape(-1, step), axis=0, dtype=np.uint8).tobytes()
    if kind == 2:
        return (np.frombuffer(line, np.uint8) + np.frombuffer(previous, np.uint8)).tobytes()
    out = bytearray(line)
    for i in range(len(out)):
        a = out[i - step] if i >= step else 0
        b = previous[i]
        c = previous[i - step] if i >= step else 0
        if kind == 3:
            predictor = (a + b) // 2
        else:  # Paeth
            p = a + b - c
            pa, pb, pc = abs(p - a), abs(p - b), abs(p - c)
            predictor = a if pa <= pb and pa <= pc else b if pb <= pc else c
        out[i] = (out[i] + predictor) & 255
    return bytes(out)


def png_pixels(path: Path) -> tuple[int, int, int, list[bytes]]:
    """Width, height, bytes per pixel (3: RGB, 4: RGBA) and rows of an 8-bit non-interlaced PNG
    (what Chromium writes), each row as its pixels' bytes."""
    data = path.read_bytes()
    assert data[:8] == b"\x89PNG\r\n\x1a\n", "not a PNG"
    offset, chunks, header = 8, [], b""
    while offset < len(data):
        (length,) = struct.unpack(">I", data[offset : offset + 4])
        kind, body = data[offset + 4 : offset + 8], data[offset + 8 : offset + 8 + length]
        header = body if kind == b"IHDR" else header
        chunks += [body] if kind == b"IDAT" else []
        offset += 12 + length
    width, height, depth, colour, _, _, interlace = struct.unpack(">IIBBBBB", header)
    assert depth == 8 and colour in (2, 6) and interlace == 0, (depth, colour, interlace)
    step = 3 if colour == 2 else 4
    raw, stride = zlib.decompress(b"".join(chunks)), width * step + 1
    rows, previous = [], bytes(width * step)
    for y in range(height):
        line = raw[y * stride : (y + 1) * stride]
        previous = _unfilter(line[0], line[1:], previous, step)
        rows.append(previous)
    return width, height, step, rows


def colours(rows: list[bytes], step: int, every: int = 2) -> dict[tuple[int, ...], int]:
    """How many pixels of each colour (RGB) the rows hold, looking at every ``every``-th pixel of
    every ``every``-th row."""
    counts: dict[tuple[int, ...], int] = {}
    for row in rows[::every]:
        for i in range(0, len(row), step * every):
            key = tuple(row[i : i + 3])
            counts[key] = counts.get(key, 0) + 1
    return counts
