"""Settings of the data lake (part of the typed cdk.json model, :mod:`emr_lineage.settings.model`): the lake
bucket (the stack's own, or an existing one), existing Glue databases, and Lake Formation governance."""

from __future__ import annotations

import ipaddress
import re
from typing import Annotated

from pydantic import Field, field_validator, model_validator

from emr_lineage.settings.base import Strict

# General purpose bucket names (BUCKET_NAMING): 3-63 lowercase letters, digits, '.' and '-', starting and ending
# with a letter or digit, no '..', not an IPv4 address, and none of the prefixes and suffixes S3 reserves (for
# access point aliases, Object Lambda, Multi-Region Access Points, directory and table buckets). Here, not in
# limits.py: that module ships in the gateway's Lambda asset, which has no use for them.
BUCKET_NAMING = "https://docs.aws.amazon.com/AmazonS3/latest/userguide/bucketnamingrules.html"
S3_BUCKET_NAME_LENGTH = (3, 63)
S3_RESERVED_BUCKET_PREFIXES = ("xn--", "sthree-", "amzn-s3-demo-")
S3_RESERVED_BUCKET_SUFFIXES = ("-s3alias", "--ol-s3", ".mrap", "--x-s3", "--table-s3")
# Glue's NameString of a database is 1-255 characters (botocore's glue service model, DatabaseInput.Name); Glue
# folds it to lowercase when it stores it, so only a lowercase name can name a database that exists.
GLUE_NAME_MAX_LENGTH = 255
_BUCKET_CHARACTERS = re.compile(r"^[a-z0-9][a-z0-9.-]*[a-z0-9]$")
# A key's ARN: a single-Region key's id is a UUID, a multi-Region key's "mrk-" and 32 hex digits.
KMS_KEY_ARN = re.compile(
    r"^arn:(?P<partition>aws[a-z-]*):kms:(?P<region>[a-z0-9-]+):(?P<account>\d{12}):key/"
    r"(?:[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}|mrk-[0-9a-f]{32})$"
)
_KMS_ALIAS_ARN = re.compile(r"^arn:aws[a-z-]*:kms:[a-z0-9-]+:\d{12}:alias/")
# Lowercase (Glue stores names folded to lowercase), and no character an IAM resource ARN reads otherwise
# ('*', '?' are wildcards, '/' separates a table's database from its name).
_DATABASE_NAME = re.compile(rf"^[a-z0-9_-]{{1,{GLUE_NAME_MAX_LENGTH}}}$")
# The catalog's database Spark's catalog client needs: the stack grants the job roles DESCRIBE on it itself.
DEFAULT_DATABASE = "default"
KEY_ARN_COMMAND = "aws kms describe-key --key-id <alias or id> --query KeyMetadata.Arn"


def bucket_name_problem(name: str) -> str | None:
    """Why ``name`` is no general purpose S3 bucket name (None: it is one)."""
    low, high = S3_BUCKET_NAME_LENGTH
    if not low <= len(name) <= high:
        return f"{len(name)} characters, not {low}-{high}"
    if not _BUCKET_CHARACTERS.match(name):
        return "use lowercase letters, digits, '.' and '-', starting and ending with a letter or digit"
    if ".." in name:
        return "two adjacent periods"
    try:
        ipaddress.IPv4Address(name)
    except ValueError:
        pass
    else:
        return "formatted as an IP address"
    for prefix in S3_RESERVED_BUCKET_PREFIXES:
        if name.startswith(prefix):
            return f"the prefix {prefix!r} is reserved by S3"
    for suffix in S3_RESERVED_BUCKET_SUFFIXES:
        if name.endswith(suffix):
            return f"the suffix {suffix!r} is reserved by S3"
    return None


def region_partition(region: str) -> str | None:
    """The partition of ``region`` (``aws``, ``aws-cn``, ...) by botocore's endpoint data; None for a region
    botocore does not know."""
    # Imported here: botocore's session costs a tenth of a second, and only a key ARN needs it.
    import botocore.exceptions
    import botocore.session

    try:
        return botocore.session.get_session().get_partition_for_region(region)
    except botocore.exceptions.UnknownRegionError:
        return None


def key_region(key_arn: str) -> str:
    """The region of a key ARN that :data:`KMS_KEY_ARN` matches."""
    match = KMS_KEY_ARN.match(key_arn)
    if match is None:
        raise ValueError(f"{key_arn!r} is not a KMS key ARN")
    return match["region"]


class ExistingBucket(Strict):
    """An S3 bucket that already exists and holds the lake instead of a bucket the stack makes."""

    name: str = Field(
        description="The bucket's name ([S3's naming rules](" + BUCKET_NAMING + ")), in the environment's account "
        "and region. The stack never changes the bucket (its policy, encryption, versioning, lifecycle, logging) "
        "and never deletes it; the roles get its zone prefixes through their own IAM policies."
    )
    kms_key_arn: str | None = Field(
        default=None,
        description="The ARN of the customer managed KMS key the bucket encrypts with (SSE-KMS), a key of the "
        "environment's region; the roles' IAM policies are granted its use, so its key policy must let the "
        "account's IAM policies allow it (KMS's default key policy does). Null: the bucket uses SSE-S3, and EMR "
        "writes SSE-S3 objects.",
    )
    registered_with_lake_formation: bool = Field(
        default=False,
        description="`true`: the whole bucket is already a Lake Formation data location (registered by its owner), "
        "so the stack does not register it; `false`: the stack registers it with a role of its own, and "
        "deregisters it on deletion.",
    )

    @field_validator("name")
    @classmethod
    def _bucket_name(cls, value: str) -> str:
        problem = bucket_name_problem(value)
        if problem:
            raise ValueError(
                f"{value!r} is not an S3 bucket name ({problem}): give the bucket's name ({BUCKET_NAMING})"
            )
        return value

    @field_validator("kms_key_arn")
    @classmethod
    def _key_arn(cls, value: str | None) -> str | None:
        if value is None:
            return value
        if _KMS_ALIAS_ARN.match(value):
            raise ValueError(
                f"{value!r} is an alias ARN; IAM policies allow a key by its key ARN: give that (`{KEY_ARN_COMMAND}`)"
            )
        match = KMS_KEY_ARN.match(value)
        if match is None:
            raise ValueError(
                f"{value!r} is not a KMS key ARN (arn:<partition>:kms:<region>:<account>:key/<key id>): give the "
                f"key's ARN (`{KEY_ARN_COMMAND}`)"
            )
        expected = region_partition(match["region"])
        if expected is not None and expected != match["partition"]:
            raise ValueError(
                f"{value!r} names region {match['region']}, whose partition is {expected}, not "
                f"{match['partition']}: give the key's ARN (`{KEY_ARN_COMMAND}`)"
            )
        return value


