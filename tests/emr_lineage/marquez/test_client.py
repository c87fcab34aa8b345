"""The Marquez client against a real local HTTP server in front of the Marquez 0.51.1 stand-in
(tests/emr_lineage/fake_marquez.py), and servers that are not Marquez or misbehave."""

from __future__ import annotations

import datetime as dt
import json
import time
from pathlib import Path
from urllib.parse import parse_qs, urlsplit

import pytest
from click.testing import CliRunner

from emr_lineage.cli.app import main
from emr_lineage.lineage.events.from_marquez import read_marquez_events, runs_under, stored_events
from emr_lineage.lineage.schemas.checks import check_event
from emr_lineage.lineage.times import parse_time
from emr_lineage.marquez.api import API_ROOT, EVENTS_ENDPOINT, LINEAGE_ENDPOINT
from emr_lineage.marquez.client import MarquezClient, MarquezError, NotDelivered, NotMarquezError
from emr_lineage.spark.conf import ParentContext, listener_properties
from tests.emr_lineage.analysis.builders import app_run, at, dataset
from tests.emr_lineage.e2e_support import launched
from tests.emr_lineage.fake_marquez import Answer, FakeMarquez
from tests.helpers import one_error_line


def _events() -> list[dict]:
    """Two applications, two minutes apart: eight events."""
    return app_run("load", at(0), outputs=[dataset("s3://lake/orders", {"id": "string"}, output=True)]) + app_run(
        "report", at(2), inputs=[dataset("s3://lake/orders")], outputs=[dataset("s3://lake/report", output=True)]
    )


def _same_moments(events: list[dict]) -> list[dict]:
    """``events`` with each eventTime as the moment it names (Marquez writes ``Z`` where a producer wrote +00:00)."""
    return [{**e, "eventTime": parse_time(e["eventTime"])} for e in events]


def _no_nulls(value):
    """``value`` without its null-valued object keys, at any depth."""
    if isinstance(value, dict):
        return {k: _no_nulls(v) for k, v in value.items() if v is not None}
    return [_no_nulls(v) for v in value] if isinstance(value, list) else value


def _reads(marquez: FakeMarquez) -> list[dict[str, str]]:
    """The query of each read of the raw events."""
    return [
        {k: v[0] for k, v in parse_qs(urlsplit(r.split(" ", 1)[1]).query).items()}
        for r in marquez.requests
        if r.startswith(f"GET {EVENTS_ENDPOINT}")
    ]


# --- the raw events -------------------------------------------------------------------------------


def test_raw_events_read_back_as_the_producer_sent_them_oldest_first_in_pages(marquez: FakeMarquez) -> None:
    events = _events()
    marquez.store(list(reversed(events)))
    with MarquezClient(marquez.url, events_page_size=3) as client:
        read = list(stored_events(client))
    assert _same_moments(read) == _same_moments(events)  # oldest first, every key the producer sent, no other
    reads = _reads(marquez)
    # each page starts at the time of the last event read: not an offset, which events arriving meanwhile
    # or Marquez's order of one instant's events would move
    times = sorted(parse_time(e["eventTime"]) for e in events)
    assert [parse_time(q["after"]) for q in reads] == [dt.datetime(1970, 1, 1, tzinfo=dt.UTC), *times[2:7:2]]
    assert all((q["limit"], q["offset"], q["sortDirection"]) == ("3", "0", "asc") for q in reads)
    # both ends are always sent: Marquez's own defaults are 1970 and 2030, and its before is exclusive
    assert all(q["before"].startswith("9999-12-31T00:00:00") for q in reads)


def test_events_of_one_instant_across_pages_are_each_read_once_whatever_order_marquez_gives(
    marquez: FakeMarquez,
) -> None:
    base = _events()[0]
    events = [{**base, "run": {**base["run"], "runId": f"0199f000-0000-7000-8000-00000000000{n}"}} for n in range(7)]
    marquez.store(events)  # seven events of one instant, read three at a time
    reads = iter(range(100))
    answer = marquez.routes.get(f"GET {EVENTS_ENDPOINT}")

    def shuffled(state: FakeMarquez, request) -> Answer:  # Marquez orders one instant's events anew each read
        body = state.model.handle(request.method, request.raw_path, request.query, request.body, request.headers).body
        if next(reads) % 2:
            body["events"].reverse()
        return Answer(200, body)

    assert answer is None
    marquez.routes[f"GET {EVENTS_ENDPOINT}"] = shuffled
    with MarquezClient(marquez.url, events_page_size=3) as client:
        read = list(stored_events(client))
    assert sorted(e["run"]["runId"] for e in read) == sorted(e["run"]["runId"] for e in events)


