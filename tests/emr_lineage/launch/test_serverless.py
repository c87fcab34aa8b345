"""emr_lineage.launch.serverless against moto's in-process SSM, S3, Secrets Manager and EMR Serverless:
what a job run's request holds, where its parts come from, and that it names the API key's secret
and never holds the key."""

from __future__ import annotations

import hashlib
import io
import json
import warnings
import zipfile
from pathlib import Path

import boto3
import pytest
from cryptography.hazmat.primitives.serialization import pkcs12

from emr_lineage.aws import parameters
from emr_lineage.aws.clients import AwsError
from emr_lineage.aws.trusted_ca import TrustedCaError
from emr_lineage.cli.launch_serverless import listener_of
from emr_lineage.launch import plan as launch_plan
from emr_lineage.launch import serverless
from emr_lineage.settings.loader import load_settings
from emr_lineage.spark.conf import MASK
from tests import pki
from tests.emr_lineage.launch_support import BUCKET, REGION, launch_spec
from tests.emr_lineage.serverless_support import (
    API_KEY,
    ROLE_ARN,
    Sent,
    api_key_secret_arn,
    publish_serverless,
    record_requests,
    serverless_cdk_json,
)
from tests.stacks.variants import CERTIFICATE_ARN

KEY_PROPERTY = "spark.openlineage.transport.auth.apiKey"


@pytest.fixture
def app_id(launch_aws, monkeypatch) -> str:
    return publish_serverless(monkeypatch, REGION, BUCKET)


@pytest.fixture
def sent() -> list[Sent]:
    return []


@pytest.fixture
def clients(app_id, sent) -> serverless.ServerlessClients:
    made = {
        name: record_requests(boto3.client(name, region_name=REGION), sent) for name in ("ssm", "s3", "emr-serverless")
    }
    return serverless.ServerlessClients(made["ssm"], made["s3"], made["emr-serverless"])


@pytest.fixture
def job(tmp_path: Path) -> launch_plan.JobRequest:
    script = tmp_path / "revenue_daily.py"
    script.write_text("print('hi')\n")
    return launch_plan.JobRequest(script=script, args=("--date", "2026-11-20"))


def settings_for(tmp_path: Path, **kwargs):
    return load_settings("dev", serverless_cdk_json(tmp_path, **kwargs))


def test_the_target_comes_from_what_the_stacks_publish(clients, app_id, tmp_path) -> None:
    settings = settings_for(tmp_path)
    target = serverless.resolve_target(clients, settings, listener_of(settings))
    assert (target.application_id, target.role_arn, target.bucket) == (app_id, ROLE_ARN, BUCKET)
    assert target.lineage_url == "http://marquez.internal.example:5000"  # the clusters' launch spec's
    assert target.glue_catalog_id == "123456789012"
    assert target.log_uri == f"s3://{BUCKET}/serverless-logs/"
    assert target.api_key_secret == api_key_secret_arn(REGION)  # the ARN SSM publishes, not the key


def test_without_the_gateway_there_is_no_secret_to_name(clients, tmp_path) -> None:
    settings = settings_for(tmp_path, gateway=False)
    assert serverless.resolve_target(clients, settings, listener_of(settings)).api_key_secret is None


def test_a_launch_spec_without_a_transport_url_is_an_error(clients, launch_aws, tmp_path) -> None:
    spec = launch_spec()
    spec["Configurations"] = []
    launch_aws.ssm.put_parameter(
        Name=parameters.emr_launch_spec("dev"), Value=json.dumps(spec), Type="String", Overwrite=True
    )
    settings = settings_for(tmp_path)
    with pytest.raises(AwsError, match="has no spark.openlineage.transport.url in spark-defaults"):
        serverless.resolve_target(clients, settings, listener_of(settings))


