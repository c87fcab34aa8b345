"""What the EMR Serverless tests share: a cdk.json with ``emr_serverless`` on, moto with what the
EMR Serverless and gateway stacks publish, a player of job-run states, and a recorder of the requests
as botocore sends them.

moto 5.2.5 creates job runs already ``SUCCESS`` and never moves them (no state manager for
emrserverless). :func:`publish_serverless` makes them born ``SUBMITTED``, as on AWS, by setting the
module constant moto reads (``moto.emrserverless.models.JOB_STATUS``); :class:`RunPlayer` replaces
``emr_serverless.pause`` (the wait between two polls) and moves the latest run to its next scripted
state, or raises Ctrl-C there. The wait loop, the progress output and the exit codes run for real.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import boto3
import pytest

from emr_lineage.aws import clients as aws_clients
from emr_lineage.aws import emr_serverless, parameters
from emr_lineage.listener.artifact import listener_s3_key
from emr_lineage.settings.loader import load_settings
from tests.emr_lineage.moto_backends import DEFAULT_ACCOUNT_ID, emrserverless_backends

REPO_CDK_JSON = Path(__file__).resolve().parents[2] / "cdk.json"
API_KEY = "glk-test-0123456789abcdef-SECRET"  # must never be printed
ROLE_ARN = f"arn:aws:iam::{DEFAULT_ACCOUNT_ID}:role/emr-lineage-dev-serverless-job"
RELEASE = "emr-7.5.0"  # moto accepts only emr-X.Y.0


def serverless_cdk_json(folder: Path, *, enabled: bool = True, gateway: bool = True, env: str = "dev") -> Path:
    """The repository's cdk.json with ``emr_serverless.enabled`` and ``gateway.enabled`` of ``env`` set."""
    document = json.loads(REPO_CDK_JSON.read_text(encoding="utf-8"))
    environment = document["context"]["emr-lineage"]["environments"][env]
    environment["emr_serverless"]["enabled"] = enabled
    environment["gateway"]["enabled"] = gateway
    path = folder / "cdk.json"
    path.write_text(json.dumps(document), encoding="utf-8")
    return path


def publish_serverless(
    monkeypatch: pytest.MonkeyPatch, region: str, bucket: str, *, env: str = "dev", secret: str = API_KEY
) -> str:
    """Inside ``mock_aws``: the application, the job role's ARN, the pinned jar staged in ``bucket``
    and the gateway's API key secret; runs born SUBMITTED. Returns the application id."""
    monkeypatch.setattr("moto.emrserverless.models.JOB_STATUS", "SUBMITTED")
    client = boto3.client(emr_serverless.SERVICE, region_name=region)
    app_id = client.create_application(name=f"emr-lineage-{env}", releaseLabel=RELEASE, type="SPARK")["applicationId"]
    ssm = boto3.client("ssm", region_name=region)
    secret_arn = boto3.client("secretsmanager", region_name=region).create_secret(
        Name=f"emr-lineage-{env}-gateway-api-key", SecretString=secret
    )["ARN"]
    for name, value in {
        parameters.serverless_application_id(env): app_id,
        parameters.serverless_job_role_arn(env): ROLE_ARN,
        parameters.gateway_api_key_secret(env): secret_arn,
    }.items():
        ssm.put_parameter(Name=name, Value=value, Type="String")
    artifact = load_settings(env, REPO_CDK_JSON).versions.openlineage_spark
    boto3.client("s3", region_name=region).put_object(
        Bucket=bucket, Key=listener_s3_key(artifact), Body=b"jar", Metadata={"sha256": artifact.sha256}
    )
    return app_id


def api_key_secret_arn(region: str, env: str = "dev") -> str:
    """The gateway's API key secret, as SSM names it (:func:`publish_serverless` made it)."""
    ssm = boto3.client("ssm", region_name=region)
    return ssm.get_parameter(Name=parameters.gateway_api_key_secret(env))["Parameter"]["Value"]


@dataclass(frozen=True)
class Sent:
    """One request as botocore sends it: the service and operation (of its event's name), and its URL,
    headers and body as text."""

    service: str
    operation: str
    text: str


def record_requests(client: Any, sent: list[Sent]) -> Any:
    """``client``, which now appends each request it sends to ``sent`` (first of the ``before-send``
    handlers: moto answers in a later one)."""

    def hook(request: Any, event_name: str, **_: Any) -> None:
        _, service, operation = event_name.split(".", 2)
        body = request.body
        body = body.decode("utf-8", "replace") if isinstance(body, bytes) else body if isinstance(body, str) else ""
        sent.append(Sent(service, operation, f"{request.url}\n{dict(request.headers)}\n{body}"))

    client.meta.events.register_first("before-send", hook)
    return client


def record_tool_requests(monkeypatch: pytest.MonkeyPatch) -> list[Sent]:
    """Every request of the clients the tools make (:func:`emr_lineage.aws.clients.clients_for`), as sent."""
    sent: list[Sent] = []
    made = aws_clients.new_client
    monkeypatch.setattr(aws_clients, "new_client", lambda *a, **k: record_requests(made(*a, **k), sent))
    return sent


def job_runs(region: str, app_id: str) -> list[Any]:
    """moto's runs of the application, in the order they were started."""
    return list(emrserverless_backends[DEFAULT_ACCOUNT_ID][region].job_runs.get(app_id, []))


class RunPlayer:
    """Replaces ``emr_serverless.pause``: each pause moves the latest run to the next scripted state
    (``"FAILED: reason"`` sets ``stateDetails`` too); an exception class is raised instead (Ctrl-C)."""

    def __init__(self, region: str, app_id: str, script: list[Any]) -> None:
        self.region, self.app_id, self.script = region, app_id, list(script)
        self.pauses: list[float] = []

    def __call__(self, seconds: float) -> None:
        self.pauses.append(seconds)
        if not self.script:
            return
        item = self.script.pop(0)
        if isinstance(item, type):
            raise item()
        state, _, details = item.partition(": ")
        run = job_runs(self.region, self.app_id)[-1]
        run.state, run.state_details = state, details or None


def each_run(states: list[str], runs: int) -> list[str]:
    """The same states for ``runs`` sequential runs (each run's first poll sees SUBMITTED)."""
    return [state for _ in range(runs) for state in states]
