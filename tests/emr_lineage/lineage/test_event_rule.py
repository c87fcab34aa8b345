"""event_problem: what an OpenLineage event must be at every door (the spec's requirements and what Marquez
0.51 stores and lists back), each refusal one line naming where; the real listener's events and the edges
of every rule pass."""

from __future__ import annotations

import copy
from typing import Any

import pytest

from emr_lineage.lineage.event_rule import DATASET_EVENT, JOB_EVENT, RUN_EVENT, event_kind, event_problem
from tests.emr_lineage.lineage.rule_events import RUN_ID, facet, listener_events, run_event
from tests.emr_lineage.lineage.rule_events import dataset_event as static_dataset_event
from tests.emr_lineage.lineage.rule_events import job_event as static_job_event

PARENT_RUN_ID = "0190f3f2-0000-7000-8000-00000000aaaa"
DELETE = object()


def full_event() -> dict[str, Any]:
    """A RunEvent with every facet the rule looks into, each as the Spark listener writes it."""
    job_facets = {
        "jobType": facet(processingType="BATCH", integration="SPARK", jobType="SQL_JOB"),
        "sql": facet(query="INSERT INTO t SELECT * FROM s"),
        "documentation": facet(description="the nightly load"),
        "sourceCodeLocation": facet(type="git", url="https://github.com/o/r"),
    }
    run_facets = {
        "parent": facet(
            run={"runId": PARENT_RUN_ID},
            job={"namespace": "emr-lineage-dev", "name": "app"},
            root={"run": {"runId": PARENT_RUN_ID}, "job": {"namespace": "airflow", "name": "dag"}},
        ),
        "nominalTime": facet(nominalStartTime="2026-11-21T00:00:00Z", nominalEndTime="2026-11-22T00:00:00Z"),
        "spark_properties": facet(properties={"spark.master": "local[2]"}),
    }
    source = facet(name="s3://lake", uri="s3://lake")
    schema = facet(fields=[{"name": "order_id", "type": "long"}, {"name": "amount", "type": "decimal(10,2)"}])
    output_facets = {
        "schema": schema,
        "dataSource": source,
        "symlinks": facet(
            identifiers=[{"namespace": "arn:aws:glue:us-east-1:123456789012", "name": "db.t", "type": "TABLE"}]
        ),
        "columnLineage": facet(
            fields={
                "amount": {
                    "inputFields": [{"namespace": "s3://lake", "name": "raw/orders", "field": "amount"}],
                    "transformationType": "IDENTITY",
                }
            }
        ),
        "lifecycleStateChange": facet(lifecycleStateChange="OVERWRITE"),
    }
    return run_event(
        "emr-lineage-dev",
        "app.write",
        eventType="COMPLETE",
        run={"runId": RUN_ID, "facets": run_facets},
        job={"namespace": "emr-lineage-dev", "name": "app.write", "facets": job_facets},
        inputs=[
            {
                "namespace": "s3://lake",
                "name": "raw/orders",
                "facets": {"schema": copy.deepcopy(schema), "dataSource": copy.deepcopy(source)},
                "inputFacets": {"inputStatistics": facet(rowCount=10)},
            }
        ],
        outputs=[
            {
                "namespace": "s3://lake",
                "name": "clean/orders",
                "facets": output_facets,
                "outputFacets": {"outputStatistics": facet(rowCount=10)},
            }
        ],
    )


def changed(path: tuple[Any, ...], value: Any, event: dict[str, Any] | None = None) -> dict[str, Any]:
    """``event`` (default: :func:`full_event`) with the value at ``path`` replaced (or deleted: DELETE)."""
    event = full_event() if event is None else copy.deepcopy(event)
    holder = event
    for step in path[:-1]:
        holder = holder[step]
    if value is DELETE:
        del holder[path[-1]]
    else:
        holder[path[-1]] = value
    return event


def test_the_real_listeners_events_pass() -> None:
    events = listener_events()
    assert len(events) == 117
    assert [event_problem(event) for event in events] == [None] * 117


def test_generated_events_and_a_full_event_pass(gen) -> None:
    assert [event_problem(event) for event in gen.pipeline("s3://lake")] == [None] * 25
    assert event_problem(full_event()) is None


SPACE = "has characters Marquez cannot hold (' '); use letters, digits and _ - . @ + : /"
RANGE = "is out of range; Marquez lists events from 1970-01-01T00:00:00+00:00 to before 9999-12-31T00:00:00+00:00"
PRECISION = "has more than 9 fraction digits or an offset beyond 18:00"
NOT_TIME = "is not an RFC 3339 date-time (e.g. 2026-11-27T19:00:21.736Z)"
COLUMN = "more than Marquez's column holds"
LINE_BREAK = "holds a line break, which Marquez's lineage graph cannot hold"
NAME_CHARS = "use letters, digits and _ - . @ + : /"


