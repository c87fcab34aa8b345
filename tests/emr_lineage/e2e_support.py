"""Shared by the ``emr-lineage e2e`` tests: moto with what the stacks publish, EMR played
between polls, and the Marquez stand-in where the demo's own events arrive as the run goes on.

The events are not hand-written: the real local pipeline runs once per test session
(``python -m emr_lineage demo``, a subprocess so its Spark driver never meets the test
session's), and its events are rewritten to what the same pipeline reports on EMR under the e2e's
parent run (:func:`launched`), then POSTed to the stand-in (``FakeMarquez.phases``).

Rewriting to EMR: the demo's datasets live under a local lake directory (namespace ``file``);
on EMR they live under ``s3://<data lake bucket>``. Every dataset under the local lake root
(inputs, outputs, column-lineage sources) is renamed to ``("s3://<bucket>", "<key>")``, so the
contract is validated with ``lake=s3://<bucket>``, exactly the value ``e2e`` passes on AWS.
The Iceberg tables live under the lake too (their locations move with it); their symlinks keep the
local catalog's namespace, and the contract's ``table:customer_ltv`` matches by symlink.

Under a parent run, the listener gives each application a parent facet naming that run (and it as
root), and each action its application as parent and the same root (spark.openlineage.parent*).
"""

from __future__ import annotations

import copy
import json
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any
from urllib.parse import quote

import boto3
import pytest

from emr_lineage.aws import clients as aws_clients
from emr_lineage.aws import parameters
from emr_lineage.aws.lake import warehouse_uri
from emr_lineage.lineage.events.reader import load_events
from emr_lineage.lineage.times import parse_time
from emr_lineage.spark.conf import PARENT_KEYS, ListenerConfig, ParentContext, emr_configurations
from tests.emr_lineage.demo_run import DemoRun
from tests.emr_lineage.fake_marquez import FakeMarquez, serve
from tests.emr_lineage.moto_backends import DEFAULT_ACCOUNT_ID, emr_backends
from tests.helpers import fake_aws_credentials
from tests.versions import EMR_RELEASE

REGION = "eu-west-1"
ARTIFACTS = "emr-lineage-dev-artifacts-123456789012"
LAKE_BUCKET = "emr-lineage-dev-data-lake-123456789012-eu-west-1"
LOGS = "s3://emr-lineage-dev-logs-123456789012/emr/"
MARQUEZ_WEB = "http://internal-emr-lineage-dev-123.eu-west-1.elb.amazonaws.com/"
# The Marquez page e2e links to: the first output the sample contract names by location (tables go by name)
GRAPH_PAGE = f"lineage/dataset/{quote(f's3://{LAKE_BUCKET}', safe='')}/{quote('curated/order_scores', safe='')}"
NAMESPACE = "emr-lineage-dev"
PARENT_JOB = "emr_lineage_e2e"


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
        "Configurations": emr_configurations(
            listener, glue_catalog_id="123456789012", warehouse=warehouse_uri(LAKE_BUCKET)
        ),
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
    from moto import mock_aws  # imported by the tests that use moto, not when the conftest loads

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


# The e2e's parent run in these tests (ParentContext.new is replaced by it: see ``e2e_parent``).
E2E_PARENT = ParentContext(
    parent_job_namespace=NAMESPACE, parent_job_name=PARENT_JOB, parent_run_id="0199f2e2-0000-7000-8000-0000000e2e00"
)
_PARENT_FACET = "https://openlineage.io/spec/facets/1-1-0/ParentRunFacet.json#/$defs/ParentRunFacet"


def _parent_facet(producer: str, run_id: str, job: dict[str, str], root: ParentContext) -> dict[str, Any]:
    root_job = {"namespace": root.parent_job_namespace, "name": root.parent_job_name}
    return {
        "_producer": producer,
        "_schemaURL": _PARENT_FACET,
        "run": {"runId": run_id},
        "job": job,
        "root": {"run": {"runId": root.parent_run_id}, "job": root_job},
    }


def launched(
    events: list[dict[str, Any]], parent: ParentContext = E2E_PARENT, start: datetime | None = None
) -> list[dict[str, Any]]:
    """``events`` as the listener reports them when the run is launched under ``parent``: applications with
    it as parent and root, actions with it as root; times moved so that the first is ``start`` (default: now)."""
    start = start or datetime.now(UTC)
    first = min(parse_time(e["eventTime"]) for e in events)
    out = []
    for event in copy.deepcopy(events):
        facets = event["run"].setdefault("facets", {})
        old = facets.get("parent")  # an action's: its application stays its parent
        run_id = old["run"]["runId"] if old else parent.parent_run_id
        job = old["job"] if old else {"namespace": parent.parent_job_namespace, "name": parent.parent_job_name}
        facets["parent"] = _parent_facet(event["producer"], run_id, job, parent)
        event["eventTime"] = (start + (parse_time(event["eventTime"]) - first)).isoformat().replace("+00:00", "Z")
        out.append(event)
    return out


def without_job(events: list[dict[str, Any]], app: str) -> list[dict[str, Any]]:
    """The events as if application ``app`` never reported (it and its actions gone)."""
    return [e for e in events if e["job"]["name"].split(".", 1)[0] != app]


# --- the local Marquez (tests/emr_lineage/fake_marquez.py) ----------------------------------


def serve_marquez() -> Iterator[FakeMarquez]:
    """A Marquez with an empty database; tests set the ``phases`` in which events arrive."""
    yield from serve(FakeMarquez())


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


def fresh(events: list[dict[str, Any]]) -> Callable[[], list[dict[str, Any]]]:
    """This run's events (under the e2e's parent run), arriving now."""
    return lambda: launched(events)


@pytest.fixture
def e2e_parent(monkeypatch) -> ParentContext:
    """The parent run every e2e of a test launches under (a new one each run otherwise)."""
    monkeypatch.setattr(ParentContext, "new", classmethod(lambda cls, **_: E2E_PARENT))
    return E2E_PARENT
