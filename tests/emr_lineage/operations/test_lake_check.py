"""doctor's existing-lake row against moto: the existing bucket's region, encryption and Lake Formation
registration, and the existing databases, checked before the deploy imports them."""

from __future__ import annotations

import copy
import json
from collections.abc import Iterator

import boto3
import pytest

from emr_lineage.operations import lake
from emr_lineage.operations.checks import CheckResult, Status
from emr_lineage.operations.doctor import DoctorOptions, run_doctor
from emr_lineage.settings.loader import settings_from_context
from emr_lineage.settings.model import EnvironmentSettings
from tests.emr_lineage.operations.prepared_account import ENV, REGION, client, doctor_clients, moto_account
from tests.paths import CDK_JSON

BUCKET = "estate-lake-123456789012"
KEY = f"emr-lineage.environments.{ENV}.data_lake"


@pytest.fixture
def aws(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    yield from moto_account(monkeypatch)


def _settings(*, bucket: dict | None = None, databases: tuple[str, ...] = ()) -> EnvironmentSettings:
    block = copy.deepcopy(json.loads(CDK_JSON.read_text())["context"]["emr-lineage"])
    data_lake = block["environments"][ENV]["data_lake"]
    if bucket is not None:
        data_lake.pop("noncurrent_version_expiration_days")
        data_lake["existing_bucket"] = {"name": BUCKET, **bucket}
    data_lake["existing_databases"] = list(databases)
    return settings_from_context(block, ENV)


def _bucket(region: str = REGION, *, key_id: str | None = None, algorithm: str | None = None) -> None:
    s3 = client("s3") if region == REGION else boto3.client("s3", region_name=region)
    configuration = {} if region == "us-east-1" else {"CreateBucketConfiguration": {"LocationConstraint": region}}
    s3.create_bucket(Bucket=BUCKET, **configuration)
    if algorithm:
        default = {"SSEAlgorithm": algorithm} | ({"KMSMasterKeyID": key_id} if key_id else {})
        s3.put_bucket_encryption(
            Bucket=BUCKET,
            ServerSideEncryptionConfiguration={"Rules": [{"ApplyServerSideEncryptionByDefault": default}]},
        )


def _key() -> tuple[str, str]:
    """A customer managed key: (its id, its ARN)."""
    metadata = client("kms").create_key()["KeyMetadata"]
    return metadata["KeyId"], metadata["Arn"]


def _row(settings: EnvironmentSettings) -> CheckResult:
    return lake.existing_lake(doctor_clients(settings, 2), settings)


def test_a_bucket_in_the_region_with_its_key_registered_and_existing_databases_pass(aws) -> None:
    key_id, key_arn = _key()
    _bucket(key_id=key_id, algorithm="aws:kms")  # the bucket names its key by id: KMS gives its ARN
    client("lakeformation").register_resource(ResourceArn=f"arn:aws:s3:::{BUCKET}", UseServiceLinkedRole=True)
    for name in ("sales", "finance"):
        client("glue").create_database(DatabaseInput={"Name": name})
    settings = _settings(
        bucket={"kms_key_arn": key_arn, "registered_with_lake_formation": True}, databases=("sales", "finance")
    )
    row = _row(settings)
    assert row == CheckResult(
        lake.CHECK,
        lake.TITLE,
        Status.PASS,
        f"bucket {BUCKET} in {REGION}, SSE-KMS with {key_arn}; registered with Lake Formation; "
        "databases sales, finance",
    )


@pytest.mark.parametrize(("algorithm", "key_id"), [(None, None), ("AES256", None), ("aws:kms", None)])
def test_a_bucket_without_a_key_of_its_own_needs_none(aws, algorithm, key_id) -> None:
    """No configuration (S3 encrypts new objects SSE-S3), SSE-S3, or the AWS managed key aws/s3."""
    _bucket(algorithm=algorithm)
    row = _row(_settings(bucket={}))
    assert row.status is Status.PASS and row.detail == f"bucket {BUCKET} in {REGION}, SSE-S3"


def test_a_bucket_in_another_region_fails(aws) -> None:
    _bucket("us-east-1")
    row = _row(_settings(bucket={}))
    assert row.status is Status.FAIL
    assert row.detail == f"bucket {BUCKET} is in us-east-1, doctor's region is {REGION}"
    assert row.fix == "deploy the environment in the bucket's region (region in cdk.json)"


def test_a_missing_bucket_fails_with_the_aws_error(aws) -> None:
    row = _row(_settings(bucket={}))
    assert row.status is Status.FAIL and row.detail.startswith(f"bucket {BUCKET}: NoSuchBucket")
    assert row.fix == f"give the bucket's name in {KEY}.existing_bucket.name"


def test_a_key_the_bucket_does_not_use_fails_with_the_setting_to_change(aws) -> None:
    _, key_arn = _key()
    _bucket(algorithm="AES256")
    row = _row(_settings(bucket={"kms_key_arn": key_arn}))
    assert row.status is Status.FAIL and row.detail == f"bucket {BUCKET} encrypts with SSE-S3, not with {key_arn}"
    assert row.fix == f"set {KEY}.existing_bucket.kms_key_arn null"


@pytest.mark.parametrize("configured", [False, True], ids=["no key set", "another key set"])
def test_a_bucket_with_a_customer_managed_key_needs_that_key(aws, configured) -> None:
    key_id, key_arn = _key()
    _, other_arn = _key()
    _bucket(key_id=key_id, algorithm="aws:kms")
    row = _row(_settings(bucket={"kms_key_arn": other_arn} if configured else {}))
    assert row.status is Status.FAIL
    assert row.detail == f"bucket {BUCKET} encrypts with KMS key {key_arn}, cdk.json says " + (
        other_arn if configured else "SSE-S3"
    )
    assert row.fix == f"set {KEY}.existing_bucket.kms_key_arn to {key_arn}"


def test_a_bucket_said_registered_that_is_not_fails(aws) -> None:
    _bucket()
    row = _row(_settings(bucket={"registered_with_lake_formation": True}))
    assert row.status is Status.FAIL
    assert row.detail.startswith(f"arn:aws:s3:::{BUCKET} is no Lake Formation data location: EntityNotFoundException")
    assert row.fix.startswith(f"set {KEY}.existing_bucket.registered_with_lake_formation false")


def test_missing_databases_fail_by_name(aws) -> None:
    client("glue").create_database(DatabaseInput={"Name": "sales"})
    row = _row(_settings(databases=("sales", "finance", "hr")))
    assert row.status is Status.FAIL and row.detail == f"no Glue database finance, hr in {REGION}"
    assert row.fix == f"create them before the deploy, or take them off {KEY}.existing_databases"


def test_the_row_follows_the_image_secret_and_is_not_needed_without_an_existing_lake(aws) -> None:
    settings = _settings()
    report = run_doctor(settings, DoctorOptions(timeout=2), doctor_clients)
    checks = [r.check for r in report.results]
    assert checks.index(lake.CHECK) == checks.index("marquez-image-credentials") + 1
    row = report.results[checks.index(lake.CHECK)]
    assert row.status is Status.SKIP and row.detail == f"not needed: {lake.NOT_CONFIGURED}"
