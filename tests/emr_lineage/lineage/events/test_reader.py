"""The event reader: gzip, .ndjson, directories, standard input, .json lists read in chunks,
the duplicate-key evidence, and events streamed (never all in memory)."""

from __future__ import annotations

import gzip
import io
import json
import random
import sys
import tracemalloc
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import orjson
import pytest

from emr_lineage.lineage.event_json import DECODER
from emr_lineage.lineage.events import blocks as event_blocks
from emr_lineage.lineage.events import sources as event_sources
from emr_lineage.lineage.events.decode import decode_line, may_repeat_a_key, usual_value
from emr_lineage.lineage.events.reader import EventsError, load_events, stream_events
from emr_lineage.lineage.graph.from_events import build_graph, build_graph_streamed

RUN_ID = "3f5e83fa-3480-44ff-99c5-ff943904e5e8"


def _event(name: str) -> dict[str, Any]:
    return {
        "eventType": "START",
        "eventTime": "2026-11-23T12:00:00Z",
        "producer": "https://example.com/producer",
        "schemaURL": "https://openlineage.io/spec/2-0-2/OpenLineage.json#/$defs/RunEvent",
        "job": {"namespace": "ns", "name": name},
        "run": {"runId": RUN_ID},
    }


def _jsonl(*names: str) -> bytes:
    return b"".join(json.dumps(_event(n)).encode() + b"\n" for n in names)


def _names(loaded: Any) -> list[str]:
    return [e["job"]["name"] for e in loaded]


@pytest.mark.parametrize(
    ("name", "content"),
    [
        ("e.jsonl.gz", gzip.compress(_jsonl("a", "b"))),
        ("e.ndjson.gz", gzip.compress(_jsonl("a", "b"))),
        ("e.ndjson", _jsonl("a", "b")),
        ("e.json.gz", gzip.compress(json.dumps([_event("a"), _event("b")], indent=2).encode())),
        ("e.jsonl", gzip.compress(_jsonl("a", "b"))),  # gzip found by its magic bytes
        ("e.json", gzip.compress(json.dumps([_event("a"), _event("b")]).encode())),
    ],
    ids=[
        "e.jsonl.gz",
        "e.ndjson.gz",
        "e.ndjson",
        "e.json.gz",
        "gzip-as-e.jsonl",
        "gzip-as-e.json",
    ],  # gzip's bytes hold its time
)
def test_every_format_and_gzip(tmp_path: Path, name: str, content: bytes) -> None:
    (tmp_path / name).write_bytes(content)
    assert _names(load_events([tmp_path / name])) == ["a", "b"]


def test_a_directory_mixing_formats_is_read_recursively_in_path_order(tmp_path: Path) -> None:
    (tmp_path / "b").mkdir()
    (tmp_path / "a.json.gz").write_bytes(gzip.compress(json.dumps(_event("1")).encode()))
    (tmp_path / "b" / "c.ndjson").write_bytes(_jsonl("3"))
    (tmp_path / "b" / "a.jsonl.gz").write_bytes(gzip.compress(_jsonl("2")))
    (tmp_path / "notes.txt.gz").write_bytes(gzip.compress(b"not events"))
    (tmp_path / "d.jsonl").write_bytes(_jsonl("4"))
    loaded = load_events([tmp_path])
    assert _names(loaded) == ["1", "2", "3", "4"]
    assert [Path(f).name for f in loaded.files] == ["a.json.gz", "a.jsonl.gz", "c.ndjson", "d.jsonl"]


def test_a_directory_s_hidden_files_and_folders_are_not_read(tmp_path: Path) -> None:
    """As the demo's folder: its own state is a hidden .json beside events.jsonl."""
    (tmp_path / ".emr-lineage-demo.json").write_text('{"rows": 1500}')
    (tmp_path / ".cache").mkdir()
    (tmp_path / ".cache" / "old.jsonl").write_bytes(b"not events")
    (tmp_path / "events.jsonl").write_bytes(_jsonl("1", "2"))
    loaded = load_events([tmp_path])
    assert (_names(loaded), [Path(f).name for f in loaded.files]) == (["1", "2"], ["events.jsonl"])
    hidden = tmp_path / ".emr-lineage-demo.json"
    with pytest.raises(EventsError, match="event has no 'job' object"):  # named, it is read
        load_events([hidden])
    (tmp_path / "events.jsonl").unlink()
    with pytest.raises(EventsError, match=r"no event files .* in this directory \(hidden ones are not read\)"):
        load_events([tmp_path])
    assert load_events([tmp_path / ".cache"], skip_invalid=True).skipped == 1  # a hidden folder named is read


