"""`emr-lineage gateway post`: local events to the suite's fake Marquez and to the local lineage gateway."""

from __future__ import annotations

import json
import uuid
from pathlib import Path

import pytest
from click.testing import CliRunner, Result

from emr_lineage.cli.app import main
from emr_lineage.gateway.local import LocalGateway
from emr_lineage.http import HttpClient
from emr_lineage.marquez.api import LINEAGE_ENDPOINT
from emr_lineage.pipeline.send import PendingEvent, PostError, in_run_order, lineage_url, post_events
from tests.emr_lineage.fake_marquez import Answer, FakeMarquez, bearer_only
from tests.emr_lineage.gateway.test_local import _settings, aws  # noqa: F401 - a fixture
from tests.helpers import one_error_line

PRODUCER = "https://github.com/OpenLineage/OpenLineage/tree/1.0.0/integration/spark"
SCHEMA_URL = "https://openlineage.io/spec/2-0-2/OpenLineage.json#/$defs/RunEvent"
ROUTE = f"POST {LINEAGE_ENDPOINT}"


def _event(run_id: str, event_type: str, second: int, job: str = "job_a") -> dict:
    return {
        "eventType": event_type,
        "eventTime": f"2026-11-23T10:00:{second:02d}.000Z",
        "run": {"runId": run_id},
        "job": {"namespace": "emr-lineage-test", "name": job},
        "inputs": [],
        "outputs": [],
        "producer": PRODUCER,
        "schemaURL": SCHEMA_URL,
    }


def _write(path: Path, events: list[dict]) -> Path:
    path.write_text("".join(json.dumps(e) + "\n" for e in events), encoding="utf-8")
    return path


def _post(*args: str, env: dict[str, str] | None = None) -> Result:
    return CliRunner().invoke(main, ["gateway", "post", *args], env={"EMR_LINEAGE_API_KEY": None, **(env or {})})


def _key(event: dict) -> tuple[str, str]:
    return event["run"]["runId"], event["eventType"]


@pytest.fixture
def two_runs(tmp_path: Path) -> list[dict]:
    first, second = str(uuid.uuid4()), str(uuid.uuid4())
    return [
        _event(first, "START", 1),
        _event(second, "START", 2, job="job_b"),
        _event(first, "COMPLETE", 3),
        _event(second, "COMPLETE", 4, job="job_b"),
    ]


def test_every_event_is_posted_in_order_with_progress_and_a_count(
    marquez: FakeMarquez, two_runs: list[dict], tmp_path: Path
) -> None:
    events = _write(tmp_path / "events.jsonl", two_runs)
    result = _post("--events", str(events), "--marquez", marquez.url)
    assert result.exit_code == 0, result.output
    assert result.stdout == f"posted 4 of 4 events to {marquez.url}\n"
    assert "events sent: 4/4" in result.stderr  # the progress line off a terminal
    assert [_key(e) for e in marquez.posted] == [_key(e) for e in two_runs]


def test_each_runs_events_go_in_event_time_order_whatever_the_file_order(
    marquez: FakeMarquez, two_runs: list[dict], tmp_path: Path
) -> None:
    # The COMPLETE events come first on the command line: each run's START must still go first.
    completes = _write(tmp_path / "completes.jsonl", [two_runs[2], two_runs[3]])
    starts = _write(tmp_path / "starts.jsonl", [two_runs[0], two_runs[1]])
    result = _post("--events", str(completes), "--events", str(starts), "--marquez", marquez.url + "/api/v1/")
    assert result.exit_code == 0, result.output
    assert [_key(e) for e in marquez.posted] == [_key(e) for e in two_runs]


def test_refused_events_are_listed_with_their_location_and_the_rest_is_posted(
    marquez: FakeMarquez, two_runs: list[dict], tmp_path: Path
) -> None:
    accept = marquez.routes[ROUTE]

    def refuse_job_b(state: FakeMarquez, request) -> Answer:
        if json.loads(request.body)["job"]["name"] == "job_b":
            return Answer(400, {"code": 400, "message": "job_b is not welcome"})
        return accept(state, request)

    marquez.routes[ROUTE] = refuse_job_b
    events = _write(tmp_path / "events.jsonl", two_runs)
    result = _post("--events", str(events), "--marquez", marquez.url)
    assert result.exit_code == 1
    assert [_key(e) for e in marquez.posted] == [_key(two_runs[0]), _key(two_runs[2])]
    refused = [line for line in result.stdout.splitlines() if line.startswith("refused: ")]
    run_b = two_runs[1]["run"]["runId"]
    assert refused == [
        f"refused: {events} event {n} ({kind} of job emr-lineage-test/job_b, run {run_b}): POST "
        f"{marquez.url}{LINEAGE_ENDPOINT} -> HTTP 400 (client error): job_b is not welcome"
        for n, kind in ((2, "START"), (4, "COMPLETE"))
    ]
    assert result.stdout.startswith(f"posted 2 of 4 events to {marquez.url}\n")
    assert result.stderr.splitlines()[-1] == f"error: 2 of 4 events refused by {marquez.url}"
    # The progress's refusal lines on stderr (a file here, not a terminal) are whole, not folded at 80 columns.
    assert [line.split(" ", 1)[1] for line in result.stderr.splitlines() if " refused: " in line] == refused