def test_the_nulls_marquez_adds_are_dropped(marquez: FakeMarquez) -> None:
    [event] = _events()[:1]
    marquez.store([event])
    raw = MarquezClient(marquez.url).get("events/lineage")["events"][0]
    assert raw["run"]["facets"]["nominalTime"] is None  # Marquez's, for a facet it models that the event lacks
    [read] = stored_events(MarquezClient(marquez.url))
    assert read == _no_nulls(raw) and "nominalTime" not in read["run"]["facets"]
    assert _same_moments([read]) == _same_moments([event])


def test_both_ends_of_the_window_are_inclusive(marquez: FakeMarquez) -> None:
    events = _events()  # load at 0 min (4 events, the last at 1 min), report from 2 min on
    marquez.store(events)
    with MarquezClient(marquez.url) as client:
        at_one = list(stored_events(client, since=at(1), until=at(1)))
        from_two = list(stored_events(client, since=at(2)))
        until_start = list(stored_events(client, until=at(0)))
    assert [(e["job"]["name"], e["eventType"]) for e in at_one] == [("load", "COMPLETE")]
    assert [parse_time(e["eventTime"]) for e in from_two] == [parse_time(e["eventTime"]) for e in events[4:]]
    assert [(e["job"]["name"], e["eventType"]) for e in until_start] == [("load", "START")]
    # Marquez reads before as exclusive: one microsecond past until (the precision it stores times at)
    assert _reads(marquez)[0]["before"] == "2026-11-23T09:01:00.000001+00:00"


def test_an_event_after_marquez_s_default_end_of_2030_is_read(marquez: FakeMarquez) -> None:
    late = app_run("later", dt.datetime(2031, 6, 1, tzinfo=dt.UTC))
    marquez.store(_events() + late)
    read = list(stored_events(MarquezClient(marquez.url)))
    assert [e["job"]["name"] for e in read[-4:]] == ["later", "later.write", "later.write", "later"]
    assert len(read) == 12


def test_namespaces_are_the_whole_list_paged(marquez: FakeMarquez) -> None:
    marquez.store(_events())
    with MarquezClient(marquez.url, page_size=2) as client:
        names = [n["name"] for n in client.namespaces()]
    assert sorted(names) == ["default", "emr-lineage-dev", "s3://lake"]
    assert [r.split("?")[1] for r in marquez.requests] == ["limit=2&offset=0", "limit=2&offset=2"]


# --- the runs one orchestrator run launched --------------------------------------------------------

PARENT = ParentContext(
    parent_job_namespace="emr-lineage-dev",
    parent_job_name="nightly",
    parent_run_id="0199f2e2-0000-7000-8000-000000000001",
)
EARLIER = ParentContext(
    parent_job_namespace="emr-lineage-dev",
    parent_job_name="nightly",
    parent_run_id="0199f2e2-0000-7000-8000-000000000002",
)
OTHER = ParentContext(
    parent_job_namespace="emr-lineage-dev",
    parent_job_name="hourly",
    parent_run_id="0199f2e2-0000-7000-8000-000000000003",
)


def test_runs_under_a_parent_job_or_run_keep_its_applications_and_their_actions() -> None:
    this = launched(app_run("load", at(0)), PARENT, start=at(60))
    earlier = launched(app_run("load", at(0)), EARLIER, start=at(0))
    other = launched(app_run("report", at(0)), OTHER, start=at(60))
    alone = app_run("adhoc", at(60))
    events = this + earlier + other + alone
    assert runs_under(events) == events
    assert runs_under(events, run_id=PARENT.parent_run_id) == this  # the application and its action
    assert runs_under(events, job_name="nightly") == this + earlier
    assert runs_under(events, job_name="hourly") == other
    assert runs_under(events, job_name="weekly") == []
    # an action whose parent facet names only its application, no root: still under the parent run
    for event in this:
        if event["job"]["name"] == "load.write":
            del event["run"]["facets"]["parent"]["root"]
    assert runs_under(events, run_id=PARENT.parent_run_id) == this


# --- errors ---------------------------------------------------------------------------------------


def test_4xx_is_a_clear_error(marquez: FakeMarquez) -> None:
    with pytest.raises(MarquezError) as info:
        MarquezClient(marquez.url).get("namespaces/no_such_namespace")
    assert info.value.status == 404 and not isinstance(info.value, NotMarquezError)
    assert "HTTP 404 (client error): Namespace 'no_such_namespace' not found" in str(info.value)


def test_5xx_is_retried_then_succeeds(marquez: FakeMarquez) -> None:
    marquez.fail_next.extend([503, 502])
    assert [n["name"] for n in MarquezClient(marquez.url, retries=3, backoff=0.01).namespaces()] == ["default"]
    assert len(marquez.requests) == 3