def test_the_request_and_what_may_be_shown_of_it(clients, app_id, job, tmp_path) -> None:
    settings = settings_for(tmp_path)
    plan = serverless.prepare_serverless(clients, settings, [job], listener=listener_of(settings), parent=None)
    (request,) = plan.requests
    assert plan.parent_is_new and plan.timeout_minutes == settings.emr_serverless.job_timeout_minutes
    assert request["applicationId"] == app_id and request["executionRoleArn"] == ROLE_ARN
    assert request["name"] == "revenue_daily" and request["executionTimeoutMinutes"] == 120
    assert request["jobDriver"]["sparkSubmit"] == {
        "entryPoint": plan.staged[0].uri,
        "entryPointArguments": ["--date", "2026-11-20"],
    }
    (defaults,) = request["configurationOverrides"]["applicationConfiguration"]
    assert defaults["properties"]["spark.openlineage.transport.auth.type"] == "api_key"
    assert defaults["properties"][KEY_PROPERTY] == f"EMR.secret@{api_key_secret_arn(REGION)}"
    assert serverless.redacted(request) == request  # a reference is no secret: shown as sent
    assert API_KEY not in json.dumps(request) and API_KEY not in repr(plan)
    assert plan.staged[0].uploaded


def test_a_module_the_job_imports_travels_with_it(clients, app_id, tmp_path) -> None:
    script, helper = tmp_path / "report.py", tmp_path / "as_of.py"
    script.write_text("import as_of\n")
    helper.write_text("x = 1\n")
    settings = settings_for(tmp_path)
    job = launch_plan.JobRequest(script=script)
    plan = serverless.prepare_serverless(clients, settings, [job], listener=listener_of(settings), parent=None)
    (request,) = plan.requests
    (defaults,) = request["configurationOverrides"]["applicationConfiguration"]
    assert defaults["properties"]["spark.submit.pyFiles"] == plan.staged[0].py_files[0]
    assert plan.staged[0].py_files[0].endswith("/as_of.py")


def test_the_start_job_run_sent_names_the_secret_and_never_holds_the_key(clients, app_id, job, tmp_path, sent) -> None:
    settings = settings_for(tmp_path)
    plan = serverless.prepare_serverless(clients, settings, [job], listener=listener_of(settings), parent=None)
    serverless.start_run(clients.emr_serverless, plan.requests[0])
    (start,) = [s for s in sent if s.operation == "StartJobRun"]
    assert f'"{KEY_PROPERTY}": "EMR.secret@{api_key_secret_arn(REGION)}"' in start.text
    assert not [s for s in sent if API_KEY in s.text]  # in no request to any service, the start's included
    assert {s.service for s in sent} == {"ssm", "s3", "emr-serverless"}  # Secrets Manager is never called


def test_two_requests_never_share_a_client_token(clients, app_id, job, tmp_path) -> None:
    settings = settings_for(tmp_path)
    first, second = (
        serverless.prepare_serverless(clients, settings, [job], listener=listener_of(settings), parent=None)
        for _ in range(2)
    )
    assert first.requests[0]["clientToken"] != second.requests[0]["clientToken"]


def test_an_unpinned_jar_is_bad_input(clients, app_id, job, tmp_path) -> None:
    settings = settings_for(tmp_path)
    unpinned = settings.model_copy(
        update={
            "versions": settings.versions.model_copy(
                update={"openlineage_spark": settings.versions.openlineage_spark.model_copy(update={"sha256": None})}
            )
        }
    )
    with pytest.raises(launch_plan.JobError, match="the listener jar is not pinned"):
        serverless.prepare_serverless(clients, unpinned, [job], listener=listener_of(unpinned), parent=None)


