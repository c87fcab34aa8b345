"""Fixtures of the lineage-graph tests: generated OpenLineage events, a local Marquez stand-in
serving the real Marquez responses, and an OpenAPI validator of those responses."""

from __future__ import annotations

import datetime
import json
import subprocess
import sys
import time
import urllib.error
import urllib.request
import uuid
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest
from openlineage.client.event_v2 import InputDataset, Job, OutputDataset, Run, RunEvent, RunState
from openlineage.client.facet_v2 import (
    column_lineage_dataset,
    job_type_job,
    parent_run,
    schema_dataset,
    symlinks_dataset,
)
from openlineage.client.serde import Serde

from emr_lineage.lineage.naming import dataset_identity
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
from tests.helpers import fake_aws_credentials, free_port
from tests.versions import LISTENER, OPENLINEAGE_VERSION

PRODUCER = f"https://github.com/OpenLineage/OpenLineage/tree/{OPENLINEAGE_VERSION}/integration/spark"


# --- OpenLineage events generated with openlineage-python -------------------------------


@dataclass
class Action:
    """One Spark action of a generated application."""

    name: str
    inputs: list[str]
    outputs: list[str]
    columns: dict[str, list[tuple[str, str]]] = field(default_factory=dict)  # out field -> [(in uri, in field)]
    table: tuple[str, str, str] | None = None  # (namespace, name, type) symlink of the first output


def _dataset_facets(uri: str, fields: list[str], action: Action | None = None, output: bool = False) -> dict[str, Any]:
    facets: dict[str, Any] = {
        "schema": schema_dataset.SchemaDatasetFacet(
            fields=[schema_dataset.SchemaDatasetFacetFields(name=f, type="string") for f in fields]
        )
    }
    if output and action is not None and action.table and uri == action.outputs[0]:
        ns, name, kind = action.table
        facets["symlinks"] = symlinks_dataset.SymlinksDatasetFacet(
            identifiers=[symlinks_dataset.Identifier(namespace=ns, name=name, type=kind)]
        )
    if output and action is not None and action.columns:
        column_fields = {}
        for out_field, sources in action.columns.items():
            input_fields = []
            for in_uri, in_field in sources:
                in_ns, in_name = dataset_identity(in_uri)
                input_fields.append(
                    column_lineage_dataset.InputField(
                        namespace=in_ns,
                        name=in_name,
                        field=in_field,
                        transformations=[column_lineage_dataset.Transformation(type="DIRECT", subtype="IDENTITY")],
                    )
                )
            column_fields[out_field] = column_lineage_dataset.Fields(inputFields=input_fields)
        facets["columnLineage"] = column_lineage_dataset.ColumnLineageDatasetFacet(fields=column_fields)
    return facets


def _time(offset: int) -> str:
    base = datetime.datetime(2026, 11, 21, 12, 0, tzinfo=datetime.UTC)
    return (base + datetime.timedelta(seconds=offset)).isoformat()