def test_persistent_5xx_is_reported_with_marquez_message(marquez: FakeMarquez) -> None:
    marquez.fail_next.extend([500] * 5)
    with pytest.raises(MarquezError) as info:
        list(stored_events(MarquezClient(marquez.url, retries=2, backoff=0.01)))
    assert info.value.status == 500
    assert "HTTP 500 (server error): injected failure 500" in str(info.value)
    assert len(marquez.requests) == 3


def test_unreachable_marquez(closed_port_url: str) -> None:
    with pytest.raises(MarquezError, match=f"Marquez at {closed_port_url}/ is unreachable"):
        list(stored_events(MarquezClient(closed_port_url, retries=1, backoff=0.01)))


def test_timeout(marquez: FakeMarquez) -> None:
    marquez.delay_seconds = 1.0
    with pytest.raises(MarquezError, match=r"timed out after 0.2s"):
        MarquezClient(marquez.url, timeout=0.2, retries=0).namespaces()


def test_reply_that_is_not_json(marquez: FakeMarquez) -> None:
    marquez.routes[f"GET {EVENTS_ENDPOINT}"] = lambda state, request: Answer(200, b"<html>oops</html>")
    with pytest.raises(MarquezError, match="reply is not JSON") as info:
        list(stored_events(MarquezClient(marquez.url)))
    assert not isinstance(info.value, NotMarquezError)  # the namespaces answer as Marquez's do


def test_bad_base_url() -> None:
    with pytest.raises(MarquezError, match=r"not an http\(s\) URL"):
        MarquezClient("localhost:5000")


def test_replay_posts_are_retried_after_a_503(marquez: FakeMarquez, gen) -> None:
    events = gen.pipeline("s3://lake")[:3]
    client = MarquezClient(marquez.url, retries=2, backoff=0.01)
    marquez.fail_next.append(503)
    assert [client.post_lineage_body(json.dumps(e).encode()) for e in events] == [201, 201, 201]
    assert marquez.posted == events
    assert all(check_event(e, strict=True) is None for e in marquez.posted)
    assert marquez.requests.count("POST /api/v1/lineage") == 4  # one retry after the 503


def test_rejected_replay_is_a_clear_error(marquez: FakeMarquez, closed_port_url: str) -> None:
    with pytest.raises(MarquezError) as info:
        MarquezClient(marquez.url).post_lineage_body(b'{"eventType": "START"}')
    assert info.value.status == 422 and "job must not be null" in str(info.value)
    with pytest.raises(MarquezError, match="unreachable"):
        MarquezClient(closed_port_url, retries=0).post_lineage_body(
            b'{"eventType": "START", "job": {"namespace": "n", "name": "j"}}'
        )


def test_a_redirected_post_is_not_delivered_nor_sent_on(marquez: FakeMarquez) -> None:
    """A POST that meets a 302 would be resent as a GET, whose 200 would read as delivered."""
    moved = f"{marquez.url}/elsewhere{LINEAGE_ENDPOINT}"
    marquez.routes[f"POST {LINEAGE_ENDPOINT}"] = lambda state, request: Answer(302, b"", headers={"Location": moved})
    [event] = _events()[:1]
    with pytest.raises(NotDelivered) as info:
        MarquezClient(marquez.url, retries=2, backoff=0.01).post_lineage_body(json.dumps(event).encode())
    assert info.value.status == 302 and info.value.exit_code == 1
    assert f"POST {marquez.url}{LINEAGE_ENDPOINT} -> HTTP 302 (redirect to {moved})" in str(info.value)
    assert marquez.requests == [f"POST {LINEAGE_ENDPOINT}"]  # neither followed nor retried
    assert marquez.posted == [] and list(stored_events(MarquezClient(marquez.url))) == []


# --- a server that is not Marquez ---------------------------------------------------------------

CONTRACT = (
    "version: 1\nlevel: action\nnamespace: food_delivery\njobs:\n"
    "  - name: example.etl_delivery_7_days\n    outputs: ['table:public.delivery_7_days']\n"
)
NGINX = Answer(200, b"<html><body>Welcome to nginx!</body></html>")


def not_marquez(marquez: FakeMarquez, kind: str) -> None:
    """Make the server something else: 404 everywhere, or an HTML site answering 200."""
    if kind == "html-200":
        marquez.not_marquez(NGINX)
    else:
        marquez.not_marquez()


