"""Reading and checking OpenLineage events from files and directories."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from emr_lineage.errors import EXIT_CANNOT_RUN
from emr_lineage.lineage.events.reader import EventsError, load_events, stream_events, to_dict
from emr_lineage.lineage.schemas.checks import SchemasMissingError, check_event, load_schemas
from emr_lineage.lineage.schemas.store import SCHEMA_DIR_ENV_VAR, SchemaStoreError
from tests.emr_lineage.lineage.rule_events import ENVELOPE, RUN_ID, completed, facet, run_event, with_envelope


def test_the_tests_check_against_the_reference_schemas(reference_dir: Path) -> None:
    schemas = load_schemas()
    assert schemas is not None
    assert schemas.directory == reference_dir / "openlineage" / "spec"


# What each Spark integration fragment lacks first of what the event rule demands once it has the envelope.
FRAGMENT_GAPS = {
    "ol_container_applicationLevelStartApplication.json": "run.facets.parent._producer is missing or not a string",
    "ol_container_applicationLevelStartJob.json": "run.facets.parent._producer is missing or not a string",
    "ol_container_columnLineageSingleInputComplete.json": "inputs[0].namespace is missing or not a string",
    "ol_container_pysparkCTASWithColumnLineageEnd.json": "job.name is missing or not a string",
    "ol_container_pysparkHadoopFSEndEvent.json": "inputs[0].facets.dataSource._producer is missing or not a string",
    "ol_container_pysparkSymlinksComplete.json": "job.name is missing or not a string",
}


def write_fragments(ol_fixtures_dir: Path, target: Path, complete: Callable[[Any], Any] = completed) -> list[Path]:
    """The Spark integration's fragments, each made an event by ``complete``, as files of ``target``."""
    target.mkdir(parents=True, exist_ok=True)
    paths = []
    for path in sorted(ol_fixtures_dir.glob("ol_container_*.json")):
        (target / path.name).write_text(json.dumps(complete(json.loads(path.read_text())), indent=2))
        paths.append(target / path.name)
    return paths


def test_real_fixture_fragments_are_refused_naming_the_missing_field(ol_fixtures_dir: Path, tmp_path: Path) -> None:
    """The OpenLineage Spark integration's fragments lack the envelope (eventTime, producer...): the event
    rule, which lenient mode does not relax, refuses each naming what it lacks first, file and line."""
    files = sorted(ol_fixtures_dir.glob("ol_container_*.json"))
    assert sorted(f.name for f in files) == sorted(FRAGMENT_GAPS)
    for path in files:
        with pytest.raises(EventsError) as info:
            load_events([path])
        assert str(info.value) == f"{path}:1: eventTime is missing or not a string"
    for path in write_fragments(ol_fixtures_dir, tmp_path, with_envelope):
        with pytest.raises(EventsError) as info:
            load_events([path])
        assert str(info.value) == f"{path}:1: {FRAGMENT_GAPS[path.name]}"
    loaded = load_events(files + write_fragments(ol_fixtures_dir, tmp_path / "completed"), skip_invalid=True)
    assert (len(loaded), loaded.skipped) == (6, 6)


def test_real_fixture_fragments_completed_with_the_envelope_load_in_lenient_mode(
    ol_fixtures_dir: Path, tmp_path: Path
) -> None:
    """With the envelope (eventTime, producer, schemaURL, eventType, runId) and the rest the rule demands
    (job names, dataset namespaces, facets' _producer and _schemaURL), lenient mode takes what they hold."""
    loaded = load_events(write_fragments(ol_fixtures_dir, tmp_path))
    assert len(loaded) == 6 and loaded.skipped == 0
    assert loaded.schema_checked
    assert {e["job"]["namespace"] for e in loaded} >= {"symlinks", "generic-namespace", "testCreateAsSelectAndLoad"}


def test_fragments_fail_strict_mode_naming_the_missing_field(ol_fixtures_dir: Path) -> None:
    with pytest.raises(EventsError) as info:
        load_events([ol_fixtures_dir / "ol_container_pysparkSymlinksComplete.json"], strict=True)
    message = str(info.value)
    assert message.startswith(f"{ol_fixtures_dir / 'ol_container_pysparkSymlinksComplete.json'}:1: ")
    assert "required" in message and "\n" not in message


