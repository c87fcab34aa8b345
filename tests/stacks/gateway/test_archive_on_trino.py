"""The archive's named queries run for real on Trino 476, the engine Athena's engine version 3 is built
on (``tests/trino.py``), over the tables exactly as the gateway stack's template declares them.

* The Glue database and both tables are the template's own ``DatabaseInput``/``TableInput`` (the
  bucket's name filled in), created in moto_server's Glue, which Trino's Hive connector reads as its
  metastore: the OpenX JSON SerDe and its parameters, the text SerDe, partition projection.
* The objects are what the ingest archives (``check_request``: its key and its one-line body) in
  moto_server's S3, plus what an archive may also hold: an event archived over several lines before
  the one-line rule, two bodies that are not an event, an event that arrived three hours late. Each
  event is sent with the gateway's key or a spoke account's (its archive key ends with that account),
  but a DAG's, archived before accounts were recorded (no account in its key).
* The view of the source account is the template's too, as Athena stores a view in the Glue catalog.
* Every named query is rendered by ``emr-lineage gateway archive query``'s own ``render``/``window_values``
  and its rows are compared with what the project's Python side says of the same events
  (``RunHistory`` for runs and failures, the gateway's checked events for the rest).

Trino is not Athena: what differs is in docs/architecture.md ("What is verified here, and what only on AWS").
"""

from __future__ import annotations

import datetime as dt
import json
import os
import pickle
import urllib.request
from collections import Counter
from collections.abc import Iterator
from pathlib import Path
from urllib.parse import parse_qs, urlparse

import boto3
import pytest
from filelock import FileLock

from emr_lineage.aws.archive import ARRIVAL_SLACK, archive_prefixes, source_account
from emr_lineage.aws.archive_queries import ACCOUNTS_VIEW, QUERIES, render, window_values
from emr_lineage.gateway.ingest import check_request
from emr_lineage.lineage.graph.history import RunHistory
from emr_lineage.lineage.naming import canonical_dataset
from tests import trino as trino_server
from tests.emr_lineage.analysis.builders import app_run, at, dataset
from tests.paths import run_shared_dir
from tests.stacks.templates import by_type, one

BUCKET = "lineage-archive-trino"
AIRFLOW = "https://github.com/apache/airflow/tree/providers-openlineage/2.3.0"
SALES = "s3://lake/sales"
SINCE, UNTIL = at(-60), at(17.5 * 60)  # 2026-11-23T08:00Z to 2026-11-24T02:30Z: the last run falls outside
HUB, SPOKE = "123456789012", "210987654321"
KEYS = {"hub-key": HUB, "spoke-key": SPOKE}  # the ingest's: key -> the account whose events it brings


