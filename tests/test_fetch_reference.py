""".github/fetch-reference.sh, run against a local stand-in for raw.githubusercontent.com that serves
the reference copies at <repo>/<commit>/<path>: it rebuilds the same tree, byte for byte, and refuses
a file whose checksum is not the pinned one."""

from __future__ import annotations

import json
import shutil
import subprocess
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest

from tests.paths import REPO_ROOT

SCRIPT = REPO_ROOT / ".github" / "fetch-reference.sh"
LIST = REPO_ROOT / ".github" / "reference-files.tsv"


def _entries() -> list[dict[str, str]]:
    keys = ("local", "repo", "commit", "path", "sha256", "extract")
    return [
        dict(zip(keys, line.split("\t"), strict=True))
        for line in LIST.read_text(encoding="utf-8").splitlines()
        if line and not line.startswith("#")
    ]


def _blog_post(reference_dir: Path, entries: list[dict[str, str]]) -> bytes:
    """A Markdown page like the Marquez blog post: each extracted file as a code block under its heading."""
    parts = ["---\ntitle: Exploring the Marquez Lineage API\n---\n", "##### Job Query\n```\nNODE=x\n```\n"]
    for entry in entries:
        if entry["extract"] != "-":
            node = json.loads((reference_dir / entry["local"]).read_text(encoding="utf-8"))
            parts.append(f"##### {entry['extract']}\n```\n{json.dumps(node, indent=4)}\n```\n")
    return "\n".join(parts).encode()


def _served(reference_dir: Path) -> dict[str, bytes]:
    entries = _entries()
    return {
        f"/{entry['repo']}/{entry['commit']}/{entry['path']}": (
            _blog_post(reference_dir, entries)
            if entry["extract"] != "-"
            else (reference_dir / entry["local"]).read_bytes()
        )
        for entry in entries
    }


@pytest.fixture(scope="module")
def raw_github_server() -> Iterator[dict[str, Any]]:
    state: dict[str, Any] = {"files": {}}

    class Handler(BaseHTTPRequestHandler):
        def log_message(self, *args: Any) -> None:
            return

        def do_GET(self) -> None:  # noqa: N802 - http.server API
            body = state["files"].get(self.path)
            self.send_response(200 if body is not None else 404)
            self.send_header("Content-Length", str(len(body or b"")))
            self.end_headers()
            self.wfile.write(body or b"")

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    server.daemon_threads = True
    state["url"] = f"http://127.0.0.1:{server.server_address[1]}"
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield state
    finally:
        server.shutdown()
        server.server_close()


@pytest.fixture()
def raw_github(raw_github_server: dict[str, Any], reference_dir: Path) -> dict[str, Any]:
    """The stand-in, serving every listed file as GitHub would (reset for each test)."""
    raw_github_server["files"] = _served(reference_dir)
    return raw_github_server


def _run(raw_github: dict[str, Any], dest: Path) -> subprocess.CompletedProcess[str]:
    if shutil.which("curl") is None:
        pytest.fail("curl is needed by .github/fetch-reference.sh")
    env = {"PATH": "/usr/local/bin:/usr/bin:/bin", "EMR_LINEAGE_REFERENCE": str(dest)}
    env["REFERENCE_RAW_BASE"] = raw_github["url"]
    return subprocess.run(["bash", str(SCRIPT)], capture_output=True, text=True, env=env, timeout=120)


def test_the_list_covers_every_reference_file_the_manifests_name(reference_dir: Path) -> None:
    listed = {entry["local"] for entry in _entries()}
    manifests = sorted(reference_dir.glob("**/MANIFEST.txt"))
    assert len(manifests) == 3
    named = set()
    for manifest in manifests:
        folder = manifest.parent.relative_to(reference_dir)
        for line in manifest.read_text(encoding="utf-8").splitlines():
            if line and not line.startswith("#"):
                named.add(f"{folder}/{line.split(chr(9))[0]}")
    assert listed == named


def test_fetch_rebuilds_the_reference_tree_byte_for_byte(raw_github, tmp_path: Path, reference_dir: Path) -> None:
    dest = tmp_path / "reference"
    done = _run(raw_github, dest)
    assert done.returncode == 0, done.stderr
    entries = _entries()
    assert done.stdout.strip() == f"reference data in {dest}: {len(entries)} fetched, 0 already there"
    for entry in entries:
        assert (dest / entry["local"]).read_bytes() == (reference_dir / entry["local"]).read_bytes(), entry["local"]
    again = _run(raw_github, dest)
    assert again.returncode == 0 and f"0 fetched, {len(entries)} already there" in again.stdout


def test_a_file_with_another_checksum_is_refused(raw_github, tmp_path: Path) -> None:
    entry = next(e for e in _entries() if e["local"] == "openlineage/spec/OpenLineage.json")
    raw_github["files"][f"/{entry['repo']}/{entry['commit']}/{entry['path']}"] = b'{"$id": "tampered"}'
    dest = tmp_path / "reference"
    done = _run(raw_github, dest)
    assert done.returncode == 1
    assert done.stderr.startswith("error: openlineage/spec/OpenLineage.json from http://127.0.0.1:")
    assert f"expected {entry['sha256']}" in done.stderr
    assert not (dest / "openlineage" / "spec" / "OpenLineage.json").exists()


def test_a_missing_file_is_an_error(raw_github, tmp_path: Path) -> None:
    entry = next(e for e in _entries() if e["local"] == "marquez/openapi.yml")
    del raw_github["files"][f"/{entry['repo']}/{entry['commit']}/{entry['path']}"]
    done = _run(raw_github, tmp_path / "reference")
    assert done.returncode == 1 and "error: cannot download" in done.stderr and entry["path"] in done.stderr
