"""Shared by the ``emr-lineage e2e`` tests: moto with what the stacks publish, EMR played
between polls, and a local Marquez that serves lineage built from the demo's own events.

The Marquez replies are not hand-written: the real local pipeline runs once per test session
(``python -m emr_lineage demo``, a subprocess so its Spark driver never meets the test
session's), its events are rewritten to what the same pipeline reports on EMR, turned into
the lineage graph with ``build_graph``, and served in Marquez's ``GET /api/v1/lineage`` shape.

Rewriting to EMR: the demo's datasets live under a local lake directory (namespace ``file``);
on EMR they live under ``s3://<data lake bucket>``. Every dataset under the local lake root
(inputs, outputs, column-lineage sources) is renamed to ``("s3://<bucket>", "<key>")``, so the
contract is validated with ``lake=s3://<bucket>``, exactly the value ``e2e`` passes on AWS.
The ``customer_ltv`` table keeps its local location; the contract names it as a catalog table
(``table:customer_ltv``), matched by its symlink on both sides.

Marquez's own naming is reproduced too: under the e2e parent run, an application ``app`` is
stored as ``<parent>.<app>`` with ``parentJobName`` = parent, and its Spark actions as
``<parent>.<app>.<action>`` with ``parentJobName`` = ``<parent>.<app>``; only jobs with
inputs or outputs are in the lineage graph.
"""

from __future__ import annotations

import copy
import json
import uuid
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import boto3
import pytest
from moto import mock_aws
from moto.core import DEFAULT_ACCOUNT_ID
from moto.emr.models import emr_backends

from emr_lineage.aws import clients as aws_clients
from emr_lineage.aws import parameters
from emr_lineage.lineage.events.reader import load_events
from emr_lineage.lineage.graph.from_events import build_graph
from emr_lineage.spark.conf import PARENT_KEYS, ListenerConfig, emr_configurations
from tests.emr_lineage.demo_run import DemoRun
from tests.emr_lineage.fake_marquez import FakeMarquez, serve
from tests.helpers import fake_aws_credentials
from tests.versions import EMR_RELEASE, OPENLINEAGE_VERSION

REGION = "eu-west-1"
ARTIFACTS = "emr-lineage-dev-artifacts-123456789012"
LAKE_BUCKET = "emr-lineage-dev-data-lake-123456789012-eu-west-1"
LOGS = "s3://emr-lineage-dev-logs-123456789012/emr/"
MARQUEZ_WEB = "http://internal-emr-lineage-dev-123.eu-west-1.elb.amazonaws.com/"
NAMESPACE = "emr-lineage-dev"
PARENT_JOB = "emr_lineage_e2e"
# Marquez returns a dataset's facets as the events carried them (with _producer/_schemaURL).
SYMLINKS_FACET = {
    "_producer": f"https://github.com/OpenLineage/OpenLineage/tree/{OPENLINEAGE_VERSION}/client/python",
    "_schemaURL": "https://openlineage.io/spec/facets/1-0-1/SymlinksDatasetFacet.json#/$defs/SymlinksDatasetFacet",
}


# --- AWS (moto) -------------------------------------------------------------------------


def launch_spec() -> dict[str, Any]:
    """A RunJobFlow request minus Steps, the shape the EMR stack publishes."""
    listener = ListenerConfig(api_url="http://internal-marquez.example", namespace=NAMESPACE, timeout_ms=5000)
    return {
        "Name": "emr-lineage-dev",
        "ReleaseLabel": EMR_RELEASE,
        "Applications": [{"Name": "Hadoop"}, {"Name": "Spark"}],
        "LogUri": LOGS,
        "ServiceRole": "emr-lineage-dev-emr-service",
        "JobFlowRole": "emr-lineage-dev-emr-instance-profile",
        "Instances": {
            "InstanceGroups": [
                {"Name": "primary", "InstanceRole": "MASTER", "InstanceType": "m6i.xlarge", "InstanceCount": 1},
                {"Name": "core", "InstanceRole": "CORE", "InstanceType": "m6i.xlarge", "InstanceCount": 2},
            ],
            "Ec2SubnetId": "subnet-0abc1234def567890",
            "KeepJobFlowAliveWhenNoSteps": True,
        },
        "Configurations": emr_configurations(listener, glue_catalog_id="123456789012"),
        "AutoTerminationPolicy": {"IdleTimeout": 1800},
        "Tags": [{"Key": "project", "Value": "emr-lineage"}],
    }


@dataclass
class Aws:
    clients: aws_clients.AwsClients

    def cluster(self):
        """The one cluster of the test, in moto's backend (to play EMR with)."""
        clusters = list(emr_backends[DEFAULT_ACCOUNT_ID][REGION].clusters.values())
        assert len(clusters) == 1, f"expected one cluster, found {len(clusters)}"
        return clusters[0]

    def clusters(self) -> list:
        return list(emr_backends[DEFAULT_ACCOUNT_ID][REGION].clusters.values())

    def keys(self, bucket: str, prefix: str = "") -> list[str]:
        pages = self.clients.s3.get_paginator("list_objects_v2").paginate(Bucket=bucket, Prefix=prefix)
        return sorted(o["Key"] for page in pages for o in page.get("Contents", ()))