def test_a_wrong_key_is_refused_once_and_nothing_more_is_sent(
    marquez: FakeMarquez, two_runs: list[dict], tmp_path: Path
) -> None:
    marquez.routes[ROUTE] = bearer_only("right-key")
    events = _write(tmp_path / "events.jsonl", two_runs)
    result = _post("--events", str(events), "--marquez", marquez.url, env={"EMR_LINEAGE_API_KEY": "wrong-key"})
    assert result.exit_code == 1
    assert marquez.posted == [] and len(marquez.requests) == 1
    assert "HTTP 401 (client error): missing or wrong API key" in result.stdout
    assert "not sent: 3 events after the first refusal (each would get the same answer)" in result.stdout
    assert "check --api-key / EMR_LINEAGE_API_KEY" in result.stderr.splitlines()[-1]

    result = _post("--events", str(events), "--marquez", marquez.url, "--api-key", "right-key")
    assert result.exit_code == 0, result.output
    assert len(marquez.posted) == 4


def test_a_redirect_is_not_delivered_and_nothing_more_is_sent(
    marquez: FakeMarquez, two_runs: list[dict], tmp_path: Path
) -> None:
    """A server that answers 302 (an http:// URL behind a load balancer that redirects to https://): a POST
    sent on would become a GET, whose 200 would read as delivered. The first event is listed, exit 1."""
    moved = f"https://marquez.example{LINEAGE_ENDPOINT}"
    marquez.routes[ROUTE] = lambda state, request: Answer(302, b"", headers={"Location": moved})
    events = _write(tmp_path / "events.jsonl", two_runs)
    result = _post("--events", str(events), "--marquez", marquez.url)
    assert result.exit_code == 1, result.output
    assert marquez.requests == [ROUTE] and marquez.posted == []  # not followed, not retried, nothing more
    refused = [line for line in result.stdout.splitlines() if line.startswith("refused: ")]
    run = two_runs[0]["run"]["runId"]
    assert refused == [
        f"refused: {events} event 1 (START of job emr-lineage-test/job_a, run {run}): POST "
        f"{marquez.url}{LINEAGE_ENDPOINT} -> HTTP 302 (redirect to {moved}): not sent on; "
        "give the URL it redirects to"
    ]
    assert result.stdout.startswith(f"posted 0 of 4 events to {marquez.url}\n")
    assert "not sent: 3 events after the first refusal" in result.stdout
    assert result.stderr.splitlines()[-1] == (
        f"error: 1 of 4 events refused by {marquez.url} (it redirects: give --marquez the URL it redirects to)"
    )


def test_what_cannot_run_is_one_line_and_exit_2(
    marquez: FakeMarquez, closed_port_url: str, two_runs: list[dict], tmp_path: Path, retry_waits: list[float]
) -> None:
    events = str(_write(tmp_path / "events.jsonl", two_runs))
    one_error_line(_post("--events", str(tmp_path / "none.jsonl"), "--marquez", marquez.url), "no such file")
    one_error_line(_post("--events", "", "--marquez", marquez.url), "empty path")
    (tmp_path / "bad.jsonl").write_text('{"eventType": "START"}\n')
    one_error_line(_post("--events", str(tmp_path / "bad.jsonl"), "--marquez", marquez.url), "bad.jsonl:1")
    one_error_line(_post("--events", events, "--marquez", "localhost:5000"), "is not an http(s) URL with a host")
    line = one_error_line(_post("--events", events, "--marquez", closed_port_url, "--timeout", "2"), "unreachable")
    assert "at " + events + " event 1; 0 event(s) posted before it" in line
    assert retry_waits == [0, 1.0]  # the retries' backoff within the 2 s deadline (recorded, not slept)
    marquez.not_marquez()  # every path is a 404
    line = one_error_line(_post("--events", events, "--marquez", marquez.url), "HTTP 404")
    assert "a Marquez API or a lineage gateway?" in line
    assert marquez.posted == []