def test_generated_events_pass_strict_mode(gen, tmp_path: Path) -> None:
    path = gen.write_jsonl(tmp_path / "events.jsonl", gen.pipeline("s3://lake"))
    loaded = load_events([path], strict=True)
    assert len(loaded) == 5 * 5 and loaded.skipped == 0


def test_bare_facet_file_is_not_an_event(ol_fixtures_dir: Path, tmp_path: Path) -> None:
    write_fragments(ol_fixtures_dir, tmp_path)  # read first (sorted), and taken
    facet_file = "ol_spec_tests_ColumnLineageDatasetFacet_2.json"
    (tmp_path / facet_file).write_bytes((ol_fixtures_dir / facet_file).read_bytes())
    with pytest.raises(EventsError, match=rf"{facet_file}:1: event has no 'job'"):
        load_events([tmp_path])


def test_directory_is_read_recursively_and_sorted(gen, tmp_path: Path) -> None:
    events = gen.pipeline("/tmp/lake")
    gen.write_jsonl(tmp_path / "b" / "two.jsonl", events[10:])
    (tmp_path / "a").mkdir()
    (tmp_path / "a" / "one.json").write_text(json.dumps(events[:10]))
    (tmp_path / "a" / "notes.txt").write_text("not events")
    loaded = load_events([tmp_path])
    assert [Path(f).name for f in loaded.files] == ["one.json", "two.jsonl"]
    assert loaded.events == events


def test_json_file_with_a_single_event(gen, tmp_path: Path) -> None:
    event = gen.pipeline("/tmp/lake")[0]
    (tmp_path / "one.json").write_text(json.dumps(event, indent=2))
    assert load_events([tmp_path / "one.json"]).events == [event]


def _lines(tmp_path: Path, text: str, name: str = "e.jsonl") -> Path:
    path = tmp_path / name
    path.write_text(text)
    return path


GOOD = json.dumps(run_event("ns", "j"))


@pytest.mark.parametrize(
    ("text", "line", "fragment"),
    [
        (GOOD + "\n{not json\n", 2, "invalid JSON"),
        (GOOD + "\n\n[1, 2]\n", 3, "an event is a JSON object"),
        ('{"run": {}}\n', 1, "no 'job' object"),
        ('{"job": {"name": "x"}}\n', 1, "event.job has no 'namespace'"),
        ('{"job": {"namespace": "n", "name": "x"}, "inputs": {"a": 1}}\n', 1, "event.inputs must be a list"),
        ('{"job": {"namespace": "n", "name": "x"}, "eventType": "DONE"}\n', 1, "event.eventType: 'DONE' is not one of"),
        ('{"job": {"namespace": "n", "name": 7}}\n', 1, "event.job.name: 7 is not of type 'string'"),
        (
            '{"job": {"namespace": "n", "name": "x"}, "run": {"runId": "not-a-uuid"}}\n',
            1,
            "event.run.runId: 'not-a-uuid' is not a 'uuid'",
        ),
        (
            '{"job": {"namespace": "n", "name": "x"}, "outputs": '
            '[{"namespace": "n", "name": "d", "facets": {"symlinks": {"identifiers": "x"}}}]}\n',
            1,
            "event.outputs[0].facets.symlinks.identifiers",
        ),
    ],
)
def test_malformed_jsonl_is_one_line_with_file_and_line(tmp_path: Path, text: str, line: int, fragment: str) -> None:
    path = _lines(tmp_path, text)
    with pytest.raises(EventsError) as info:
        load_events([path])
    message = str(info.value)
    assert message.startswith(f"{path}:{line}: ")
    assert fragment in message
    assert "\n" not in message


@pytest.mark.parametrize(
    ("text", "line", "fragment"),
    [
        ("", 1, "empty file"),
        ("[\n" + GOOD + ",\n{oops}\n]", 3, "invalid JSON"),
        ("[\n" + GOOD + ",\n" + GOOD + ",\n]", 4, "trailing comma"),
        ("[\n" + GOOD + "\n" + GOOD + "\n]", 3, "expected ',' or ']'"),
        ("[\n" + GOOD, 2, "unterminated"),
        (GOOD + "\n" + GOOD, 2, "extra data"),
        ("[\n" + GOOD + ",\n\n 42\n]", 4, "an event is a JSON object"),
    ],
)
def test_malformed_json_files(tmp_path: Path, text: str, line: int, fragment: str) -> None:
    path = _lines(tmp_path, text, "e.json")
    with pytest.raises(EventsError) as info:
        load_events([path])
    assert str(info.value).startswith(f"{path}:{line}: ")
    assert fragment in str(info.value)