def _served(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The run's folder of Trino and its moto_server (tests/trino.py ``serve``), shared by the xdist workers."""
    return run_shared_dir(tmp_path_factory.getbasetemp()) / trino_server.FOLDER


@pytest.fixture(scope="session")
def trino_endpoints(tmp_path_factory: pytest.TempPathFactory) -> dict[str, str]:
    """Trino and its moto_server: the run's (tests/prefetch.py starts them), else started here; both
    stop once the run's last test that uses them has ended (:func:`_counted`), or with this run's pytest
    (the controller of the xdist workers)."""
    directory = _served(tmp_path_factory)
    directory.parent.mkdir(parents=True, exist_ok=True)
    started = None
    with FileLock(f"{directory}.lock"):
        if not (directory / trino_server.STARTED).exists():
            owner = os.getppid() if os.environ.get("PYTEST_XDIST_WORKER") else os.getpid()
            started = trino_server.start_serving(directory, owner)
    return trino_server.endpoints(directory, started)


@pytest.fixture(autouse=True)
def _counted(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> Iterator[None]:
    """Each test here, once ended, counted among the run's tests that use Trino (every xdist worker collects
    them all): after the last, Trino and its moto_server stop instead of idling to the run's end."""
    yield
    if "trino_endpoints" in request.fixturenames:
        total = sum("trino_endpoints" in getattr(item, "fixturenames", ()) for item in request.session.items)
        trino_server.count_finished(_served(tmp_path_factory), total)


def _resolved(value, bucket_id: str):
    """A template value with the bucket's ``Ref`` replaced by its name and ``Fn::Join`` joined."""
    if isinstance(value, dict) and set(value) == {"Ref"}:
        assert value["Ref"] == bucket_id, value
        return BUCKET
    if isinstance(value, dict) and set(value) == {"Fn::Join"}:
        separator, parts = value["Fn::Join"]
        return separator.join(_resolved(part, bucket_id) for part in parts)
    if isinstance(value, dict):
        return {key: _resolved(item, bucket_id) for key, item in value.items()}
    if isinstance(value, list):
        return [_resolved(item, bucket_id) for item in value]
    return value


def _runs() -> dict[str, list[dict]]:
    sales = dataset(SALES, output=True)
    runs = {
        "writer": app_run("writer_job", at(0), inputs=[dataset("s3://lake/raw/orders")], outputs=[sales]),
        "writer_again": app_run("writer_job", at(60), inputs=[dataset("s3://lake/raw/orders")], outputs=[sales]),
        "reader_failed": app_run("reader_job", at(30), inputs=[dataset(SALES)], final="FAIL"),
        "reader": app_run("reader_job", at(120), inputs=[dataset(SALES)]),
        "writer_next_day": app_run("writer_job", at(17 * 60), outputs=[sales]),
        "dag": app_run("dag_a.task", at(200), inputs=[dataset(SALES)]),
        "dag_outside": app_run("dag_a.task", at(18 * 60), inputs=[dataset(SALES)]),  # after UNTIL
    }
    for name in ("dag", "dag_outside"):
        for event in runs[name]:
            event["producer"] = AIRFLOW
    # The output as the raw event may name it: s3a:// and a trailing slash (the SQL normalises both).
    runs["writer_again"][2]["outputs"][0].update(namespace="s3a://lake", name="sales/")
    return runs


PRETTY, LATE = ("reader", 0), ("writer_again", 3)  # archived over several lines; three hours late


def _sent_with(run: str) -> str | None:
    """The key a run's events came with: the writers' a spoke's, the readers' the gateway's own; the DAG's
    were archived before the archive recorded accounts."""
    return "spoke-key" if run.startswith("writer") else "hub-key" if run.startswith("reader") else None


@pytest.fixture(scope="session")
def archive(trino_endpoints: dict[str, str], request: pytest.FixtureRequest, tmp_path_factory) -> dict:
    """The stack's catalog and the archived events in moto_server, made once for the run (by the first
    xdist worker that asks; the others read what it made), and what the Python side expects."""
    made = _served(tmp_path_factory) / "archive.pickle"
    with FileLock(f"{made}.lock"):
        if not made.exists():
            made.write_bytes(pickle.dumps(_archive(trino_endpoints, request.getfixturevalue("synths")["dev"])))
    return pickle.loads(made.read_bytes())


def _archive(trino_endpoints: dict[str, str], synth) -> dict:
    aws = {"endpoint_url": trino_endpoints["moto"], "region_name": trino_server.REGION}
    key, secret = trino_server.CREDENTIALS
    aws |= {"aws_access_key_id": key, "aws_secret_access_key": secret}
    template = synth.template_json("gateway")
    bucket_id, _ = one(template, "AWS::S3::Bucket")
    _, database = one(template, "AWS::Glue::Database")
    glue = boto3.client("glue", **aws)
    database_input = _resolved(database["Properties"]["DatabaseInput"], bucket_id)
    glue.create_database(DatabaseInput=database_input)
    for table in by_type(template, "AWS::Glue::Table").values():
        glue.create_table(
            DatabaseName=database_input["Name"], TableInput=_resolved(table["Properties"]["TableInput"], bucket_id)
        )
    s3 = boto3.client("s3", **aws)
    s3.create_bucket(Bucket=BUCKET)
    checked, objects = [], {}
    for name, events in _runs().items():
        for index, event in enumerate(events):
            received = dt.datetime.fromisoformat(event["eventTime"]) + dt.timedelta(seconds=2)
            if (name, index) == LATE:
                received += dt.timedelta(hours=3)
            body = json.dumps(event, indent=2).encode()  # several lines: the ingest makes them one
            key = _sent_with(name)
            accepted = check_request(
                {"Authorization": f"Bearer {key}"} if key else None,
                body,
                api_keys=KEYS if key else None,
                max_bytes=1 << 20,
                clock=lambda at=received: at,
            )
            objects[accepted.archive_key] = body if (name, index) == PRETTY else accepted.raw
            if (name, index) != PRETTY:  # the events table cannot read it
                checked.append((accepted, received))
    objects[f"raw/date=2026-11-23/hour=09/refused/{'f' * 16}.json"] = b"[1, 2]"
    objects[f"raw/date=2026-11-23/hour=09/broken/{'e' * 16}.json"] = b"{not json"
    for object_key, body in objects.items():
        s3.put_object(Bucket=BUCKET, Key=object_key, Body=body)
    made = {"database": database_input["Name"], "checked": checked, "objects": objects}
    rows, listed = _recorded(trino_endpoints, made["database"], "events_per_producer_per_day")
    return made | {"per_producer": rows, "listed": listed}


def _recorded(endpoints: dict[str, str], database: str, name: str) -> tuple[list[list], list[str]]:
    """The rows of query ``name`` and the S3 prefixes Trino lists to answer it (moto_server's recorder:
    made here, before any test runs a query, so that no other query's calls are recorded and no prefix
    is in Trino's cache of listings yet)."""

    def recorder(action: str) -> bytes:
        url = f"{endpoints['moto']}/moto-api/recorder/{action}"
        method = "GET" if action.startswith("download") else "POST"
        with urllib.request.urlopen(
            urllib.request.Request(url, method=method, data=None if method == "GET" else b"")
        ) as reply:
            return reply.read()

    recorder("reset-recording")
    recorder("start-recording")
    try:
        rows = _query(endpoints, database, name)
    finally:
        recorder("stop-recording")
    calls = [json.loads(line) for line in recorder("download-recording").splitlines() if line.strip()]
    return rows, sorted(
        {
            query["prefix"][0]
            for call in calls
            if call.get("method") == "GET" and (query := parse_qs(urlparse(call.get("url", "")).query)).get("list-type")
        }
    )


def _query(endpoints: dict[str, str], database: str, name: str, **values: str) -> list[list]:
    """The rows of named query ``name`` over the window, as ``archive query`` renders it."""
    query = QUERIES[name]
    return trino_server.run_query(endpoints, render(query, {**window_values(query, SINCE, UNTIL), **values}), database)


def _json_object(line: bytes) -> bool:
    try:
        return isinstance(json.loads(line), dict)
    except ValueError:
        return False


def _in_window(archive: dict) -> list[dict]:
    return [a.checked.event for a, _ in archive["checked"] if SINCE <= a.checked.event_time <= UNTIL]


def test_runs_for_dataset_are_the_runs_that_read_or_wrote_it(trino_endpoints, archive) -> None:
    rows = _query(
        trino_endpoints, archive["database"], "runs_for_dataset", dataset_namespace="s3://lake", dataset_name="sales"
    )
    expected = set()
    for run_id, run in RunHistory.of(_in_window(archive)).runs.items():
        job = max(name for _, name in run.jobs)
        expected |= {(run_id, job, "read") for d in run.inputs if canonical_dataset(*d) == ("s3://lake", "sales")}
        expected |= {(run_id, job, "write") for d in run.outputs if canonical_dataset(*d) == ("s3://lake", "sales")}
    assert {(run_id, job, access) for run_id, _, job, access, *_ in rows} == expected
    assert len(rows) == len(expected) == 6  # the actions of 3 writers, 2 readers and 1 DAG; not the run after UNTIL
    assert all(SINCE <= first <= last <= UNTIL for *_, first, last, _ in rows)


def test_failed_runs_per_job(trino_endpoints, archive) -> None:
    rows = _query(trino_endpoints, archive["database"], "failed_runs_per_job", job="")
    failed = Counter(
        max(name for _, name in run.jobs)
        for run in RunHistory.of(_in_window(archive)).runs.values()
        if any(kind == "FAIL" for _, kind in run.moments)
    )
    assert (
        {(job, count) for _, job, count, _ in rows}
        == set(failed.items())
        == {("reader_job", 1), ("reader_job.write", 1)}
    )
    assert [
        row[1] for row in _query(trino_endpoints, archive["database"], "failed_runs_per_job", job="reader_job")
    ] == ["reader_job"]


def test_events_per_producer_per_day(archive) -> None:
    rows = archive["per_producer"]  # run while recording its S3 calls (_recorded)
    expected = Counter(
        (event_time.date(), producer)
        for event_time, producer in ((a.checked.event_time, a.checked.event["producer"]) for a, _ in archive["checked"])
        if SINCE <= event_time <= UNTIL
    )
    assert {(day, producer): count for day, producer, count in rows} == dict(expected)


def test_late_events_are_the_one_that_arrived_hours_after_its_time(trino_endpoints, archive) -> None:
    rows = _query(trino_endpoints, archive["database"], "late_events")
    [(late, received)] = [(a, r) for a, r in archive["checked"] if r - a.checked.event_time > dt.timedelta(hours=2)]
    arrival_hour = received.replace(minute=0, second=0, microsecond=0)
    [row] = rows
    assert row[0] == arrival_hour and row[1] == late.checked.event_time
    assert row[2] == int((arrival_hour - late.checked.event_time).total_seconds() // 60)
    assert row[5] == late.checked.event["run"]["runId"] and row[7].endswith(late.archive_key)


def test_unreadable_lines_are_the_lines_that_are_not_an_event(trino_endpoints, archive) -> None:
    rows = _query(trino_endpoints, archive["database"], "unreadable_lines")
    unreadable = {
        key: sum(not _json_object(line) for line in body.splitlines()) for key, body in archive["objects"].items()
    }
    expected = {key: count for key, count in unreadable.items() if count}
    assert {object_key.split(f"{BUCKET}/", 1)[1]: lines for _, object_key, lines in rows} == expected
    assert len(expected) == 3 and max(expected.values()) > 20  # the pretty-printed event, [1, 2], {not json


def test_a_query_lists_only_the_hours_its_window_can_hold(archive) -> None:
    """Projection prunes by date and hour: the archive is listed from an hour before --since (an event
    may arrive that much before its eventTime, as the archive reader allows) to the query's days after
    --until (events_per_producer_per_day: one), hour by hour, and nowhere else."""
    query = QUERIES["events_per_producer_per_day"]
    expected = archive_prefixes(SINCE - ARRIVAL_SLACK, UNTIL + dt.timedelta(days=query.days_after))
    assert archive["listed"] == sorted(expected)
    assert len(expected) == 44  # 2026-11-23 07:00 to 2026-11-25 02:00, not three days of 24 hours


def _accounts(archive: dict) -> Counter:
    """(UTC day of eventTime, source account or '') of the events in the window, as the Python side reads them."""
    return Counter(
        (a.checked.event_time.date(), source_account(a.archive_key) or "")
        for a, _ in archive["checked"]
        if SINCE <= a.checked.event_time <= UNTIL
    )


def test_events_per_source_account_per_day(trino_endpoints, archive) -> None:
    rows = _query(trino_endpoints, archive["database"], "events_per_source_account")
    assert {(day, account): count for day, account, count in rows} == dict(_accounts(archive))
    assert {account for _, account, _ in rows} == {HUB, SPOKE, ""}  # "": archived before accounts were recorded


def test_a_source_account_keeps_that_accounts_events_in_every_query(trino_endpoints, archive) -> None:
    database = archive["database"]
    for account in (HUB, SPOKE):
        rows = _query(trino_endpoints, database, "events_per_source_account", source_account=account)
        expected = {key: n for key, n in _accounts(archive).items() if key[1] == account}
        assert {(day, found): count for day, found, count in rows} == expected
    # The readers' key is the gateway's own: its failure is the hub's, none is the spoke's.
    assert [row[1] for row in _query(trino_endpoints, database, "failed_runs_per_job", job="", source_account=HUB)] == [
        "reader_job",
        "reader_job.write",
    ]
    assert _query(trino_endpoints, database, "failed_runs_per_job", job="", source_account=SPOKE) == []
    sales = {"dataset_namespace": "s3://lake", "dataset_name": "sales"}
    spoke_runs = _query(trino_endpoints, database, "runs_for_dataset", source_account=SPOKE, **sales)
    assert {access for *_, access, _, _, _ in spoke_runs} == {"write"}  # the writers'


def test_the_view_selects_and_filters_each_events_source_account(trino_endpoints, archive) -> None:
    partitions = "dt BETWEEN '2026-11-23' AND '2026-11-25'"
    rows = trino_server.run_query(
        trino_endpoints,
        f"SELECT run.runid, eventtime, eventtype, source_account FROM {ACCOUNTS_VIEW} "
        f"WHERE {partitions} AND run.runid IS NOT NULL",  # not the lines that are no event
        archive["database"],
    )
    expected = {
        (a.checked.event["run"]["runId"], a.checked.event["eventTime"], a.checked.event["eventType"])
        + (source_account(a.archive_key),)
        for a, _ in archive["checked"]
    }
    assert {tuple(row) for row in rows} == expected and len(rows) == len(expected)
    (count,) = trino_server.run_query(
        trino_endpoints,
        f"SELECT count(*) FROM {ACCOUNTS_VIEW} WHERE {partitions} AND source_account = '{SPOKE}'",
        archive["database"],
    )
    assert count == [sum(source_account(a.archive_key) == SPOKE for a, _ in archive["checked"])]
