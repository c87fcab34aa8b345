"""emr-lineage gateway replay: archived events back to Marquez, per run in order, idempotently."""

from __future__ import annotations

import datetime as dt
import functools
import json
import uuid

import boto3
import botocore.session
import pytest
from botocore.credentials import CredentialResolver
from botocore.exceptions import NoCredentialsError
from click.testing import CliRunner
from moto import mock_aws

from emr_lineage.aws.archive import ArchiveLocation
from emr_lineage.aws.clients import aws_message
from emr_lineage.cli import replay as replay_command
from emr_lineage.cli.app import main
from emr_lineage.gateway.ingest import Ingestor
from emr_lineage.gateway.local import LocalGateway, LocalGatewaySettings
from emr_lineage.gateway.replay import ReplayError, ReplayWindow, plan_replay
from emr_lineage.marquez.api import LINEAGE_ENDPOINT
from tests.emr_lineage.fake_marquez import Answer, FakeMarquez
from tests.helpers import fake_aws_credentials, one_error_line

REGION = "us-east-1"
BUCKET = "lineage-archive"
T0 = dt.datetime(2026, 11, 23, 9, 30, tzinfo=dt.UTC)
NOW = T0 + dt.timedelta(hours=3)  # the commands' "now": after both runs arrived


def _event(run_id: str, second: int, namespace: str = "s3a://lake") -> dict:
    return {
        "eventType": "START" if second == 0 else "COMPLETE",
        "eventTime": f"2026-11-23T09:30:{second:02d}Z",
        "run": {"runId": run_id},
        "job": {"namespace": "ns", "name": f"job-{run_id[:4]}"},
        "inputs": [{"namespace": namespace, "name": "raw/orders"}],
        "outputs": [],
        "producer": "https://example.com/p",
        "schemaURL": "https://openlineage.io/spec/2-0-2/OpenLineage.json#/$defs/RunEvent",
    }


@pytest.fixture
def archive(monkeypatch: pytest.MonkeyPatch):
    """Two runs archived by the gateway's own ingest: run A at 09:xx, run B at 11:xx; replay's "now" is
    NOW, so a window open to now lists a few hours, not every hour since T0 (more each day)."""
    fake_aws_credentials(monkeypatch, REGION)
    monkeypatch.setattr(replay_command, "plan_replay", functools.partial(plan_replay, now=lambda: NOW))
    with mock_aws():
        s3, sqs = boto3.client("s3"), boto3.client("sqs")
        s3.create_bucket(Bucket=BUCKET)
        queue = sqs.create_queue(QueueName="q.fifo", Attributes={"FifoQueue": "true"})["QueueUrl"]
        runs = {"a": str(uuid.uuid4()), "b": str(uuid.uuid4())}
        for name, received in (("a", T0), ("b", T0 + dt.timedelta(hours=2))):
            ingest = Ingestor(
                s3, sqs, bucket=BUCKET, queue_url=queue, api_keys=None, max_bytes=1 << 20, clock=lambda r=received: r
            )
            for second in (2, 0, 1):  # arrival order differs from event order: keys sort by event time
                assert ingest.handle({}, json.dumps(_event(runs[name], second)).encode())[0] == 201
        yield s3, runs


def _replay(marquez: FakeMarquez, *args: str):
    return CliRunner().invoke(
        main, ["gateway", "replay", "--archive", f"s3://{BUCKET}", "--marquez", marquez.url, *args]
    )


def test_every_run_is_replayed_in_its_order_normalised(archive, marquez: FakeMarquez) -> None:
    _, runs = archive
    result = _replay(marquez)
    assert result.exit_code == 0, result.output
    assert "replayed 6 event(s) of 2 run(s)" in result.stdout
    for run_id in runs.values():
        times = [e["eventTime"] for e in marquez.posted if e["run"]["runId"] == run_id]
        assert times == sorted(times) and len(times) == 3
    assert {e["inputs"][0]["namespace"] for e in marquez.posted} == {"s3://lake"}
    # Replaying again posts the same canonical events again (Marquez keys raw events by time and body).
    assert _replay(marquez).exit_code == 0 and marquez.posted[6:] == marquez.posted[:6]