# --- accepted edges --------------------------------------------------------------------------------------

RUN_FACETS, JOB_FACETS = ("run", "facets"), ("job", "facets")
OUT = ("outputs", 0)
OUT_FACETS = (*OUT, "facets")


@pytest.mark.parametrize(
    ("path", "value"),
    [
        (("eventTime",), "2026-11-23t12:00:00z"),  # RFC 3339 section 5.6: T and Z may be lowercase
        (("eventTime",), "2026-11-23T12:00:00.123456789Z"),  # 9 fraction digits: Java's nanoseconds
        (("eventTime",), "2026-11-23T12:00:00+18:00"),
        (("eventTime",), "2026-11-23T12:00:00-18:00"),
        (("eventTime",), "1970-01-01T00:00:00Z"),  # the first moment Marquez lists
        (("eventTime",), "1969-12-31T23:00:00-01:00"),  # the same moment
        (("eventTime",), "1970-06-15T12:00:00+01:00"),
        (("eventTime",), "9998-12-31T23:59:59.999999999Z"),
        (("eventTime",), "9999-12-30T23:59:59+18:00"),
        (("eventTime",), "2024-02-29T00:00:00Z"),
        ((*RUN_FACETS, "nominalTime", "nominalEndTime"), DELETE),
        (("job", "namespace"), "arn:aws:glue:us-east-1:123456789012"),
        (("job", "namespace"), "a" * 255),
        ((*OUT, "namespace"), "s3://bucket"),
        ((*OUT, "namespace"), "hive://metastore"),
        ((*OUT, "namespace"), "file:/tmp/warehouse"),
        ((*OUT, "namespace"), "user@host+x_y-z.1"),
        (("job", "name"), "n" * 255),
        (("job", "name"), "é" * 127),  # 254 bytes
        (("job", "name"), "a name with spaces\tand a tab"),
        ((*OUT, "name"), "/tmp/ctas_load/tbl1"),
        (("run", "runId"), RUN_ID.upper()),
        (("run", "runId"), "00000000-0000-0000-0000-000000000000"),
        (("producer",), "urn:emr-lineage:test"),
        (("producer",), "https://example.com/p?x=1#frag"),
        (("producer",), "https://example.com/é%20x"),
        (("schemaURL",), "https://openlineage.io/spec/2-0-2/OpenLineage.json"),
        (("schemaURL",), "https://example.com/JobEvent.json"),  # the last segment is not JobEvent: a RunEvent
        (("eventType",), "OTHER"),
        ((*RUN_FACETS, "k" * 255), facet()),
        ((*RUN_FACETS, "custom"), facet(anything=[1, {"a": None}])),
        ((*RUN_FACETS, "parent", "root"), DELETE),
        ((*OUT_FACETS, "schema", "fields"), []),
        ((*OUT_FACETS, "schema", "fields", 0, "type"), DELETE),
        ((*OUT_FACETS, "columnLineage", "fields", "amount", "transformationType"), DELETE),
        ((*JOB_FACETS, "sourceCodeLocation", "url"), DELETE),
        (("inputs",), []),
        (("outputs",), DELETE),
        (("job", "facets"), DELETE),
    ],
)
def test_the_edges_of_each_rule_pass(path: tuple[Any, ...], value: Any) -> None:
    assert event_problem(changed(path, value)) is None


def test_static_lineage_is_read_as_the_schema_url_names_it() -> None:
    job_event, dataset_event = static_job_event(), static_dataset_event()
    dataset_event["dataset"]["facets"] = {"schema": facet(fields=[])}
    assert (event_kind(job_event), event_problem(job_event)) == (JOB_EVENT, None)  # no run, no eventType
    assert (event_kind(dataset_event), event_problem(dataset_event)) == (DATASET_EVENT, None)
    assert event_problem({**job_event, "outputs": [{"namespace": "s3://my lake", "name": "x"}]}) == (
        f"outputs[0].namespace 's3://my lake' {SPACE}"
    )
    assert (
        event_problem({**dataset_event, "dataset": {"namespace": "s3://lake", "name": ""}}) == "dataset.name is blank"
    )
    assert event_kind({**job_event, "schemaURL": "https://example.com/JobEvents"}) == RUN_EVENT
    assert event_problem({**job_event, "schemaURL": "https://example.com/JobEvents"}) == (
        "eventType is missing or not a string"
    )


# --- refusals: each rule, its reason and where -----------------------------------------------------------