def _database_name(value: str) -> str:
    if not _DATABASE_NAME.match(value):
        raise ValueError(
            f"{value!r} is not a Glue database name the stacks can grant: use 1-"
            f"{GLUE_NAME_MAX_LENGTH} lowercase letters, digits, '_' or '-' (Glue stores names in lowercase)"
        )
    if value == DEFAULT_DATABASE:
        raise ValueError(
            f"{DEFAULT_DATABASE!r} is granted to the job roles already (DESCRIBE, which Spark's "
            "catalog client needs): remove it"
        )
    return value


class DataLakeSettings(Strict):
    """The data lake bucket and its Lake Formation governance."""

    admin_arns: list[Annotated[str, Field(pattern=r"^arn:aws[a-z-]*:iam::\d{12}:(role|user)/[\w+=,.@/-]+$")]] = Field(
        description="Extra Lake Formation admins (IAM role or user ARNs); the CDK deploy role and the default "
        "database's creator are appended (only where `manage_lake_formation_settings` is true)."
    )
    noncurrent_version_expiration_days: Annotated[int, Field(ge=1, le=3650)] | None = Field(
        default=None,
        description="Days the lake bucket the stack makes keeps an object's noncurrent versions: required without "
        "`existing_bucket`, refused with it (an existing bucket's lifecycle is its owner's).",
    )
    existing_bucket: ExistingBucket | None = Field(
        default=None,
        description="An existing bucket to hold the lake; the stack then makes no lake bucket and no lake key "
        "([an existing bucket](deploy-into-existing.md#existing-data-lake-bucket-and-glue-databases)). Null: the "
        "stack makes a KMS-encrypted, versioned bucket and its key.",
    )
    existing_databases: list[str] = Field(
        default=[],
        description="Glue databases that already exist, granted to the job roles by Lake Formation as the curated "
        "zone's database is (DESCRIBE and CREATE_TABLE; on every table SELECT, INSERT, DELETE, DESCRIBE, ALTER, "
        "DROP); in addition to the zone databases the stack makes, and never created or deleted by it. Names "
        "under `emr_lineage_<env>_` are the stacks' own.",
    )
    # One Lake Formation settings object per account and region: loader.py refuses two owners it can see.
    manage_lake_formation_settings: bool = Field(
        default=True,
        description="This environment manages its account and region's Lake Formation settings (admins) and "
        "makes sure the catalog's `default` database exists; `false` in every other environment of that account "
        "and region ([several environments in one account](deploy.md#several-environments-in-one-account)).",
    )

    @field_validator("existing_databases")
    @classmethod
    def _existing_databases(cls, value: list[str]) -> list[str]:
        for name in value:
            _database_name(name)
        twice = sorted({name for name in value if value.count(name) > 1})
        if twice:
            raise ValueError(f"{', '.join(map(repr, twice))} listed twice: list each database once")
        return value

    @model_validator(mode="after")
    def _admins_need_the_settings(self) -> DataLakeSettings:
        if self.admin_arns and not self.manage_lake_formation_settings:
            raise ValueError(
                "admin_arns are added by the environment that manages the account's Lake Formation settings "
                "(manage_lake_formation_settings is false here): list them in that environment"
            )
        return self

    @model_validator(mode="after")
    def _lifecycle_of_the_bucket_it_makes(self) -> DataLakeSettings:
        days = self.noncurrent_version_expiration_days
        if self.existing_bucket is None and days is None:
            raise ValueError(
                "noncurrent_version_expiration_days: missing required key without existing_bucket (the days the lake "
                "bucket the stack makes keeps noncurrent versions)"
            )
        if self.existing_bucket is not None and days is not None:
            raise ValueError(
                "noncurrent_version_expiration_days applies to the bucket the stack makes, and existing_bucket is "
                "set (its lifecycle is its owner's): remove noncurrent_version_expiration_days"
            )
        return self

    def environment_problem(self, *, region: str | None, own_database_prefix: str) -> str | None:
        """What of these settings the environment refuses: a key of another region, a database name of the
        stacks' own (None: nothing)."""
        key_arn = self.existing_bucket.kms_key_arn if self.existing_bucket else None
        if key_arn is not None and region is not None and key_region(key_arn) != region:
            return (
                f"data_lake.existing_bucket.kms_key_arn: the key is in {key_region(key_arn)}, the environment in "
                f"{region}, and S3 encrypts with keys of the bucket's region: give the key of the bucket's region"
            )
        own = [name for name in self.existing_databases if name.startswith(f"{own_database_prefix}_")]
        if own:
            return (
                f"data_lake.existing_databases: {own[0]!r} is a name the stacks give their own databases "
                f"({own_database_prefix}_*): list only databases made outside emr-lineage"
            )
        return None
