"""Local mode as a client meets it: bursts, chunked and stalled requests, hang-ups, oversize bodies,
Marquez refusing or unreachable, gzip and batches. moto_server plays S3 and SQS; the suite's fake
Marquez plays Marquez."""

from __future__ import annotations

import gzip
import http.client
import json
import socket
import threading
import time
import urllib.error
import urllib.request
import uuid
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor

import boto3
import pytest

from emr_lineage.gateway import local_http
from emr_lineage.gateway.local import LocalGateway, LocalGatewaySettings
from emr_lineage.marquez.api import LINEAGE_BATCH_ENDPOINT, LINEAGE_ENDPOINT
from tests.emr_lineage.fake_marquez import Answer, FakeMarquez

KEY = "secret-key"
HEADERS = {"Authorization": f"Bearer {KEY}", "Content-Type": "application/json"}


def settings(marquez_url: str, name: str, **changes) -> LocalGatewaySettings:
    values = dict(
        marquez_url=marquez_url,
        bucket=f"archive-{name}",
        queue=f"lineage-{name}",
        api_key=KEY,
        max_event_bytes=1 << 20,
        retries=1,
        post_timeout=2.0,
    )
    return LocalGatewaySettings(**{**values, **changes})


def event(run_id: str, number: int = 0) -> dict:
    return {
        "eventType": "RUNNING" if number else "START",
        "eventTime": f"2026-11-23T10:00:{number % 60:02d}.{number // 60:03d}Z",
        "run": {"runId": run_id},
        "job": {"namespace": "emr-lineage-test", "name": "job"},
        "producer": "https://example.com/test",
        "schemaURL": "https://openlineage.io/spec/2-0-2/OpenLineage.json#/$defs/RunEvent",
    }


class Log(list):
    def __call__(self, line: str) -> None:
        self.append(line)


@pytest.fixture
def started(moto_aws: str, marquez: FakeMarquez, request: pytest.FixtureRequest) -> Iterator[tuple[LocalGateway, Log]]:
    options = getattr(request, "param", {})
    log = Log()
    url = options.pop("marquez_url", marquez.url)
    idle = options.pop("idle_seconds", 30)
    name = request.node.name.split("[")[0][-30:].replace("_", "-")
    gateway = LocalGateway(settings(url, name, **options), create=True, log=log, idle_seconds=idle).start()
    yield gateway, log
    gateway.stop(drain_seconds=10)


def post(connection: http.client.HTTPConnection, body: bytes, path: str = LINEAGE_ENDPOINT, **headers: str):
    connection.request("POST", path, body=body, headers={**HEADERS, **headers})
    reply = connection.getresponse()
    return reply.status, json.loads(reply.read() or b"{}")


def connect(gateway: LocalGateway) -> http.client.HTTPConnection:
    return http.client.HTTPConnection(*gateway.address, timeout=10)


def archived(gateway: LocalGateway) -> int:
    pages = boto3.client("s3").get_paginator("list_objects_v2").paginate(Bucket=gateway.settings.bucket)
    return sum(len(page.get("Contents", [])) for page in pages)


def test_fifty_clients_at_once_are_all_served(started) -> None:
    """50 clients connecting at the same moment: the standard library's server (a backlog of 5) reset
    7-16 of 500 such requests."""
    gateway, _ = started
    run_ids = [str(uuid.uuid4()) for _ in range(50)]
    together = threading.Barrier(len(run_ids))

    def client(run_id: str) -> list[int]:
        together.wait(timeout=30)
        connection = connect(gateway)
        return [post(connection, json.dumps(event(run_id, n)).encode())[0] for n in range(3)]

    with ThreadPoolExecutor(max_workers=len(run_ids)) as pool:
        statuses = [s for answers in pool.map(client, run_ids) for s in answers]
    assert statuses == [201] * 150
    assert archived(gateway) == 150


