"""``run_doctor`` against moto: an empty account, a prepared one, and one problem at a time."""

from __future__ import annotations

import datetime as dt
import json
import urllib.request
from collections.abc import Iterator
from pathlib import Path

import pytest

from emr_lineage.aws import parameters
from emr_lineage.aws.artifacts import TLS_CERTIFICATES_KEY
from emr_lineage.aws.stacks import stack_name
from emr_lineage.aws.upload import SHA256_METADATA_KEY
from emr_lineage.listener.artifact import listener_s3_key
from emr_lineage.marquez.api import API_ROOT, LINEAGE_ENDPOINT
from emr_lineage.operations import lake
from emr_lineage.operations.checks import CDK_TOOLKIT_STACK, EMR_CLEANUP_ROLE, Status
from emr_lineage.operations.doctor import DoctorOptions, Report, run_doctor
from emr_lineage.operations.network import SUBNET_TAGS_CHECK
from emr_lineage.operations.probes import UNLISTABLE_FIX
from emr_lineage.settings.loader import load_settings
from tests.emr_lineage.fake_marquez import Answer, FakeMarquez
from tests.emr_lineage.lineage.rule_events import facet, run_event
from tests.emr_lineage.operations.prepared_account import (
    BUCKET,
    ENV,
    PIN,
    REGION,
    cdk_json_copy,
    client,
    moto_account,
    prepare_account,
)
from tests.helpers import without_aws_credentials