@pytest.mark.parametrize(
    ("content", "fragment"),
    [
        (b"\x1f\x8bnot really gzip", "not valid gzip data"),
        (gzip.compress(_jsonl("a", "b", "c"))[:-12], "gzip data cut short"),
        (b"plain text, not gzip", "not valid gzip data"),
    ],
    ids=["gzip-magic-only", "cut-short", "plain-text"],
)
def test_broken_gzip_is_an_error_even_with_skip_invalid(tmp_path: Path, content: bytes, fragment: str) -> None:
    path = tmp_path / "e.jsonl.gz"
    path.write_bytes(content)
    with pytest.raises(EventsError, match=rf"^{path}: {fragment}"):
        load_events([path], skip_invalid=True)


def test_bad_json_and_duplicate_keys_inside_gzip_are_reported_with_their_line(tmp_path: Path) -> None:
    path = tmp_path / "e.jsonl.gz"
    path.write_bytes(gzip.compress(_jsonl("a") + b"\n" + b"{oops\n"))
    with pytest.raises(EventsError, match=rf"^{path}:3: invalid JSON: Expecting property name"):
        load_events([path])
    duplicate = b'{"job": {"namespace": "n", "name": "j", "name": "k"}}\n'
    path.write_bytes(gzip.compress(_jsonl("a", "b") + duplicate))
    column = duplicate.rindex(b'"name"') + 1
    with pytest.raises(EventsError, match=rf"^{path}:3: duplicate key 'name' \(column {column}\)$"):
        load_events([path])
    listed = tmp_path / "e.json.gz"
    listed.write_bytes(gzip.compress(b'[\n{"job": {"namespace": "n",\n "namespace": "m"}}\n]'))
    with pytest.raises(EventsError, match=rf"^{listed}:3: duplicate key 'namespace'$"):
        load_events([listed])


def test_wrong_suffix_inside_gzip_is_not_an_event_file(tmp_path: Path) -> None:
    path = tmp_path / "e.txt.gz"
    path.write_bytes(gzip.compress(_jsonl("a")))
    with pytest.raises(EventsError, match="not an event file"):
        load_events([path])


# --- standard input -------------------------------------------------------------------------


class _Stdin(io.TextIOWrapper):
    """What a test runner puts in sys.stdin: text over a BytesIO (which has no ``peek``)."""


def _stdin(monkeypatch: pytest.MonkeyPatch, data: bytes) -> None:
    monkeypatch.setattr(sys, "stdin", _Stdin(io.BytesIO(data)))


@pytest.mark.parametrize(
    "data",
    [
        _jsonl("a", "b"),
        b"\xef\xbb\xbf" + _jsonl("a", "b"),
        gzip.compress(_jsonl("a", "b")),
        b"  \n" + json.dumps([_event("a"), _event("b")], indent=1).encode(),
        gzip.compress(json.dumps([_event("a"), _event("b")]).encode()),
    ],
    ids=["jsonl", "bom-jsonl", "gzip-jsonl", "json-list", "gzip-json-list"],
)
def test_dash_reads_standard_input(monkeypatch: pytest.MonkeyPatch, data: bytes) -> None:
    _stdin(monkeypatch, data)
    loaded = load_events(["-"])
    assert _names(loaded) == ["a", "b"]
    assert loaded.files == ["-"]


def test_standard_input_errors_name_it(monkeypatch: pytest.MonkeyPatch) -> None:
    _stdin(monkeypatch, _jsonl("a") + b"{oops\n")
    with pytest.raises(EventsError, match=r"^<stdin>:2: invalid JSON"):
        load_events(["-"])
    _stdin(monkeypatch, b"")
    with pytest.raises(EventsError, match=r"^<stdin>: no events on standard input \(it is empty\)$"):
        load_events(["-"])
    _stdin(monkeypatch, b"\n  \n")
    with pytest.raises(EventsError, match=r"^<stdin>: no events on standard input"):
        load_events(["-"])
    with pytest.raises(EventsError, match=r"^-: standard input given twice$"):
        load_events(["-", "-"])


# --- .json lists, read chunk by chunk -------------------------------------------------------


@pytest.mark.parametrize("chunk", [5, 64, 1 << 20])
def test_json_lists_across_chunk_boundaries(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, chunk: int) -> None:
    monkeypatch.setattr(event_sources, "_CHUNK", chunk)
    events = [_event(f"job-{i}") | {"n": 10**i} for i in range(30)]
    path = tmp_path / "e.json"
    path.write_text(json.dumps(events, indent=2))
    assert load_events([path]).events == events
    text = json.dumps(events, indent=2)
    bad = text.replace('"name": "job-20"', '"name": "job-20", "name": "again"')
    path.write_text(bad)
    line = bad[: bad.index('"name": "again"')].count("\n") + 1
    with pytest.raises(EventsError, match=rf"^{path}:{line}: duplicate key 'name'$"):
        load_events([path])
    path.write_text(text[:-2] + ",\n]")
    with pytest.raises(EventsError, match=rf"^{path}:{text.count(chr(10)) + 1}: invalid JSON: trailing comma"):
        load_events([path])
    path.write_text(text + "\n\n  x")
    with pytest.raises(EventsError, match=rf"^{path}:{text.count(chr(10)) + 3}: invalid JSON: extra data"):
        load_events([path])