def test_skip_invalid_counts_and_keeps_the_good_events(tmp_path: Path) -> None:
    path = _lines(
        tmp_path, "\n".join([GOOD, "{bad", GOOD, "[]", '{"job": {"namespace": "n"}, "eventType": "X"}', GOOD]) + "\n"
    )
    loaded = load_events([path], skip_invalid=True)
    assert len(loaded) == 3
    assert loaded.skipped == 3
    assert [d.split(":")[1] for d in loaded.skipped_details] == ["2", "4", "5"]


def test_skip_invalid_skips_an_unparseable_json_file_as_one(tmp_path: Path) -> None:
    _lines(tmp_path, "{broken", "a.json")
    _lines(tmp_path, GOOD + "\n", "b.jsonl")
    loaded = load_events([tmp_path], skip_invalid=True)
    assert (len(loaded), loaded.skipped) == (1, 1)


@pytest.mark.parametrize("kind", ["missing", "wrong_suffix", "empty_dir", "binary"])
def test_unreadable_paths_are_errors_even_with_skip_invalid(tmp_path: Path, kind: str) -> None:
    if kind == "missing":
        path, fragment = tmp_path / "nope.jsonl", "no such file or directory"
    elif kind == "wrong_suffix":
        path, fragment = _lines(tmp_path, GOOD, "e.txt"), "not an event file"
    elif kind == "empty_dir":
        path, fragment = tmp_path / "empty", "no event files"
        path.mkdir()
    else:
        path, fragment = tmp_path / "bin.jsonl", "not UTF-8"
        path.write_bytes(b"\xff\xfe\x00garbage")
    with pytest.raises(EventsError, match=fragment):
        load_events([path], skip_invalid=True)


def test_files_are_read_in_argument_order(tmp_path: Path) -> None:
    second, first = _lines(tmp_path, GOOD, "z.jsonl"), _lines(tmp_path, GOOD, "a.jsonl")
    stream = stream_events([second, first])
    assert len(list(stream)) == 2 and stream.files == [str(second), str(first)]


def test_check_event_accepts_openlineage_client_events(gen) -> None:
    event = gen.pipeline("/tmp/l")[1]
    assert check_event(event, strict=True) is None
    assert to_dict(event) == event


def test_to_dict_serialises_client_objects() -> None:
    from openlineage.client.event_v2 import Job, Run, RunEvent, RunState

    event = RunEvent(
        eventType=RunState.START,
        eventTime="2026-11-21T12:00:00+00:00",
        run=Run(runId="3f5e83fa-3480-44ff-99c5-ff943904e5e8"),
        job=Job(namespace="n", name="j"),
        producer="https://example.com/p",
    )
    as_dict = to_dict(event)
    assert as_dict["job"] == {"namespace": "n", "name": "j", "facets": {}}
    assert check_event(as_dict, strict=True) is None


def test_facet_problems_name_their_own_place_even_when_seen_before(tmp_path: Path) -> None:
    bad_symlinks = {"symlinks": {"identifiers": [{"namespace": "n", "name": 5, "type": "TABLE"}]}}
    first = {
        "job": {"namespace": "n", "name": "a"},
        "outputs": [{"namespace": "n", "name": "d", "facets": bad_symlinks}],
    }
    second = {
        "job": {"namespace": "n", "name": "b"},
        "inputs": [{"namespace": "n", "name": "x"}, {"namespace": "n", "name": "d", "facets": bad_symlinks}],
    }
    assert check_event(first) == "event.outputs[0].facets.symlinks.identifiers[0].name: 5 is not of type 'string'"
    assert check_event(second) == "event.inputs[1].facets.symlinks.identifiers[0].name: 5 is not of type 'string'"


def test_base_facet_fields_are_checked_in_every_facet_map() -> None:
    event = {"job": {"namespace": "n", "name": "a", "facets": {"jobType": {"_producer": 5, "jobType": "APPLICATION"}}}}
    assert check_event(event) == "event.job.facets.jobType['_producer']: 5 is not of type 'string'"
    event = {
        "job": {"namespace": "n", "name": "a"},
        "inputs": [{"namespace": "n", "name": "d", "inputFacets": {"stats": []}}],
    }
    assert check_event(event) == "event.inputs[0].inputFacets.stats: [] is not of type 'object'"