@pytest.fixture
def aws(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    yield from moto_account(monkeypatch)


NOW = dt.datetime(2026, 11, 23, 12, 0, tzinfo=dt.UTC)
OPTIONS = DoctorOptions(timeout=5, clock=lambda: NOW)


def by_check(report: Report) -> dict[str, tuple[Status, str, str]]:
    return {r.check: (r.status, r.detail, r.fix) for r in report.results}


def gateway_in_front(marquez: FakeMarquez) -> None:
    """The load balancer's rule: POST /api/v1/lineage goes to the ingest, which wants a key."""
    marquez.routes[f"POST {LINEAGE_ENDPOINT}"] = lambda state, request: Answer(
        401, {"error": "missing or wrong Authorization: Bearer <key>"}, headers={"WWW-Authenticate": "Bearer"}
    )


def test_an_empty_account_names_each_missing_prerequisite_and_its_fix(aws, tmp_path: Path) -> None:
    settings = load_settings(ENV, cdk_json_copy(tmp_path, sha256=None))
    report = run_doctor(settings, OPTIONS)
    checks = by_check(report)
    assert not report.passed
    assert checks["credentials"][0] is Status.PASS and "123456789012" in checks["credentials"][1]
    assert checks["cdk-bootstrap"] == (
        Status.FAIL,
        f"no {CDK_TOOLKIT_STACK} stack in 123456789012/{REGION}",
        f"npx cdk bootstrap aws://123456789012/{REGION}",
    )
    assert checks["emr-cleanup-role"][0] is Status.FAIL and EMR_CLEANUP_ROLE in checks["emr-cleanup-role"][1]
    assert (
        "create-service-linked-role --aws-service-name elasticmapreduce.amazonaws.com" in checks["emr-cleanup-role"][2]
    )
    for part in ("Network", "LineageService", "DataLake", "Gateway", "Emr", "Monitoring"):
        assert checks[f"stack:{stack_name(ENV, part)}"] == (Status.FAIL, "not deployed", f"make deploy ENV={ENV}")
    assert checks["ssm-parameters"][0] is Status.FAIL and "13 of 13 missing" in checks["ssm-parameters"][1]
    assert checks["database"] == (
        Status.SKIP,
        f"skipped (needs SSM parameter {parameters.marquez_database_id(ENV)})",
        "",
    )
    assert (
        checks["listener-pin"][0] is Status.FAIL
        and checks["listener-pin"][2] == f"emr-lineage listener stage --env {ENV} --pin"
    )
    assert checks["listener-jar"] == (Status.SKIP, "skipped (needs the listener pin)", "")
    assert checks["tls-certificates"][0] is Status.SKIP
    assert parameters.artifacts_bucket(ENV) in checks["tls-certificates"][1]
    assert checks["marquez"][0] is Status.SKIP and "--marquez URL" in checks["marquez"][1]
    assert checks["gateway"][0] is Status.SKIP
    assert checks["gateway-api-key"] == (
        Status.SKIP,
        f"skipped (needs SSM parameter {parameters.gateway_api_key_secret(ENV)})",
        "",
    )
    assert checks["dead-letter-queue"][0] is Status.SKIP


def test_a_prepared_account_passes(aws, tmp_path: Path, marquez: FakeMarquez) -> None:
    gateway_in_front(marquez)
    prepared = prepare_account(cdk_json_copy(tmp_path, serverless=True), marquez.url, now=NOW)
    report = run_doctor(prepared.settings, OPTIONS)
    assert report.passed, [r for r in report.results if r.status is not Status.PASS]
    checks = by_check(report)
    # dev pulls the Marquez images from Docker Hub as named: no cache to check, a warning about the limit
    assert checks["marquez-image-credentials"][0] is checks["marquez-image-cache"][0] is Status.SKIP
    assert checks["marquez-images"][0] is Status.WARN
    # the network stack creates the VPC and tags its subnets, dev makes its own lake: nothing to check
    assert checks[SUBNET_TAGS_CHECK][:2] == (Status.SKIP, "not needed: the network stack tags the subnets it creates")
    assert checks["existing-lake"][:2] == (Status.SKIP, f"not needed: {lake.NOT_CONFIGURED}")
    # Java trusts the load balancer's certificate by itself: no CA to check it against
    assert checks["trusted-ca"][:2] == (Status.SKIP, "not needed: no openlineage.trusted_ca (Java's own trust)")
    # dev has no spoke accounts
    assert checks["gateway-spoke-keys"][:2] == (Status.SKIP, "not needed: no gateway.spoke_accounts")
    # no hub (test_hub_endpoint.py): the environment runs its own lineage service
    not_needed = {SUBNET_TAGS_CHECK, "existing-lake", "trusted-ca", "hub-endpoint", "gateway-spoke-keys"}
    others = [r for r in report.results if not r.check.startswith("marquez-image") and r.check not in not_needed]
    assert {r.status for r in others} == {Status.PASS}
    tls_detail = by_check(report)["tls-certificates"][1]
    assert (
        tls_detail
        == f"s3://{BUCKET}/{TLS_CERTIFICATES_KEY}: *.{REGION}.compute.internal, valid until 2027-11-23 (365 days)"
    )
    assert f"POST {LINEAGE_ENDPOINT}" in marquez.requests[-1] and marquez.posted == []  # no lineage sent


def test_a_message_in_the_dead_letter_queue_fails_with_the_redrive(aws, tmp_path: Path, marquez: FakeMarquez) -> None:
    gateway_in_front(marquez)
    prepared = prepare_account(cdk_json_copy(tmp_path), marquez.url, now=NOW)
    client("sqs").send_message(
        QueueUrl=prepared.dead_letter_queue_url, MessageBody="{}", MessageGroupId="run", MessageDeduplicationId="1"
    )
    status, detail, fix = by_check(run_doctor(prepared.settings, OPTIONS))["dead-letter-queue"]
    assert status is Status.FAIL and detail.startswith("1 message(s) in arn:aws:sqs:")
    assert "aws sqs start-message-move-task --source-arn arn:aws:sqs:" in fix and "emr-lineage gateway replay" in fix


def test_marquez_without_the_gateway_route_fails_the_gateway_check(aws, tmp_path: Path, marquez: FakeMarquez) -> None:
    # POST /api/v1/lineage reaches Marquez
    prepared = prepare_account(cdk_json_copy(tmp_path), marquez.url, now=NOW)
    checks = by_check(run_doctor(prepared.settings, OPTIONS))
    assert checks["marquez"][0] is Status.PASS
    status, detail, fix = checks["gateway"]
    assert (
        status is Status.FAIL
        and "HTTP 422, not 401" in detail
        and fix == f"deploy the Gateway stack (make deploy ENV={ENV})"
    )
    assert marquez.posted == []  # Marquez refused the empty body: nothing was recorded


def test_an_unreachable_marquez_says_how_to_reach_the_internal_load_balancer(
    aws, tmp_path: Path, closed_port_url: str
) -> None:
    prepared = prepare_account(cdk_json_copy(tmp_path, gateway=False), closed_port_url, now=NOW)
    checks = by_check(run_doctor(prepared.settings, DoctorOptions(timeout=2)))
    status, detail, fix = checks["marquez"]
    assert status is Status.FAIL and "unreachable" in detail and "--marquez http://localhost:5080" in fix
    assert checks["gateway"] == (Status.SKIP, "not needed: gateway.enabled is false", "")
    assert checks["dead-letter-queue"][1] == "not needed: gateway.enabled is false"
    assert f"stack:{stack_name(ENV, 'Gateway')}" not in checks


def test_the_marquez_option_replaces_the_parameter(aws, tmp_path: Path, marquez: FakeMarquez, closed_port_url) -> None:
    gateway_in_front(marquez)
    prepared = prepare_account(cdk_json_copy(tmp_path), closed_port_url, now=NOW)
    checks = by_check(run_doctor(prepared.settings, DoctorOptions(marquez_url=marquez.url, timeout=5)))
    assert checks["marquez"][0] is checks["gateway"][0] is Status.PASS


def test_a_stale_jar_and_a_missing_zip(aws, tmp_path: Path, marquez: FakeMarquez) -> None:
    gateway_in_front(marquez)
    prepared = prepare_account(cdk_json_copy(tmp_path, sha256="cd" * 32), marquez.url, now=NOW)
    key = listener_s3_key(prepared.settings.versions.openlineage_spark)
    client("s3").put_object(Bucket=BUCKET, Key=key, Body=b"old jar", Metadata={SHA256_METADATA_KEY: PIN})
    client("s3").delete_object(Bucket=BUCKET, Key=TLS_CERTIFICATES_KEY)
    checks = by_check(run_doctor(prepared.settings, OPTIONS))
    status, detail, fix = checks["listener-jar"]
    assert (
        status is Status.FAIL
        and f"the pin is {'cd' * 32}" in detail
        and fix == f"emr-lineage listener stage --env {ENV}"
    )
    assert (
        checks["tls-certificates"][0] is Status.FAIL and checks["tls-certificates"][2] == f"emr-lineage tls --env {ENV}"
    )


def test_tls_is_not_needed_without_in_transit_encryption(aws, tmp_path: Path) -> None:
    settings = load_settings(ENV, cdk_json_copy(tmp_path, in_transit_encryption=False))
    checks = by_check(run_doctor(settings, OPTIONS))
    assert checks["tls-certificates"] == (Status.SKIP, "not needed: emr.in_transit_encryption is false", "")


def test_an_old_bootstrap_and_a_wrong_account_fail(aws, tmp_path: Path) -> None:
    template = {"Resources": {"T": {"Type": "AWS::SNS::Topic"}}, "Outputs": {"BootstrapVersion": {"Value": "5"}}}
    client("cloudformation").create_stack(StackName=CDK_TOOLKIT_STACK, TemplateBody=json.dumps(template))
    checks = by_check(run_doctor(load_settings(ENV, cdk_json_copy(tmp_path)), OPTIONS))
    assert checks["cdk-bootstrap"][0] is Status.FAIL and "bootstrap version 5" in checks["cdk-bootstrap"][1]

    path = cdk_json_copy(tmp_path)
    document = json.loads(path.read_text())
    document["context"]["emr-lineage"]["environments"][ENV]["account"] = "210987654321"
    path.write_text(json.dumps(document))
    checks = by_check(run_doctor(load_settings(ENV, path), OPTIONS))
    assert checks["credentials"][0] is Status.FAIL and "cdk.json says 210987654321" in checks["credentials"][1]
    assert checks["cdk-bootstrap"] == (Status.SKIP, "skipped (needs working AWS credentials and region)", "")


@pytest.fixture
def no_credentials(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    without_aws_credentials(monkeypatch, tmp_path / "none", REGION)


def test_without_credentials_every_aws_check_is_skipped(no_credentials, tmp_path: Path, marquez: FakeMarquez) -> None:
    gateway_in_front(marquez)
    settings = load_settings(ENV, cdk_json_copy(tmp_path))
    report = run_doctor(settings, DoctorOptions(marquez_url=marquez.url, timeout=5))
    checks = by_check(report)
    assert checks["credentials"][0] is Status.FAIL and "aws configure" in checks["credentials"][2]
    skipped = [r.check for r in report.results if r.status is Status.SKIP]
    assert "cdk-bootstrap" in skipped and "ssm-parameters" in skipped and "dead-letter-queue" in skipped
    assert checks["gateway-api-key"][1] == "skipped (needs working AWS credentials and region)"
    assert checks["listener-pin"][0] is Status.PASS  # settings only
    assert checks["marquez"][0] is checks["gateway"][0] is Status.PASS  # --marquez needs no AWS


def test_without_a_region_the_first_check_says_where_to_set_it(no_credentials, monkeypatch, tmp_path: Path) -> None:
    monkeypatch.delenv("AWS_DEFAULT_REGION")
    checks = by_check(run_doctor(load_settings(ENV, cdk_json_copy(tmp_path)), OPTIONS))
    status, detail, _ = checks["credentials"]
    assert status is Status.FAIL and "no AWS region" in detail
    assert checks["marquez"][0] is Status.SKIP


def _poison_the_namespace_list(marquez: FakeMarquez) -> None:
    """What a producer that never went through the gateway can do: an output whose symlink names a namespace
    with a space. Marquez 0.51.1 stores the row, and every page of GET /api/v1/namespaces that holds it
    answers 500 (the web UI with it)."""
    symlinks = facet(
        "1-0-1/SymlinksDatasetFacet.json#/$defs/SymlinksDatasetFacet",
        identifiers=[{"namespace": "glue catalog", "name": "db.orders", "type": "TABLE"}],
    )
    output = {"namespace": "s3://lake", "name": "orders", "facets": {"symlinks": symlinks}}
    marquez.store([run_event("emr-lineage-dev", "load", eventType="COMPLETE", outputs=[output])])


def test_a_namespace_list_marquez_cannot_read_back_fails_while_its_first_page_answers(
    no_credentials, tmp_path: Path, marquez: FakeMarquez, retry_waits: list[float]
) -> None:
    gateway_in_front(marquez)
    settings = load_settings(ENV, cdk_json_copy(tmp_path))
    options = DoctorOptions(marquez_url=marquez.url, timeout=5)
    status, detail, _ = by_check(run_doctor(settings, options))["marquez"]
    assert status is Status.PASS and detail == f"{marquez.url} answers as Marquez; its 1 namespace(s) list"

    _poison_the_namespace_list(marquez)
    with urllib.request.urlopen(f"{marquez.url}{API_ROOT}/namespaces?limit=1", timeout=5) as first_page:
        assert first_page.status == 200  # what a probe alone reads: Marquez looks fine
    marquez.requests.clear()
    status, detail, fix = by_check(run_doctor(settings, options))["marquez"]
    assert status is Status.FAIL
    assert detail.startswith(f"the namespace list does not read: GET {marquez.url}/api/v1/namespaces -> HTTP 500")
    assert fix == UNLISTABLE_FIX and "docs/operations.md" in fix
    reads = [r for r in marquez.requests if r.startswith(f"GET {API_ROOT}/namespaces")]
    assert reads[0] == f"GET {API_ROOT}/namespaces?limit=1" and "offset=0" in reads[1]  # the probe, then the list


def test_a_marquez_that_answers_5xx_to_every_read_is_not_called_a_poisoned_list(
    no_credentials, tmp_path: Path, marquez: FakeMarquez, retry_waits: list[float]
) -> None:
    gateway_in_front(marquez)
    marquez.routes[f"GET {API_ROOT}/namespaces"] = lambda state, request: Answer(503, b"<html><h1>down</h1></html>")
    settings = load_settings(ENV, cdk_json_copy(tmp_path))
    status, detail, fix = by_check(run_doctor(settings, DoctorOptions(marquez_url=marquez.url, timeout=5)))["marquez"]
    assert status is Status.FAIL and "HTTP 503" in detail and "down" in detail
    assert fix != UNLISTABLE_FIX and "port-forward" in fix
