"""``emr-lineage schemas fetch``: downloads from a local mirror of openlineage.io/spec, copies
with --from-dir, and refuses documents that are not the pinned schemas (nothing written then)."""

from __future__ import annotations

import json
import sys
import threading
from collections.abc import Iterator
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from emr_lineage.cli.app import main
from emr_lineage.lineage.schemas.checks import load_schemas
from emr_lineage.lineage.schemas.store import MAX_SCHEMA_BYTES, PINNED_SCHEMAS, default_schema_dir, schema_dir
from tests.helpers import one_error_line


@dataclass
class SpecMirror:
    """A local stand-in for https://openlineage.io/spec/: relative path -> (status, body)."""

    url: str
    files: dict[str, tuple[int, bytes]] = field(default_factory=dict)
    requests: list[str] = field(default_factory=list)
    fail_next: list[int] = field(default_factory=list)  # statuses to answer before serving


@pytest.fixture(scope="module")
def spec_files(reference_dir: Path) -> dict[str, bytes]:
    """Relative URL (below the spec base) -> the reference copy's bytes."""
    spec = reference_dir / "openlineage" / "spec"
    return {pinned.relative_url: (spec / pinned.filename).read_bytes() for pinned in PINNED_SCHEMAS}


@pytest.fixture(scope="module")
def mirror_server(spec_files: dict[str, bytes]) -> Iterator[SpecMirror]:
    """One local HTTP server for the module; :func:`mirror` resets what it serves per test."""
    state = SpecMirror(url="")

    class Handler(BaseHTTPRequestHandler):
        def log_message(self, *args: Any) -> None:
            return

        def do_GET(self) -> None:  # noqa: N802 - http.server API
            state.requests.append(self.path)
            status, body = state.files.get(self.path.removeprefix("/mirror/spec/"), (404, b"not found"))
            if state.fail_next:
                status, body = state.fail_next.pop(0), b"busy"
            self.send_response(status)
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

    class QuietServer(ThreadingHTTPServer):
        def handle_error(self, request: Any, client_address: Any) -> None:
            # A reader that hangs up at its size limit (test_an_oversized_document_is_refused) is
            # expected; socketserver would print its traceback into the command's captured stderr.
            if not isinstance(sys.exc_info()[1], ConnectionError):
                super().handle_error(request, client_address)

    server = QuietServer(("127.0.0.1", 0), Handler)
    server.daemon_threads = True
    state.url = f"http://127.0.0.1:{server.server_address[1]}/mirror/spec/"
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield state
    finally:
        server.shutdown()
        server.server_close()


@pytest.fixture()
def mirror(mirror_server: SpecMirror, spec_files: dict[str, bytes]) -> SpecMirror:
    """The mirror serving the reference schemas under their $id paths, request log empty."""
    mirror_server.files = {path: (200, body) for path, body in spec_files.items()}
    mirror_server.requests.clear()
    mirror_server.fail_next.clear()
    return mirror_server


@pytest.fixture()
def runner() -> CliRunner:
    return CliRunner()


def test_fetch_downloads_every_pinned_schema_from_its_id_path(runner, mirror, tmp_path: Path, spec_files) -> None:
    target = tmp_path / "schemas"
    result = runner.invoke(main, ["schemas", "fetch", "--schema-dir", str(target), "--base-url", mirror.url])
    assert result.exit_code == 0, result.output
    assert result.stdout == f"wrote 6 OpenLineage 2-0-2 schemas to {target} (from {mirror.url})\n"
    assert sorted(mirror.requests) == sorted(f"/mirror/spec/{p.relative_url}" for p in PINNED_SCHEMAS)
    assert "/mirror/spec/2-0-2/OpenLineage.json" in mirror.requests
    assert "/mirror/spec/facets/1-2-0/ParentRunFacet.json" in mirror.requests
    assert sorted(p.name for p in target.iterdir()) == sorted(p.filename for p in PINNED_SCHEMAS)
    for pinned in PINNED_SCHEMAS:
        assert (target / pinned.filename).read_bytes() == spec_files[pinned.relative_url]
    schemas = load_schemas(target)
    assert schemas is not None and schemas.directory == target