def test_strict_and_lenient_results_are_not_mixed_up() -> None:
    # The version facet's datasetVersion is required by its schema (strict) and not by the event rule.
    version = facet("1-0-1/DatasetVersionDatasetFacet.json")
    event = run_event("n", "a", outputs=[{"namespace": "n", "name": "d", "facets": {"version": version}}])
    assert check_event(event) is None
    problem = check_event(event, strict=True)
    assert problem is not None and "required property" in problem
    assert check_event(event) is None


# --- where the schemas come from ---------------------------------------------------------


def _copy_store(reference_dir: Path, target: Path, *names: str) -> Path:
    target.mkdir(parents=True, exist_ok=True)
    for path in sorted((reference_dir / "openlineage" / "spec").glob("*.json")):
        if not names or path.name in names:
            (target / path.name).write_bytes(path.read_bytes())
    return target


def test_without_schemas_lenient_mode_says_only_structural_checks_ran(tmp_path: Path) -> None:
    events = _lines(tmp_path, GOOD + "\n")
    loaded = load_events([events], schema_directory=tmp_path / "no-schemas")
    assert len(loaded) == 1
    assert loaded.schema_checked is False
    assert loaded.schema_note is not None
    assert loaded.schema_note.startswith("only structural event checks ran: no OpenLineage 2-0-2 JSON schemas in ")
    assert "`emr-lineage schemas fetch`" in loaded.schema_note and "\n" not in loaded.schema_note


def test_with_schemas_there_is_no_note(tmp_path: Path) -> None:
    loaded = load_events([_lines(tmp_path, GOOD + "\n")])
    assert loaded.schema_checked is True and loaded.schema_note is None


def test_without_schemas_strict_mode_is_an_error_naming_the_fetch_command(tmp_path: Path, monkeypatch) -> None:
    events = _lines(tmp_path, GOOD + "\n")
    with pytest.raises(SchemasMissingError) as info:
        load_events([events], strict=True, schema_directory=tmp_path / "no-schemas")
    assert "`emr-lineage schemas fetch`" in str(info.value)
    assert str(tmp_path / "no-schemas") in str(info.value)
    assert info.value.exit_code == EXIT_CANNOT_RUN
    monkeypatch.setenv(SCHEMA_DIR_ENV_VAR, str(tmp_path / "no-schemas"))
    with pytest.raises(SchemasMissingError):
        check_event(json.loads(GOOD), strict=True)
    assert check_event(json.loads(GOOD)) is None


def test_structural_checks_still_run_without_schemas(tmp_path: Path) -> None:
    events = _lines(tmp_path, GOOD + '\n{"run": {}}\n')
    with pytest.raises(EventsError, match=r"e.jsonl:2: event has no 'job' object"):
        load_events([events], schema_directory=tmp_path / "no-schemas")


def test_the_schema_directory_asked_for_is_the_one_used(tmp_path: Path) -> None:
    # The environment points at the reference schemas, which refuse this dataset version (a number,
    # where the event rule does not look); the directory given to load_events has none, so only the
    # structural checks and the event rule run.
    version = facet("1-0-1/DatasetVersionDatasetFacet.json", datasetVersion=5)
    event = run_event("n", "j", outputs=[{"namespace": "n", "name": "d", "facets": {"version": version}}])
    events = _lines(tmp_path, json.dumps(event) + "\n")
    assert len(load_events([events], schema_directory=tmp_path / "no-schemas")) == 1
    with pytest.raises(
        EventsError, match=r"e.jsonl:1: event.outputs\[0\].facets.version.datasetVersion: 5 is not of type"
    ):
        load_events([events])


def test_schema_dir_comes_from_the_environment(tmp_path: Path, monkeypatch, reference_dir: Path) -> None:
    monkeypatch.setenv(SCHEMA_DIR_ENV_VAR, str(tmp_path / "empty"))
    assert load_schemas() is None  # no walk-up to ../shared/reference, no old variable
    monkeypatch.setenv("EMR_LINEAGE_OPENLINEAGE_SPEC", str(reference_dir / "openlineage" / "spec"))
    assert load_schemas() is None
    store = _copy_store(reference_dir, tmp_path / "store")
    monkeypatch.setenv(SCHEMA_DIR_ENV_VAR, str(store))
    schemas = load_schemas()
    assert schemas is not None and schemas.directory == store
    # lenient mode with schemas: a wrong type is found
    bad = {"job": {"namespace": "n", "name": 7}}
    assert check_event(bad) == "event.job.name: 7 is not of type 'string'"


