"""Local mode end to end: moto_server plays S3 and SQS, the suite's fake Marquez goes down and up.

Events for many runs are sent concurrently (each run's in order, with duplicates) while Marquez is
down, then up, then down again for a moment; after the drain every distinct event reached Marquez
exactly once and each run's events arrived in the order they were sent.
"""

from __future__ import annotations

import http.client
import json
import os
import signal
import subprocess
import sys
import threading
import time
import urllib.error
import urllib.request
import uuid
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import boto3
import pytest

from emr_lineage.cli.gateway import API_KEY_ENV_VAR
from emr_lineage.errors import EmrLineageError
from emr_lineage.gateway.forward import STATUS_ATTRIBUTE
from emr_lineage.gateway.local import LocalGateway, LocalGatewayError, LocalGatewaySettings
from emr_lineage.marquez.api import LINEAGE_ENDPOINT
from tests.emr_lineage.fake_marquez import Answer, FakeMarquez, serve
from tests.helpers import fake_aws_credentials, free_port
from tests.paths import CDK_JSON

REGION = "us-east-1"
RUNS = 12
EVENTS_PER_RUN = 6


@pytest.fixture
def aws(moto_aws: str) -> str:
    return moto_aws


def _settings(marquez: FakeMarquez, name: str, **changes) -> LocalGatewaySettings:
    values = dict(
        marquez_url=marquez.url,
        bucket=f"archive-{name}",
        queue=f"lineage-{name}",
        api_key="secret-key",
        max_event_bytes=1 << 20,
        retries=2,
        post_timeout=2.0,
    )
    values.update(changes)
    return LocalGatewaySettings(**values)


def _event(run_id: str, number: int) -> dict:
    return {
        "eventType": "RUNNING" if number else "START",
        "eventTime": f"2026-11-23T10:00:{number:02d}.000Z",
        "run": {"runId": run_id},
        "job": {"namespace": "emr-lineage-test", "name": f"job_{run_id[:8]}"},
        "inputs": [{"namespace": "s3a://lake", "name": f"raw/{number}"}],
        "outputs": [],
        "producer": "https://example.com/test",
        "schemaURL": "https://openlineage.io/spec/2-0-2/OpenLineage.json#/$defs/RunEvent",
    }


def _post(url: str, event: dict, key: str = "secret-key") -> int:
    request = urllib.request.Request(
        url + LINEAGE_ENDPOINT,
        data=json.dumps(event).encode(),
        headers={"Content-Type": "application/json", "Authorization": f"Bearer {key}"},
        method="POST",
    )
    try:
        with urllib.request.urlopen(request, timeout=10) as reply:
            return reply.status
    except urllib.error.HTTPError as exc:
        return exc.code


