"""Where events come from: files, Marquez's raw events (GET /api/v1/events/lineage) and the
gateway's archive on S3 (moto), each cut to a time window."""

from __future__ import annotations

import datetime as dt
import json

import pytest

from emr_lineage.analysis.sources import (
    AnalysisError,
    ArchiveLocation,
    parse_archive_uri,
    read_archive,
    read_files,
    read_marquez,
)
from emr_lineage.aws.archive import archive_key
from emr_lineage.lineage.door.event import canonical_json, dedup_id
from emr_lineage.lineage.times import TimeOptionError, Window, parse_instant
from emr_lineage.marquez.client import MarquezClient, MarquezError
from tests.emr_lineage.analysis.builders import app_run, at, dataset
from tests.emr_lineage.conftest import write_jsonl
from tests.emr_lineage.fake_marquez import FakeMarquez
from tests.helpers import moto_s3

BUCKET = "lineage-archive"


def _events() -> list[dict]:
    return app_run("a", at(0), outputs=[dataset("s3a://lake/x", output=True)]) + app_run(
        "b", at(120), inputs=[dataset("s3://lake/x")]
    )


def _times(events: list[dict]) -> list[str]:
    return [e["eventTime"] for e in events]


def test_instants_and_windows() -> None:
    assert parse_instant("2026-11-23", "--since") == dt.datetime(2026, 11, 23, tzinfo=dt.UTC)
    assert parse_instant("2026-11-23T10:00+02:00", "--since") == dt.datetime(2026, 11, 23, 8, tzinfo=dt.UTC)
    with pytest.raises(TimeOptionError, match="--since 'yesterday': expected an ISO 8601 time"):
        parse_instant("yesterday", "--since")
    with pytest.raises(TimeOptionError, match="is after --until"):
        Window(at(10), at(0))
    window = Window(at(100), None)
    assert [window.contains(e) for e in _events()] == [False] * 4 + [True] * 4
    assert not window.contains({"eventTime": "not a time"})


def test_files_in_a_window(tmp_path) -> None:
    path = write_jsonl(tmp_path / "events.jsonl", _events())
    assert len(read_files([str(path)], Window()).events) == 8
    assert {e["job"]["name"].split(".")[0] for e in read_files([str(path)], Window(None, at(10))).events} == {"a"}


def test_marquez_raw_events_oldest_first_paged(marquez: FakeMarquez) -> None:
    marquez.store(list(reversed(_events())))
    with MarquezClient(marquez.url, events_page_size=3) as client:
        everything = read_marquez(client, Window())
        assert [parse_instant(t, "t") for t in _times(everything.events)] == sorted(
            parse_instant(t, "t") for t in _times(_events())
        )
        late = read_marquez(client, Window(at(100), None))
    assert len(late.events) == 4 and everything.kind == "marquez" and everything.notes == []
    pages = [r for r in marquez.requests if r.startswith("GET /api/v1/events/lineage")]
    assert all("sortDirection=asc" in r and "offset=0" in r for r in pages) and len(pages) > 2
    assert any("after=2026-11-23T10%3A40%3A00%2B00%3A00" in r for r in pages)


def test_marquez_events_that_fail_the_event_checks_are_skipped_with_a_note(marquez: FakeMarquez) -> None:
    events = _events()
    events[0]["run"]["facets"] = {"custom": {"value": 1}}  # Marquez takes it; the event rule does not
    marquez.store(events)
    with MarquezClient(marquez.url) as client:
        source = read_marquez(client, Window())
    assert len(source.events) == 7
    [note] = source.notes
    assert note.startswith("skipped 1 event(s) Marquez holds that fail the event checks")


def test_a_server_that_is_not_marquez_is_not_read_as_one(marquez: FakeMarquez) -> None:
    marquez.not_marquez()
    with MarquezClient(marquez.url) as client, pytest.raises(MarquezError, match="not a Marquez API"):
        read_marquez(client, Window())


@pytest.fixture
def archive(monkeypatch: pytest.MonkeyPatch):
    """The events archived at their own time under the layout of gateway.ingest, some with the account
    whose key sent them and some from before accounts were recorded, the first one twice (resent an hour
    later, with another account's key), and one body that is not JSON."""
    with moto_s3(monkeypatch, "us-east-1", BUCKET) as s3:

        def put(
            root: str, event: dict, received: dt.datetime, body: bytes | None = None, account: str | None = None
        ) -> None:
            moment = dt.datetime.fromisoformat(event["eventTime"])
            key = archive_key(received, event["run"]["runId"], moment, dedup_id(canonical_json(event)), account)
            s3.put_object(Bucket=BUCKET, Key=root + key, Body=body or json.dumps(event).encode())

        events = _events()
        for root in ("", "copies/lineage/"):
            for index, event in enumerate(events):
                account = ("210987654321", "123456789012", None)[index % 3]
                put(root, event, dt.datetime.fromisoformat(event["eventTime"]), account=account)
        first = events[0]
        put("", first, at(65), account="345678901234")
        put("", {**first, "eventTime": at(1).isoformat()}, at(1), body=b"{not json")
        yield s3


def test_the_archive_is_read_once_normalised_and_in_a_window(archive) -> None:
    source = read_archive(archive, parse_archive_uri(f"s3://{BUCKET}"), Window())
    assert source.kind == "archive" and len(source.events) == 8
    assert {d["namespace"] for e in source.events for d in e.get("outputs", [])} == {"s3://lake"}
    assert source.notes[0].startswith("skipped 1 archived body") and "not JSON" in source.notes[1]
    late = read_archive(archive, ArchiveLocation(BUCKET), Window(at(100), at(200)), now=lambda: at(300))
    assert len(late.events) == 4
    copy = read_archive(archive, parse_archive_uri(f"s3://{BUCKET}/copies/lineage/raw/"), Window())
    assert len(copy.events) == 8 and copy.notes == []


def test_a_source_account_reads_what_its_key_sent_and_its_resent_copy(archive) -> None:
    """The first event is archived with a spoke's key, then again an hour later with another account's:
    that account's reading has it once, from its own copy."""
    hub = read_archive(archive, ArchiveLocation(BUCKET), Window(), account="123456789012")
    assert hub.label == f"s3://{BUCKET}/ (source account 123456789012)"
    resent = read_archive(archive, ArchiveLocation(BUCKET), Window(), account="345678901234")
    assert [e["eventTime"] for e in resent.events] == [_events()[0]["eventTime"]]
    spoke = read_archive(archive, ArchiveLocation(BUCKET), Window(), account="210987654321")
    everything = read_archive(archive, ArchiveLocation(BUCKET), Window())
    assert len(hub.events) + len(spoke.events) < len(everything.events)  # the others: no account in their keys
    assert all(e in everything.events for e in hub.events + spoke.events)


def test_a_missing_bucket_and_a_bad_uri(archive) -> None:
    with pytest.raises(AnalysisError, match="cannot list s3://no-such-bucket/raw/: NoSuchBucket"):
        read_archive(archive, ArchiveLocation("no-such-bucket"), Window())
    for uri in ("lake", "s3://", "s3:///raw"):
        with pytest.raises(AnalysisError, match="expected s3://bucket"):
            parse_archive_uri(uri)
    assert parse_archive_uri("s3://b/p/") == ArchiveLocation("b", "p/")
    assert parse_archive_uri("s3://b/raw") == ArchiveLocation("b", "")