def test_fetched_schemas_are_what_the_checks_use(runner, mirror, tmp_path: Path, gen) -> None:
    target = tmp_path / "schemas"
    assert (
        runner.invoke(main, ["schemas", "fetch", "--schema-dir", str(target), "--base-url", mirror.url]).exit_code == 0
    )
    events = gen.write_jsonl(tmp_path / "e.jsonl", gen.pipeline("s3://lake"))
    result = runner.invoke(main, ["graph", "--events", str(events), "--strict", "--schema-dir", str(target)])
    assert result.exit_code == 0, result.output
    assert result.stderr == ""
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"job": {"namespace": "n", "name": "j"}, "eventType": "DONE"}\n')
    one_error_line(
        runner.invoke(main, ["graph", "--events", str(bad), "--schema-dir", str(target)]),
        f"{bad}:1: event.eventType: 'DONE' is not one of",
    )


@pytest.mark.parametrize(
    ("body", "fragment"),
    [
        (b"<html>not the schema</html>", "not JSON (Expecting value at line 1 column 1)"),
        (b"\xff\xfe{}", "not UTF-8 text"),
        (b"[1, 2]", "a JSON Schema is a JSON object, got a JSON array"),
        (
            json.dumps(
                {"$schema": "https://json-schema.org/draft/2020-12/schema", "$id": "https://evil.example/x.json"}
            ),
            "$id is 'https://evil.example/x.json', expected 'https://openlineage.io/spec/facets/1-0-1/Symlinks",
        ),
        (
            json.dumps({"$id": "https://openlineage.io/spec/facets/1-0-1/SymlinksDatasetFacet.json"}),
            "$schema is None, expected 'https://json-schema.org/draft/2020-12/schema'",
        ),
        (
            json.dumps(
                {
                    "$schema": "https://json-schema.org/draft/2020-12/schema",
                    "$id": "https://openlineage.io/spec/facets/1-0-1/SymlinksDatasetFacet.json",
                    "type": "no-such-type",
                }
            ),
            "not a valid JSON Schema",
        ),
    ],
)
def test_a_document_that_is_not_the_pinned_schema_is_refused_and_nothing_is_written(
    runner, mirror, tmp_path: Path, body: bytes | str, fragment: str
) -> None:
    relative = "facets/1-0-1/SymlinksDatasetFacet.json"
    mirror.files[relative] = (200, body.encode() if isinstance(body, str) else body)
    target = tmp_path / "schemas"
    result = runner.invoke(main, ["schemas", "fetch", "--schema-dir", str(target), "--base-url", mirror.url])
    line = one_error_line(result, fragment)
    assert line.startswith(f"error: {mirror.url}{relative}: ")
    assert not target.exists() or list(target.iterdir()) == []


def test_a_refused_fetch_keeps_the_previous_schemas(runner, mirror, tmp_path: Path, reference_dir: Path) -> None:
    target = tmp_path / "schemas"
    spec = reference_dir / "openlineage" / "spec"
    assert (
        runner.invoke(main, ["schemas", "fetch", "--schema-dir", str(target), "--from-dir", str(spec)]).exit_code == 0
    )
    before = {p.name: p.read_bytes() for p in target.iterdir()}
    mirror.files["2-0-2/OpenLineage.json"] = (200, b'{"$id": "https://openlineage.io/spec/2-0-1/OpenLineage.json"}')
    result = runner.invoke(main, ["schemas", "fetch", "--schema-dir", str(target), "--base-url", mirror.url])
    one_error_line(result, "$id is 'https://openlineage.io/spec/2-0-1/OpenLineage.json'")
    assert {p.name: p.read_bytes() for p in target.iterdir()} == before


