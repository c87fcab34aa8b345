"""emr_lineage.aws.upload: the one SHA-256-guarded upload, shared by listener stage and launch."""

from __future__ import annotations

import hashlib
import inspect
from pathlib import Path

import pytest
from boto3.exceptions import S3UploadFailedError
from botocore.exceptions import ClientError

from emr_lineage.aws import upload
from emr_lineage.aws.clients import AwsError
from emr_lineage.launch import plan
from emr_lineage.listener import stage
from tests.helpers import moto_s3

BUCKET = "emr-lineage-upload-test"


@pytest.fixture
def s3(monkeypatch):
    with moto_s3(monkeypatch, "us-east-1", BUCKET) as client:
        yield client


@pytest.fixture
def local_file(tmp_path: Path) -> Path:
    path = tmp_path / "thing.bin"
    path.write_bytes(b"first version\n")
    return path


def test_uploads_with_the_sha256_then_skips_the_same_bytes(s3, local_file: Path) -> None:
    first = upload.upload_once(s3, local_file, BUCKET, "a/thing.bin", content_type="application/octet-stream")
    assert first.uploaded and first.uri == f"s3://{BUCKET}/a/thing.bin"
    assert first.sha256 == hashlib.sha256(b"first version\n").hexdigest() == upload.file_sha256(local_file)
    head = s3.head_object(Bucket=BUCKET, Key="a/thing.bin")
    assert head["Metadata"] == {"sha256": first.sha256} and head["ContentType"] == "application/octet-stream"

    second = upload.upload_once(s3, local_file, BUCKET, "a/thing.bin")
    assert not second.uploaded and second.sha256 == first.sha256
    assert s3.head_object(Bucket=BUCKET, Key="a/thing.bin")["LastModified"] == head["LastModified"]


def test_an_object_with_other_bytes_or_no_checksum_is_replaced(s3, local_file: Path) -> None:
    s3.put_object(Bucket=BUCKET, Key="a/thing.bin", Body=b"someone else's")  # no sha256 metadata
    assert upload.upload_once(s3, local_file, BUCKET, "a/thing.bin").uploaded
    local_file.write_bytes(b"second version\n")
    replaced = upload.upload_once(s3, local_file, BUCKET, "a/thing.bin")
    assert replaced.uploaded
    assert s3.get_object(Bucket=BUCKET, Key="a/thing.bin")["Body"].read() == b"second version\n"


def test_a_missing_bucket_is_one_aws_error(s3, local_file: Path) -> None:
    with pytest.raises(AwsError) as info:
        upload.upload_once(s3, local_file, "no-such-bucket", "a/thing.bin")
    assert str(info.value) == "cannot read s3://no-such-bucket/a/thing.bin (bucket 'no-such-bucket' does not exist)"
    assert info.value.exit_code == 2


class RealS3MissingBucket:
    """Real S3 answers HEAD on a missing bucket with a bare 404; the upload then fails inside boto3's transfer."""

    def head_object(self, **kwargs):
        raise ClientError({"Error": {"Code": "404", "Message": "Not Found"}}, "HeadObject")

    def upload_file(self, filename, bucket, key, ExtraArgs=None):  # noqa: N803 - boto3's API
        try:
            raise ClientError(
                {"Error": {"Code": "NoSuchBucket", "Message": "The specified bucket does not exist"}}, "PutObject"
            )
        except ClientError as exc:
            raise S3UploadFailedError(f"Failed to upload {filename} to {bucket}/{key}: {exc}") from None


def test_a_missing_bucket_found_at_upload_time_is_one_aws_error(local_file: Path) -> None:
    with pytest.raises(AwsError) as info:
        upload.upload_once(RealS3MissingBucket(), local_file, "gone", "a/thing.bin")
    assert str(info.value) == f"cannot upload {local_file} to s3://gone/a/thing.bin (bucket 'gone' does not exist)"


def test_an_invalid_bucket_name_is_one_aws_error(s3, local_file: Path) -> None:
    with pytest.raises(AwsError, match=r'^cannot read s3://Bad_Name!/a/thing.bin \(.*Invalid bucket name "Bad_Name!"'):
        upload.upload_once(s3, local_file, "Bad_Name!", "a/thing.bin")


def test_listener_staging_and_job_staging_share_the_one_upload() -> None:
    assert stage.upload_once is upload.upload_once and plan.upload_once is upload.upload_once
    for module in (stage, plan):
        source = inspect.getsource(module)
        assert "upload_file" not in source and "head_object" not in source and "Metadata" not in source