def test_a_syntax_error_in_a_json_list_keeps_the_events_before_it_with_skip_invalid(tmp_path: Path) -> None:
    path = tmp_path / "e.json"
    path.write_text("[\n" + json.dumps(_event("a")) + ",\n{oops}\n]")
    loaded = load_events([path], skip_invalid=True)
    assert (_names(loaded), loaded.skipped) == (["a"], 1)


# --- the duplicate-key evidence -------------------------------------------------------------


def _random_json(rng: random.Random, depth: int = 0) -> Any:
    kind = rng.random()
    if depth > 3 or kind < 0.3:
        return rng.choice([1, -2.5, 1e300, True, None, "a:b", 'q"uote', "é", "\u2028", "\\:", ""])
    if kind < 0.5:
        return [_random_json(rng, depth + 1) for _ in range(rng.randint(0, 3))]
    return {rng.choice(["a", "b", "c:", 'd"', "é"]) + str(i): _random_json(rng, depth + 1) for i in range(3)}


def _texts(value: Any, rng: random.Random) -> list[str]:
    spaced = json.dumps(value, separators=(" , ", " : "))
    return [json.dumps(value), json.dumps(value, ensure_ascii=False), spaced, json.dumps(value, indent=2)]


def _repeat_a_key(text: str, rng: random.Random) -> str | None:
    """The text with one pair of an object written twice (the second with another value)."""
    decoded = json.loads(text)
    if not isinstance(decoded, dict) or not decoded:
        return None
    key = rng.choice(list(decoded))
    extra = json.dumps({key: rng.choice([0, "x:y", "\u003a", {"k": 1}])}, ensure_ascii=rng.random() < 0.5)
    return "{" + extra[1:-1] + ", " + text.strip()[1:] if rng.random() < 0.5 else text.strip()[:-1] + ", " + extra[1:]


def _has_repeated_key(text: str) -> bool:
    try:
        DECODER.decode(text)
    except ValueError:
        return True
    return False


def _texts_and_repeats(seed: int, values: int) -> Iterator[tuple[str, str | None]]:
    """Random JSON texts, each with a variant that repeats a key (None when it could not)."""
    rng = random.Random(seed)
    for _ in range(values):
        value = _random_json(rng)
        for text in _texts(value, rng):
            repeated = _repeat_a_key(text, rng)
            yield text, repeated if repeated is not None and _has_repeated_key(repeated) else None


def test_the_duplicate_key_evidence_never_misses_one() -> None:
    caught = 0
    for text, repeated in _texts_and_repeats(14, 3000):
        raw = text.encode()
        assert not (may_repeat_a_key(raw, orjson.loads(raw)) and not _has_repeated_key(text)) or "\\u003" in text
        if repeated is not None:
            caught += 1
            assert may_repeat_a_key(repeated.encode(), orjson.loads(repeated.encode())), repeated
    assert caught > 1000


def test_the_usual_decode_is_the_careful_one_or_refuses() -> None:
    """usual_value (jiter) gives the value the careful decode gives, or None; never a value for a
    text with a repeated key (escaped, nested), NaN or Infinity."""
    refused = 0
    for text, repeated in _texts_and_repeats(15, 2000):
        raw = text.encode()
        usual, careful = usual_value(raw), decode_line(raw)
        if usual is None:
            refused += careful is not None
        else:
            assert orjson.dumps(usual) == orjson.dumps(careful), text
        if repeated is not None:
            assert usual_value(repeated.encode()) is None, repeated
    assert refused < 100  # the usual line takes the usual way
    for text in ('{"a": 1, "\\u0061": 2}', '[{"b": {"c": 1, "c": 1}}]', '{"a": NaN}', "[-Infinity]", '"\\ud800"'):
        assert usual_value(text.encode()) is None, text
    assert usual_value(b'{"a": 123456789012345678901234567890}') == json.loads('{"a": 123456789012345678901234567890}')


def test_an_escaped_colon_sends_the_text_to_the_slow_check() -> None:
    raw = b'{"a": 1, "a": "\\u003a"}'
    assert may_repeat_a_key(raw, orjson.loads(raw))


# --- streaming ------------------------------------------------------------------------------


class _Counted(dict):
    """An event that counts how many of its kind are alive."""

    alive = 0
    most = 0

    def __init__(self, *args: Any) -> None:
        super().__init__(*args)
        _Counted.alive += 1
        _Counted.most = max(_Counted.most, _Counted.alive)

    def __del__(self) -> None:
        _Counted.alive -= 1


def test_build_graph_keeps_no_event_of_a_stream(gen) -> None:
    events = gen.pipeline("/tmp/lake")
    _Counted.alive = _Counted.most = 0

    def stream():
        for _ in range(50):
            for event in events:
                yield _Counted(json.loads(json.dumps(event)))

    graph = build_graph(stream())
    assert graph.jobs()
    assert _Counted.most <= 2  # the one being merged (and the generator's own reference)