def test_http_errors_and_unreachable_mirrors(
    runner, mirror, tmp_path: Path, closed_port_url: str, retry_waits: list[float]
) -> None:
    del mirror.files["facets/1-2-0/SchemaDatasetFacet.json"]
    target = tmp_path / "schemas"
    result = runner.invoke(main, ["schemas", "fetch", "--schema-dir", str(target), "--base-url", mirror.url])
    one_error_line(result, f"GET {mirror.url}facets/1-2-0/SchemaDatasetFacet.json -> HTTP 404")
    result = runner.invoke(
        main, ["schemas", "fetch", "--schema-dir", str(target), "--base-url", closed_port_url, "--timeout", "2"]
    )
    line = one_error_line(result, f"error: {closed_port_url} is unreachable: ")
    assert f"(GET {closed_port_url}/2-0-2/OpenLineage.json)" in line
    assert "`emr-lineage schemas fetch --from-dir DIR`" in result.stderr
    assert not target.exists()
    assert retry_waits == [0, 1.0]  # the third retry's 2 s would not end within --timeout 2


def test_a_busy_mirror_is_retried(runner, mirror, tmp_path: Path, retry_waits: list[float]) -> None:
    mirror.fail_next.extend([503, 502])
    target = tmp_path / "schemas"
    result = runner.invoke(main, ["schemas", "fetch", "--schema-dir", str(target), "--base-url", mirror.url])
    assert result.exit_code == 0, result.output
    assert len(mirror.requests) == len(PINNED_SCHEMAS) + 2
    assert retry_waits == [0, 1.0]  # each retry after its backoff
    assert load_schemas(target) is not None


def test_an_oversized_document_is_refused(runner, mirror, tmp_path: Path) -> None:
    mirror.files["2-0-2/OpenLineage.json"] = (200, b" " * (MAX_SCHEMA_BYTES + 1))
    target = tmp_path / "schemas"
    result = runner.invoke(main, ["schemas", "fetch", "--schema-dir", str(target), "--base-url", mirror.url])
    one_error_line(result, f"{mirror.url}2-0-2/OpenLineage.json: larger than {MAX_SCHEMA_BYTES} bytes")
    assert not target.exists()


def test_from_dir_copies_with_the_same_checks(runner, tmp_path: Path, reference_dir: Path) -> None:
    spec = reference_dir / "openlineage" / "spec"
    target = tmp_path / "schemas"
    result = runner.invoke(main, ["schemas", "fetch", "--schema-dir", str(target), "--from-dir", str(spec)])
    assert result.exit_code == 0, result.output
    assert result.stdout == f"wrote 6 OpenLineage 2-0-2 schemas to {target} (from {spec})\n"
    assert sorted(p.name for p in target.iterdir()) == sorted(p.filename for p in PINNED_SCHEMAS)  # no MANIFEST.txt
    broken = tmp_path / "broken"
    broken.mkdir()
    for path in spec.glob("*.json"):
        (broken / path.name).write_bytes(path.read_bytes())
    (broken / "ParentRunFacet.json").write_text("{not json")
    other = tmp_path / "other"
    result = runner.invoke(main, ["schemas", "fetch", "--schema-dir", str(other), "--from-dir", str(broken)])
    one_error_line(result, f"{broken / 'ParentRunFacet.json'}: not JSON")
    assert not other.exists()
    (broken / "ParentRunFacet.json").unlink()
    result = runner.invoke(main, ["schemas", "fetch", "--schema-dir", str(other), "--from-dir", str(broken)])
    one_error_line(result, f"{broken / 'ParentRunFacet.json'}: missing")
    result = runner.invoke(main, ["schemas", "fetch", "--schema-dir", str(other), "--from-dir", str(tmp_path / "no")])
    one_error_line(result, "no such directory")


