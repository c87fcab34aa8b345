#!/usr/bin/env python3
"""Benchmark: the lineage gateway in local mode over moto_server (S3 + SQS) and a Marquez stand-in.

1. ingest latency, serving: the gateway runs as ``emr-lineage gateway serve`` does (ingest and
   forwarder together, so the queue stays short); N events POSTed one after another (check, S3
   archive put, SQS FIFO send, 201), as plain JSON, gzip (``Content-Encoding: gzip``, as
   openlineage-python's ``compression: gzip`` sends them) and batches of ``--batch`` events to
   ``/api/v1/lineage/batch``; p50/p99 per request and events/s beside baselines measured in the
   same run: the same POST straight to the stand-in (HTTP alone), and the bare S3 put + SQS FIFO
   send to moto_server with a thread draining that queue meanwhile (what the AWS stand-in alone costs);
2. forward throughput from a backlog (after an outage): ``--backlog`` events queued, then forwarded
   to the stand-in (receive 10, post each in order, delete the batch) until none is left;
   events/s beside the bare receive 10 + delete of the same number of messages from a queue of the
   same depth.

Targets (issue): ingest p99 < 50 ms; forward >= 1,000 events/s. moto_server is a Python stand-in
for S3 and SQS whose FIFO calls scan the queue (send: for duplicates; receive: every message, with
a deep copy of each it returns), so its cost grows with the depth of the queue and is part of
every figure here; the bare baselines show how much.

Usage: ``.venv/bin/python bench/gateway.py [--events 500] [--runs 50] [--batch 10] [--backlog 100 500]``
"""

from __future__ import annotations

import argparse
import gzip
import json
import os
import socket
import statistics
import subprocess
import sys
import threading
import time
import urllib.request
import uuid
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