def aws_environment(monkeypatch, marquez_api: str | None, *, skip: tuple[str, ...] = ()) -> Iterator[Aws]:
    """moto in-process with the SSM parameters and buckets of a deployed dev environment;
    ``skip`` leaves out parameters by name (to test their absence)."""
    fake_aws_credentials(monkeypatch, REGION)
    for _, env_name in PARENT_KEYS.values():
        monkeypatch.delenv(env_name, raising=False)
    with mock_aws():
        ssm = boto3.client("ssm", region_name=REGION)
        s3 = boto3.client("s3", region_name=REGION)
        published = {
            parameters.emr_launch_spec("dev"): json.dumps(launch_spec()),
            parameters.artifacts_bucket("dev"): ARTIFACTS,
            parameters.data_lake_bucket("dev"): LAKE_BUCKET,
            parameters.marquez_web_url("dev"): MARQUEZ_WEB,
        }
        if marquez_api:
            published[parameters.marquez_api_url("dev")] = marquez_api
        for name, value in published.items():
            if name not in skip:
                ssm.put_parameter(Name=name, Value=value, Type="String")
        for bucket in (ARTIFACTS, LAKE_BUCKET):
            s3.create_bucket(Bucket=bucket, CreateBucketConfiguration={"LocationConstraint": REGION})
        yield Aws(aws_clients.AwsClients(ssm=ssm, s3=s3, emr=boto3.client("emr", region_name=REGION)))


class EmrPlayer:
    """Replaces ``emr_cluster.pause``: between two polls, moves the cluster and its steps to the
    next scripted states (moto never does, moto #1690); ``interrupt`` raises Ctrl-C instead."""

    def __init__(self, aws: Aws, script: list[tuple[str, ...]], interrupt_at: int | None = None) -> None:
        self.aws = aws
        self.script = list(script)
        self.interrupt_at = interrupt_at
        self.pauses = 0

    def __call__(self, _seconds: float) -> None:
        self.pauses += 1
        if self.interrupt_at is not None and self.pauses >= self.interrupt_at:
            raise KeyboardInterrupt
        if self.script:
            cluster_state, *step_states = self.script.pop(0)
            cluster = self.aws.cluster()
            cluster.state = cluster_state
            for step, state in zip(cluster.steps, step_states, strict=False):
                step.state = state


def all_steps(state: str, count: int = 5) -> tuple[str, ...]:
    return tuple([state] * count)


SUCCESS = [("RUNNING", "COMPLETED", "RUNNING", "PENDING", "PENDING", "PENDING"), ("RUNNING", *all_steps("COMPLETED"))]
FAILURE = [("RUNNING", "COMPLETED", "FAILED", "CANCELLED", "CANCELLED", "CANCELLED")]


# --- the demo's events, as EMR would report them ------------------------------------------


def rewrite_lake(events: Any, lake_dir: Path, bucket: str) -> Any:
    """Every dataset reference under the local lake becomes the same key in ``s3://bucket``."""
    root = str(lake_dir).rstrip("/") + "/"

    def walk(value: Any) -> Any:
        if isinstance(value, dict):
            value = {k: walk(v) for k, v in value.items()}
            name = value.get("name")
            if value.get("namespace") == "file" and isinstance(name, str) and name.startswith(root):
                value["namespace"], value["name"] = f"s3://{bucket}", name[len(root) :]
            return value
        if isinstance(value, list):
            return [walk(v) for v in value]
        return value

    return walk(events)


def emr_events(demo: DemoRun, bucket: str = LAKE_BUCKET) -> list[dict[str, Any]]:
    """The demo's events (schema-checked), with its local lake moved to ``s3://bucket``."""
    assert demo.returncode == 0, f"demo failed ({demo.returncode}): {demo.stderr[-2000:]}"
    events = load_events([demo.events_path], strict=True).events
    return rewrite_lake(events, (demo.out / "lake").resolve(), bucket)


def _iso(moment: datetime) -> str:
    return moment.astimezone(UTC).isoformat().replace("+00:00", "Z")


