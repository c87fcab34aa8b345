"""What the tls and doctor tests share: a cdk.json copy to vary, and a moto account prepared the way
a deployed environment leaves it (each test module makes its ``aws`` fixture of :func:`moto_account`)."""

from __future__ import annotations

import dataclasses
import datetime as dt
import functools
import json
import os
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import boto3
import pytest
from moto import mock_aws

from emr_lineage.aws import parameters
from emr_lineage.aws.artifacts import TLS_CERTIFICATES_KEY
from emr_lineage.aws.stacks import stack_name, stack_parts
from emr_lineage.aws.upload import SHA256_METADATA_KEY
from emr_lineage.listener.artifact import listener_s3_key
from emr_lineage.operations import checks
from emr_lineage.operations.checks import CDK_TOOLKIT_STACK, EMR_CLEANUP_ROLE, DoctorClients
from emr_lineage.operations.tls import ZipCertificate, certificate_zip, read_certificate_zip
from emr_lineage.settings.loader import load_settings
from emr_lineage.settings.model import EnvironmentSettings
from tests.emr_lineage.launch_support import launch_spec
from tests.emr_lineage.operations import moto_state
from tests.helpers import fake_aws_credentials
from tests.paths import CDK_JSON

REGION = "eu-west-1"
ENV = "dev"
BUCKET = "emr-lineage-dev-artifacts-123456789012"
PIN = "ab" * 32
API_KEY = "k" * 48  # the gateway's API key as the stack makes it: letters and digits
SECURITY_CONFIGURATION = launch_spec()["SecurityConfiguration"]
# The lineage stack's RDS instance: its identifier ends in the stack id's first digits.
DATABASE_ID = f"emr-lineage-{ENV}-marquez-0a1b2c3d"


def cdk_json_copy(
    tmp_path: Path,
    *,
    sha256: str | None = PIN,
    in_transit_encryption: bool = True,
    gateway: bool = True,
    serverless: bool = False,
) -> Path:
    """cdk.json with the listener pin and the dev environment's switches set as given."""
    document = json.loads(CDK_JSON.read_text())
    block = document["context"]["emr-lineage"]
    block["versions"]["openlineage_spark"]["sha256"] = sha256
    block["environments"][ENV]["emr"]["in_transit_encryption"] = in_transit_encryption
    block["environments"][ENV]["gateway"]["enabled"] = gateway
    block["environments"][ENV]["emr_serverless"]["enabled"] = serverless
    path = tmp_path / "cdk.json"
    path.write_text(json.dumps(document))
    return path


# The clients of the current moto account by service: making one takes milliseconds, and a test asks often.
_CLIENTS: dict[str, Any] = {}


# What read_certificate_zip makes of a zip, by its bytes: it checks the RSA key it loads (about 70 ms), and
# each doctor run of a prepared account reads the same zip. A zip it refuses is read each time.
_READ_ZIPS: dict[bytes, ZipCertificate] = {}


def _read_certificate_zip_once(data: bytes) -> ZipCertificate:
    if data not in _READ_ZIPS:
        _READ_ZIPS[data] = read_certificate_zip(data)
    return _READ_ZIPS[data]


