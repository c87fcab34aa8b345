"""The CA the Spark applications' listener trusts besides Java's public roots: ``openlineage.trusted_ca``
(part of the typed cdk.json model, :mod:`emr_lineage.settings.model`).

An estate's internal load balancer often has a certificate of a private CA (AWS Private CA, a company
CA), which no JVM trusts by default. Two ways to name that CA: a PEM bundle in S3 pinned by its SHA-256,
or an AWS Private CA by its ARN (its certificate and chain, read with GetCertificateAuthorityCertificate:
https://docs.aws.amazon.com/privateca/latest/APIReference/API_GetCertificateAuthorityCertificate.html).
The bootstrap action imports it into every node's Java truststores, EMR Serverless job runs get a
truststore holding it, and ``doctor`` checks that the load balancer's certificate chains to it.
"""

from __future__ import annotations

import re
from typing import Annotated, Literal

from pydantic import AfterValidator, Field

from emr_lineage.settings.base import Strict

# s3://bucket/key: S3's bucket naming rules; a key without spaces, nor * or ?, which an IAM policy's resource
# would read as wildcards (bootstrap/install-openlineage.sh checks the same).
S3_OBJECT_URI = r"^s3://[a-z0-9][a-z0-9.-]{1,61}[a-z0-9]/[^\s*?]+$"
SHA256_HEX = r"^[0-9a-f]{64}$"
# https://docs.aws.amazon.com/service-authorization/latest/reference/list_awsprivatecertificateauthority.html
PRIVATE_CA_ARN = r"^arn:aws[a-z-]*:acm-pca:[a-z0-9-]+:\d{12}:certificate-authority/[0-9a-f-]{36}$"


def _matching(pattern: str, what: str) -> AfterValidator:
    compiled = re.compile(pattern)

    def check(value: str) -> str:
        if not compiled.match(value):
            raise ValueError(f"{value!r} is not {what}")
        return value

    return AfterValidator(check)


S3ObjectUri = Annotated[str, _matching(S3_OBJECT_URI, "an s3://bucket/key URI (without * or ? in the key)")]
PrivateCaArn = Annotated[
    str,
    _matching(PRIVATE_CA_ARN, "an AWS Private CA ARN (arn:aws:acm-pca:<region>:<account>:certificate-authority/<id>)"),
]


class S3CaBundle(Strict):
    """A PEM bundle of CA certificates in S3, used only when its SHA-256 is the pinned one."""

    type: Literal["s3"] = Field(description="A PEM bundle in S3 (one or more CA certificates, nothing else).")
    uri: Annotated[
        S3ObjectUri,
        Field(
            description="`s3://bucket/key` of the bundle (no `*` or `?` in the key). The EMR instance role gets "
            "`s3:GetObject` on that object alone; one encrypted with a customer managed KMS key also needs "
            "`kms:Decrypt` for that role in the key's policy, and one in another account's bucket a bucket policy "
            "that lets the role read it.",
        ),
    ]
    sha256: Annotated[
        str,
        Field(
            pattern=SHA256_HEX,
            description="The bundle's SHA-256 (`sha256sum bundle.pem`, 64 lowercase hex digits): a node refuses any "
            "other content and fails (or, with `fail_open`, runs without lineage); a new bundle needs a new pin and "
            "a deploy.",
        ),
    ]

    @property
    def bucket(self) -> str:
        return self.uri.removeprefix("s3://").split("/", 1)[0]

    @property
    def key(self) -> str:
        return self.uri.removeprefix("s3://").split("/", 1)[1]

    @property
    def source(self) -> str:
        """Where the bundle comes from, for messages."""
        return self.uri


class PrivateCa(Strict):
    """An AWS Private CA: its certificate and chain, as GetCertificateAuthorityCertificate returns them."""

    type: Literal["aws_private_ca"] = Field(description="An AWS Private CA, by its ARN.")
    arn: Annotated[
        PrivateCaArn,
        Field(
            description="The CA's ARN (any region; another account's CA must be shared with this one). The EMR "
            "instance role gets `acm-pca:GetCertificateAuthorityCertificate` on it alone. No pin: the answer comes "
            "from AWS, signed in and over TLS, and a renewed CA certificate reaches the next cluster by itself.",
        ),
    ]

    @property
    def region(self) -> str:
        return self.arn.split(":")[3]

    @property
    def source(self) -> str:
        return self.arn


TrustedCa = Annotated[S3CaBundle | PrivateCa, Field(discriminator="type")]