def marquez_lineage(events: list[dict[str, Any]], parent_job: str, run_time: datetime) -> dict[str, Any]:
    """``{"graph": [...]}`` as Marquez answers ``GET /api/v1/lineage`` after ingesting
    ``events`` under an orchestrator parent ``parent_job``; every job's latest run at ``run_time``."""
    graph = build_graph(events, level="action")
    names: dict[str, tuple[str, str | None, str]] = {}  # job id -> (marquez name, parentJobName, simple name)
    for job_id in graph.jobs():
        node = graph.nodes[job_id]
        app, dot, action = node["name"].partition(".")
        if dot:
            names[job_id] = (f"{parent_job}.{app}.{action}", f"{parent_job}.{app}", action)
        else:
            names[job_id] = (f"{parent_job}.{app}", parent_job, app)

    def marquez_id(node_id: str) -> str:
        if node_id in names:
            return f"job:{graph.nodes[node_id]['namespace']}:{names[node_id][0]}"
        return node_id

    at = _iso(run_time)
    nodes = []
    for node_id, attrs in sorted(graph.nodes.items()):
        ins = [(s, node_id) for s in graph.digraph.predecessors(node_id)]
        outs = [(node_id, t) for t in graph.digraph.successors(node_id)]
        if attrs["type"] == "JOB" and not (ins or outs):
            continue  # Marquez's graph holds only jobs with inputs or outputs
        if attrs["type"] == "JOB":
            name, parent_name, simple = names[node_id]
            data = {
                "type": "BATCH",
                "id": {"namespace": attrs["namespace"], "name": name},
                "name": name,
                "simpleName": simple,
                "parentJobName": parent_name,
                "namespace": attrs["namespace"],
                "createdAt": at,
                "updatedAt": at,
                "inputs": [_dataset_id(graph.nodes[s]) for s, _ in ins],
                "outputs": [_dataset_id(graph.nodes[t]) for _, t in outs],
                "latestRun": {
                    "id": str(uuid.uuid4()),
                    "createdAt": at,
                    "updatedAt": at,
                    "state": "COMPLETED",
                    "startedAt": at,
                    "endedAt": at,
                    "durationMs": 0,
                    "args": {},
                    "facets": {},
                },
            }
        else:
            data = {
                "type": "DB_TABLE",
                "id": {"namespace": attrs["namespace"], "name": attrs["name"]},
                "name": attrs["name"],
                "physicalName": attrs["name"],
                "namespace": attrs["namespace"],
                "sourceName": attrs["namespace"],
                "createdAt": at,
                "updatedAt": at,
                "tags": [],
                "fields": [{"name": f["name"], "type": f["type"], "tags": []} for f in attrs["fields"]],
                "facets": {"symlinks": {**SYMLINKS_FACET, "identifiers": attrs["aliases"]}} if attrs["aliases"] else {},
            }
        nodes.append(
            {
                "id": marquez_id(node_id),
                "type": attrs["type"],
                "data": data,
                "inEdges": [{"origin": marquez_id(s), "destination": marquez_id(t)} for s, t in ins],
                "outEdges": [{"origin": marquez_id(s), "destination": marquez_id(t)} for s, t in outs],
            }
        )
    return {"graph": nodes}


def _dataset_id(attrs: dict[str, Any]) -> dict[str, str]:
    return {"namespace": attrs["namespace"], "name": attrs["name"]}


def without_job(reply: dict[str, Any], app: str) -> dict[str, Any]:
    """The reply as if application ``app`` never reported (its jobs and edges gone)."""
    gone = {n["id"] for n in reply["graph"] if n["type"] == "JOB" and f".{app}" in n["id"]}
    nodes = []
    for node in copy.deepcopy(reply["graph"]):
        if node["id"] in gone:
            continue
        for key in ("inEdges", "outEdges"):
            node[key] = [e for e in node[key] if e["origin"] not in gone and e["destination"] not in gone]
        nodes.append(node)
    return {"graph": nodes}


# --- the local Marquez (tests/emr_lineage/fake_marquez.py) ----------------------------------


def serve_marquez() -> Iterator[FakeMarquez]:
    """A fresh fake Marquez knowing the e2e namespace; tests set its lineage ``phases``."""
    yield from serve(FakeMarquez(namespaces=[{"name": NAMESPACE}]))


class LineageClock:
    """Replaces ``e2e.clock`` and ``e2e.pause``: each pause moves time on by its length and
    lets Marquez move to its next phase (lineage "arrives" between two reads)."""

    def __init__(self, marquez: FakeMarquez | None = None) -> None:
        self.now = 0.0
        self.pauses: list[float] = []
        self.marquez = marquez

    def __call__(self) -> float:
        return self.now

    def pause(self, seconds: float) -> None:
        self.pauses.append(seconds)
        self.now += seconds
        if self.marquez is not None:
            self.marquez.advance()


# --- fixtures of the e2e module and command tests (registered in tests/emr_lineage/conftest.py) ---


@pytest.fixture
def e2e_aws(monkeypatch, e2e_marquez):
    """moto with everything the deployed stacks publish, pointing at ``e2e_marquez``."""
    yield from aws_environment(monkeypatch, e2e_marquez.url)


@pytest.fixture
def lineage_clock(monkeypatch, e2e_marquez) -> LineageClock:
    from emr_lineage.pipeline import e2e_lineage as e2e

    clock = LineageClock(e2e_marquez)
    monkeypatch.setattr(e2e, "clock", clock)
    monkeypatch.setattr(e2e, "pause", clock.pause)
    return clock


def fresh(events: list[dict[str, Any]]) -> Callable[[], dict[str, Any]]:
    """Marquez after this run: every job's latest run is from now (after the cluster started)."""
    return lambda: marquez_lineage(events, PARENT_JOB, datetime.now(UTC))