def moto_account(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """An empty moto account in REGION, for as long as the generator is suspended; doctor's check of the
    TLS zip reads each zip once in the process (:func:`_read_certificate_zip_once`)."""
    fake_aws_credentials(monkeypatch, REGION)
    monkeypatch.setattr(checks, "read_certificate_zip", _read_certificate_zip_once)
    monkeypatch.delenv("AWS_REGION", raising=False)
    _CLIENTS.clear()
    try:
        with mock_aws():
            yield
    finally:
        _CLIENTS.clear()


def client(name: str) -> Any:
    """A client of ``name`` in REGION, made once per moto account."""
    if name not in _CLIENTS:
        _CLIENTS[name] = boto3.client(name, region_name=REGION)
    return _CLIENTS[name]


# doctor_clients' clients, by what decides them: the settings' region, the environment's and the timeout.
_DOCTOR_CLIENTS: dict[tuple[str | None, str | None, str | None, float], DoctorClients] = {}


def doctor_clients(settings: EnvironmentSettings, timeout: float) -> DoctorClients:
    """run_doctor's connect for the tests of its rows: doctor's own clients (DoctorClients.for_settings), made
    once per region and timeout in the process rather than once per run. They hold no account state: each
    call is answered from the moto account of the test that makes it. test_checks.py and the CLI tests
    connect as doctor does, once per run."""
    key = (settings.region, os.environ.get("AWS_REGION"), os.environ.get("AWS_DEFAULT_REGION"), timeout)
    if key not in _DOCTOR_CLIENTS:
        _DOCTOR_CLIENTS[key] = DoctorClients.for_settings(settings, timeout)
    return _DOCTOR_CLIENTS[key]


def security_configuration(certificates: str | None) -> str:
    """The EMR stack's document: in-transit encryption reading ``certificates`` (or off)."""
    encryption: dict[str, Any] = {
        "EnableAtRestEncryption": False,
        "EnableInTransitEncryption": certificates is not None,
    }
    if certificates:
        encryption["InTransitEncryptionConfiguration"] = {
            "TLSCertificateConfiguration": {"CertificateProviderType": "PEM", "S3Object": certificates}
        }
    return json.dumps({"EncryptionConfiguration": encryption})


def deploy_emr_stack_outputs(*, certificates: str | None = f"s3://{BUCKET}/{TLS_CERTIFICATES_KEY}") -> None:
    """The artifacts bucket, its SSM parameters and the security configuration the launch spec names."""
    ssm = client("ssm")
    ssm.put_parameter(Name=parameters.artifacts_bucket(ENV), Value=BUCKET, Type="String")
    ssm.put_parameter(Name=parameters.emr_launch_spec(ENV), Value=json.dumps(launch_spec()), Type="String")
    client("s3").create_bucket(Bucket=BUCKET, CreateBucketConfiguration={"LocationConstraint": REGION})
    client("emr").create_security_configuration(
        Name=SECURITY_CONFIGURATION, SecurityConfiguration=security_configuration(certificates)
    )


@dataclass(frozen=True)
class PreparedAccount:
    settings: EnvironmentSettings
    dead_letter_queue_url: str
    api_key_secret_arn: str
    serverless_application_id: str | None = None


SERVERLESS_JOB_ROLE = "arn:aws:iam::123456789012:role/emr-lineage-dev-serverless-job"


def deploy_serverless_application(settings: EnvironmentSettings, release: str | None = None) -> str:
    """The EMR stack's serverless application at ``release`` (default: the clusters'), and its SSM parameters."""
    application = client("emr-serverless").create_application(
        name=f"{settings.resource_prefix}-spark", releaseLabel=release or settings.emr.release_label, type="SPARK"
    )["applicationId"]
    ssm = client("ssm")
    ssm.put_parameter(Name=parameters.serverless_application_id(ENV), Value=application, Type="String", Overwrite=True)
    ssm.put_parameter(
        Name=parameters.serverless_job_role_arn(ENV), Value=SERVERLESS_JOB_ROLE, Type="String", Overwrite=True
    )
    return application


# What prepare_account left in an empty account, by what it was given: (moto's state, the PreparedAccount).
_PREPARED: dict[tuple[str, str, dt.datetime | None], tuple[bytes, PreparedAccount]] = {}


def prepare_account(cdk_json: Path, marquez_url: str, *, now: dt.datetime | None = None) -> PreparedAccount:
    """Everything doctor checks, in place: bootstrap, the cleanup role, every stack, the SSM
    parameters, the pinned jar, the TLS zip (made by ``emr-lineage tls``'s own function at ``now``,
    default the real time of the process's first preparation: valid for a year), the gateway's API key
    secret (one value, never rotated) and an empty dead-letter queue; with ``emr_serverless.enabled``,
    the serverless application.

    In an empty account the process's first preparation with the same cdk.json, URL and ``now`` is
    made by the AWS calls, and the later ones restore a copy of the state it left (moto_state): the same
    resources, identifiers and dates."""
    key = (cdk_json.read_text(), marquez_url, now)
    if not moto_state.untouched():
        return _prepare(cdk_json, marquez_url, now)
    if key not in _PREPARED:
        prepared = _prepare(cdk_json, marquez_url, now)
        _PREPARED[key] = (moto_state.take(), prepared)
        return prepared
    snapshot, prepared = _PREPARED[key]
    moto_state.restore(snapshot)
    return dataclasses.replace(prepared, settings=load_settings(ENV, cdk_json))


def _prepare(cdk_json: Path, marquez_url: str, now: dt.datetime | None) -> PreparedAccount:
    """prepare_account's AWS calls."""
    settings = load_settings(ENV, cdk_json)
    template = {"Resources": {"Topic": {"Type": "AWS::SNS::Topic"}}, "Outputs": {"Topic": {"Value": "t"}}}
    cloudformation = client("cloudformation")
    toolkit = {"Resources": template["Resources"], "Outputs": {"BootstrapVersion": {"Value": "30"}}}
    cloudformation.create_stack(StackName=CDK_TOOLKIT_STACK, TemplateBody=json.dumps(toolkit))
    for part in stack_parts(settings):
        cloudformation.create_stack(StackName=stack_name(ENV, part), TemplateBody=json.dumps(template))
    client("iam").create_role(
        RoleName=EMR_CLEANUP_ROLE,
        Path="/aws-service-role/elasticmapreduce.amazonaws.com/",
        AssumeRolePolicyDocument=json.dumps({"Version": "2012-10-17", "Statement": []}),
    )
    deploy_emr_stack_outputs()
    s3 = client("s3")
    artifact = settings.versions.openlineage_spark
    s3.put_object(
        Bucket=BUCKET, Key=listener_s3_key(artifact), Body=b"jar", Metadata={SHA256_METADATA_KEY: artifact.sha256 or ""}
    )
    s3.put_object(Bucket=BUCKET, Key=TLS_CERTIFICATES_KEY, Body=_tls_zip(now))
    sqs = client("sqs")
    queue = sqs.create_queue(QueueName="lineage.fifo", Attributes={"FifoQueue": "true"})["QueueUrl"]
    dlq = sqs.create_queue(QueueName="lineage-dlq.fifo", Attributes={"FifoQueue": "true"})["QueueUrl"]
    secret = client("secretsmanager").create_secret(Name="gateway-api-key", SecretString=API_KEY)["ARN"]
    ssm = client("ssm")
    for name, value in {
        parameters.marquez_api_url(ENV): marquez_url,
        parameters.marquez_web_url(ENV): marquez_url + "/",
        parameters.marquez_database_id(ENV): DATABASE_ID,
        parameters.data_lake_bucket(ENV): "emr-lineage-dev-data-lake",
        parameters.gateway_archive_bucket(ENV): "emr-lineage-dev-archive",
        parameters.gateway_queue_url(ENV): queue,
        parameters.gateway_dead_letter_queue_url(ENV): dlq,
        parameters.gateway_api_key_secret(ENV): secret,
        parameters.gateway_athena_workgroup(ENV): "emr-lineage-dev-lineage-archive",
        parameters.gateway_archive_database(ENV): "emr_lineage_dev_lineage_archive",
        parameters.gateway_athena_results(ENV): "s3://emr-lineage-dev-archive/athena-results/",
    }.items():
        ssm.put_parameter(Name=name, Value=value, Type="String")
    deploy_database(settings)
    serverless = deploy_serverless_application(settings) if settings.emr_serverless.enabled else None
    return PreparedAccount(settings, dlq, secret, serverless)


@functools.cache
def _tls_zip(now: dt.datetime | None) -> bytes:
    """The TLS zip of the preparations at ``now``: one RSA key for them all, made at the first (whatever
    else differs between them, the zip does not)."""
    return certificate_zip(REGION, now=now).data


def deploy_database(settings: EnvironmentSettings, version: str = "17.6") -> None:
    """The lineage service's database instance, running PostgreSQL ``version``."""
    client("rds").create_db_instance(
        DBInstanceIdentifier=DATABASE_ID,
        DBInstanceClass="db.t4g.micro",
        Engine="postgres",
        EngineVersion=version,
        MasterUsername="marquez",
        MasterUserPassword="not-a-secret-0",
        AllocatedStorage=20,
    )