def test_a_body_resent_in_a_later_hour_is_replayed_once_in_event_time_order(archive, marquez: FakeMarquez) -> None:
    s3, runs = archive
    run_a = runs["a"]
    sqs = boto3.client("sqs")
    queue = sqs.create_queue(QueueName="later.fifo", Attributes={"FifoQueue": "true"})["QueueUrl"]
    later = Ingestor(
        s3,
        sqs,
        bucket=BUCKET,
        queue_url=queue,
        api_keys=None,
        max_bytes=1 << 20,
        clock=lambda: T0 + dt.timedelta(hours=1),
    )
    for second in (1, 3):  # a client resends second 1 an hour later, then reports second 3
        assert later.handle({}, json.dumps(_event(run_a, second)).encode())[0] == 201
    result = _replay(marquez, "--run", run_a)
    assert result.exit_code == 0, result.output
    assert [e["eventTime"] for e in marquez.posted] == [f"2026-11-23T09:30:0{s}Z" for s in (0, 1, 2, 3)]
    dry = _replay(marquez, "--run", run_a, "--dry-run")
    assert "4 event(s) of 1 run(s) would be replayed" in dry.stdout and "1 copy" in dry.stdout


def _dry(marquez: FakeMarquez, *args: str) -> str:
    result = _replay(marquez, *args, "--dry-run")
    assert result.exit_code == 0, result.output
    return result.stdout


def test_a_window_and_a_run_select_what_is_replayed(archive, marquez: FakeMarquez) -> None:
    _, runs = archive
    assert _replay(marquez, "--arrived-since", "2026-11-23T11:00Z").exit_code == 0
    assert {e["run"]["runId"] for e in marquez.posted} == {runs["b"]}
    marquez.posted.clear()
    assert _replay(marquez, "--run", runs["a"]).exit_code == 0
    assert {e["run"]["runId"] for e in marquez.posted} == {runs["a"]} and len(marquez.posted) == 3
    marquez.posted.clear()
    window = ("--arrived-since", "2026-11-23T09:00Z", "--arrived-until", "2026-11-23T10:00Z")
    assert "3 event(s) of 1 run(s) would be replayed" in _dry(marquez, *window)
    assert marquez.posted == []


def test_since_and_until_are_event_time_and_arrival_has_its_own_options(archive, marquez: FakeMarquez) -> None:
    # Both runs' events happened at 09:30:00-02; run b's reached the gateway two hours later, at 11:30.
    _, runs = archive
    event_window = ("--since", "2026-11-23T09:00Z", "--until", "2026-11-23T10:00Z")
    assert "6 event(s) of 2 run(s)" in _dry(marquez, *event_window)  # the late arrivals too
    arrival_window = ("--arrived-since", "2026-11-23T09:00Z", "--arrived-until", "2026-11-23T10:00Z")
    assert "3 event(s) of 1 run(s)" in _dry(marquez, *arrival_window)
    empty = _replay(marquez, "--since", "2026-11-23T11:00Z", "--dry-run")  # arrived then, happened before
    _error_after_progress(empty, "nothing archived")
    assert "4 event(s) of 2 run(s)" in _dry(marquez, "--since", "2026-11-23T09:30:01Z")  # to the microsecond
    assert "2 event(s) of 2 run(s)" in _dry(marquez, "--until", "2026-11-23T09:30:00Z")  # --until alone: all hours
    assert "1 event(s) of 1 run(s)" in _dry(marquez, "--until", "2026-11-23T09:30:00Z", *arrival_window)  # both
    assert _replay(marquez, "--since", "2026-11-23T09:30:02Z", "--run", runs["b"]).exit_code == 0
    assert [e["eventTime"] for e in marquez.posted] == ["2026-11-23T09:30:02Z"]


def test_an_archive_under_a_prefix_and_the_deprecated_bucket(archive, marquez: FakeMarquez) -> None:
    s3, _ = archive
    for item in s3.list_objects_v2(Bucket=BUCKET, Prefix="raw/")["Contents"]:
        s3.copy_object(Bucket=BUCKET, Key=f"copy/{item['Key']}", CopySource={"Bucket": BUCKET, "Key": item["Key"]})
    result = CliRunner().invoke(
        main, ["gateway", "replay", "--archive", f"s3://{BUCKET}/copy", "--marquez", marquez.url, "--dry-run"]
    )
    assert (
        result.exit_code == 0 and f"6 event(s) of 2 run(s) would be replayed from s3://{BUCKET}/copy/" in result.stdout
    )
    old = CliRunner().invoke(main, ["gateway", "replay", "--bucket", BUCKET, "--marquez", marquez.url, "--dry-run"])
    assert old.exit_code == 0 and f"6 event(s) of 2 run(s) would be replayed from s3://{BUCKET}/" in old.stdout
    warnings = [line for line in old.stderr.splitlines() if line.startswith("warning: ")]
    assert warnings == [
        "warning: --bucket is deprecated and will be removed in the next release; use --archive s3://NAME"
    ]


