"""emr_lineage.http against the suite's local fake server (tests/emr_lineage/fake_marquez.py).

A dripping server sends one byte every 0.08 s; the request's 0.4 s deadline must end it, whatever
part of the answer drips. The clock used for elapsed times only measures, nothing here sleeps.
"""

from __future__ import annotations

import time

import pytest

from emr_lineage.http import HttpClient, HttpError
from tests.emr_lineage.fake_marquez import Answer

DRIP = 0.08  # seconds per byte
DRIP_DEADLINE = 0.4  # of a request to a dripping server (the test waits for it)
DEADLINE = 1.0
# Generous bound for a 1 s deadline on a shared, busy machine; a drip alone takes 8 s or more.
BOUND = DEADLINE + 1.5


class StepClock:
    """A monotonic clock the test moves (the deadline's clock, injected)."""

    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


def route(marquez, method: str, path: str, answer: Answer) -> str:
    marquez.routes[f"{method} {path}"] = lambda state, request: answer
    return marquez.url + path


def elapsed_of(call) -> tuple[float, BaseException | object]:
    started = time.monotonic()
    try:
        outcome: BaseException | object = call()
    except HttpError as exc:
        outcome = exc
    return time.monotonic() - started, outcome


@pytest.mark.parametrize("drip_head", [False, True], ids=["body", "status-line-and-headers"])
def test_a_dripping_server_is_cut_at_the_deadline(marquez, drip_head: bool) -> None:
    url = route(marquez, "GET", "/drip", Answer(200, b"x" * 100, drip=DRIP, drip_head=drip_head))
    with HttpClient(timeout=DRIP_DEADLINE, retries=3, backoff=0.01) as http:
        elapsed, outcome = elapsed_of(lambda: http.get(url))
    assert isinstance(outcome, HttpError) and outcome.kind == "timeout"
    assert str(outcome) == f"http://127.0.0.1:{url.split(':')[2].split('/')[0]} timed out after 0.4s (GET {url})"
    assert DRIP_DEADLINE * 0.9 <= elapsed < BOUND
    assert len(marquez.requests) == 1  # no retry started past the deadline


def test_a_body_without_length_is_cut_at_the_deadline_too(marquez) -> None:
    url = route(marquez, "GET", "/drip", Answer(200, b"x" * 100, drip=DRIP, content_length=False))
    elapsed, outcome = elapsed_of(lambda: HttpClient(timeout=DRIP_DEADLINE).get(url))
    assert isinstance(outcome, HttpError) and "timed out after 0.4s" in str(outcome)
    assert elapsed < BOUND


def test_retries_stop_at_the_deadline_and_the_last_answer_is_reported(marquez) -> None:
    url = route(marquez, "GET", "/busy", Answer(503, {"message": "busy"}))
    # backoff 0.1: waits 0, 0.2, 0.4, 0.8... for ten retries, past the 0.6 s deadline from the third on
    http = HttpClient(timeout=0.6, retries=10, backoff=0.1)
    elapsed, reply = elapsed_of(lambda: http.get(url))
    assert reply.status == 503 and str(reply.error()).endswith("-> HTTP 503 (server error): busy")
    assert elapsed < BOUND
    assert 2 <= len(marquez.requests) < 11


def test_a_retry_after_past_the_deadline_is_not_waited_for(marquez) -> None:
    url = route(marquez, "GET", "/later", Answer(503, {"message": "later"}, headers={"Retry-After": "120"}))
    elapsed, reply = elapsed_of(lambda: HttpClient(timeout=DEADLINE, retries=3).get(url))
    assert reply.status == 503 and elapsed < BOUND
    assert len(marquez.requests) == 1


def test_no_retry_when_the_injected_clock_says_the_time_is_up(marquez) -> None:
    clock = StepClock()

    def answer(state, request) -> Answer:
        clock.now += 60  # the answer takes "a minute": past the 10 s deadline
        return Answer(503, {"message": "slow"})

    marquez.routes["GET /slow"] = answer
    with pytest.raises(HttpError, match="timed out after 10s"):
        HttpClient(timeout=10, retries=3, backoff=0.01, clock=clock).get(marquez.url + "/slow")
    assert len(marquez.requests) == 1
    marquez.requests.clear()
    marquez.routes["GET /slow"] = lambda state, request: Answer(503, {"message": "slow"})
    assert HttpClient(timeout=10, retries=3, backoff=0.01, clock=clock).get(marquez.url + "/slow").status == 503
    assert len(marquez.requests) == 4  # with time left, urllib3's Retry retries


def test_transient_errors_are_retried_by_urllib3(marquez) -> None:
    url = route(marquez, "GET", "/ok", Answer(200, {"ok": True}))
    marquez.fail_next.extend([503, 429])
    assert HttpClient(backoff=0.01).get(url).raise_for_status().json() == {"ok": True}
    assert len(marquez.requests) == 3


