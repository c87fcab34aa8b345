"""Marquez's raw events read back as event files are (read_marquez_events), and the runs one parent launched."""

from __future__ import annotations

import datetime as dt

from emr_lineage.lineage.events.from_marquez import read_marquez_events, runs_under
from emr_lineage.marquez.client import MarquezClient
from tests.emr_lineage.fake_marquez import FakeMarquez
from tests.emr_lineage.lineage.rule_events import facet, run_event

APP, ACTION, OTHER, LAUNCH = (f"0199f000-0000-7000-8000-00000000000{n}" for n in range(1, 5))


def _parent(run_id: str, name: str, root: str | None = None) -> dict:
    value = facet("1-1-0/ParentRunFacet.json", run={"runId": run_id}, job={"namespace": "ns", "name": name})
    if root:
        value["root"] = {"run": {"runId": root}, "job": {"namespace": "ns", "name": "launcher"}}
    return value


def test_events_marquez_holds_that_break_the_rule_are_skipped_and_counted(marquez: FakeMarquez) -> None:
    good = run_event(run_id=APP)
    # Marquez takes a job namespace with a space (it stores it rewritten); the rule does not.
    bad = run_event("ns with space", run_id=OTHER, eventTime="2026-11-21T12:00:01Z")
    marquez.store([good, bad])
    with MarquezClient(marquez.url) as client:
        read = read_marquez_events(client)
    assert [e["run"]["runId"] for e in read.events] == [APP]
    assert (
        read.skipped == 1 and "job.namespace" in read.skipped_details[0] and "run " + OTHER in read.skipped_details[0]
    )
    assert read.notes() == [
        f"skipped 1 event(s) Marquez holds that fail the event checks (first: {read.skipped_details[0]})"
    ]


def test_the_window_includes_both_ends_and_reaches_past_2030(marquez: FakeMarquez) -> None:
    times = ["2026-11-21T12:00:00Z", "2026-11-21T12:00:05Z", "2031-01-01T00:00:00Z"]
    marquez.store([run_event(run_id=run, eventTime=t) for run, t in zip((APP, ACTION, OTHER), times, strict=True)])
    at = dt.datetime(2026, 11, 21, 12, 0, 5, tzinfo=dt.UTC)
    with MarquezClient(marquez.url) as client:
        until = read_marquez_events(client, until=at).events
        since = read_marquez_events(client, since=at).events
    assert [e["eventTime"] for e in until] == times[:2]
    assert [e["eventTime"] for e in since] == times[1:]


def test_runs_under_a_parent_are_its_applications_and_their_actions() -> None:
    events = [
        run_event(name="app", run_id=APP, run={"runId": APP, "facets": {"parent": _parent(LAUNCH, "launcher")}}),
        run_event(name="app.action", run_id=ACTION, run={"runId": ACTION, "facets": {"parent": _parent(APP, "app")}}),
        run_event(name="other", run_id=OTHER),
    ]
    assert [e["job"]["name"] for e in runs_under(events, run_id=LAUNCH)] == ["app", "app.action"]
    assert [e["job"]["name"] for e in runs_under(events, job_name="launcher")] == ["app", "app.action"]
    assert runs_under(events) == events
    assert runs_under(events, job_name="nobody") == []


def test_a_run_is_under_its_parent_whichever_of_its_events_carries_the_facet() -> None:
    start = run_event(name="app", run_id=APP, run={"runId": APP, "facets": {"parent": _parent(LAUNCH, "launcher")}})
    complete = run_event(name="app", run_id=APP, eventType="COMPLETE")  # the listener may leave it out here
    for events in ([start, complete], [complete, start]):
        assert runs_under(events, run_id=LAUNCH) == events


def test_a_window_to_the_last_moment_there_is_reads_without_overflowing(marquez: FakeMarquez) -> None:
    marquez.store([run_event(run_id=APP)])
    with MarquezClient(marquez.url) as client:
        read = read_marquez_events(client, until=dt.datetime.max.replace(tzinfo=dt.UTC))
    assert [e["run"]["runId"] for e in read.events] == [APP]
