"""doctor's trusted-ca row: the load balancer's certificate chains to openlineage.trusted_ca. A local TLS
server stands for the load balancer, with certificates of a CA made in the test (tests/pki.py); the CA is read
from moto's S3 as doctor reads it."""

from __future__ import annotations

import hashlib
from collections.abc import Iterator
from pathlib import Path

import pytest

from emr_lineage.aws.trusted_ca import ca_bundle
from emr_lineage.operations.checks import DoctorClients, Status
from emr_lineage.operations.doctor import DoctorOptions, run_doctor
from emr_lineage.operations.trusted_ca import REACH_FIX, chains_to, trusted_ca_chain
from emr_lineage.settings.trusted_ca import S3CaBundle
from tests import pki
from tests.emr_lineage.operations.prepared_account import (
    BUCKET,
    cdk_json_copy,
    client,
    doctor_clients,
    moto_account,
    prepare_account,
)

KEY = "pki/estate.pem"


@pytest.fixture(scope="module")
def estate() -> dict[str, pki.Issued]:
    root, issuing = pki.estate_cas()
    return {"root": root, "issuing": issuing, "leaf": pki.server_certificate(issuing, "localhost")}


@pytest.fixture(scope="module")
def load_balancer(estate, tmp_path_factory) -> Iterator[int]:
    """An HTTPS server on 127.0.0.1 presenting the leaf for ``localhost`` and the issuing CA above it, as an
    ALB presents an imported certificate and its chain; yields its port."""
    with pki.https_server(estate["leaf"], estate["issuing"], tmp_path_factory.mktemp("alb")) as port:
        yield port


def test_a_chain_to_the_root_passes(estate, load_balancer) -> None:
    bundle = ca_bundle(estate["root"].pem, "s3://estate-pki/pki/estate.pem")
    result = chains_to(bundle, f"https://localhost:{load_balancer}", timeout=5)
    assert result.status is Status.PASS
    assert result.detail == (
        f"localhost:{load_balancer} presents CN=localhost issued by CN=Estate Issuing CA, which chains to "
        "CN=Estate Root CA (s3://estate-pki/pki/estate.pem)"
    )


def test_an_issuing_ca_alone_is_an_anchor_as_java_takes_it(estate, load_balancer) -> None:
    bundle = ca_bundle(estate["issuing"].pem, "s3://estate-pki/pki/issuing.pem")
    assert chains_to(bundle, f"https://localhost:{load_balancer}", timeout=5).status is Status.PASS


def test_a_certificate_of_another_ca_fails_naming_both(load_balancer) -> None:
    bundle = ca_bundle(pki.certificate_authority("Someone Else").pem, "s3://estate-pki/pki/other.pem")
    result = chains_to(bundle, f"https://localhost:{load_balancer}", timeout=5)
    assert result.status is Status.FAIL
    assert result.detail.startswith(f"localhost:{load_balancer} presents CN=localhost issued by CN=Estate Issuing CA: ")
    assert result.detail.endswith("; the configured CA is CN=Someone Else (s3://estate-pki/pki/other.pem)")
    assert "marquez.certificate_arn" in result.fix


def test_a_name_the_certificate_is_not_for_fails_with_the_name_to_use(estate, load_balancer) -> None:
    bundle = ca_bundle(estate["root"].pem, "s3://estate-pki/pki/estate.pem")
    result = chains_to(bundle, f"https://127.0.0.1:{load_balancer}", timeout=5)
    assert result.status is Status.FAIL
    assert "Hostname mismatch" in result.detail or "IP address mismatch" in result.detail
    assert "marquez.domain_name" in result.fix


def test_a_load_balancer_out_of_reach_fails_with_the_port_forward(estate, closed_port_url) -> None:
    bundle = ca_bundle(estate["root"].pem, "s3://estate-pki/pki/estate.pem")
    url = closed_port_url.replace("http://127.0.0.1", "https://localhost")
    result = chains_to(bundle, url, timeout=5)
    assert result.status is Status.FAIL and result.detail.startswith("no TLS handshake with localhost:")
    assert result.fix == REACH_FIX


@pytest.fixture
def aws(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    yield from moto_account(monkeypatch)


def put_bundle(data: bytes, *, pin: bytes | None = None) -> S3CaBundle:
    s3 = client("s3")
    if BUCKET not in [b["Name"] for b in s3.list_buckets()["Buckets"]]:
        s3.create_bucket(Bucket=BUCKET, CreateBucketConfiguration={"LocationConstraint": "eu-west-1"})
    s3.put_object(Bucket=BUCKET, Key=KEY, Body=data)
    return S3CaBundle(type="s3", uri=f"s3://{BUCKET}/{KEY}", sha256=hashlib.sha256(pin or data).hexdigest())


def test_the_bundle_is_read_as_a_node_reads_it(aws, estate, load_balancer) -> None:
    url = f"https://localhost:{load_balancer}"
    good = trusted_ca_chain(DoctorClients(client), put_bundle(estate["root"].pem), url, timeout=5)
    assert good.status is Status.PASS

    stale = trusted_ca_chain(
        DoctorClients(client), put_bundle(estate["root"].pem, pin=b"last year's bundle"), url, timeout=5
    )
    assert stale.status is Status.FAIL and "not the pinned" in stale.detail
    assert stale.fix == f"put the bundle of CA certificates at s3://{BUCKET}/{KEY} and its SHA-256 in " + (
        "openlineage.trusted_ca.sha256"
    )

    missing = S3CaBundle(type="s3", uri=f"s3://{BUCKET}/pki/gone.pem", sha256="0" * 64)
    gone = trusted_ca_chain(DoctorClients(client), missing, url, timeout=5)
    assert gone.status is Status.FAIL and "NoSuchKey" in gone.detail
    assert gone.fix == f"give doctor's credentials s3:GetObject on s3://{BUCKET}/pki/gone.pem"


def doctor_row(settings, **options):
    report = run_doctor(settings, DoctorOptions(timeout=5, **options), doctor_clients)
    (row,) = [r for r in report.results if r.check == "trusted-ca"]
    return row


def test_doctor_checks_where_the_listener_posts_and_only_with_the_setting(
    aws, estate, load_balancer, tmp_path: Path, closed_port_url: str
) -> None:
    plain = prepare_account(cdk_json_copy(tmp_path, gateway=False), closed_port_url).settings
    assert doctor_row(plain).detail == "not needed: no openlineage.trusted_ca (Java's own trust)"

    trusted_ca = put_bundle(estate["root"].pem)
    trusting = plain.model_copy(update={"openlineage": plain.openlineage.model_copy(update={"trusted_ca": trusted_ca})})
    published = doctor_row(trusting)  # the URL SSM publishes here is plain HTTP: nothing to verify
    assert published.status is Status.SKIP and published.detail.endswith(f"not {closed_port_url})")

    forwarded = doctor_row(trusting, marquez_url=f"https://localhost:{load_balancer}")
    assert forwarded.status is Status.PASS and "chains to CN=Estate Root CA" in forwarded.detail