def test_streamed_graph_memory_is_bounded_by_the_graph_not_the_events(tmp_path: Path) -> None:
    """Peak memory of building from a stream vs loading the same events first (tracemalloc)."""
    sys.path.insert(0, str(Path(__file__).resolve().parents[4] / "bench"))
    try:
        from graph_build import generate
    finally:
        sys.path.pop(0)
    path = tmp_path / "events.jsonl"
    path.write_bytes(b"".join(orjson.dumps(e) + b"\n" for e in generate(10, 100)))  # 10,020 events

    def peak(build: Any) -> int:
        tracemalloc.start()
        try:
            build()
            return tracemalloc.get_traced_memory()[1]
        finally:
            tracemalloc.stop()

    streamed = peak(lambda: build_graph(stream_events([path], parallel=False)))
    loaded = peak(lambda: build_graph(load_events([path]).events))
    assert streamed * 3 < loaded, (streamed, loaded)


# --- the checker process --------------------------------------------------------------------


def _mixed_lines(count: int) -> bytes:
    """Valid events, with lines the checker must answer: bad JSON, a repeated key, a schema
    problem, values only the standard library decodes (Infinity, a 100-bit integer), blank lines."""
    lines = []
    for index in range(count):
        event = _event(f"job-{index}")
        if index % 97 == 5:
            lines.append(b"{oops")
        elif index % 89 == 7:
            lines.append(b'{"job": {"namespace": "n", "name": "a", "name": "b"}}')
        elif index % 83 == 3:
            lines.append(json.dumps(event | {"eventType": "DONE"}).encode())
        elif index % 79 == 2:
            lines.append(json.dumps(event | {"n": float("inf"), "m": 2**100}).encode())
        elif index % 50 == 0:
            lines.append(b"  ")
        elif index % 61 == 0:
            lines.append(b"\r")
        else:
            lines.append(json.dumps(event).encode())
    return b"\n".join(lines) + b"\n"


def _small_blocks(monkeypatch: pytest.MonkeyPatch, in_flight: int) -> None:
    """Small blocks, the worker process started at the first; at most ``in_flight`` blocks queued for it."""
    from emr_lineage.lineage.events import parallel as event_checks

    monkeypatch.setattr(event_blocks, "BLOCK_BYTES", 2048)
    monkeypatch.setattr(event_checks, "_WARM_UP_BYTES", 1)
    monkeypatch.setattr(event_checks, "PARALLEL_AFTER_BYTES", 4096)
    monkeypatch.setattr(event_checks, "_IN_FLIGHT", in_flight)


@pytest.fixture(params=[2, 1000], ids=["2-in-flight", "all-to-the-worker"])
def checker_at_once(monkeypatch: pytest.MonkeyPatch, request: pytest.FixtureRequest) -> None:
    """At most 2 blocks queued for the worker (as in real runs), or every block (so it merges
    most of them, even while it starts)."""
    _small_blocks(monkeypatch, request.param)


@pytest.fixture()
def worker_takes_every_block(monkeypatch: pytest.MonkeyPatch) -> None:
    _small_blocks(monkeypatch, 1000)


def _read(path: Path, parallel: bool, **options: Any) -> tuple[list[Any], int, list[str]]:
    stream = stream_events([path], parallel=parallel, **options)
    events = list(stream)
    return events, stream.skipped, stream.skipped_details


def _built(path: Path, parallel: bool, **options: Any) -> tuple[dict[str, Any], int, int, list[str]]:
    """What a graph read gives: the graph, the events counted, the skipped ones."""
    stream = stream_events([path], parallel=parallel, **options)
    graph = build_graph_streamed(stream)
    return graph.to_dict(), stream.count, stream.skipped, stream.skipped_details


def _mixed_file(tmp_path: Path, name: str, count: int = 800) -> Path:
    path = tmp_path / name
    content = b"\xef\xbb\xbf" + _mixed_lines(count) + b"\r\n" + json.dumps(_event("last")).encode()
    path.write_bytes(gzip.compress(content) if name.endswith(".gz") else content)
    return path


class _MixedFiles:
    """The mixed files, each written once for the module and only read, and what this process alone reads
    from them, worked out once per file and mode: the cases of a file differ only in what the worker is sent."""

    def __init__(self, folder: Path) -> None:
        self.folder = folder
        self.serial: dict[tuple[str, str, bool], Any] = {}

    def path(self, name: str) -> Path:
        path = self.folder / name
        return path if path.exists() else _mixed_file(self.folder, name)

    def _once(self, what: str, name: str, strict: bool, work: Any) -> Any:
        if (what, name, strict) not in self.serial:
            self.serial[what, name, strict] = work(self.path(name))
        return self.serial[what, name, strict]

    def read(self, name: str, strict: bool) -> tuple[list[Any], int, list[str]]:
        """The events, skipped count and details of a lenient read here."""
        return self._once(
            "read", name, strict, lambda path: _read(path, parallel=False, skip_invalid=True, strict=strict)
        )

    def built(self, name: str, strict: bool) -> tuple[dict[str, Any], int, int, list[str]]:
        return self._once("built", name, strict, lambda path: _built(path, False, skip_invalid=True, strict=strict))

    def first_problem(self, name: str, strict: bool) -> str:
        """The error of a read here that stops at the first bad line."""

        def read(path: Path) -> str:
            with pytest.raises(EventsError) as first:
                _read(path, parallel=False, strict=strict)
            return str(first.value)

        return self._once("first", name, strict, read)