def test_post_is_retried_only_when_told(marquez) -> None:
    url = route(marquez, "POST", "/events", Answer(503, {"message": "down"}))
    assert HttpClient(retries=2, backoff=0.01).request("POST", url, data=b"{}").status == 503
    assert len(marquez.requests) == 1
    marquez.requests.clear()
    told = HttpClient(retries=2, backoff=0.01, retry_methods=("GET", "POST"))
    assert told.request("POST", url, data=b"{}").status == 503
    assert len(marquez.requests) == 3


def test_an_announced_reply_over_the_cap_is_refused_before_reading(marquez) -> None:
    url = route(marquez, "GET", "/big", Answer(200, b"x" * 4096))
    with pytest.raises(
        HttpError, match=r"GET .*/big: reply too large \(4096 bytes announced, the limit is 1024 bytes\)"
    ):
        HttpClient(max_bytes=1024).get(url)


def test_a_streamed_reply_over_the_cap_is_cut(marquez) -> None:
    url = route(marquez, "GET", "/big", Answer(200, b"x" * (3 << 20), content_length=False))
    with pytest.raises(HttpError) as info:
        HttpClient(max_bytes=1 << 20).get(url)
    assert info.value.kind == "too_large" and "the limit is 1048576 bytes" in str(info.value)


def test_a_reply_within_the_cap_goes_to_the_sink(marquez) -> None:
    url = route(marquez, "GET", "/file", Answer(200, b"0123456789" * 1000, content_type="application/octet-stream"))
    chunks: list[bytes] = []
    reply = HttpClient(max_bytes=10_000).get(url, sink=chunks.append)
    assert b"".join(chunks) == b"0123456789" * 1000 and reply.size == 10_000 and reply.body == b""


def test_an_error_answer_never_goes_to_the_sink(marquez) -> None:
    url = route(marquez, "GET", "/gone", Answer(404, {"message": "no such file"}))
    chunks: list[bytes] = []
    reply = HttpClient().get(url, sink=chunks.append)
    assert chunks == [] and reply.status == 404
    with pytest.raises(HttpError, match=r"-> HTTP 404 \(client error\): no such file$"):
        reply.raise_for_status()


def test_a_reply_that_is_not_json(marquez) -> None:
    url = route(marquez, "GET", "/page", Answer(200, b"<html>hello</html>"))
    with pytest.raises(HttpError, match=r"GET .*/page: reply is not JSON \(text/html\)") as info:
        HttpClient().get(url).raise_for_status().json()
    assert info.value.kind == "not_json"


def test_an_unreachable_server(closed_port_url: str) -> None:
    with pytest.raises(HttpError) as info:
        HttpClient(retries=1, backoff=0.01, service="The thing").get(closed_port_url + "/x")
    assert info.value.kind == "unreachable"
    assert str(info.value).startswith("The thing is unreachable: ")
    assert str(info.value).endswith(f"(GET {closed_port_url}/x)") and "\n" not in str(info.value)


def test_a_read_follows_a_redirect(marquez) -> None:
    target = route(marquez, "GET", "/new", Answer(200, {"ok": True}))
    url = route(marquez, "GET", "/old", Answer(302, b"", headers={"Location": target}))
    reply = HttpClient().get(url)
    assert reply.ok and reply.json() == {"ok": True}
    assert marquez.requests == ["GET /old", "GET /new"]


@pytest.mark.parametrize("status", [301, 302, 303, 307, 308])
def test_a_write_is_never_sent_on_where_a_redirect_points(marquez, status: int) -> None:
    """requests would resend a POST that meets a 301, 302 or 303 as a GET, and that GET's 200 would read as
    delivered: a write's redirect is its answer, not ok, and its error names where the server points."""
    target = route(marquez, "GET", "/new", Answer(200, {"ok": True}))
    route(marquez, "POST", "/new", Answer(201, {"ok": True}))
    url = route(marquez, "POST", "/old", Answer(status, b"", headers={"Location": target}))
    reply = HttpClient(retries=2, backoff=0.01, retry_methods=("GET", "POST")).request("POST", url, data=b"{}")
    assert reply.status == status and not reply.ok
    assert marquez.requests == ["POST /old"]  # neither followed nor retried
    with pytest.raises(HttpError) as info:
        reply.raise_for_status()
    assert str(info.value) == (
        f"POST {url} -> HTTP {status} (redirect to {target}): not sent on; give the URL it redirects to"
    )
    assert info.value.status == status


def test_only_a_2xx_is_ok(marquez) -> None:
    url = route(marquez, "POST", "/nowhere", Answer(304, b""))
    reply = HttpClient().request("POST", url, data=b"{}")
    assert not reply.ok and "(redirect to no Location given)" in str(reply.error())
    assert HttpClient().request("POST", route(marquez, "POST", "/made", Answer(201, {}))).ok