def test_the_plan_filters_by_event_time_from_the_keys_alone() -> None:
    """Listing only: the event time is the start of each key's file name, no body is read."""
    keys = [
        "raw/date=2026-11-23/hour=09/run/20261123T092959999999Z-aaaa.json",
        "raw/date=2026-11-23/hour=09/run/20261123T093000000000Z-bbbb.json",
        "raw/date=2026-11-23/hour=10/run/20261123T100000000001Z-cccc.json",
    ]

    class ListingOnly:
        listed: list[str] = []

        def get_paginator(self, name: str):
            assert name == "list_objects_v2"
            return self

        def paginate(self, Bucket: str, Prefix: str):  # noqa: N803 (boto3's names)
            self.listed.append(Prefix)
            return [{"Contents": [{"Key": f"copy/{k}"} for k in keys if f"copy/{k}".startswith(Prefix)]}]

    s3 = ListingOnly()
    since, until = dt.datetime(2026, 11, 23, 9, 30, tzinfo=dt.UTC), dt.datetime(2026, 11, 23, 10, tzinfo=dt.UTC)
    plan = plan_replay(s3, ArchiveLocation(BUCKET, "copy/"), ReplayWindow(since=since, until=until))
    assert plan.runs == {"run": [f"copy/{keys[1]}"]}
    assert s3.listed == [f"copy/raw/date=2026-11-23/hour={h:02d}/" for h in (8, 9, 10, 11)]


def test_a_body_that_no_longer_passes_is_skipped_and_named(archive, marquez: FakeMarquez) -> None:
    s3, runs = archive
    key = f"raw/date=2026-11-23/hour=09/{runs['a']}/20261123T093059000000Z-broken.json"
    s3.put_object(Bucket=BUCKET, Key=key, Body=b"{not json")
    result = _replay(marquez)
    assert result.exit_code == 1
    assert f"skipped {key}: the body is not JSON" in result.stderr and len(marquez.posted) == 6


def test_bad_input_is_one_line(archive, marquez: FakeMarquez) -> None:
    one_error_line(_replay(marquez, "--arrived-until", "2026-11-23T10:00Z"), "--arrived-until needs --arrived-since")
    one_error_line(_replay(marquez, "--since", "yesterday"), "--since 'yesterday': expected an ISO 8601 time")
    result = CliRunner().invoke(
        main, ["gateway", "replay", "--archive", "s3://no-such-archive", "--marquez", marquez.url]
    )
    one_error_line(result, "cannot list s3://no-such-archive/raw/")
    one_error_line(_replay(marquez, "--archive", "b"), "--archive 'b': expected s3://bucket or s3://bucket/prefix")
    both = CliRunner().invoke(
        main, ["gateway", "replay", "--archive", "s3://a", "--bucket", "b", "--marquez", marquez.url]
    )
    one_error_line(both, "--bucket and --archive both given")


def test_a_window_that_ends_before_it_starts_is_one_line(archive, marquez: FakeMarquez) -> None:
    result = _replay(marquez, "--since", "2026-11-23T11:00Z", "--until", "2026-11-23T09:00Z")
    one_error_line(result, "--since 2026-11-23T11:00:00+00:00 is after --until 2026-11-23T09:00:00+00:00")
    one_error_line(_replay(marquez, "--since", "2999-01-01T00:00Z", "--dry-run"), "the default --until")
    arrival = ("--arrived-since", "2026-11-23T11:00Z", "--arrived-until", "2026-11-23T09:00Z")
    one_error_line(_replay(marquez, *arrival), "--arrived-since 2026-11-23T11:00:00+00:00 is after --arrived-until")
    assert marquez.posted == []


def _error_after_progress(result, fragment: str) -> str:
    """Exit 2 and one ``error:`` line, after the progress lines of the listing that found nothing."""
    assert result.exit_code == 2, result.output
    *progress, error = result.stderr.splitlines()
    assert error.startswith("error: ") and fragment in error, error
    assert all(line.startswith("[00:") and "hours listed" in line for line in progress), result.stderr
    return error


def test_a_run_the_archive_does_not_hold_in_the_window_is_one_line(archive, marquez: FakeMarquez) -> None:
    _, runs = archive
    unknown = str(uuid.uuid4())
    _error_after_progress(_replay(marquez, "--run", unknown), f"--run {unknown!r}: nothing archived for this run")
    window = ("--arrived-since", "2026-11-23T11:00Z", "--arrived-until", "2026-11-23T12:00Z")
    line = _error_after_progress(_replay(marquez, "--run", runs["a"], *window, "--dry-run"), "nothing archived")
    assert "arrived from 2026-11-23T11:00Z to 2026-11-23T12:00Z" in line and marquez.posted == []
    line = _error_after_progress(_replay(marquez, "--run", runs["a"], "--since", "2026-11-23T11:00Z"), "nothing")
    assert "events from 2026-11-23T11:00Z to now" in line