@pytest.fixture(scope="module")
def mixed(tmp_path_factory: pytest.TempPathFactory) -> _MixedFiles:
    return _MixedFiles(tmp_path_factory.mktemp("mixed"))


@pytest.mark.parametrize("strict", [False, True])
@pytest.mark.parametrize("name", ["e.jsonl", "e.jsonl.gz"])  # the worker reads the file / gets the bytes
def test_the_worker_process_answers_as_this_process_does(
    mixed: _MixedFiles, checker_at_once, strict: bool, name: str
) -> None:
    path = mixed.path(name)
    here = mixed.read(name, strict)
    there = _read(path, parallel=True, skip_invalid=True, strict=strict)
    assert here == there
    assert here[1] > 20 and len(here[0]) > 700
    with pytest.raises(EventsError) as first_there:
        _read(path, parallel=True, strict=strict)
    assert mixed.first_problem(name, strict) == str(first_there.value)


@pytest.mark.parametrize("strict", [False, True])
@pytest.mark.parametrize("name", ["e.jsonl", "e.jsonl.gz"])  # the worker merges / only checks
def test_a_graph_built_in_two_processes_is_the_graph_of_the_events(
    mixed: _MixedFiles, checker_at_once, strict: bool, name: str
) -> None:
    path = mixed.path(name)
    events, skipped, details = mixed.read(name, strict)
    expected = (build_graph(events).to_dict(), len(events), skipped, details)
    assert mixed.built(name, strict) == expected
    assert _built(path, parallel=True, skip_invalid=True, strict=strict) == expected
    with pytest.raises(EventsError) as first_built:
        _built(path, parallel=True, strict=strict)
    assert str(first_built.value) == mixed.first_problem(name, strict)


@pytest.mark.parametrize("name", ["e.jsonl", "e.jsonl.gz"])
def test_building_uses_the_worker_as_soon_as_it_is_started(
    mixed: _MixedFiles, monkeypatch: pytest.MonkeyPatch, name: str
) -> None:
    """Started (here at the first block) before PARALLEL_AFTER_BYTES, the worker takes blocks of
    a graph build at once, whereas a read in order waits for that many bytes; same results."""
    from emr_lineage.lineage.events import parallel as event_checks

    _small_blocks(monkeypatch, 2)
    monkeypatch.setattr(event_checks, "PARALLEL_AFTER_BYTES", 1 << 40)
    submitted: list[str] = []
    submit = event_checks._Worker.submit

    def counting(self: Any, mode: str, block: Any) -> None:
        submitted.append(mode)
        submit(self, mode, block)

    monkeypatch.setattr(event_checks._Worker, "submit", counting)
    path = mixed.path(name)
    assert _read(path, parallel=True, skip_invalid=True) == mixed.read(name, strict=False)
    assert submitted == []
    assert _built(path, parallel=True, skip_invalid=True) == mixed.built(name, strict=False)
    assert submitted  # (a few: this process merges the rest while the worker starts)


@pytest.mark.parametrize("parallel", [False, True])
def test_a_graph_with_runs_is_the_graph_and_the_history_of_its_events(
    tmp_path: Path, gen, checker_at_once, parallel: bool
) -> None:
    from emr_lineage.lineage.graph.history import RunHistory

    events = gen.pipeline("s3://lake", "ns") * 40
    path = tmp_path / "e.jsonl"
    path.write_bytes(b"".join(orjson.dumps(event) + b"\n" for event in events))
    with_runs = build_graph_streamed(stream_events([path], parallel=parallel), runs=True).to_dict()
    assert with_runs == build_graph(events).to_dict() | {"runs": RunHistory.of(events).to_dict()}
    assert with_runs["runs"]


@pytest.mark.parametrize("parallel", [False, True])
def test_a_graph_without_column_lineage_is_the_graph_less_its_column_edges(
    tmp_path: Path, gen, checker_at_once, parallel: bool
) -> None:
    path = tmp_path / "e.jsonl"
    path.write_bytes(b"".join(orjson.dumps(event) + b"\n" for event in gen.pipeline("s3://lake", "ns") * 40))
    whole = build_graph_streamed(stream_events([path], parallel=parallel)).to_dict()
    assert whole["columnEdges"]
    without = build_graph_streamed(stream_events([path], parallel=parallel), column_lineage=False).to_dict()
    assert without == whole | {"columnEdges": []}


