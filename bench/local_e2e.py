#!/usr/bin/env python3
"""Benchmark: the local twin of ``e2e``, wall time. The sample pipeline on local Spark with the real
listener sending each event through the lineage gateway (local mode over moto_server: S3 archive +
SQS FIFO queue) and on to the forward target, beside the same demo writing its events file only,
in the same run.

The forward target is a stand-in that accepts every POST (201): a real Marquez is not on this
machine's Maven repository (issue 21), so the Marquez leg is not measured. What is measured: the
demo's wall time with the listener's HTTP transport through the gateway (every event archived and
queued as it happens), then how long the gateway takes to forward what is still queued once the
demo has ended, and whether every event the listener wrote reached the target.

Usage: ``.venv/bin/python bench/local_e2e.py [--rows 50000] [--pairs 2]``
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import threading
import time
import urllib.request
from http.server import ThreadingHTTPServer
from pathlib import Path

BIN = Path(sys.executable).parent
sys.path.insert(0, str(Path(__file__).resolve().parent))
from gateway import _Accept, _free_port  # noqa: E402 - the sibling benchmark's accept-all target

from emr_lineage.gateway.local import LocalGateway, LocalGatewaySettings  # noqa: E402


def _wait_for(url: str) -> None:
    for _ in range(300):  # moto_server starting
        try:
            urllib.request.urlopen(url, timeout=1)
            return
        except OSError:
            time.sleep(0.1)


def _demo(out: Path, rows: int, url: str | None) -> float:
    command = [str(BIN / "emr-lineage"), "demo", "--out", str(out), "--rows", str(rows), "--force"]
    began = time.perf_counter()
    subprocess.run(command + (["--url", url] if url else []), check=True, capture_output=True)
    return time.perf_counter() - began


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, default=50_000)
    parser.add_argument("--pairs", type=int, default=2)
    args = parser.parse_args(argv)

    port = _free_port()
    moto = subprocess.Popen(
        [str(BIN / "moto_server"), "-p", str(port)], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL
    )
    target = ThreadingHTTPServer(("127.0.0.1", 0), _Accept)
    threading.Thread(target=target.serve_forever, daemon=True).start()
    work = Path(tempfile.mkdtemp(prefix="local-e2e-"))
    os.environ.update(
        AWS_ENDPOINT_URL=f"http://127.0.0.1:{port}",
        AWS_ACCESS_KEY_ID="testing",
        AWS_SECRET_ACCESS_KEY="testing",
        AWS_DEFAULT_REGION="us-east-1",
        EMR_LINEAGE_API_KEY="bench-key",
    )
    try:
        _wait_for(f"http://127.0.0.1:{port}/moto-api/")
        print(f"demo of {args.rows} orders, {args.pairs} pairs (file only, then through the gateway)")
        alone, through, drains = [], [], []
        for pair in range(args.pairs):
            alone.append(_demo(work / "alone", args.rows, None))
            settings = LocalGatewaySettings(
                marquez_url=f"http://127.0.0.1:{target.server_port}",
                bucket=f"archive-{pair}",
                queue=f"lineage-{pair}",
                api_key="bench-key",
                max_event_bytes=1 << 20,
                retries=3,
                post_timeout=5.0,
            )
            gateway = LocalGateway(settings, create=True).start()
            _Accept.received = 0
            through.append(_demo(work / "through", args.rows, gateway.url))
            began = time.perf_counter()
            left = gateway.stop(drain_seconds=120)
            drains.append(time.perf_counter() - began)
            written = sum(1 for _ in (work / "through" / "events.jsonl").open())
            print(
                f"pair {pair + 1}: file only {alone[-1]:.1f}s; through the gateway {through[-1]:.1f}s, "
                f"then {drains[-1]:.2f}s to forward the rest; {_Accept.received} of {written} events forwarded, "
                f"{left} left queued"
            )
        print(
            f"median: file only {statistics.median(alone):.1f}s, through the gateway {statistics.median(through):.1f}s "
            f"(+{statistics.median(through) - statistics.median(alone):.1f}s), drain after the demo "
            f"{statistics.median(drains):.2f}s"
        )
    finally:
        target.shutdown()
        moto.terminate()
        moto.wait()
        shutil.rmtree(work, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