def test_incomplete_schema_directory_is_an_error(tmp_path: Path, reference_dir: Path) -> None:
    store = _copy_store(reference_dir, tmp_path / "store", "OpenLineage.json", "ParentRunFacet.json")
    with pytest.raises(SchemaStoreError, match=r"incomplete OpenLineage schema directory \(missing SchemaDatasetFacet"):
        load_events([_lines(tmp_path, GOOD + "\n")], schema_directory=store)


def test_a_schema_file_with_another_id_is_an_error(tmp_path: Path, reference_dir: Path) -> None:
    store = _copy_store(reference_dir, tmp_path / "store")
    facet = json.loads((store / "SymlinksDatasetFacet.json").read_text())
    facet["$id"] = "https://example.com/SymlinksDatasetFacet.json"
    (store / "SymlinksDatasetFacet.json").write_text(json.dumps(facet))
    with pytest.raises(SchemaStoreError) as info:
        load_schemas(store)
    message = str(info.value)
    assert message.startswith(f"{store / 'SymlinksDatasetFacet.json'}: $id is 'https://example.com/")
    assert "run `emr-lineage schemas fetch` again" in message


@pytest.mark.parametrize(
    ("pattern", "fragment"),
    [
        ("(", r"SchemaDatasetFacet.json: not a valid JSON Schema: '\(' is not a 'regex'"),  # neither reads it
        ("\\p{L}", r"SchemaDatasetFacet.json: not a valid JSON Schema: '\\\\p\{L\}' is not a 'regex'"),  # Python's re
        ("\\Z", r"the schemas do not compile: .*(regex|regular expression)"),  # only the compiled check refuses it
    ],
)
def test_a_schema_pattern_that_does_not_compile_is_one_clear_error(
    tmp_path: Path, reference_dir: Path, pattern: str, fragment: str
) -> None:
    store = _copy_store(reference_dir, tmp_path / "store")
    facet = json.loads((store / "SchemaDatasetFacet.json").read_text())
    field_schema = facet["$defs"]["SchemaDatasetFacetFields"]["properties"]["name"]
    field_schema["pattern"] = pattern
    (store / "SchemaDatasetFacet.json").write_text(json.dumps(facet))
    with pytest.raises(SchemaStoreError, match=fragment) as info:
        load_schemas(store)
    assert "run `emr-lineage schemas fetch` again" in str(info.value)


def test_only_schema_patterns_are_compiled_not_data_that_looks_like_one() -> None:
    from emr_lineage.lineage.schemas.store import EVENT_SCHEMA, JSON_SCHEMA_DIALECT, check_document

    def checked(body: dict) -> None:
        document = {"$schema": JSON_SCHEMA_DIALECT, "$id": EVENT_SCHEMA.schema_id, **body}
        check_document(json.dumps(document).encode(), EVENT_SCHEMA, "s.json")

    checked({"examples": [{"pattern": "("}], "default": {"pattern": "["}, "properties": {"p": {"pattern": "^a$"}}})
    for body in (
        {"properties": {"default": {"type": "string", "pattern": "("}}},
        {"patternProperties": {"(": {}}},
        {"$defs": {"x": {"items": {"pattern": "("}}}},
    ):
        with pytest.raises(SchemaStoreError, match=r"s.json: not a valid JSON Schema: '[(]' is not a 'regex'"):
            checked(body)


# --- reading defects ----------------------------------------------------------------------


