"""openlineage-python's own HttpTransport (the client producers use) through local mode to the suite's
Marquez stand-in (a real Marquez is not on this machine's Maven repository): every event arrives
as the client sent it but for the namespace normalisation. The Java listener's leg, plain and gzip,
is test_local.py's test_the_real_listener_reports_through_the_gateway.

openlineage-python 1.54 has no batch transport: the batch leg posts a JSON array of events the
client serialised itself (Serde.to_json), with the client's own requests session."""

from __future__ import annotations

import copy
import datetime as dt
import json
import uuid
from typing import Any

import pytest
import requests
from openlineage.client import OpenLineageClient
from openlineage.client.event_v2 import (
    DatasetEvent,
    InputDataset,
    Job,
    JobEvent,
    OutputDataset,
    Run,
    RunEvent,
    RunState,
    StaticDataset,
)
from openlineage.client.serde import Serde
from openlineage.client.transport.http import ApiKeyTokenProvider, HttpCompression, HttpConfig, HttpTransport

from emr_lineage.gateway.local import LocalGateway, LocalGatewaySettings
from emr_lineage.lineage.naming import canonical_namespace
from emr_lineage.marquez.api import LINEAGE_BATCH_ENDPOINT
from tests.emr_lineage.fake_marquez import FakeMarquez

KEY = "client-key"
PRODUCER = "https://github.com/OpenLineage/OpenLineage/tree/1.54.0/client/python"


def events() -> list[Any]:
    """A run (START, COMPLETE), a JobEvent and a DatasetEvent, with s3a:// namespaces to normalise."""
    run, job = Run(runId=str(uuid.uuid4())), Job(namespace="airflow", name=f"load_{uuid.uuid4().hex[:6]}")
    now = dt.datetime(2026, 11, 26, 1, 0, tzinfo=dt.UTC)
    inputs = [InputDataset(namespace="s3a://lake", name="raw/orders")]
    outputs = [OutputDataset(namespace="s3a://lake", name="clean/orders")]
    times = [(now + dt.timedelta(seconds=n)).isoformat() for n in range(4)]
    return [
        RunEvent(eventType=RunState.START, eventTime=times[0], run=run, job=job, producer=PRODUCER, inputs=inputs),
        RunEvent(eventType=RunState.COMPLETE, eventTime=times[1], run=run, job=job, producer=PRODUCER, outputs=outputs),
        JobEvent(eventTime=times[2], job=job, producer=PRODUCER, inputs=inputs, outputs=outputs),
        DatasetEvent(eventTime=times[3], producer=PRODUCER, dataset=StaticDataset(namespace="s3n://lake", name="dim")),
    ]


def normalised(event: Any) -> dict[str, Any]:
    """The event as the client serialises it, its dataset namespaces as the gateway normalises them."""
    value = copy.deepcopy(json.loads(Serde.to_json(event)))
    for dataset in [*value.get("inputs", []), *value.get("outputs", []), *filter(None, [value.get("dataset")])]:
        dataset["namespace"] = canonical_namespace(dataset["namespace"])
    return value


@pytest.fixture
def gateway(moto_aws: str, marquez: FakeMarquez, request: pytest.FixtureRequest) -> LocalGateway:
    name = f"client-{request.node.callspec.id if hasattr(request.node, 'callspec') else 'batch'}".lower()
    settings = LocalGatewaySettings(
        marquez_url=marquez.url, bucket=name, queue=name, api_key=KEY, max_event_bytes=1 << 20, retries=2
    )
    return LocalGateway(settings, create=True).start()


@pytest.mark.parametrize("compression", [None, HttpCompression.GZIP], ids=["plain", "gzip"])
def test_the_python_client_reaches_marquez_through_the_gateway(
    gateway: LocalGateway, marquez: FakeMarquez, compression: HttpCompression | None
) -> None:
    config = HttpConfig(url=gateway.url, auth=ApiKeyTokenProvider({"apiKey": KEY}), compression=compression)
    client = OpenLineageClient(transport=HttpTransport(config))
    sent = events()
    try:
        for event in sent:
            client.emit(event)  # raises on any answer but 2xx
    finally:
        assert gateway.stop(drain_seconds=30) == 0
    assert marquez.posted == [normalised(e) for e in sent]
    assert gateway.counts() == {"forwarded": 4, "refused": 0, "dead_lettered": 0}


def test_a_wrong_key_from_the_python_client_is_refused(gateway: LocalGateway, marquez: FakeMarquez) -> None:
    config = HttpConfig(url=gateway.url, auth=ApiKeyTokenProvider({"apiKey": "stale"}))
    try:
        with pytest.raises(requests.HTTPError, match="401"):
            HttpTransport(config).emit(events()[0])
    finally:
        gateway.stop(drain_seconds=5)
    assert marquez.posted == []


def test_a_batch_of_client_serialised_events(gateway: LocalGateway, marquez: FakeMarquez) -> None:
    sent = events()
    body = "[" + ",".join(Serde.to_json(e) for e in sent) + "]"
    try:
        reply = requests.post(
            gateway.url + LINEAGE_BATCH_ENDPOINT,
            data=body,
            headers={"Authorization": f"Bearer {KEY}", "Content-Type": "application/json"},
            timeout=10,
        )
        assert reply.status_code == 200 and reply.json()["summary"]["successful"] == 4
    finally:
        assert gateway.stop(drain_seconds=30) == 0
    assert marquez.posted == [normalised(e) for e in sent]