def test_a_chunked_request_is_read_whole_and_the_connection_goes_on(started) -> None:
    gateway, _ = started
    connection, run_id = connect(gateway), str(uuid.uuid4())
    raw = json.dumps(event(run_id)).encode()
    chunks = iter([raw[:10], raw[10:50], raw[50:]])
    connection.request("POST", LINEAGE_ENDPOINT, body=chunks, headers=HEADERS, encode_chunked=True)
    reply = connection.getresponse()
    assert (reply.status, json.loads(reply.read())["runId"]) == (201, run_id)
    assert post(connection, json.dumps(event(run_id, 1)).encode())[0] == 201  # no desync on the same connection
    assert archived(gateway) == 2


@pytest.mark.parametrize("started", [{"idle_seconds": 1}], indirect=True)
def test_a_stalled_client_is_disconnected(started) -> None:
    gateway, _ = started
    with socket.create_connection(gateway.address, timeout=10) as stalled:
        stalled.sendall(b"POST /api/v1/lineage HTTP/1.1\r\nHost: x\r\nContent-Length: 100\r\n\r\n{")
        assert stalled.recv(1024) == b""  # closed by the gateway (within a few seconds), not kept forever


def test_a_client_hanging_up_mid_body_leaves_no_traceback(started, capfd: pytest.CaptureFixture[str]) -> None:
    gateway, log = started
    with socket.create_connection(gateway.address, timeout=10) as leaving:
        leaving.sendall(b'POST /api/v1/lineage HTTP/1.1\r\nHost: x\r\nContent-Length: 5000\r\n\r\n{"event')
    assert post(connect(gateway), json.dumps(event(str(uuid.uuid4()))).encode())[0] == 201
    assert "Traceback" not in capfd.readouterr().err and log == []


@pytest.mark.parametrize("started", [{"max_event_bytes": 1000}], indirect=True)
def test_an_oversize_body_gets_a_readable_413_and_the_connection_goes_on(started) -> None:
    gateway, _ = started
    connection = connect(gateway)
    status, answer = post(connection, json.dumps({**event(str(uuid.uuid4())), "pad": "x" * 100_000}).encode())
    assert status == 413 and "the limit is 1000" in answer["error"]
    assert post(connection, json.dumps(event(str(uuid.uuid4()))).encode())[0] == 201


def test_gzip_and_a_batch_over_http(started, marquez: FakeMarquez) -> None:
    gateway, _ = started
    run_id = str(uuid.uuid4())
    connection = connect(gateway)
    plain = gzip.compress(json.dumps(event(run_id)).encode())
    assert post(connection, plain, **{"Content-Encoding": "gzip"})[0] == 201
    assert post(connection, gzip.compress(json.dumps(event(run_id, 1)).encode()))[0] == 201  # no header
    batch = json.dumps([event(run_id, n) for n in (2, 3)]).encode()
    status, answer = post(connection, batch, path=LINEAGE_BATCH_ENDPOINT + "/")
    assert (status, answer["summary"]["successful"]) == (200, 2)
    assert gateway.stop(drain_seconds=30) == 0
    assert [e["eventTime"] for e in marquez.posted] == [event(run_id, n)["eventTime"] for n in range(4)]


def refuse_second(marquez: FakeMarquez) -> None:
    accept = marquez.routes[f"POST {LINEAGE_ENDPOINT}"]

    def lineage(state: FakeMarquez, request) -> Answer:
        if json.loads(request.body)["eventType"] == "RUNNING":
            return Answer(422, {"code": 422, "message": "job.facets.jobType: must not be null"})
        return accept(state, request)

    marquez.routes[f"POST {LINEAGE_ENDPOINT}"] = lineage


def test_a_refusal_is_counted_apart_with_marquez_reason(moto_aws, marquez: FakeMarquez) -> None:
    """--marquez ending in /api/v1 (once doubled into a 404 for every event) forwards as the base URL does."""
    refuse_second(marquez)
    log = Log()
    gateway = LocalGateway(settings(marquez.url + "/api/v1/", "refusal"), create=True, log=log).start()
    run_id = str(uuid.uuid4())
    connection = connect(gateway)
    assert [post(connection, json.dumps(event(run_id, n)).encode())[0] for n in (0, 1)] == [201, 201]
    assert gateway.stop(drain_seconds=30) == 0
    assert gateway.counts() == {"forwarded": 1, "refused": 1, "dead_lettered": 0}
    (line,) = log
    assert "Marquez refused" in line and "HTTP 422: job.facets.jobType: must not be null" in line
    assert gateway.health() == (200, {"status": "ok", "forwarded": 1, "refused": 1, "dead_lettered": 0})


