"""Fixtures of the lineage-graph tests: generated OpenLineage events, a local Marquez stand-in
serving the real Marquez responses, and an OpenAPI validator of those responses."""

from __future__ import annotations

import json
import subprocess
import sys
import time
import urllib.error
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.emr_lineage.analysis.iceberg_metadata import lake_s3  # noqa: F401 - a fixture
from tests.emr_lineage.demo_run import DEMO_FOLDER, DemoRun, shared_demo, shared_folder
from tests.emr_lineage.e2e_support import (  # noqa: F401 - fixtures
    e2e_aws,
    e2e_parent,
    emr_events,
    lineage_clock,
    serve_marquez,
)
from tests.emr_lineage.fake_marquez import FakeMarquez, serve
from tests.emr_lineage.launch_support import launch_aws  # noqa: F401 - a fixture
from tests.emr_lineage.reconfigure_support import emr_stub  # noqa: F401 - a fixture
from tests.helpers import fake_aws_credentials, free_port
from tests.pki import issuing, root  # noqa: F401 - fixtures


@pytest.fixture(scope="session")
def ol_fixtures_dir(reference_dir: Path) -> Path:
    return reference_dir / "openlineage" / "fixtures"


def write_jsonl(path: Path, events: list[dict[str, Any]]) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("".join(json.dumps(e) + "\n" for e in events), encoding="utf-8")
    return path


# --- local Marquez stand-in (tests/emr_lineage/fake_marquez.py) --------------------------------


@pytest.fixture(scope="session")
def marquez_server() -> Iterator[FakeMarquez]:
    """A ThreadingHTTPServer on 127.0.0.1 (port 0) in front of the Marquez 0.51.1 stand-in."""
    yield from serve(FakeMarquez())


@pytest.fixture()
def marquez(marquez_server: FakeMarquez) -> Iterator[FakeMarquez]:
    """The session's Marquez, with an empty database, request logs, injected failures and routes reset."""
    marquez_server.reset()
    yield marquez_server
    marquez_server.reset()


@pytest.fixture(scope="session")
def closed_port_url() -> str:
    """A loopback URL nothing listens on (bound, then closed)."""
    import socket

    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    return f"http://127.0.0.1:{port}"


@pytest.fixture
def retry_waits(monkeypatch: pytest.MonkeyPatch) -> list[float]:
    """The HTTP stack's retries (emr_lineage.http) without sleeping their backoff: each wait urllib3 would
    sleep before the next attempt is recorded here instead. The attempts, the deadline's checks and the
    messages are the commands' own; only the clock does not move while a command waits."""
    from emr_lineage.http.deadline import DeadlineRetry

    waits: list[float] = []
    monkeypatch.setattr(DeadlineRetry, "sleep", lambda retry, response=None: waits.append(retry._wait(response)))
    return waits


@pytest.fixture(scope="session")
def gen() -> Any:
    """Event generators for the tests: ``gen.pipeline(lake)``, ``gen.application(...)``,
    ``gen.Action`` and ``gen.write_jsonl(path, events)``."""
    from types import SimpleNamespace

    from tests.emr_lineage.generated_events import Action, application_events, sample_pipeline_events

    return SimpleNamespace(
        pipeline=sample_pipeline_events, application=application_events, Action=Action, write_jsonl=write_jsonl
    )


@pytest.fixture(scope="session")
def demo_run(tmp_path_factory: pytest.TempPathFactory) -> DemoRun:
    """The real demo, run once per test run (all xdist workers share the run's base directory)."""
    return shared_demo(shared_folder(tmp_path_factory, DEMO_FOLDER))


@pytest.fixture(scope="session")
def e2e_events(demo_run: DemoRun) -> list[dict[str, Any]]:
    """The demo pipeline's real events as the same jobs report them on EMR (lake = s3://bucket)."""
    return emr_events(demo_run)


@pytest.fixture(scope="session")
def e2e_marquez_server() -> Iterator[FakeMarquez]:
    yield from serve_marquez()


@pytest.fixture
def e2e_marquez(e2e_marquez_server: FakeMarquez) -> FakeMarquez:
    """A Marquez where the pipeline's events arrive in scripted phases: the session's server (stopping one
    takes up to half a second, its poll interval), emptied (tests/emr_lineage/e2e_support.py)."""
    e2e_marquez_server.reset()
    return e2e_marquez_server


@pytest.fixture(scope="session")
def listener_lineage() -> Any:
    """The demo's lineage settings with the real listener jar and Iceberg runtime (fetched by make setup, checked
    against their pins)."""
    from emr_lineage.listener.maven import local_jars
    from emr_lineage.pipeline.demo import Lineage
    from tests.versions import DEV

    jars = local_jars(DEV.versions)
    return Lineage(openlineage=DEV.openlineage, jar=jars.listener, iceberg_runtime=jars.iceberg_runtime)


# --- moto_server: S3 and SQS over HTTP (the local gateway, post), one per test session and worker ---

MOTO_REGION = "us-east-1"


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
    fake_aws_credentials(monkeypatch, MOTO_REGION)
    monkeypatch.setenv("AWS_ENDPOINT_URL", moto_server)
    return moto_server