def test_progress_of_the_hours_listed_and_the_events_posted_is_on_stderr(archive, marquez: FakeMarquez) -> None:
    result = _replay(marquez, "--arrived-since", "2026-11-23T09:00Z", "--arrived-until", "2026-11-23T11:00Z")
    assert result.exit_code == 0, result.output
    assert "hours listed: 3/3" in result.stderr and "events posted: 6/6" in result.stderr
    assert result.stderr.splitlines()[0].startswith("[00:0") and "posted" not in result.stdout.replace("replayed", "")


def test_a_redirect_is_not_delivered_and_stops_the_replay(archive, marquez: FakeMarquez) -> None:
    """A Marquez URL that answers 302: the event is not sent on (its POST would become a GET, whose 200 would
    read as delivered), nothing more is sent, exit 1, one line naming where it redirects."""
    moved = f"https://marquez.example{LINEAGE_ENDPOINT}"
    marquez.routes[f"POST {LINEAGE_ENDPOINT}"] = lambda state, request: Answer(302, b"", headers={"Location": moved})
    result = _replay(marquez)
    assert result.exit_code == 1, result.output
    assert marquez.requests.count(f"POST {LINEAGE_ENDPOINT}") == 1 and marquez.posted == []
    errors = [line for line in result.stderr.splitlines() if line.startswith("error: ")]
    assert errors == [
        f"error: POST {marquez.url}{LINEAGE_ENDPOINT} -> HTTP 302 (redirect to {moved}): not sent on; give the URL "
        "it redirects to; nothing more was sent (replaying again is harmless)"
    ]
    assert "replayed" not in result.stdout


@pytest.mark.parametrize("dry_run", [[], ["--dry-run"]])
def test_an_empty_window_is_exit_2_as_in_runs(archive, marquez: FakeMarquez, dry_run: list[str]) -> None:
    """Nothing archived in the window: exit 2 and one line naming the archive and the window, as runs (and
    impact, drift, audit) end when their window holds no events."""
    window = ("--since", "2026-11-24T00:00Z", "--until", "2026-11-25T00:00Z")
    line = _error_after_progress(_replay(marquez, *window, *dry_run), f"nothing archived in s3://{BUCKET}/")
    assert "events from 2026-11-24T00:00Z to 2026-11-25T00:00Z" in line and "--since" in line
    assert marquez.posted == []
    runs = CliRunner().invoke(main, ["runs", "--archive", f"s3://{BUCKET}", *window])
    assert runs.exit_code == 2 and "no events in the window" in runs.stderr


def test_replay_posts_to_marquez_itself_not_to_the_gateway(archive, marquez: FakeMarquez) -> None:
    """What --marquez's help says: the gateway's URL is refused (it is no Marquez API), so nothing is
    archived a second time; post is the command that sends through the gateway."""
    settings = LocalGatewaySettings(
        marquez_url=marquez.url, bucket=BUCKET, queue="replayed", api_key=None, max_event_bytes=1 << 20, retries=0
    )
    gateway = LocalGateway(settings, create=True).start()
    try:
        _error_after_progress(_replay(marquez, "--marquez", gateway.url), f"not a Marquez API at {gateway.url}")
    finally:
        gateway.stop(drain_seconds=0)
    assert marquez.posted == []
    help_text = " ".join(CliRunner().invoke(main, ["gateway", "replay", "--help"]).stdout.split())
    assert "Re-post to this Marquez itself (the lineage gateway's URL is refused)" in help_text


def test_no_credentials_is_one_line_saying_how_to_give_them() -> None:
    core = botocore.session.get_session()
    core.register_component("credential_provider", CredentialResolver(providers=[]))  # none found, whatever the machine
    s3 = boto3.session.Session(botocore_session=core, region_name=REGION).client("s3")
    with pytest.raises(ReplayError) as caught:
        plan_replay(s3, ArchiveLocation(BUCKET), ReplayWindow(), now=lambda: NOW)
    assert str(caught.value) == f"cannot list s3://{BUCKET}/raw/: {aws_message(NoCredentialsError())}"
    assert "AWS_PROFILE" in str(caught.value)  # the fix, as every command words missing credentials