def test_if_missing_does_nothing_when_the_schemas_are_there(runner, mirror, tmp_path: Path, reference_dir) -> None:
    target = tmp_path / "schemas"
    args = ["schemas", "fetch", "--schema-dir", str(target), "--base-url", mirror.url, "--if-missing"]
    assert runner.invoke(main, args).exit_code == 0
    assert len(mirror.requests) == len(PINNED_SCHEMAS)
    result = runner.invoke(main, args)
    assert result.exit_code == 0 and result.stdout == f"OpenLineage 2-0-2 schemas already in {target}\n"
    assert len(mirror.requests) == len(PINNED_SCHEMAS)
    (target / "SchemaDatasetFacet.json").write_text("{}")  # a damaged store is fetched again
    assert runner.invoke(main, args).exit_code == 0
    assert len(mirror.requests) == 2 * len(PINNED_SCHEMAS)
    assert load_schemas(target) is not None


def test_fetch_writes_to_the_environment_dir_else_the_user_cache(runner, mirror, tmp_path: Path, monkeypatch) -> None:
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    monkeypatch.delenv("EMR_LINEAGE_SCHEMA_DIR")
    assert schema_dir() == default_schema_dir() == tmp_path / "cache" / "emr-lineage" / "openlineage-spec" / "2-0-2"
    result = runner.invoke(main, ["schemas", "fetch", "--base-url", mirror.url])
    assert result.exit_code == 0, result.output
    assert load_schemas() is not None and load_schemas().directory == default_schema_dir()
    from_env = tmp_path / "from-env"
    result = runner.invoke(
        main, ["schemas", "fetch", "--base-url", mirror.url], env={"EMR_LINEAGE_SCHEMA_DIR": str(from_env)}
    )
    assert result.exit_code == 0, result.output
    assert load_schemas(from_env) is not None


@pytest.mark.parametrize(
    ("args", "fragment"),
    [
        (["--from-dir", "x", "--base-url", "http://127.0.0.1:9/"], "give either --from-dir DIR or --base-url URL"),
        (["--base-url", "ftp://mirror/spec/"], "--base-url 'ftp://mirror/spec/' is not an http(s) URL with a host"),
        (["--base-url", "http://"], "--base-url 'http://' is not an http(s) URL with a host, e.g. https://"),
        (["--base-url", "http://[::1"], "--base-url 'http://[::1' is not a URL: its host or port cannot be read"),
        (["--base-url", "http://mirror/spec/?v=2"], "--base-url 'http://mirror/spec/?v=2' has a query"),
        (["--schema-dir", ""], "--schema-dir: empty path"),
        (["--from-dir", ""], "--from-dir: empty path"),
        (["--timeout", "0"], "Invalid value for '--timeout'"),
    ],
)
def test_bad_options_are_one_error_line(runner, tmp_path: Path, args: list[str], fragment: str) -> None:
    one_error_line(runner.invoke(main, ["schemas", "fetch", "--schema-dir", str(tmp_path / "s"), *args]), fragment)


def test_a_bad_base_url_is_refused_even_when_the_schemas_are_there(runner, tmp_path: Path, reference_dir: Path) -> None:
    target = tmp_path / "schemas"
    spec = reference_dir / "openlineage" / "spec"
    installed = runner.invoke(main, ["schemas", "fetch", "--schema-dir", str(target), "--from-dir", str(spec)])
    assert installed.exit_code == 0, installed.output
    args = ["schemas", "fetch", "--schema-dir", str(target), "--base-url", "http://", "--if-missing"]
    one_error_line(runner.invoke(main, args), "--base-url 'http://'", stdout_empty=True)


def test_unwritable_schema_dir_is_one_error_line(runner, tmp_path: Path, reference_dir: Path) -> None:
    blocker = tmp_path / "file"
    blocker.write_text("not a directory")
    spec = reference_dir / "openlineage" / "spec"
    result = runner.invoke(main, ["schemas", "fetch", "--schema-dir", str(blocker / "s"), "--from-dir", str(spec)])
    one_error_line(result, f"{blocker / 's'}: cannot create the schema directory")
