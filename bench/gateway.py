#!/usr/bin/env python3
"""Benchmark: the lineage gateway in local mode over moto_server (S3 + SQS) and a Marquez stand-in.

1. ingest latency: N events POSTed one after another to the gateway's ingest (check, S3 archive
   put, SQS FIFO send); p50/p99 beside two baselines measured in the same run: the same POST
   straight to the stand-in (HTTP alone), and the bare S3 put + SQS send to moto_server (what
   the AWS stand-in alone costs);
2. forward throughput: the N queued events forwarded to the stand-in (receive 10, post each in
   order, delete the batch) until the queue is empty: events/s, beside the bare receive + delete
   of the same number of messages from another queue.

Targets (issue): ingest p99 < 50 ms; forward >= 1,000 events/s. moto_server is a Python
stand-in for S3 and SQS whose FIFO calls slow down as a queue grows (it scans the queue), so its
cost is part of every figure here; the baselines show how much.

Usage: ``.venv/bin/python bench/gateway.py [--events 2000] [--runs 50]``
"""

from __future__ import annotations

import argparse
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
from emr_lineage.marquez.api import LINEAGE_ENDPOINT


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


def _event(run_id: str, number: int) -> bytes:
    event = {
        "eventType": "RUNNING",
        "eventTime": f"2026-11-23T10:{number // 60 % 60:02d}:{number % 60:02d}.{number:06d}Z",
        "run": {"runId": run_id},
        "job": {"namespace": "bench", "name": f"job-{run_id[:8]}"},
        "inputs": [{"namespace": "s3a://lake", "name": f"raw/part-{number}"}],
        "outputs": [{"namespace": "s3://lake", "name": "curated/out"}],
        "producer": "https://example.com/bench",
        "schemaURL": "https://openlineage.io/spec/2-0-2/OpenLineage.json#/$defs/RunEvent",
    }
    return json.dumps(event).encode()


def _timed_posts(url: str, bodies: list[bytes]) -> list[float]:
    latencies = []
    for body in bodies:
        request = urllib.request.Request(url, data=body, headers={"Content-Type": "application/json"}, method="POST")
        started = time.perf_counter()
        with urllib.request.urlopen(request, timeout=10) as reply:
            reply.read()
        latencies.append(time.perf_counter() - started)
    return latencies


def _p(values: list[float], q: float) -> float:
    return statistics.quantiles(values, n=100)[q - 1] * 1000


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--events", type=int, default=500)
    parser.add_argument("--runs", type=int, default=50)
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
        settings = LocalGatewaySettings(
            marquez_url=marquez, bucket="bench-archive", queue="bench", api_key=None, max_event_bytes=1 << 20, retries=3
        )
        gateway = LocalGateway(settings, create=True)  # not started: ingest first, then forward alone
        threading.Thread(target=gateway.server.serve_forever, daemon=True).start()
        runs = [str(uuid.uuid4()) for _ in range(args.runs)]
        bodies = [_event(runs[i % args.runs], i) for i in range(args.events)]

        baseline = _timed_posts(marquez + LINEAGE_ENDPOINT, bodies[:500])
        bare_queue = gateway.sqs.create_queue(
            QueueName="bench-bare.fifo", Attributes={"FifoQueue": "true", "ContentBasedDeduplication": "false"}
        )["QueueUrl"]
        bare = []
        for i, body in enumerate(bodies):
            started = time.perf_counter()
            gateway.s3.put_object(Bucket=settings.bucket, Key=f"bare/{i}.json", Body=body)
            gateway.sqs.send_message(
                QueueUrl=bare_queue,
                MessageBody=body.decode(),
                MessageGroupId=runs[i % args.runs],
                MessageDeduplicationId=str(i),
            )
            bare.append(time.perf_counter() - started)
        ingest = _timed_posts(gateway.url + LINEAGE_ENDPOINT, bodies)
        _Accept.received = 0
        print(
            f"machine: {os.cpu_count()} CPUs, load average {os.getloadavg()[0]:.1f}; "
            f"{args.events} events, {args.runs} runs"
        )
        print(f"baseline, POST straight to the stand-in: p50 {_p(baseline, 50):.1f} ms, p99 {_p(baseline, 99):.1f} ms")
        print(
            f"baseline, bare S3 put + SQS FIFO send to moto_server: p50 {_p(bare, 50):.1f} ms, "
            f"p99 {_p(bare, 99):.1f} ms"
        )
        print(
            f"ingest (check + S3 put + SQS FIFO send, moto_server): p50 {_p(ingest, 50):.1f} ms, "
            f"p99 {_p(ingest, 99):.1f} ms (target p99 < 50 ms)"
        )
        started, drained = time.perf_counter(), 0
        while drained < args.events:
            messages = gateway.sqs.receive_message(QueueUrl=bare_queue, MaxNumberOfMessages=10).get("Messages", [])
            entries = [{"Id": str(i), "ReceiptHandle": m["ReceiptHandle"]} for i, m in enumerate(messages)]
            if entries:
                gateway.sqs.delete_message_batch(QueueUrl=bare_queue, Entries=entries)
            drained += len(messages)
        bare_rate = args.events / (time.perf_counter() - started)
        print(f"baseline, bare receive 10 + delete from moto_server: {bare_rate:,.0f} messages/s")

        started = time.perf_counter()
        while _Accept.received < args.events:
            gateway.forward_once()
        elapsed = time.perf_counter() - started
        print(
            f"forward (receive 10, post in order, delete): {args.events} events in {elapsed:.1f}s = "
            f"{args.events / elapsed:,.0f} events/s (target >= 1,000)"
        )
        gateway.server.shutdown()
    finally:
        moto.terminate()
        moto.wait(timeout=10)
        stand_in.shutdown()
    return 0


if __name__ == "__main__":
    sys.exit(main())
