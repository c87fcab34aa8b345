"""Fixtures of the gateway tests: moto_server (S3 and SQS over HTTP, one per test session and worker)."""

from __future__ import annotations

import subprocess
import sys
import time
import urllib.error
import urllib.request
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.helpers import fake_aws_credentials, free_port

REGION = "us-east-1"


@pytest.fixture(scope="session")
def moto_server() -> Iterator[str]:
    port = free_port()
    proc = subprocess.Popen(
        [str(Path(sys.executable).parent / "moto_server"), "-p", str(port)],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    url = f"http://127.0.0.1:{port}"
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:  # polling a real process until it listens
        try:
            urllib.request.urlopen(url + "/moto-api/", timeout=1)
            break
        except (urllib.error.URLError, OSError):
            time.sleep(0.1)
    yield url
    proc.terminate()
    proc.wait(timeout=10)


@pytest.fixture
def moto_aws(moto_server: str, monkeypatch: pytest.MonkeyPatch) -> str:
    """boto3 pointed at moto_server (AWS_ENDPOINT_URL) with fake credentials."""
    fake_aws_credentials(monkeypatch, REGION)
    monkeypatch.setenv("AWS_ENDPOINT_URL", moto_server)
    return moto_server