@pytest.mark.parametrize("separator", ["\u2028", "\u2029", "\u0085"])
def test_jsonl_splits_on_newline_only(tmp_path: Path, separator: str) -> None:
    """str.splitlines() also breaks at these, but they are valid, unescaped, inside JSON strings."""
    text = f"before{separator}after"
    event = run_event("ns", "k", run={"runId": RUN_ID, "facets": {"note": facet(text=text)}})
    path = tmp_path / "e.jsonl"
    path.write_text(GOOD + "\n" + json.dumps(event, ensure_ascii=False) + "\n" + GOOD + "\n", encoding="utf-8")
    loaded = load_events([path])
    assert [e["job"]["name"] for e in loaded] == ["j", "k", "j"]
    assert loaded.events[1]["run"]["facets"]["note"]["text"] == text
    path.write_text(GOOD + "\n" + json.dumps(event, ensure_ascii=False) + "\n{oops\n", encoding="utf-8")
    with pytest.raises(EventsError, match=r"e.jsonl:3: invalid JSON"):
        load_events([path])
    # In a name, Java's regular expressions see a line break (Marquez's lineage graph cannot hold it):
    # the event rule refuses it, on its own line.
    event["job"]["name"] = text
    path.write_text(GOOD + "\n" + json.dumps(event, ensure_ascii=False) + "\n" + GOOD + "\n", encoding="utf-8")
    with pytest.raises(EventsError) as info:
        load_events([path])
    assert (
        str(info.value) == f"{path}:2: job.name {text!r} holds a line break, which Marquez's lineage graph cannot hold"
    )


def test_jsonl_with_crlf_line_ends(tmp_path: Path) -> None:
    path = tmp_path / "e.jsonl"
    path.write_bytes((GOOD + "\r\n\r\n" + GOOD + "\r\n").encode())
    assert len(load_events([path])) == 2
    path.write_bytes((GOOD + "\r\n{oops\r\n").encode())
    with pytest.raises(EventsError, match=r"e.jsonl:2: invalid JSON"):
        load_events([path])


@pytest.mark.parametrize("name", ["e.jsonl", "e.json"])
def test_a_utf8_byte_order_mark_is_accepted(tmp_path: Path, name: str) -> None:
    path = tmp_path / name
    path.write_bytes(b"\xef\xbb\xbf" + (GOOD + "\n").encode())
    assert [e["job"]["name"] for e in load_events([path])] == ["j"]


def test_a_byte_order_mark_inside_the_file_is_still_invalid(tmp_path: Path) -> None:
    path = tmp_path / "e.jsonl"
    path.write_bytes((GOOD + "\n").encode() + b"\xef\xbb\xbf" + (GOOD + "\n").encode())
    with pytest.raises(EventsError, match=r"e.jsonl:2: invalid JSON"):
        load_events([path])


def test_duplicate_key_in_a_jsonl_event_is_reported_with_its_line(tmp_path: Path) -> None:
    duplicate = '{"eventType": "START", "job": {"namespace": "n", "name": "j"}, "eventType": "COMPLETE"}'
    path = _lines(tmp_path, GOOD + "\n\n" + duplicate + "\n")
    with pytest.raises(EventsError) as info:
        load_events([path])
    assert str(info.value) == f"{path}:3: duplicate key 'eventType' (column {duplicate.rindex('eventType')})"


def test_duplicate_key_nested_in_a_facet(tmp_path: Path) -> None:
    duplicate = (
        '{"job": {"namespace": "n", "name": "j"}, "outputs": [{"namespace": "n", "name": "d", '
        '"facets": {"schema": {"fields": [{"name": "a", "type": "int", "name": "b"}]}}}]}'
    )
    path = _lines(tmp_path, duplicate + "\n")
    with pytest.raises(EventsError, match=rf"{path}:1: duplicate key 'name' \(column \d+\)$"):
        load_events([path])


def test_duplicate_key_in_a_json_file_names_the_line_of_the_repeated_key(tmp_path: Path) -> None:
    good = json.loads(GOOD)
    text = (
        "[\n"
        + json.dumps(good)
        + ",\n{\n"
        + '  "eventType": "START",\n'
        + '  "job": {"namespace": "n",\n'
        + '          "name": "j"},\n'
        + '  "eventType": "COMPLETE"\n'
        + "},\n"
        + json.dumps(good)
        + "\n]\n"
    )
    path = _lines(tmp_path, text, "e.json")
    with pytest.raises(EventsError) as info:
        load_events([path])
    assert str(info.value) == f"{path}:7: duplicate key 'eventType'"
    loaded = load_events([path], skip_invalid=True)
    assert (len(loaded), loaded.skipped) == (2, 1)
    assert loaded.skipped_details == [f"{path}:7: duplicate key 'eventType'"]


