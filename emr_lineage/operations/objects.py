"""One S3 question the operations ask: is there an object at this key, and what does it carry?"""

from __future__ import annotations

from typing import Any

from botocore.exceptions import BotoCoreError, ClientError

from emr_lineage.aws.clients import AwsError, aws_message

_NOT_FOUND = ("404", "NoSuchKey", "NotFound")


def head_object(s3: Any, bucket: str, key: str) -> dict[str, Any] | None:
    """``head_object`` of ``s3://bucket/key``; None when there is no such object.

    Any other failure (no bucket, access denied, no credentials) raises :class:`AwsError`.
    """
    try:
        return s3.head_object(Bucket=bucket, Key=key)
    except ClientError as exc:
        if exc.response.get("Error", {}).get("Code") in _NOT_FOUND:
            return None
        raise AwsError(f"cannot read s3://{bucket}/{key} ({aws_message(exc)})") from None
    except BotoCoreError as exc:
        raise AwsError(f"cannot read s3://{bucket}/{key} ({exc})") from None