def test_no_event_is_lost_and_each_run_keeps_its_order_through_a_marquez_outage(aws, marquez: FakeMarquez) -> None:
    # Three phases: Marquez down while the first runs arrive, up for the next ones, down again
    # while the last ones arrive (until the forwarder has been refused twice), then up for good.
    phase = {"now": 1}
    refused: dict[int, list[str]] = {1: [], 2: [], 3: []}
    refused_again = threading.Event()
    accept = marquez.routes[f"POST {LINEAGE_ENDPOINT}"]

    def post_lineage(state: FakeMarquez, request) -> Answer:
        if phase["now"] in (1, 3):
            refused[phase["now"]].append(json.loads(request.body)["run"]["runId"])
            if len(refused[3]) >= 2:
                refused_again.set()
            return Answer(503, {"code": 503, "message": "down"})
        return accept(state, request)

    marquez.routes[f"POST {LINEAGE_ENDPOINT}"] = post_lineage
    gateway = LocalGateway(_settings(marquez, "outage"), create=True).start()
    runs = [str(uuid.uuid4()) for _ in range(RUNS)]
    thirds = [runs[: RUNS // 3], runs[RUNS // 3 : 2 * RUNS // 3], runs[2 * RUNS // 3 :]]

    def send_run(run_id: str) -> list[int]:
        statuses = []
        for number in range(EVENTS_PER_RUN):
            event = _event(run_id, number)
            statuses.append(_post(gateway.url, event))
            if number % 2 == 0:  # a client retry: the same event again
                statuses.append(_post(gateway.url, event))
        return statuses

    try:
        with ThreadPoolExecutor(max_workers=6) as pool:
            statuses = [s for statuses in pool.map(send_run, thirds[0]) for s in statuses]
            phase["now"] = 2  # Marquez comes up...
            statuses += [s for statuses in pool.map(send_run, thirds[1]) for s in statuses]
            phase["now"] = 3  # ...and goes down again while the last runs arrive
            statuses += [s for statuses in pool.map(send_run, thirds[2]) for s in statuses]
        assert refused_again.wait(timeout=60), "the forwarder met the second outage"
        phase["now"] = 2
    finally:
        backlog = gateway.stop(drain_seconds=60)
    assert statuses and all(status == 201 for status in statuses)
    assert backlog == 0
    assert refused[1] and refused[3], "both outages refused events the forwarder then sent again"
    received = [(e["run"]["runId"], e["eventTime"]) for e in marquez.posted]
    assert len(received) == len(set(received)) == RUNS * EVENTS_PER_RUN  # every distinct event, once
    for run_id in runs:
        times = [t for r, t in received if r == run_id]
        assert times == sorted(times) and len(times) == EVENTS_PER_RUN  # in the order sent
    assert {d["namespace"] for e in marquez.posted for d in e["inputs"]} == {"s3://lake"}  # normalised


def _raw_post(connection: http.client.HTTPConnection, body: bytes, headers: dict[str, str]) -> tuple[int, dict]:
    connection.request("POST", LINEAGE_ENDPOINT, body=body, headers=headers)
    reply = connection.getresponse()
    return reply.status, json.loads(reply.read() or b"{}")


def test_the_key_is_checked_before_the_size_and_a_bad_length_is_400(aws, marquez: FakeMarquez) -> None:
    gateway = LocalGateway(_settings(marquez, "order", max_event_bytes=100), create=True).start()
    host, port = gateway.address
    big = json.dumps(_event(str(uuid.uuid4()), 0)).encode()
    try:
        wrong = {"Authorization": "Bearer wrong", "Content-Type": "application/json"}
        assert _raw_post(http.client.HTTPConnection(host, port, timeout=5), big, wrong)[0] == 401
        right = {**wrong, "Authorization": "Bearer secret-key"}
        status, answer = _raw_post(http.client.HTTPConnection(host, port, timeout=5), big, right)
        assert status == 413 and f"the body is {len(big)} bytes; the limit is 100" in answer["error"]
        connection = http.client.HTTPConnection(host, port, timeout=5)
        connection.putrequest("POST", LINEAGE_ENDPOINT)
        for name, value in {**right, "Content-Length": "-1"}.items():
            connection.putheader(name, value)
        connection.endheaders()
        reply = connection.getresponse()  # waitress's own answer: the request never reaches the gateway
        assert reply.status == 400 and b"Content-Length is invalid" in reply.read()
    finally:
        gateway.stop(drain_seconds=10)


def test_after_stop_a_kept_open_connection_gets_503_and_nothing_is_left_behind(aws, marquez: FakeMarquez) -> None:
    gateway = LocalGateway(_settings(marquez, "keepalive"), create=True).start()
    host, port = gateway.address
    connection = http.client.HTTPConnection(host, port, timeout=5)  # one connection, kept open (HTTP/1.1)
    headers = {"Authorization": "Bearer secret-key", "Content-Type": "application/json"}
    run_id = str(uuid.uuid4())
    assert _raw_post(connection, json.dumps(_event(run_id, 0)).encode(), headers)[0] == 201
    gateway._accepting = False  # noqa: SLF001 - stop()'s first step: what a request meets during the drain
    status, answer = _raw_post(connection, json.dumps(_event(run_id, 1)).encode(), headers)
    assert status == 503 and "stopping" in answer["error"]
    assert gateway.stop(drain_seconds=30) == 0
    with pytest.raises((ConnectionError, http.client.HTTPException)):  # closed: nothing is half-accepted
        _raw_post(connection, json.dumps(_event(run_id, 2)).encode(), headers)
    assert [e["eventTime"] for e in marquez.posted] == [_event(run_id, 0)["eventTime"]]


def test_the_drain_stops_at_its_deadline_while_marquez_is_down(aws, marquez: FakeMarquez) -> None:
    marquez.routes[f"POST {LINEAGE_ENDPOINT}"] = lambda state, request: Answer(503, {"code": 503})
    now = {"t": 0.0}

    def clock() -> float:
        now["t"] += 0.5  # every look at the clock: half a second later
        return now["t"]

    settings = _settings(marquez, "deadline")
    gateway = LocalGateway(settings, create=True, clock=clock, sleep=lambda s: None).start()
    assert _post(gateway.url, _event(str(uuid.uuid4()), 0)) == 201
    assert gateway.stop(drain_seconds=20) == 1  # the event is still queued, not lost
    assert now["t"] < 200  # the drain gave up at its deadline instead of retrying on
    assert gateway.counts()["dead_lettered"] == 0  # nor did it spin through the event's receives


def test_an_event_marquez_refuses_goes_to_the_dead_letter_queue_and_its_run_goes_on(aws, marquez: FakeMarquez) -> None:
    accept = marquez.routes[f"POST {LINEAGE_ENDPOINT}"]
    refused_time = _event("x", 1)["eventTime"]

    def post_lineage(state: FakeMarquez, request) -> Answer:
        if json.loads(request.body)["eventTime"] == refused_time:
            return Answer(422, {"code": 422, "message": "bad facet"})
        return accept(state, request)

    marquez.routes[f"POST {LINEAGE_ENDPOINT}"] = post_lineage
    settings = _settings(marquez, "refused")
    gateway = LocalGateway(settings, create=True).start()
    run_id = str(uuid.uuid4())
    try:
        assert [_post(gateway.url, _event(run_id, number)) for number in range(3)] == [201, 201, 201]
    finally:
        assert gateway.stop(drain_seconds=30) == 0
    assert [e["eventTime"] for e in marquez.posted] == [_event(run_id, n)["eventTime"] for n in (0, 2)]
    sqs = boto3.client("sqs")
    dead_letters = sqs.get_queue_url(QueueName=settings.dead_letter_queue_name)["QueueUrl"]
    [message] = sqs.receive_message(QueueUrl=dead_letters, MessageAttributeNames=["All"])["Messages"]
    assert json.loads(message["Body"])["eventTime"] == refused_time
    assert message["MessageAttributes"][STATUS_ATTRIBUTE]["StringValue"] == "422"


def test_health_auth_and_bad_events(aws, marquez: FakeMarquez) -> None:
    gateway = LocalGateway(_settings(marquez, "checks"), create=True).start()
    try:
        with urllib.request.urlopen(gateway.url + "/healthz", timeout=5) as reply:
            assert reply.status == 200
        run_id = str(uuid.uuid4())
        assert _post(gateway.url, _event(run_id, 0), key="wrong") == 401
        assert _post(gateway.url, {"eventType": "START"}) == 400
        assert _post(gateway.url, _event(run_id, 0)) == 201
    finally:
        assert gateway.stop(drain_seconds=10) == 0
    archived = boto3.client("s3").list_objects_v2(Bucket="archive-checks")["Contents"]
    assert len(archived) == 1 and run_id in archived[0]["Key"]


def test_a_missing_queue_without_create_is_one_clear_error(aws, marquez: FakeMarquez) -> None:
    with pytest.raises(LocalGatewayError, match="pass --create"):
        LocalGateway(_settings(marquez, "absent"))


def test_an_endpoint_without_its_scheme_is_refused_with_the_fix(
    monkeypatch: pytest.MonkeyPatch, marquez: FakeMarquez
) -> None:
    fake_aws_credentials(monkeypatch, REGION)
    monkeypatch.setenv("AWS_ENDPOINT_URL", "127.0.0.1:5000")
    with pytest.raises(EmrLineageError, match="AWS_ENDPOINT_URL=127.0.0.1:5000 .*http://127.0.0.1:5000"):
        LocalGateway(_settings(marquez, "endpoint"))


def _serve(moto: str, marquez: FakeMarquez, port: int, *extra: str, key: str | None = None) -> subprocess.Popen:
    env = {
        **{k: v for k, v in os.environ.items() if k != "EMR_LINEAGE_API_KEY"},
        "AWS_ENDPOINT_URL": moto,
        "AWS_ACCESS_KEY_ID": "testing",
        "AWS_SECRET_ACCESS_KEY": "testing",
        "AWS_DEFAULT_REGION": REGION,
        **({"EMR_LINEAGE_API_KEY": key} if key else {}),
    }
    command = [sys.executable, "-m", "emr_lineage", "gateway", "serve", "--port", str(port), "--marquez", marquez.url]
    return subprocess.Popen([*command, *extra], env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)


def test_serve_forwards_until_sigterm_then_drains_and_exits_0(moto_server: str, marquez: FakeMarquez) -> None:
    port = free_port()
    proc = _serve(
        moto_server, marquez, port, "--archive", "s3://archive-cli", "--queue", "lineage-cli", "--create", key="k1"
    )
    url = f"http://127.0.0.1:{port}"
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline and proc.poll() is None:  # polling a real process until it listens
        try:
            urllib.request.urlopen(url + "/healthz", timeout=1)
            break
        except (urllib.error.URLError, OSError):
            time.sleep(0.1)
    run_id = str(uuid.uuid4())
    assert _post(url, _event(run_id, 0), key="k1") == 201
    assert _post(url, _event(run_id, 1), key="nope") == 401
    proc.send_signal(signal.SIGTERM)
    _, stderr = proc.communicate(timeout=60)
    assert proc.returncode == 0, stderr
    assert (
        "stopped; 1 event(s) forwarded, 0 refused by Marquez, 0 dead-lettered after 50 tries, 0 still queued" in stderr
    )
    assert [e["run"]["runId"] for e in marquez.posted] == [run_id]


def test_serve_without_the_queue_is_one_line_and_exit_2(moto_server: str, marquez: FakeMarquez) -> None:
    proc = _serve(moto_server, marquez, free_port(), "--archive", "s3://nothing-here", "--queue", "nothing-here")
    _, stderr = proc.communicate(timeout=60)
    assert proc.returncode == 2
    lines = stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: ") and "pass --create" in lines[0]


LISTENED_SCRIPT = """
import sys
from pyspark.sql import SparkSession
spark = SparkSession.builder.appName("Sent Through").getOrCreate()
spark.range(10).write.mode("overwrite").parquet(sys.argv[1])
print(spark.conf.get("spark.emr_lineage.test"), sys.executable, *sys.argv[2:])
sys.exit(3)
"""


def _noting_compression(gateway: LocalGateway) -> list[bool]:
    """Whether each request the gateway answers came gzip-compressed (its first two bytes)."""
    answer, gzipped = gateway.ingestor.answer, []

    def answer_and_note(path: str, headers: dict[str, str], body: bytes) -> tuple[int, dict]:
        gzipped.append(body[:2] == b"\x1f\x8b")
        return answer(path, headers, body)

    gateway.ingestor.answer = answer_and_note
    return gzipped


def _zipped_transport(url: str) -> list[str]:
    """--conf options of a second HTTP transport of the listener's composite one: gzip, to ``url``."""
    prefix = "spark.openlineage.transport.transports.zipped."
    keys = {"type": "http", "url": url, "endpoint": LINEAGE_ENDPOINT, "compression": "gzip"}
    keys |= {"auth.type": "api_key", "auth.apiKey": "secret-key"}
    return [option for key, value in keys.items() for option in ("--conf", f"{prefix}{key}={value}")]


@pytest.mark.spark
def test_the_real_listener_reports_through_the_gateway(aws, marquez: FakeMarquez, tmp_path: Path) -> None:
    """run-local: a script on local Spark with the real listener (events to a file, to one gateway plain
    and to another gzip, as spark.openlineage.transport.compression asks: the composite transport, with
    the Bearer key) -> the gateways over moto_server -> a Marquez stand-in each (a real Marquez is not on
    this machine's Maven repository). The script's exit status, arguments and --conf come through;
    every event the listener wrote reached each Marquez, in order per run. (Listener 1.53.0 sends
    ``Content-Encoding: gzip`` with its gzip bodies.) Read back from Marquez, they are the graph of the
    listener's own file."""
    script, output, events_file = tmp_path / "job.py", tmp_path / "out", tmp_path / "events.jsonl"
    script.write_text(LISTENED_SCRIPT)
    plain = LocalGateway(_settings(marquez, "listener-plain"), create=True).start()
    second = serve(FakeMarquez())
    zipped_marquez = next(second)
    zipped = LocalGateway(_settings(zipped_marquez, "listener-gzip"), create=True).start()
    compressed = {"plain": _noting_compression(plain), "gzip": _noting_compression(zipped)}
    try:
        proc = subprocess.run(
            [
                *(str(Path(sys.executable).parent / "emr-lineage"), "run-local", "--url", plain.url),
                *_zipped_transport(zipped.url),
                *("--events", str(events_file), "--conf", "spark.emr_lineage.test=seen", "--cdk-json", str(CDK_JSON)),
                *(str(script), "--", str(output), "a b"),
            ],
            capture_output=True,
            text=True,
            timeout=300,
            env={**os.environ, API_KEY_ENV_VAR: "secret-key"},
        )
    finally:
        assert plain.stop(drain_seconds=60) == 0
        assert zipped.stop(drain_seconds=60) == 0
        second.close()
    assert proc.returncode == 3, proc.stderr[-3000:]
    seen, executable, *args = proc.stdout.splitlines()[-1].split(" ")
    # the job ran on this interpreter (named as the emr-lineage script names it: python or python3.11)
    assert (seen, Path(executable).resolve(), args) == ("seen", Path(sys.executable).resolve(), ["a", "b"])
    assert compressed["plain"] and not any(compressed["plain"])
    assert compressed["gzip"] and all(compressed["gzip"])  # every request as the listener was told
    written = [json.loads(line) for line in events_file.read_text().splitlines()]
    application = [e["eventType"] for e in written if e["job"]["name"] == "sent_through"]
    assert application == ["START", "COMPLETE"]
    assert {d["name"] for e in written for d in e.get("outputs", [])} == {str(output)}
    key = lambda e: (e["run"]["runId"], e["eventTime"], e["eventType"])  # noqa: E731
    for received in (marquez.posted, zipped_marquez.posted):
        assert sorted(map(key, received)) == sorted(map(key, written))
        for run_id in {e["run"]["runId"] for e in written}:
            assert [key(e) for e in received if e["run"]["runId"] == run_id] == [
                key(e) for e in written if e["run"]["runId"] == run_id
            ]
    # What went through the gateway into Marquez reads back as the same graph as the listener's own file.
    cli = str(Path(sys.executable).parent / "emr-lineage")
    graphs = [
        subprocess.run([cli, "graph", *source], capture_output=True, text=True, check=True).stdout
        for source in (("--events", str(events_file)), ("--marquez", marquez.url))
    ]
    assert graphs[0] == graphs[1] and '"source": "job:' in graphs[0]