@pytest.mark.parametrize("kind", ["404-everywhere", "html-200"])
def test_validate_against_a_server_that_is_not_marquez_is_exit_2(marquez, tmp_path: Path, kind: str) -> None:
    not_marquez(marquez, kind)
    contract = tmp_path / "c.yaml"
    contract.write_text(CONTRACT)
    result = CliRunner().invoke(main, ["validate", "--marquez", marquez.url, "--contract", str(contract)])
    line = one_error_line(result, stdout_empty=True)
    assert line.startswith(f"error: not a Marquez API at {marquez.url}/ (GET {marquez.url}/api/v1/namespaces ")
    # the probe came first: no read of events was taken for "no events"
    assert [r.split("?")[0] for r in marquez.requests] == ["GET /api/v1/namespaces"]


@pytest.mark.parametrize("kind", ["404-everywhere", "html-200"])
def test_graph_from_a_server_that_is_not_marquez_is_exit_2(marquez, kind: str) -> None:
    not_marquez(marquez, kind)
    result = CliRunner().invoke(main, ["graph", "--marquez", marquez.url, "--node", "job:a:b"])
    assert one_error_line(result, stdout_empty=True).startswith(f"error: not a Marquez API at {marquez.url}/")


def test_reading_events_refuses_a_server_that_is_not_marquez(marquez: FakeMarquez) -> None:
    marquez.not_marquez()
    with pytest.raises(NotMarquezError, match="not a Marquez API at .* -> HTTP 404") as info:
        read_marquez_events(MarquezClient(marquez.url))
    assert info.value.exit_code == 2 and info.value.status is None


def test_a_missing_events_page_of_a_real_marquez_is_an_http_error_not_a_verdict(marquez: FakeMarquez) -> None:
    marquez.routes[f"GET {EVENTS_ENDPOINT}"] = lambda state, request: Answer(404, {"code": 404, "message": "gone"})
    with pytest.raises(MarquezError, match=r"HTTP 404 \(client error\): gone") as info:
        read_marquez_events(MarquezClient(marquez.url))
    assert not isinstance(info.value, NotMarquezError)
    # one probe per client, before the read and not again after its 404
    assert [r.split("?")[0] for r in marquez.requests] == [f"GET {API_ROOT}/namespaces", f"GET {EVENTS_ENDPOINT}"]


def test_a_probe_answer_of_another_shape_is_not_marquez(marquez: FakeMarquez) -> None:
    marquez.routes[f"GET {API_ROOT}/namespaces"] = lambda state, request: Answer(200, {"items": []})
    with pytest.raises(NotMarquezError, match="answered JSON without a 'namespaces' list"):
        MarquezClient(marquez.url).probe()


def test_a_probe_that_cannot_be_made_is_not_a_verdict(marquez: FakeMarquez, closed_port_url: str) -> None:
    marquez.fail_next.extend([500] * 10)
    with pytest.raises(MarquezError, match=r"HTTP 500 \(server error\)") as info:
        MarquezClient(marquez.url, retries=1, backoff=0.01).probe()
    assert not isinstance(info.value, NotMarquezError)
    with pytest.raises(MarquezError, match="is unreachable") as info:
        MarquezClient(closed_port_url, retries=0).probe()
    assert not isinstance(info.value, NotMarquezError)


# --- deadline and size cap ----------------------------------------------------------------------


def test_a_dripping_marquez_is_cut_at_the_timeout(marquez: FakeMarquez) -> None:
    reply = {"totalCount": 1, "events": _events()[:1]}
    marquez.routes[f"GET {EVENTS_ENDPOINT}"] = lambda state, request: Answer(200, reply, drip=0.08)
    started = time.monotonic()
    result = CliRunner().invoke(main, ["graph", "--marquez", marquez.url, "--timeout", "0.4"])
    elapsed = time.monotonic() - started
    assert one_error_line(result, stdout_empty=True).startswith(
        f"error: Marquez at {marquez.url}/ timed out after 0.4s (GET "
    )
    assert elapsed < 2.5  # the whole reply would take far longer at 0.08 s a byte


def test_a_reply_over_the_size_cap_is_refused(marquez: FakeMarquez) -> None:
    marquez.store(_events())
    with pytest.raises(
        MarquezError, match=r"/api/v1/events/lineage: reply too large \(\d+ bytes announced, the limit is 1000"
    ):
        list(stored_events(MarquezClient(marquez.url, max_bytes=1000)))


def test_the_api_prefix_comes_from_one_module() -> None:
    from emr_lineage.spark import conf

    assert conf.LINEAGE_ENDPOINT is LINEAGE_ENDPOINT == API_ROOT + "/lineage" == "/api/v1/lineage"
    assert EVENTS_ENDPOINT == API_ROOT + "/events/lineage"
    properties = listener_properties(conf.ListenerConfig(api_url="http://m:5000", namespace="n", timeout_ms=1000))
    assert properties["spark.openlineage.transport.endpoint"] == LINEAGE_ENDPOINT
    assert MarquezClient("http://m:5000" + API_ROOT + "/").base_url == "http://m:5000/"