@pytest.mark.parametrize(
    ("path", "value", "reason"),
    [
        # the envelope
        (("eventTime",), DELETE, "eventTime is missing or not a string"),
        (("eventTime",), 1732190400, "eventTime is missing or not a string"),
        (("eventTime",), "2026-11-23 12:00:00Z", f"eventTime: '2026-11-23 12:00:00Z' {NOT_TIME}"),
        (("eventTime",), "2026-11-23T12:00Z", f"eventTime: '2026-11-23T12:00Z' {NOT_TIME}"),
        (("eventTime",), "2026-11-23T12:00:00", "eventTime: '2026-11-23T12:00:00' has no UTC offset"),
        (
            ("eventTime",),
            "2026-11-23T12:00:00.1234567890Z",
            f"eventTime: '2026-11-23T12:00:00.1234567890Z' {PRECISION}",
        ),
        (("eventTime",), "2026-11-23T12:00:00+18:01", f"eventTime: '2026-11-23T12:00:00+18:01' {PRECISION}"),
        (
            ("eventTime",),
            "2026-02-29T12:00:00Z",
            "eventTime: '2026-02-29T12:00:00Z' is not a date and time of the calendar",
        ),
        (
            ("eventTime",),
            "2026-11-23T23:59:60Z",
            "eventTime: '2026-11-23T23:59:60Z' is not a date and time of the calendar",
        ),
        (("eventTime",), "1969-12-31T23:59:59.999Z", f"eventTime: '1969-12-31T23:59:59.999Z' {RANGE}"),
        (("eventTime",), "1970-01-01T00:00:00+00:01", f"eventTime: '1970-01-01T00:00:00+00:01' {RANGE}"),
        (("eventTime",), "0001-01-01T00:00:00+14:00", f"eventTime: '0001-01-01T00:00:00+14:00' {RANGE}"),
        (("eventTime",), "9999-12-31T00:00:00Z", f"eventTime: '9999-12-31T00:00:00Z' {RANGE}"),
        (("producer",), DELETE, "producer is missing or not a string"),
        (("producer",), "", "producer is missing or not a string"),
        (("producer",), "my producer", "producer 'my producer' is not a URI (' ' must be percent-encoded)"),
        (
            ("producer",),
            "https://e.com/100%",
            "producer 'https://e.com/100%' is not a URI ('%' must be percent-encoded)",
        ),
        (("producer",), "https://e.com/{x}", "producer 'https://e.com/{x}' is not a URI ('{' must be percent-encoded)"),
        (
            ("producer",),
            "https://e.com/#a#b",
            "producer 'https://e.com/#a#b' is not a URI (a second '#' must be percent-encoded)",
        ),
        (("schemaURL",), DELETE, "schemaURL is missing or not a string"),
        (
            ("schemaURL",),
            "https://e.com/a<b>",
            "schemaURL 'https://e.com/a<b>' is not a URI ('<' must be percent-encoded)",
        ),
        # a RunEvent
        (("eventType",), DELETE, "eventType is missing or not a string"),
        (("eventType",), "DONE", "eventType 'DONE' is not one of ABORT, COMPLETE, FAIL, OTHER, RUNNING, START"),
        (("eventType",), "complete", "eventType 'complete' is not one of ABORT, COMPLETE, FAIL, OTHER, RUNNING, START"),
        (("run",), DELETE, "run is missing or not an object"),
        (("run", "runId"), DELETE, "run.runId is missing or not a string"),
        (("run", "runId"), "r1", "run.runId: 'r1' is not a UUID"),
        (("run", "runId"), "{" + RUN_ID + "}", f"run.runId: '{{{RUN_ID}}}' is not a UUID"),
        (("run", "runId"), RUN_ID.replace("-", ""), f"run.runId: '{RUN_ID.replace('-', '')}' is not a UUID"),
        (("job",), DELETE, "job is missing or not an object"),
        (("job", "namespace"), "my ns", f"job.namespace 'my ns' {SPACE}"),
        (
            ("job", "namespace"),
            "s3://b/100%",
            f"job.namespace 's3://b/100%' has characters Marquez cannot hold ('%'); {NAME_CHARS}",
        ),
        (("job", "namespace"), "é", f"job.namespace 'é' has characters Marquez cannot hold ('é'); {NAME_CHARS}"),
        (("job", "namespace"), "a" * 256, "job.namespace is 256 characters long; the limit is 255"),
        (("job", "namespace"), "", "job.namespace is missing or not a string"),
        (("job", "name"), DELETE, "job.name is missing or not a string"),
        (("job", "name"), "", "job.name is blank"),
        (("job", "name"), " \t\u3000", "job.name is blank"),
        (("job", "name"), "a\nb", f"job.name 'a\\nb' {LINE_BREAK}"),
        (
            ("job", "name"),
            "a\u2028b",
            f"job.name 'a\\u2028b' {LINE_BREAK}",
        ),
        (("job", "name"), "n" * 256, "job.name is 256 bytes long; the limit is 255"),
        (("job", "name"), "é" * 128, "job.name is 256 bytes long; the limit is 255"),
        # facets
        (RUN_FACETS, [], "run.facets is not an object"),
        ((*RUN_FACETS, "custom"), "x", "run.facets.custom is not an object"),
        ((*RUN_FACETS, "k" * 256), facet(), f"run.facets: the facet key '{'k' * 75}...' is over 255 bytes"),
        (
            (*RUN_FACETS, "spark_properties", "_producer"),
            DELETE,
            "run.facets.spark_properties._producer is missing or not a string",
        ),
        ((*RUN_FACETS, "parent", "_producer"), DELETE, "run.facets.parent._producer is missing or not a string"),
        (
            (*RUN_FACETS, "parent", "_schemaURL"),
            "a b",
            "run.facets.parent._schemaURL 'a b' is not a URI (' ' must be percent-encoded)",
        ),
        ((*JOB_FACETS, "sql", "_schemaURL"), DELETE, "job.facets.sql._schemaURL is missing or not a string"),
        (
            ("inputs", 0, "inputFacets", "inputStatistics", "_producer"),
            DELETE,
            "inputs[0].inputFacets.inputStatistics._producer is missing or not a string",
        ),
        (
            (*OUT, "outputFacets", "outputStatistics"),
            {"rowCount": 1},
            "outputs[0].outputFacets.outputStatistics._producer is missing or not a string",
        ),
        # the facets Marquez models
        ((*RUN_FACETS, "parent", "run", "runId"), "x", "run.facets.parent.run.runId: 'x' is not a UUID"),
        ((*RUN_FACETS, "parent", "job"), DELETE, "run.facets.parent.job is missing or not an object"),
        ((*RUN_FACETS, "parent", "job", "namespace"), "a b", f"run.facets.parent.job.namespace 'a b' {SPACE}"),
        (
            (*RUN_FACETS, "parent", "root", "run", "runId"),
            DELETE,
            "run.facets.parent.root.run.runId is missing or not a string",
        ),
        ((*RUN_FACETS, "parent", "root", "job", "name"), "", "run.facets.parent.root.job.name is blank"),
        ((*RUN_FACETS, "parent", "root"), "dag", "run.facets.parent.root is not an object"),
        (
            (*RUN_FACETS, "nominalTime", "nominalStartTime"),
            DELETE,
            "run.facets.nominalTime.nominalStartTime is missing or not a string",
        ),
        (
            (*RUN_FACETS, "nominalTime", "nominalEndTime"),
            "noon",
            f"run.facets.nominalTime.nominalEndTime: 'noon' {NOT_TIME}",
        ),
        ((*JOB_FACETS, "jobType", "integration"), DELETE, "job.facets.jobType.integration is missing or not a string"),
        ((*JOB_FACETS, "sql", "query"), None, "job.facets.sql.query is missing or not a string"),
        (
            (*JOB_FACETS, "documentation", "description"),
            5,
            "job.facets.documentation.description is missing or not a string",
        ),
        (
            (*JOB_FACETS, "sourceCodeLocation", "url"),
            "u" * 256,
            f"job.facets.sourceCodeLocation.url is over 255 bytes, {COLUMN}",
        ),
        ((*OUT_FACETS, "schema", "fields"), {}, "outputs[0].facets.schema.fields is not a list"),
        ((*OUT_FACETS, "schema", "fields", 1, "name"), "", "outputs[0].facets.schema.fields[1].name is blank"),
        (
            (*OUT_FACETS, "schema", "fields", 1, "name"),
            "a\rb",
            f"outputs[0].facets.schema.fields[1].name 'a\\rb' {LINE_BREAK}",
        ),
        (
            (*OUT_FACETS, "schema", "fields", 0, "type"),
            "t" * 2001,
            f"outputs[0].facets.schema.fields[0].type is over 2000 bytes, {COLUMN}",
        ),
        (
            (*OUT_FACETS, "symlinks", "identifiers"),
            DELETE,
            "outputs[0].facets.symlinks.identifiers is missing or not a list",
        ),
        (
            (*OUT_FACETS, "symlinks", "identifiers", 0, "namespace"),
            "my db",
            f"outputs[0].facets.symlinks.identifiers[0].namespace 'my db' {SPACE}",
        ),
        (
            (*OUT_FACETS, "symlinks", "identifiers", 0, "name"),
            "",
            "outputs[0].facets.symlinks.identifiers[0].name is blank",
        ),
        (
            (*OUT_FACETS, "symlinks", "identifiers", 0, "type"),
            DELETE,
            "outputs[0].facets.symlinks.identifiers[0].type is missing or not a string",
        ),
        (
            (*OUT_FACETS, "symlinks", "identifiers", 0, "type"),
            "T" * 65,
            f"outputs[0].facets.symlinks.identifiers[0].type is over 64 bytes, {COLUMN}",
        ),
        (
            (*OUT_FACETS, "columnLineage", "fields"),
            [],
            "outputs[0].facets.columnLineage.fields is missing or not an object",
        ),
        (
            (*OUT_FACETS, "columnLineage", "fields", "amount"),
            {},
            "outputs[0].facets.columnLineage.fields.amount.inputFields is missing or not a list",
        ),
        (
            (*OUT_FACETS, "columnLineage", "fields", "amount", "inputFields", 0, "namespace"),
            "s3://my lake",
            f"outputs[0].facets.columnLineage.fields.amount.inputFields[0].namespace 's3://my lake' {SPACE}",
        ),
        (
            (*OUT_FACETS, "columnLineage", "fields", "amount", "inputFields", 0, "name"),
            DELETE,
            "outputs[0].facets.columnLineage.fields.amount.inputFields[0].name is missing or not a string",
        ),
        (
            (*OUT_FACETS, "columnLineage", "fields", "amount", "inputFields", 0, "field"),
            DELETE,
            "outputs[0].facets.columnLineage.fields.amount.inputFields[0].field is missing or not a string",
        ),
        (
            (*OUT_FACETS, "columnLineage", "fields", "amount", "transformationType"),
            "x" * 256,
            f"outputs[0].facets.columnLineage.fields.amount.transformationType is over 255 bytes, {COLUMN}",
        ),
        ((*OUT_FACETS, "dataSource", "name"), "", "outputs[0].facets.dataSource.name is blank"),
        (
            (*OUT_FACETS, "dataSource", "uri"),
            "s3://a b",
            "outputs[0].facets.dataSource.uri 's3://a b' is not a URI (' ' must be percent-encoded)",
        ),
        (
            (*OUT_FACETS, "lifecycleStateChange", "lifecycleStateChange"),
            "X" * 64,
            f"outputs[0].facets.lifecycleStateChange.lifecycleStateChange is over 63 bytes, {COLUMN}",
        ),
        # datasets
        (("inputs",), {}, "inputs is not a list"),
        (("inputs", 0), "raw/orders", "inputs[0] is missing or not an object"),
        (("inputs", 0, "namespace"), DELETE, "inputs[0].namespace is missing or not a string"),
        ((*OUT, "namespace"), "s3://my bucket", f"outputs[0].namespace 's3://my bucket' {SPACE}"),
        ((*OUT, "name"), "  ", "outputs[0].name is blank"),
        (("inputs", 0, "facets", "schema"), [], "inputs[0].facets.schema is not an object"),
    ],
)
def test_each_rule_refuses_with_its_reason_and_where(path: tuple[Any, ...], value: Any, reason: str) -> None:
    problem = event_problem(changed(path, value))
    assert problem == reason
    assert "\n" not in problem and "\r" not in problem


def test_the_first_problem_is_the_one_told() -> None:
    event = changed(("producer",), DELETE, changed(("job", "name"), ""))
    assert event_problem(event) == "producer is missing or not a string"
    assert event_problem({**event, "producer": "p"}) == "job.name is blank"
    assert event_problem(["an", "array"]) == "the event is a JSON array, not an object"
    assert event_problem("COMPLETE") == "the event is a JSON string, not an object"


# --- what Java refuses in a time or a URI --------------------------------------------------------------------


@pytest.mark.parametrize("offset", ["+05:60", "+05:99", "-00:60"])
def test_an_offset_with_minutes_over_59_is_refused(offset: str) -> None:
    assert event_problem(changed(("eventTime",), f"2026-11-23T12:00:00{offset}")) is not None


@pytest.mark.parametrize("uri", ["https://example.com/a[b]", "https://example.com/p?x=[1]"])
def test_a_bracket_outside_an_ipv6_host_is_refused(uri: str) -> None:
    assert "is not a URI" in (event_problem(changed(("producer",), uri)) or "")


def test_an_ipv6_host_in_brackets_is_a_uri() -> None:
    assert event_problem(changed(("producer",), "http://[2001:db8::1]:5000/producer#x")) is None