@pytest.mark.parametrize("url", ["http://[::1", "http://", "http://:5000", "localhost:5000", "http://h:5000/?x=1"])
def test_a_marquez_url_without_a_host_is_refused_before_the_events_are_read(
    url: str, marquez: FakeMarquez, tmp_path: Path
) -> None:
    # The events path does not exist: the URL is checked first, so the error is the URL's.
    result = _post("--events", str(tmp_path / "none.jsonl"), "--marquez", url)
    line = one_error_line(result, f"--marquez {url!r}", stdout_empty=True)
    assert "http" in line and "Error" not in line and "Invalid" not in line and "No host supplied" not in line
    assert marquez.requests == []


def test_a_pasted_lineage_endpoint_is_dropped_as_run_local_drops_it(
    marquez: FakeMarquez, two_runs: list[dict], tmp_path: Path
) -> None:
    # The listener's transport URL (…/api/v1/lineage) pasted as --marquez: the events still reach Marquez.
    events = _write(tmp_path / "events.jsonl", two_runs)
    result = _post("--events", str(events), "--marquez", marquez.url + LINEAGE_ENDPOINT + "/")
    assert result.exit_code == 0, result.output
    assert marquez.requests == [ROUTE] * 4 and len(marquez.posted) == 4
    assert lineage_url("http://h:5000/api/v1/lineage") == "http://h:5000/api/v1/lineage"


def test_no_events_is_a_usage_error_as_in_graph(marquez: FakeMarquez, tmp_path: Path) -> None:
    (tmp_path / "empty.jsonl").write_text("")
    line = one_error_line(_post("--events", str(tmp_path / "empty.jsonl"), "--marquez", marquez.url))
    assert line == f"error: {tmp_path / 'empty.jsonl'}: no events to post (give the file or directory that holds them)"
    assert marquez.requests == []


def test_an_unavailable_server_stops_the_sending_and_says_how_far_it_got(
    marquez: FakeMarquez, two_runs: list[dict]
) -> None:
    pending = [PendingEvent(f"events.jsonl event {n}", e) for n, e in enumerate(two_runs, start=1)]
    accept = marquez.routes[ROUTE]
    marquez.routes[ROUTE] = lambda state, request: (
        accept(state, request) if len(state.posted) < 2 else Answer(503, {"code": 503, "message": "down"})
    )
    client = HttpClient(retries=1, backoff=0, retry_methods=("POST",))  # one retry, no wait: no sleeping test
    with pytest.raises(PostError) as raised:
        post_events(pending, marquez.url, client=client)
    message = str(raised.value)
    assert "HTTP 503 (server error): down, still after the retries" in message
    assert "at events.jsonl event 3; 2 event(s) posted before it" in message
    assert len(marquez.requests) == 4  # two posted, the third tried twice, the fourth never


def test_run_order_keeps_the_slots_and_leaves_unreadable_times_alone() -> None:
    run, other, odd = str(uuid.uuid4()), str(uuid.uuid4()), str(uuid.uuid4())
    events = [
        _event(run, "COMPLETE", 5),
        _event(other, "START", 1),
        _event(run, "START", 2),
        {**_event(odd, "COMPLETE", 9), "eventTime": "late"},
        _event(odd, "START", 1),
    ]
    ordered = in_run_order([PendingEvent(str(n), e) for n, e in enumerate(events)])
    assert [p.location for p in ordered] == ["2", "1", "0", "3", "4"]
    assert lineage_url("http://h:5000/api/v1/") == lineage_url("http://h:5000") == "http://h:5000/api/v1/lineage"


def test_through_the_local_gateway_a_wrong_key_is_refused_and_the_right_one_posts_all(
    aws: str,  # noqa: F811 - the fixture
    marquez: FakeMarquez,
    two_runs: list[dict],
    tmp_path: Path,
) -> None:
    events = str(_write(tmp_path / "events.jsonl", two_runs))
    gateway = LocalGateway(_settings(marquez, "post"), create=True).start()
    try:
        wrong = _post("--events", events, "--marquez", gateway.url, env={"EMR_LINEAGE_API_KEY": "wrong"})
        assert wrong.exit_code == 1 and "HTTP 401" in wrong.stdout and "not sent: 3 events" in wrong.stdout
        right = _post("--events", events, "--marquez", gateway.url, env={"EMR_LINEAGE_API_KEY": "secret-key"})
        assert right.exit_code == 0, right.output
        assert right.stdout == f"posted 4 of 4 events to {gateway.url}\n"
    finally:
        assert gateway.stop(drain_seconds=60) == 0
    assert sorted(map(_key, marquez.posted)) == sorted(map(_key, two_runs))
    for run_id in {e["run"]["runId"] for e in two_runs}:  # the gateway keeps each run's order
        assert [e["eventType"] for e in marquez.posted if e["run"]["runId"] == run_id] == ["START", "COMPLETE"]
