"""openlineage.trusted_ca: a private CA named by an S3 bundle pinned by its SHA-256, or by an AWS Private CA ARN;
refused, one line per problem, when malformed or when there is no HTTPS for it to verify."""

from __future__ import annotations

import copy
import json

import pytest

from emr_lineage.settings.loader import ConfigError, settings_from_context
from emr_lineage.settings.trusted_ca import PrivateCa, S3CaBundle
from tests.stacks.variants import CERTIFICATE_ARN

PREFIX = "emr-lineage.environments.dev"
SHA256 = "0123456789abcdef" * 4
BUNDLE = {"type": "s3", "uri": "s3://pki-bucket/ca/company-root.pem", "sha256": SHA256}
PRIVATE_CA_ARN = "arn:aws:acm-pca:eu-central-1:210987654321:certificate-authority/0f1e2d3c-4b5a-6978-8a9b-0c1d2e3f4a5b"


@pytest.fixture(scope="module")
def block(repo_root):
    return json.loads((repo_root / "cdk.json").read_text())["context"]["emr-lineage"]


def with_ca(block: dict, trusted_ca, *, https: bool = True) -> dict:
    data = copy.deepcopy(block)
    env = data["environments"]["dev"]
    env["openlineage"]["trusted_ca"] = trusted_ca
    if https:
        env["marquez"].update(certificate_arn=CERTIFICATE_ARN, domain_name="lineage.dev.example.com")
    return data


def refusal(block: dict, trusted_ca, **kwargs) -> list[str]:
    with pytest.raises(ConfigError) as refused:
        settings_from_context(with_ca(block, trusted_ca, **kwargs), "dev")
    return str(refused.value).splitlines()[1:]


def test_an_s3_bundle_names_its_bucket_and_key(block) -> None:
    ca = settings_from_context(with_ca(block, BUNDLE), "dev").openlineage.trusted_ca
    assert isinstance(ca, S3CaBundle)
    assert (ca.bucket, ca.key, ca.sha256, ca.source) == ("pki-bucket", "ca/company-root.pem", SHA256, BUNDLE["uri"])


def test_a_private_ca_names_its_region(block) -> None:
    ca = settings_from_context(with_ca(block, {"type": "aws_private_ca", "arn": PRIVATE_CA_ARN}), "dev")
    assert isinstance(ca.openlineage.trusted_ca, PrivateCa)
    assert ca.openlineage.trusted_ca.region == "eu-central-1"


def test_without_it_java_trusts_what_it_trusts(block) -> None:
    assert settings_from_context(block, "dev").openlineage.trusted_ca is None


@pytest.mark.parametrize(
    ("trusted_ca", "expected"),
    [
        (
            {"type": "s3", "url": BUNDLE["uri"], "sha256": SHA256},
            [
                f"{PREFIX}.openlineage.trusted_ca.s3.uri: missing required key",
                f"{PREFIX}.openlineage.trusted_ca.s3.url: unknown key (did you mean 'uri'?)",
            ],
        ),
        (
            {"type": "s3", "uri": BUNDLE["uri"]},
            [f"{PREFIX}.openlineage.trusted_ca.s3.sha256: missing required key"],
        ),
        (
            {**BUNDLE, "sha256": SHA256.upper()},
            [f"{PREFIX}.openlineage.trusted_ca.s3.sha256: String should match pattern '^[0-9a-f]{{64}}$'"],
        ),
        (
            {**BUNDLE, "uri": "https://pki.example.com/root.pem"},
            [
                f"{PREFIX}.openlineage.trusted_ca.s3.uri: 'https://pki.example.com/root.pem' is not an s3://bucket/key "
                "URI (without * or ? in the key)"
            ],
        ),
        (
            {**BUNDLE, "uri": "s3://pki-bucket/ca/*.pem"},
            [f"{PREFIX}.openlineage.trusted_ca.s3.uri: 's3://pki-bucket/ca/*.pem' is not an s3://bucket/key URI"],
        ),
        (
            {"type": "aws_private_ca", "arn": PRIVATE_CA_ARN, "sha256": SHA256},
            [f"{PREFIX}.openlineage.trusted_ca.aws_private_ca.sha256: unknown key"],
        ),
        (
            {
                "type": "aws_private_ca",
                "arn": "arn:aws:acm:eu-west-1:123456789012:certificate/0f1e2d3c-4b5a-6978-8a9b-0c1d2e3f4a5b",
            },
            [f"{PREFIX}.openlineage.trusted_ca.aws_private_ca.arn: 'arn:aws:acm:eu-west-1:123456789012:certificate/"],
        ),
        (
            {"type": "pem", "uri": BUNDLE["uri"]},
            [
                f"{PREFIX}.openlineage.trusted_ca: Input tag 'pem' found using 'type' does not match any of the "
                "expected tags: 's3', 'aws_private_ca'"
            ],
        ),
    ],
    ids=[
        "misspelt-key",
        "unpinned",
        "uppercase-pin",
        "not-s3",
        "wildcard-key",
        "pin-on-private-ca",
        "acm-not-pca",
        "unknown-type",
    ],
)
def test_a_malformed_ca_is_refused_one_line_per_problem(block, trusted_ca, expected) -> None:
    lines = refusal(block, trusted_ca)
    assert len(lines) == len(expected)
    for line, start in zip(lines, expected, strict=True):
        assert line.strip().startswith(start), line


def test_a_ca_without_https_to_verify_is_refused(block) -> None:
    (line,) = refusal(block, BUNDLE, https=False)
    assert line.strip() == (
        f"{PREFIX}: openlineage.trusted_ca names the CA of the load balancer's certificate, but there is none (no "
        "marquez.certificate_arn: plain HTTP): set marquez.certificate_arn and marquez.domain_name, or remove "
        "trusted_ca"
    )