@pytest.mark.parametrize("name", ["e.jsonl", "e.json"])
def test_a_key_repeated_with_the_same_value_is_accepted(tmp_path: Path, name: str) -> None:
    """The OpenLineage Spark listener 1.53.0 writes run.facets.processing_engine twice, the same both times."""
    fields = facet(version="3.5.6", name="spark", openlineageAdapterVersion="1.53.0")
    engine = json.dumps(fields)
    same_in_another_order = json.dumps(dict(reversed(fields.items())))
    facets = f'"processing_engine": {engine}, "spark_jobDetails": {json.dumps(facet(jobId=0))}, '
    facets += f'"processing_engine": {same_in_another_order}'
    envelope = json.dumps({**ENVELOPE, "eventType": "START"})[1:-1]
    job = '"job": {"namespace": "n", "name": "j"}'
    event = f'{{{envelope}, {job}, "run": {{"runId": "{RUN_ID}", "facets": {{{facets}}}}}}}'
    path = _lines(tmp_path, event + "\n", name)
    (loaded,) = load_events([path]).events
    assert loaded["run"]["facets"]["processing_engine"] == json.loads(engine)
    assert sorted(loaded["run"]["facets"]) == ["processing_engine", "spark_jobDetails"]


@pytest.mark.parametrize(("first", "second"), [("1", "true"), ("1", "1.0"), ('{"a": 1}', '{"a": 2}'), ("null", "0")])
def test_a_key_repeated_with_another_value_is_still_an_error(tmp_path: Path, first: str, second: str) -> None:
    event = f'{{"job": {{"namespace": "n", "name": "j"}}, "run": {{"runId": "{RUN_ID}", "x": {first}, "x": {second}}}}}'
    path = _lines(tmp_path, event + "\n")
    with pytest.raises(EventsError, match=rf"^{path}:1: duplicate key 'x' \(column \d+\)$"):
        load_events([path])


def test_duplicate_key_in_a_single_event_json_file(tmp_path: Path) -> None:
    path = _lines(tmp_path, '{\n  "job": {"namespace": "n", "name": "j"},\n  "job": {"namespace": "m"}\n}\n', "e.json")
    with pytest.raises(EventsError, match=rf"^{path}:3: duplicate key 'job'$"):
        load_events([path])


def test_an_empty_path_is_not_the_current_directory(tmp_path: Path, monkeypatch) -> None:
    monkeypatch.chdir(tmp_path)
    _lines(tmp_path, GOOD + "\n")  # a valid events file in the current directory is not read
    with pytest.raises(EventsError, match=r"^empty events path \(give an events file or directory\)$"):
        load_events([""])
    with pytest.raises(EventsError, match=r"^empty events path"):
        stream_events([tmp_path / "e.jsonl", ""])


@pytest.mark.parametrize(
    ("dataset", "message"),
    [
        ('{"namespace": "s3://lake"}', "event.inputs[0] has no 'name' (a dataset needs a name)"),
        ('{"namespace": "s3://lake", "name": ""}', "event.inputs[0].name is empty (a dataset needs a name)"),
        ('{"namespace": "s3://lake", "name": "  "}', "event.inputs[0].name is empty (a dataset needs a name)"),
        ('{"namespace": "s3://lake", "name": null}', "event.inputs[0] has no 'name' (a dataset needs a name)"),
        ('{"namespace": "s3://lake", "name": 3}', "event.inputs[0].name: 3 is not of type 'string'"),
    ],
)
@pytest.mark.parametrize("with_schemas", [True, False])
def test_datasets_without_a_name_are_errors_naming_file_and_line(
    tmp_path: Path, dataset: str, message: str, with_schemas: bool
) -> None:
    event = '{"job": {"namespace": "n", "name": "j"}, "inputs": [' + dataset + "]}"
    path = _lines(tmp_path, GOOD + "\n" + event + "\n")
    schema_directory = None if with_schemas else tmp_path / "no-schemas"
    with pytest.raises(EventsError) as info:
        load_events([path], schema_directory=schema_directory)
    assert str(info.value) == f"{path}:2: {message}"


def test_nameless_output_dataset_in_strict_mode(tmp_path: Path) -> None:
    event = json.loads(GOOD) | {
        "eventTime": "2026-11-21T12:00:00Z",
        "producer": "https://example.com/p",
        "schemaURL": "https://openlineage.io/spec/2-0-2/OpenLineage.json#/$defs/RunEvent",
        "outputs": [{"namespace": "n", "name": "ok"}, {"namespace": "n", "name": ""}],
    }
    path = _lines(tmp_path, json.dumps(event) + "\n")
    with pytest.raises(EventsError, match=rf"^{path}:1: event.outputs\[1\].name is empty"):
        load_events([path], strict=True)