def test_the_worker_merges_blocks_of_a_plain_file(
    tmp_path: Path, checker_at_once, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Not a vacuous comparison: the worker's builder did hold part of the graph."""
    from emr_lineage.lineage.graph.from_events import GraphBuilder

    merged_there = []
    merge = GraphBuilder.merge

    def counting(self: Any, other: Any) -> None:
        merged_there.append(len(other[0]))
        merge(self, other)

    monkeypatch.setattr(GraphBuilder, "merge", counting)
    path = tmp_path / "e.jsonl"
    events = [_event(f"job-{i}") | {"run": {"runId": str(uuid.UUID(int=i))}} for i in range(2000)]
    path.write_bytes(b"".join(orjson.dumps(event) + b"\n" for event in events))
    _built(path, parallel=True)
    assert merged_there and merged_there[0] > 0


@pytest.mark.parametrize("dies", [False, True], ids=["exports", "dies-then"])
def test_the_worker_input_ends_where_the_tail_begins(
    tmp_path: Path, gen, checker_at_once, monkeypatch: pytest.MonkeyPatch, dies: bool
) -> None:
    """At the end of the last file the worker is told at once that no block follows (it does
    those it has, then exports while this process merges the rest), not once this process is
    done; dying then, its blocks are merged here again. Either way the graph is the serial one."""
    from emr_lineage.lineage.events import parallel as event_checks

    order: list[str] = []
    end_input, finish = event_checks._Worker.end_input, event_checks.LineChecker.finish

    def ending(self: Any) -> None:
        if not self.input_ended:
            order.append("input ended")
        end_input(self)
        if dies:
            self.process.kill()

    def finishing(self: Any) -> Any:
        order.append("finish")
        return finish(self)

    monkeypatch.setattr(event_checks._Worker, "end_input", ending)
    monkeypatch.setattr(event_checks.LineChecker, "finish", finishing)
    monkeypatch.setattr(event_checks, "_TAIL_SHARE", 0.3)
    path = tmp_path / "e.jsonl"
    events = [event for lake in range(30) for event in gen.pipeline(f"s3://lake-{lake % 20}", "ns")]
    path.write_bytes(b"".join(orjson.dumps(event) + b"\n" for event in events))
    there = _built(path, parallel=True)
    assert order[:2] == ["input ended", "finish"]
    assert there == _built(path, parallel=False)
    assert there[0]["columnEdges"] and any(node["type"] == "DATASET" for node in there[0]["nodes"])


def test_not_utf8_is_found_by_the_worker_process_too(tmp_path: Path, checker_at_once) -> None:
    path = tmp_path / "e.jsonl"
    path.write_bytes(_jsonl(*[str(i) for i in range(300)]) + b'{"job": "\xff"}\n')
    messages = []
    for parallel in (False, True):
        for read in (_read, _built):
            with pytest.raises(EventsError, match=r"not UTF-8 text \(invalid start byte at byte \d+\)") as info:
                read(path, parallel=parallel, skip_invalid=True)
            messages.append(str(info.value))
    assert len(set(messages)) == 1
    assert messages[0].endswith(f"at byte {len(_jsonl(*[str(i) for i in range(300)])) + 9})")


@pytest.mark.parametrize("read", [_read, _built])
def test_work_goes_on_here_when_the_worker_process_dies(
    tmp_path: Path, checker_at_once, monkeypatch: pytest.MonkeyPatch, read: Any
) -> None:
    from emr_lineage.lineage.events import parallel as event_checks

    reply = event_checks._Worker.reply
    replies = []

    def dying(self: Any) -> Any:
        if len(replies) == 2:  # after it has answered (and, building, merged) two blocks
            self.process.kill()
            self.process.wait()
        replies.append(1)
        return reply(self)

    monkeypatch.setattr(event_checks._Worker, "reply", dying)
    path = tmp_path / "e.jsonl"
    path.write_bytes(_mixed_lines(1000))
    there, here = read(path, parallel=True, skip_invalid=True), read(path, parallel=False, skip_invalid=True)
    assert there == here
    assert len(replies) >= 3


@pytest.mark.parametrize("seed", range(6))
def test_blocks_of_a_file_and_of_a_stream_hold_the_same_whole_lines(tmp_path: Path, seed: int) -> None:
    """A plain file's blocks are found by reading around their ends; gzip and standard input are
    read on; both give whole lines, in order, every byte once (lines longer than a block too)."""
    rng = random.Random(seed)
    lines = [bytes(rng.choices(b"ab:{} ", k=rng.choice([0, 5, 300, 3000, 9000]))) for _ in range(200)]
    content = (b"\xef\xbb\xbf" if seed % 2 else b"") + b"\n".join(lines) + (b"\n" if seed % 3 else b"")
    plain, packed = tmp_path / "e.jsonl", tmp_path / "e.jsonl.gz"
    plain.write_bytes(content)
    packed.write_bytes(gzip.compress(content))
    read = []
    for path in (plain, packed):
        source = event_sources.Source(path)
        with event_sources.open_source(source) as stream:
            blocks = list(event_blocks.read_blocks(source, stream, size=2048))
            read.append([(block.offset, block.data) for block in blocks])
    body = content[3:] if seed % 2 else content
    for blocks in read:  # (where blocks end may differ: the file's end at a line before the size)
        assert b"".join(data for _, data in blocks) == body
        assert all(data.endswith(b"\n") for _, data in blocks[:-1])
        offsets = [offset for offset, _ in blocks]
        assert offsets[0] == (3 if seed % 2 else 0)
        assert offsets[1:] == [offset + len(data) for offset, data in blocks[:-1]]


@pytest.mark.parametrize("change", ["truncate", "replace"])
@pytest.mark.parametrize("read", [_read, _built])
def test_a_file_changed_while_it_is_read_is_one_clear_error(
    tmp_path: Path, worker_takes_every_block, monkeypatch: pytest.MonkeyPatch, change: str, read: Any
) -> None:
    """Cut short (logrotate's copytruncate) or replaced by a rename while the worker has blocks
    of it still to read: an error naming the file, never a wrong graph, a count that disagrees
    or a traceback."""
    from emr_lineage.lineage.events import parallel as event_checks

    path = tmp_path / "e.jsonl"
    content = _jsonl(*[f"job-{i}" for i in range(600)])
    path.write_bytes(content)
    submit = event_checks._Worker.submit
    sent: list[int] = []

    def changing(self: Any, *args: Any) -> None:
        sent.append(1)
        if len(sent) == 3:
            if change == "truncate":
                with path.open("r+b") as events:
                    events.truncate(len(content) // 3)
            else:
                replacement = tmp_path / "new.jsonl"
                replacement.write_bytes(content)
                replacement.replace(path)
        submit(self, *args)

    monkeypatch.setattr(event_checks._Worker, "submit", changing)
    with pytest.raises(EventsError, match=rf"^{path}: changed while it was being read"):
        read(path, parallel=True)


def test_blocks_the_worker_merged_are_merged_here_again_only_from_the_same_file(
    tmp_path: Path, worker_takes_every_block, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The worker dies after merging blocks, and the file was replaced meanwhile (same size, other
    jobs): its blocks are never merged again from the new file. Either the read stops with the
    error, or, when the worker had sent what it merged before it died (a busy machine's timing:
    it exports as soon as its input ends), the graph is the old file's, whole."""
    from emr_lineage.lineage.events import parallel as event_checks

    path, old = tmp_path / "e.jsonl", tmp_path / "old.jsonl"
    old.write_bytes(_jsonl(*[f"job-{i}" for i in range(600)]))
    path.write_bytes(old.read_bytes())
    reply = event_checks._Worker.reply
    replies: list[int] = []

    def dying(self: Any) -> Any:
        replies.append(1)
        if len(replies) == 3:
            (tmp_path / "new.jsonl").write_bytes(_jsonl(*[f"new-{i}" for i in range(600)]))
            (tmp_path / "new.jsonl").replace(path)
            self.process.kill()
            self.process.wait()
        return reply(self)

    monkeypatch.setattr(event_checks._Worker, "reply", dying)
    try:
        built = _built(path, parallel=True)
    except EventsError as exc:
        assert "changed while it was being read" in str(exc)
    else:
        monkeypatch.undo()
        assert built == _built(old, parallel=False)


class _ShortPipe:
    """A pipe whose reads and writes take a few bytes at a time, as those a signal interrupts do
    (a worker stopped and resumed: 266,240 bytes of a 5 MB message written, the rest lost)."""

    def __init__(self, data: bytes, at_most: int) -> None:
        self.data, self.at_most = data, at_most

    def read(self, size: int) -> bytes:
        count = min(size, self.at_most)
        chunk, self.data = self.data[:count], self.data[count:]
        return chunk

    def write(self, data: Any) -> int:
        count = min(len(data), self.at_most)
        self.data += bytes(data[:count])
        return count

    def flush(self) -> None:
        pass


@pytest.mark.parametrize("at_most", [1, 5, 4096])
def test_worker_messages_survive_reads_and_writes_cut_short(at_most: int) -> None:
    from emr_lineage.lineage.events import worker as event_worker

    messages = [b"", b"x" * 10_000, bytes(range(256))]
    pipe = _ShortPipe(b"", at_most)
    for message in messages:
        event_worker.send(pipe, message)  # type: ignore[arg-type]
    written = pipe.data
    assert [event_worker.receive(pipe) for _ in messages] == messages  # type: ignore[arg-type]
    assert event_worker.receive(pipe) is None  # type: ignore[arg-type]
    cut = _ShortPipe(written[:-3], at_most)
    assert [event_worker.receive(cut) for _ in messages] == messages[:2] + [None]  # type: ignore[arg-type]


def _nested(depth: int) -> str:
    """An event whose field ``x`` holds ``depth`` arrays, the innermost inside ``depth`` objects and arrays."""
    event = json.dumps(_event("j"))
    return event[:-1] + ', "x": ' + "[" * depth + "]" * depth + "}"


def test_deep_nesting_is_read_to_the_limit_or_one_problem_with_its_line(tmp_path: Path) -> None:
    """Up to the JSON rule's limit (200 objects and arrays, jiter's own) an event is read, and a repeated
    key found in it; deeper is one problem naming its line, in a JSONL file as in a JSON file's list, also
    as deep as the standard library cannot go (about 1,000: never a RecursionError)."""
    lines, listed = tmp_path / "e.jsonl", tmp_path / "e.json"
    # The rule's words, also past the standard library's recursion.
    too_deep = {depth: r"a value is nested in more than 200 objects and arrays" for depth in (201, 1200)}
    for depth, problem in too_deep.items():
        lines.write_bytes(_jsonl("a") + _nested(depth).encode() + b"\n" + _jsonl("b"))
        with pytest.raises(EventsError, match=rf"e.jsonl:2: {problem}"):
            load_events([lines])
        loaded = load_events([lines], skip_invalid=True)
        assert (_names(loaded), loaded.skipped) == (["a", "b"], 1)
        listed.write_text(f"[{json.dumps(_event('a'))},\n{_nested(depth)}]")
        with pytest.raises(EventsError, match=rf"e.json:2: {problem}"):
            load_events([listed])
    for path, text in ((lines, _nested(200)), (listed, f"[{_nested(200)}]")):
        path.write_text(text)
        assert len(load_events([path])) == 1
        path.write_text(text.replace('"name": "j"', '"name": "j", "name": "k"'))
        with pytest.raises(EventsError, match=r":1: duplicate key 'name'"):
            load_events([path])


def test_an_item_of_a_list_that_breaks_the_json_rule_is_skipped_alone(tmp_path: Path, monkeypatch) -> None:
    """An item of a .json list that the JSON rule refuses while it is decoded (a number of more than 1,000
    characters, nesting too deep) is one problem, and the items after it are read on, as the gateway reads
    a batch; also when the list's chunks cut that item or the one after it."""
    listed = tmp_path / "e.json"
    long_number = _event("a")
    long_number["x"] = [{"n": "placeholder", "s": "a ] , } in a string"}]
    text = json.dumps(long_number).replace('"placeholder"', "1" * 1001)
    listed.write_text(f"[{text},\n{json.dumps(_event('b'))},\n{json.dumps(_event('c'))}]")
    with pytest.raises(EventsError, match=r"e.json:1: a number is 1001 characters long; the limit is 1000"):
        load_events([listed])
    loaded = load_events([listed], skip_invalid=True)
    assert (_names(loaded), loaded.skipped) == (["b", "c"], 1)
    for chunk in (7, 64, 1024):  # the window's chunks end inside the refused item (and its strings)
        monkeypatch.setattr(event_sources, "_CHUNK", chunk)
        monkeypatch.setattr(event_sources._Text.more, "__defaults__", (chunk,))
        assert _names(load_events([listed], skip_invalid=True)) == ["b", "c"]
    listed.write_text(f"[{json.dumps(_event('a'))},\n{_nested(1200)},\n{json.dumps(_event('c'))}]")
    loaded = load_events([listed], skip_invalid=True)
    assert (_names(loaded), loaded.skipped) == (["a", "c"], 1)
    # a syntax error still ends the file: after the refused item, nothing more is read
    listed.write_text(f"[{text},\n{json.dumps(_event('b'))}\n{json.dumps(_event('c'))}]")
    loaded = load_events([listed], skip_invalid=True)
    assert (_names(loaded), loaded.skipped) == (["b"], 2)
    assert "expected ',' or ']' between events" in loaded.skipped_details[1]
    # the file ends inside the refused item: its problem, and nothing after it
    listed.write_text(f"[{text[:-1]}")
    loaded = load_events([listed], skip_invalid=True)
    assert (_names(loaded), loaded.skipped) == ([], 1)
    assert "1001 characters long" in loaded.skipped_details[0]


@pytest.mark.parametrize("line", [b"[1]", b'"x"', b"null"])
def test_a_passed_line_that_is_no_longer_an_object_is_a_changed_file(tmp_path: Path, line: bytes) -> None:
    """Reading in order, a line the worker passed is decoded again here: anything but an object
    means the bytes changed since (a file rewritten in place)."""
    from emr_lineage.lineage.events import parallel as event_checks
    from emr_lineage.lineage.events.blocks import Block
    from emr_lineage.lineage.events.sources import event_sources

    (tmp_path / "e.jsonl").write_bytes(b"{}\n")
    (source,) = event_sources([tmp_path / "e.jsonl"])
    checker = event_checks.LineChecker(strict=False, schemas=None, parallel=False)
    passed = event_checks._Pending(source, Block.of(0, line + b"\n"), event_checks.CHECK, answers=[], lines=1)
    with pytest.raises(EventsError, match="changed while it was being read"):
        list(checker._answered(passed))