from emr_lineage.gateway.local import LocalGateway, LocalGatewaySettings
from emr_lineage.marquez.api import LINEAGE_BATCH_ENDPOINT, LINEAGE_ENDPOINT


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class _Accept(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    received = 0

    def log_message(self, *args) -> None:
        pass

    def do_POST(self) -> None:  # noqa: N802
        self.rfile.read(int(self.headers.get("Content-Length") or 0))
        type(self).received += 1
        self.send_response(201)
        self.send_header("Content-Length", "2")
        self.end_headers()
        self.wfile.write(b"{}")


def _event(run_id: str, number: int, producer: str = "https://example.com/bench") -> bytes:
    event = {
        "eventType": "RUNNING",
        "eventTime": f"2026-11-23T10:{number // 60 % 60:02d}:{number % 60:02d}.{number:06d}Z",
        "run": {"runId": run_id},
        "job": {"namespace": "bench", "name": f"job-{run_id[:8]}"},
        "inputs": [{"namespace": "s3a://lake", "name": f"raw/part-{number}"}],
        "outputs": [{"namespace": "s3://lake", "name": "curated/out"}],
        "producer": producer,
        "schemaURL": "https://openlineage.io/spec/2-0-2/OpenLineage.json#/$defs/RunEvent",
    }
    return json.dumps(event).encode()


def _timed_posts(url: str, bodies: list[bytes], headers: dict[str, str] | None = None) -> list[float]:
    latencies = []
    for body in bodies:
        headers = {"Content-Type": "application/json", **(headers or {})}
        request = urllib.request.Request(url, data=body, headers=headers, method="POST")
        started = time.perf_counter()
        with urllib.request.urlopen(request, timeout=10) as reply:
            reply.read()
        latencies.append(time.perf_counter() - started)
    return latencies


def _p(values: list[float], q: float) -> float:
    return statistics.quantiles(values, n=100)[q - 1] * 1000


def _receive_and_delete(sqs, queue: str) -> int:
    """One bare receive of up to 10 messages and their batch delete: how many there were."""
    messages = sqs.receive_message(QueueUrl=queue, MaxNumberOfMessages=10).get("Messages", [])
    entries = [{"Id": str(i), "ReceiptHandle": m["ReceiptHandle"]} for i, m in enumerate(messages)]
    if entries:
        sqs.delete_message_batch(QueueUrl=queue, Entries=entries)
    return len(messages)


def _bare_put_send(gateway: LocalGateway, bucket: str, bodies: list[bytes], groups: list[str]) -> list[float]:
    """S3 put + SQS FIFO send per body, timed, while a thread drains the queue (as a forwarder would)."""
    queue = gateway.sqs.create_queue(QueueName="bench-bare.fifo", Attributes={"FifoQueue": "true"})["QueueUrl"]
    done = threading.Event()

    def drain() -> None:
        while not done.is_set():
            _receive_and_delete(gateway.sqs, queue)

    drainer = threading.Thread(target=drain, daemon=True)
    drainer.start()
    latencies = []
    for i, body in enumerate(bodies):
        started = time.perf_counter()
        gateway.s3.put_object(Bucket=bucket, Key=f"bare/{i}.json", Body=body)
        gateway.sqs.send_message(
            QueueUrl=queue, MessageBody=body.decode(), MessageGroupId=groups[i], MessageDeduplicationId=str(i)
        )
        latencies.append(time.perf_counter() - started)
    done.set()
    drainer.join()
    return latencies


def _bare_drain_rate(sqs, depth: int, groups: list[str]) -> float:
    """Messages/s of receive 10 + delete from a FIFO queue ``depth`` messages deep."""
    queue = sqs.create_queue(QueueName=f"bench-drain-{depth}.fifo", Attributes={"FifoQueue": "true"})["QueueUrl"]
    for i in range(0, depth, 10):
        entries = [
            {
                "Id": str(j),
                "MessageBody": "x" * 1400,
                "MessageGroupId": groups[j % len(groups)],
                "MessageDeduplicationId": str(i + j),
            }
            for j in range(min(10, depth - i))
        ]
        sqs.send_message_batch(QueueUrl=queue, Entries=entries)
    started, drained = time.perf_counter(), 0
    while drained < depth:
        drained += _receive_and_delete(sqs, queue)
    return depth / (time.perf_counter() - started)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--events", type=int, default=500, help="events POSTed for the ingest latency")
    parser.add_argument("--runs", type=int, default=50)
    parser.add_argument("--batch", type=int, default=10, help="events per batch request")
    parser.add_argument("--backlog", type=int, nargs="+", default=[100, 500], help="queue depths to forward from")
    args = parser.parse_args()

    moto_port = _free_port()
    moto = subprocess.Popen(
        [str(Path(sys.executable).parent / "moto_server"), "-p", str(moto_port)],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    os.environ.update(
        AWS_ENDPOINT_URL=f"http://127.0.0.1:{moto_port}",
        AWS_ACCESS_KEY_ID="bench",
        AWS_SECRET_ACCESS_KEY="bench",
        AWS_DEFAULT_REGION="us-east-1",
    )
    stand_in = ThreadingHTTPServer(("127.0.0.1", 0), _Accept)
    threading.Thread(target=stand_in.serve_forever, daemon=True).start()
    marquez = f"http://127.0.0.1:{stand_in.server_address[1]}"
    try:
        for _ in range(300):  # moto_server starting
            try:
                urllib.request.urlopen(os.environ["AWS_ENDPOINT_URL"] + "/moto-api/", timeout=1)
                break
            except OSError:
                time.sleep(0.1)

        def settings(queue: str) -> LocalGatewaySettings:
            return LocalGatewaySettings(
                marquez_url=marquez,
                bucket="bench-archive",
                queue=queue,
                api_key=None,
                max_event_bytes=1 << 20,
                retries=3,
            )

        runs = [str(uuid.uuid4()) for _ in range(args.runs)]
        groups = [runs[i % args.runs] for i in range(max(args.events, *args.backlog))]
        bodies = [_event(groups[i], i) for i in range(len(groups))]
        print(
            f"machine: {os.cpu_count()} CPUs, load average {os.getloadavg()[0]:.1f}; "
            f"{args.events} events, {args.runs} runs; backlogs {args.backlog}"
        )

        # 1. ingest latency, serving
        gateway = LocalGateway(settings("bench-serve"), create=True).start()
        baseline = _timed_posts(marquez + LINEAGE_ENDPOINT, bodies[: args.events])
        bare = _bare_put_send(gateway, "bench-archive", bodies[: args.events], groups)
        print(f"baseline, POST straight to the stand-in: p50 {_p(baseline, 50):.1f} ms, p99 {_p(baseline, 99):.1f} ms")
        print(
            f"baseline, bare S3 put + SQS FIFO send to moto_server (queue drained meanwhile): "
            f"p50 {_p(bare, 50):.1f} ms, p99 {_p(bare, 99):.1f} ms"
        )

        # Each kind sends other events (another producer URI, the same sizes, padded with "_": a
        # space is no URI): the gateway would answer a resent event as a duplicate without storing it again.
        def events_of(kind: str) -> list[bytes]:
            return [_event(groups[i], i, f"https://example.com/bench/{kind:_<5}") for i in range(args.events)]

        plain, zipped, batched = events_of("plain"), events_of("gzip"), events_of("batch")
        batches = [b"[" + b",".join(batched[i : i + args.batch]) + b"]" for i in range(0, args.events, args.batch)]
        gzip_header = {"Content-Encoding": "gzip"}
        kinds = [
            ("plain", LINEAGE_ENDPOINT, plain, {}),
            ("gzip", LINEAGE_ENDPOINT, [gzip.compress(b, compresslevel=3) for b in zipped], gzip_header),
            (f"batch of {args.batch}", LINEAGE_BATCH_ENDPOINT, batches, {}),
        ]
        for kind, path, requests, headers in kinds:
            _Accept.received = 0
            started = time.perf_counter()
            latencies = _timed_posts(gateway.url + path, requests, headers)
            ingest_rate = args.events / (time.perf_counter() - started)
            while _Accept.received < args.events:  # the forwarder catching up
                time.sleep(0.01)
            forwarded_rate = args.events / (time.perf_counter() - started)
            target = " (target p99 < 50 ms)" if path == LINEAGE_ENDPOINT else f" ({args.batch} events a request)"
            print(
                f"ingest {kind} (check + S3 put + SQS FIFO send, forwarder on): per request p50 "
                f"{_p(latencies, 50):.1f} ms, p99 {_p(latencies, 99):.1f} ms{target}; "
                f"{ingest_rate:,.0f} events/s accepted, {forwarded_rate:,.0f} events/s accepted and forwarded"
            )
        gateway.stop(drain_seconds=30)

        # 2. forward throughput from a backlog
        for depth in args.backlog:
            backlog = LocalGateway(settings(f"bench-backlog-{depth}"), create=True)  # not started: forward alone
            for body in bodies[:depth]:
                assert backlog.ingestor.handle({}, body)[0] == 201
            _Accept.received = 0
            started = time.perf_counter()
            while _Accept.received < depth:
                backlog.forward_once()
            rate = depth / (time.perf_counter() - started)
            bare_rate = _bare_drain_rate(backlog.sqs, depth, runs)
            backlog.server.close()  # never started: no connections to close
            print(
                f"forward from a backlog of {depth}: {rate:,.0f} events/s (target >= 1,000) beside "
                f"{bare_rate:,.0f} messages/s for the bare receive 10 + delete from a queue as deep"
            )
    finally:
        moto.terminate()
        moto.wait(timeout=10)
        stand_in.shutdown()
    return 0


if __name__ == "__main__":
    sys.exit(main())