def application_events(
    app: str, namespace: str, actions: list[Action], orchestrator: tuple[str, str] | None = None
) -> list[dict[str, Any]]:
    """The events the Spark listener sends for one application, as JSON dicts.

    Application START/COMPLETE (jobType APPLICATION, optional orchestrator parent) and, per
    action, a START with the inputs only, a RUNNING with nothing, and a COMPLETE with the
    outputs and their facets: partial, cumulative events, as the real listener sends them.
    """
    app_run = str(uuid.uuid4())
    app_facets = {}
    if orchestrator:
        app_facets["parent"] = parent_run.ParentRunFacet(
            run=parent_run.Run(runId=str(uuid.uuid4())),
            job=parent_run.Job(namespace=orchestrator[0], name=orchestrator[1]),
        )
    app_job = Job(
        namespace=namespace,
        name=app,
        facets={
            "jobType": job_type_job.JobTypeJobFacet(processingType="BATCH", integration="SPARK", jobType="APPLICATION")
        },
    )
    events: list[Any] = [
        RunEvent(
            eventType=RunState.START,
            eventTime=_time(0),
            run=Run(runId=app_run, facets=app_facets),
            job=app_job,
            producer=PRODUCER,
        )
    ]
    for index, action in enumerate(actions):
        run = Run(
            runId=str(uuid.uuid4()),
            facets={
                "parent": parent_run.ParentRunFacet(
                    run=parent_run.Run(runId=app_run), job=parent_run.Job(namespace=namespace, name=app)
                )
            },
        )
        job = Job(
            namespace=namespace,
            name=f"{app}.{action.name}",
            facets={
                "jobType": job_type_job.JobTypeJobFacet(processingType="BATCH", integration="SPARK", jobType="SQL_JOB")
            },
        )
        fields = sorted({f for f in action.columns} | {"order_id", "amount"})
        inputs = [
            InputDataset(*dataset_identity(uri), facets=_dataset_facets(uri, ["order_id", "amount"]))
            for uri in action.inputs
        ]
        outputs = [
            OutputDataset(*dataset_identity(uri), facets=_dataset_facets(uri, fields, action, output=True))
            for uri in action.outputs
        ]
        events.append(
            RunEvent(
                eventType=RunState.START,
                eventTime=_time(10 * index + 1),
                run=run,
                job=job,
                inputs=inputs,
                producer=PRODUCER,
            )
        )
        events.append(
            RunEvent(eventType=RunState.RUNNING, eventTime=_time(10 * index + 2), run=run, job=job, producer=PRODUCER)
        )
        events.append(
            RunEvent(
                eventType=RunState.COMPLETE,
                eventTime=_time(10 * index + 3),
                run=run,
                job=job,
                outputs=outputs,
                producer=PRODUCER,
            )
        )
    events.append(
        RunEvent(
            eventType=RunState.COMPLETE,
            eventTime=_time(999),
            run=Run(runId=app_run, facets=app_facets),
            job=app_job,
            producer=PRODUCER,
        )
    )
    return [json.loads(Serde.to_json(event)) for event in events]


def sample_pipeline_events(
    lake: str, namespace: str = "emr-lineage-dev", table: tuple[str, str, str] | None = None
) -> list[dict[str, Any]]:
    """Events of the sample order pipeline (5 applications) with datasets under ``lake``."""
    lake = lake.rstrip("/")
    glue_or_local = table or (
        f"file:{lake}/warehouse" if lake.startswith("/") else "hive://metastore",
        "default.customer_ltv",
        "TABLE",
    )
    return (
        application_events(
            "ingest_orders",
            namespace,
            [
                Action(
                    "execute_insert_into_hadoop_fs_relation_command.clean_orders_clean",
                    [f"{lake}/raw/orders/"],
                    [f"{lake}/clean/orders_clean"],
                    columns={
                        "order_id": [(f"{lake}/raw/orders", "order_id")],
                        "amount": [(f"{lake}/raw/orders", "amount")],
                    },
                ),
            ],
        )
        + application_events(
            "revenue_daily",
            namespace,
            [
                Action(
                    "execute_insert_into_hadoop_fs_relation_command.curated_revenue_daily",
                    [f"{lake}/clean/orders_clean"],
                    [f"{lake}/curated/revenue_daily"],
                    columns={"revenue": [(f"{lake}/clean/orders_clean", "amount")]},
                ),
            ],
        )
        + application_events(
            "customer_ltv",
            namespace,
            [
                Action(
                    "create_data_source_table_as_select_command.default_customer_ltv",
                    [f"{lake}/clean/orders_clean"],
                    [f"{lake}/warehouse/customer_ltv"],
                    table=glue_or_local,
                    columns={"ltv": [(f"{lake}/clean/orders_clean", "amount")]},
                ),
            ],
        )
        + application_events(
            "train_model",
            namespace,
            [
                Action(
                    "execute_insert_into_hadoop_fs_relation_command.models_order_value_model",
                    [f"{lake}/clean/orders_clean"],
                    [f"{lake}/models/order_value_model"],
                ),
            ],
        )
        + application_events(
            "score_stream",
            namespace,
            [
                Action(
                    "write_to_data_source_v2.curated_order_scores",
                    [f"{lake}/models/order_value_model", f"{lake}/raw/orders_stream/"],
                    [f"{lake}/curated/order_scores"],
                ),
            ],
        )
    )


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
    """The demo's lineage settings with the real listener jar (fetched by make setup, checked against the pin)."""
    from emr_lineage.listener.maven import local_listener_jar
    from emr_lineage.pipeline.demo import Lineage
    from tests.versions import DEV

    return Lineage(openlineage=DEV.openlineage, jar=local_listener_jar(LISTENER))


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