def test_an_unreachable_marquez_makes_health_fail_and_says_so(moto_aws, closed_port_url: str) -> None:
    log = Log()
    gateway = LocalGateway(settings(closed_port_url, "unreachable"), create=True, log=log).start()
    try:
        with pytest.raises(urllib.error.HTTPError) as failed:
            urllib.request.urlopen(gateway.url + "/healthz", timeout=5)
        answer = json.loads(failed.value.read())
        assert failed.value.code == 503 and answer["status"] == "failing" and "unreachable" in answer["error"]
        assert post(connect(gateway), json.dumps(event(str(uuid.uuid4()))).encode())[0] == 201  # kept, queued
    finally:
        assert gateway.stop(drain_seconds=1) == 1  # still queued: nothing lost
    assert len(log) == 1 and "forwarding fails: Marquez at" in log[0] and "unreachable" in log[0]


def test_events_that_use_up_their_receives_are_dead_lettered_and_counted(moto_aws, marquez: FakeMarquez) -> None:
    marquez.routes[f"POST {LINEAGE_ENDPOINT}"] = lambda state, request: Answer(503, {"code": 503})
    log = Log()
    options = {"max_receive_count": 2, "retries": 0}
    gateway = LocalGateway(settings(marquez.url, "used-up", **options), create=True, log=log, sleep=lambda s: None)
    gateway.start(probe_marquez=False)
    assert post(connect(gateway), json.dumps(event(str(uuid.uuid4()))).encode())[0] == 201
    assert gateway.stop(drain_seconds=30) == 0
    assert gateway.counts() == {"forwarded": 0, "refused": 0, "dead_lettered": 1}
    assert any("moved to the dead-letter queue" in line for line in log)
    assert gateway.health()[0] == 503  # forwarding still fails


def test_a_drain_out_of_time_stops_rather_than_using_up_the_receives(moto_aws, marquez: FakeMarquez) -> None:
    """Marquez failing at the drain's end: once no try fits before the deadline, the drain stops; it
    used to receive the event again and again (each receive counted) until it was dead-lettered."""
    marquez.routes[f"POST {LINEAGE_ENDPOINT}"] = lambda state, request: Answer(503, {"code": 503})
    options = {"max_receive_count": 5, "retries": 3}
    gateway = LocalGateway(settings(marquez.url, "out-of-time", **options), create=True, log=Log())
    gateway.start(probe_marquez=False)
    assert post(connect(gateway), json.dumps(event(str(uuid.uuid4()))).encode())[0] == 201
    assert gateway.stop(drain_seconds=1.2) == 1  # still queued, for the next start
    assert gateway.counts()["dead_lettered"] == 0


def test_closing_survives_the_loop_closing_before_its_wake_up_is_written(monkeypatch) -> None:
    """A worker's wake-up written just before the one of close() (LocalGateway.stop's): the loop runs the
    queued close at once, before close() writes its byte. That close used to close the trigger too, so
    the write failed (EBADF); the trigger is closed once the loop and the workers have ended."""
    app = local_http.wsgi_app(lambda *request: (201, {}), lambda: (200, {}), lambda line: None)
    server = local_http.serve(app, 0)
    loop = threading.Thread(target=server.run, daemon=True)
    loop.start()
    trigger = server.trigger
    pull = trigger._physical_pull

    def after_a_worker() -> None:
        pull()  # the worker's
        waited = time.monotonic() + 10
        while trigger.thunks and time.monotonic() < waited:  # polling the loop thread until it ran the close
            time.sleep(0.01)
        pull()  # close()'s own

    monkeypatch.setattr(trigger, "_physical_pull", after_a_worker)
    local_http.close(server, loop)
    assert trigger._closed and not loop.is_alive() and not server._map