def test_an_aws_error_never_quotes_a_key_given_with_conf(clients, app_id, job, tmp_path, monkeypatch) -> None:
    settings = settings_for(tmp_path)
    mine = {KEY_PROPERTY: "my-own-key-0123456789"}
    plan = serverless.prepare_serverless(
        clients, settings, [job], listener=listener_of(settings), parent=None, user_properties=mine
    )
    assert (
        serverless.redacted(plan.requests[0])["configurationOverrides"]["applicationConfiguration"][0]["properties"][
            KEY_PROPERTY
        ]
        == MASK
    )

    def quoting(client, request):
        raise AwsError(
            "EMR Serverless refused to start the job run x (ValidationException: bad value my-own-key-0123456789)"
        )

    monkeypatch.setattr(serverless.emr_serverless, "start_job_run", quoting)
    with pytest.raises(AwsError) as raised:
        serverless.start_run(clients.emr_serverless, plan.requests[0])
    assert "my-own-key" not in str(raised.value) and f"bad value {MASK}" in str(raised.value)


def test_a_refused_start_is_one_aws_error(clients, app_id, job, tmp_path) -> None:
    settings = settings_for(tmp_path)
    plan = serverless.prepare_serverless(clients, settings, [job], listener=listener_of(settings), parent=None)
    request = {**plan.requests[0], "executionRoleArn": "arn:aws:iam::999999999999:role/elsewhere"}
    with pytest.raises(AwsError, match="Cross-account pass role is not allowed") as raised:
        serverless.start_run(clients.emr_serverless, request)
    assert "\n" not in str(raised.value) and API_KEY not in str(raised.value)


def trusting(tmp_path: Path, bundle: bytes, *, pin: bytes | None = None):
    """dev with HTTPS and openlineage.trusted_ca: ``bundle`` in S3, pinned to ``pin`` (default: itself)."""
    path = serverless_cdk_json(tmp_path)
    document = json.loads(path.read_text())
    env = document["context"]["emr-lineage"]["environments"]["dev"]
    env["marquez"].update(certificate_arn=CERTIFICATE_ARN, domain_name="lineage.dev.example.com")
    env["openlineage"]["trusted_ca"] = {
        "type": "s3",
        "uri": f"s3://{BUCKET}/pki/estate.pem",
        "sha256": hashlib.sha256(pin or bundle).hexdigest(),
    }
    path.write_text(json.dumps(document))
    boto3.client("s3", region_name=REGION).put_object(Bucket=BUCKET, Key="pki/estate.pem", Body=bundle)
    return load_settings("dev", path)


def test_with_a_trusted_ca_the_driver_loads_a_staged_truststore_holding_it(clients, app_id, job, tmp_path) -> None:
    root = pki.certificate_authority("Estate Root CA")
    settings = trusting(tmp_path, root.pem)

    plan = serverless.prepare_serverless(clients, settings, [job], listener=listener_of(settings), parent=None)

    properties = serverless.spark_defaults_of_request(plan.requests[0])
    archive, alias = properties["spark.archives"].split("#")
    assert alias == "emr-lineage-truststore" and archive.startswith(f"s3://{BUCKET}/truststores/")
    assert f"-Djavax.net.ssl.trustStore={alias}/truststore.p12" in properties["spark.driver.extraJavaOptions"]
    staged = boto3.client("s3", region_name=REGION).get_object(Bucket=BUCKET, Key=archive.split("/", 3)[3])
    with zipfile.ZipFile(io.BytesIO(staged["Body"].read())) as zipped:
        store = zipped.read("truststore.p12")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # a few public roots' serial numbers, as public_roots() says
        holds = pkcs12.load_pkcs12(store, b"changeit")
    assert root.certificate in [entry.certificate for entry in holds.additional_certs]


def test_a_trusted_ca_bundle_that_is_not_the_pinned_one_stops_the_launch(clients, app_id, job, tmp_path) -> None:
    settings = trusting(tmp_path, pki.certificate_authority("Someone Else").pem, pin=b"the estate's bundle")
    with pytest.raises(TrustedCaError, match="not the pinned"):
        serverless.prepare_serverless(clients, settings, [job], listener=listener_of(settings), parent=None)
    assert not [
        k
        for k in boto3.client("s3", region_name=REGION).list_objects_v2(Bucket=BUCKET).get("Contents", [])
        if k["Key"].startswith("truststores/")
    ]
