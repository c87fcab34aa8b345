"""data_lake's existing bucket and Glue databases: what loads, and every refusal naming its key and its fix."""

from __future__ import annotations

import copy
import json

import pytest

from emr_lineage.settings.data_lake import bucket_name_problem, region_partition
from emr_lineage.settings.loader import ConfigError, settings_from_context

KEY_ARN = "arn:aws:kms:eu-west-1:123456789012:key/1234abcd-12ab-34cd-56ef-1234567890ab"
MULTI_REGION_KEY_ARN = "arn:aws:kms:eu-west-1:123456789012:key/mrk-1234abcd12ab34cd56ef1234567890ab"


@pytest.fixture(scope="module")
def block(repo_root):
    return json.loads((repo_root / "cdk.json").read_text())["context"]["emr-lineage"]


def _existing(block: dict, env: str = "dev", *, region: str | None = None, **data_lake) -> dict:
    """A copy of the block whose ``env`` uses an existing bucket (no lifecycle of its own) and ``data_lake``'s keys."""
    copied = copy.deepcopy(block)
    environment = copied["environments"][env]
    if region:
        environment.update(account="123456789012", region=region)
    lake = environment["data_lake"]
    lake.pop("noncurrent_version_expiration_days")
    lake["existing_bucket"] = {"name": "estate-lake"}
    for key, value in data_lake.items():
        if isinstance(value, dict):
            lake[key].update(value)
        else:
            lake[key] = value
    return copied


def _refusal(data: dict, env: str = "dev") -> str:
    """The one line of the refusal (the loader's header aside)."""
    with pytest.raises(ConfigError) as excinfo:
        settings_from_context(data, env)
    header, *lines = str(excinfo.value).splitlines()
    assert header == "invalid configuration in cdk.json context:"
    assert len(lines) == 1, lines
    return lines[0].strip()


def test_an_existing_bucket_with_its_key_and_databases_loads(block):
    data = _existing(
        block,
        region="eu-west-1",
        existing_bucket={"kms_key_arn": KEY_ARN, "registered_with_lake_formation": True},
        existing_databases=["sales", "finance-reporting"],
    )
    lake = settings_from_context(data, "dev").data_lake
    assert lake.existing_bucket.name == "estate-lake"
    assert lake.existing_bucket.kms_key_arn == KEY_ARN
    assert lake.existing_bucket.registered_with_lake_formation
    assert lake.existing_databases == ["sales", "finance-reporting"]
    assert lake.noncurrent_version_expiration_days is None


def test_an_existing_bucket_without_a_key_is_sse_s3_and_registered_by_the_stack(block):
    bucket = settings_from_context(_existing(block), "dev").data_lake.existing_bucket
    assert bucket.kms_key_arn is None
    assert not bucket.registered_with_lake_formation


def test_a_multi_region_key_is_a_key(block):
    data = _existing(block, region="eu-west-1", existing_bucket={"kms_key_arn": MULTI_REGION_KEY_ARN})
    assert settings_from_context(data, "dev").data_lake.existing_bucket.kms_key_arn == MULTI_REGION_KEY_ARN


def test_without_an_existing_bucket_nothing_exists_and_the_lifecycle_is_set(block):
    lake = settings_from_context(block, "prod").data_lake
    assert lake.existing_bucket is None and lake.existing_databases == []
    assert lake.noncurrent_version_expiration_days == 365


@pytest.mark.parametrize(
    ("name", "problem"),
    [
        ("ab", "2 characters, not 3-63"),
        ("a" * 64, "64 characters, not 3-63"),
        ("Estate_Lake", "use lowercase letters, digits, '.' and '-', starting and ending with a letter or digit"),
        ("-estate", "use lowercase letters, digits, '.' and '-', starting and ending with a letter or digit"),
        ("estate..lake", "two adjacent periods"),
        ("192.168.5.4", "formatted as an IP address"),
        ("xn--estate", "the prefix 'xn--' is reserved by S3"),
        ("sthree-lake", "the prefix 'sthree-' is reserved by S3"),
        ("estate-s3alias", "the suffix '-s3alias' is reserved by S3"),
        ("estate--x-s3", "the suffix '--x-s3' is reserved by S3"),
    ],
)
def test_a_bucket_name_s3_refuses_is_refused_naming_the_key(block, name, problem):
    line = _refusal(_existing(block, existing_bucket={"name": name}))
    assert line == (
        f"emr-lineage.environments.dev.data_lake.existing_bucket.name: {name!r} is not an S3 bucket name ({problem}): "
        "give the bucket's name (https://docs.aws.amazon.com/AmazonS3/latest/userguide/bucketnamingrules.html)"
    )


@pytest.mark.parametrize("name", ["estate-lake", "abc", "estate.lake.eu-west-1", "a" * 63, "1-estate-lake"])
def test_bucket_names_s3_accepts_pass(name):
    assert bucket_name_problem(name) is None


@pytest.mark.parametrize(
    ("arn", "message"),
    [
        ("1234abcd-12ab-34cd-56ef-1234567890ab", "is not a KMS key ARN"),
        ("arn:aws:kms:eu-west-1:123456789012:key/not-a-key-id", "is not a KMS key ARN"),
        ("arn:aws:s3:::estate-lake", "is not a KMS key ARN"),
        (KEY_ARN.split(":key/")[0] + ":alias/estate-lake", "is an alias ARN; IAM policies allow a key by its key"),
        (KEY_ARN.replace("eu-west-1", "cn-north-1"), "names region cn-north-1, whose partition is aws-cn, not aws"),
        (KEY_ARN.replace("arn:aws:", "arn:aws-us-gov:"), "names region eu-west-1, whose partition is aws, not aws-us-"),
    ],
)
def test_a_key_arn_that_is_no_key_of_its_partition_is_refused_with_the_command_that_finds_it(block, arn, message):
    line = _refusal(_existing(block, existing_bucket={"kms_key_arn": arn}))
    assert line.startswith(f"emr-lineage.environments.dev.data_lake.existing_bucket.kms_key_arn: {arn!r} {message}")
    assert line.endswith("(`aws kms describe-key --key-id <alias or id> --query KeyMetadata.Arn`)")


def test_a_key_of_another_region_than_the_environments_is_refused(block):
    line = _refusal(_existing(block, region="us-east-1", existing_bucket={"kms_key_arn": KEY_ARN}))
    assert line == (
        "emr-lineage.environments.dev: data_lake.existing_bucket.kms_key_arn: the key is in eu-west-1, the "
        "environment in us-east-1, and S3 encrypts with keys of the bucket's region: give the key of the bucket's "
        "region"
    )


def test_without_a_region_the_keys_region_is_left_to_the_deploy(block):
    data = _existing(block, existing_bucket={"kms_key_arn": KEY_ARN.replace("eu-west-1", "us-east-1")})
    assert settings_from_context(data, "dev").data_lake.existing_bucket.kms_key_arn.startswith("arn:aws:kms:us-east-1")


def test_partitions_come_from_botocores_endpoint_data():
    assert region_partition("eu-west-1") == "aws"
    assert region_partition("cn-northwest-1") == "aws-cn"
    assert region_partition("us-gov-west-1") == "aws-us-gov"
    assert region_partition("zz-nowhere-1") is None


@pytest.mark.parametrize(
    ("name", "message"),
    [
        ("Sales", "'Sales' is not a Glue database name the stacks can grant: use 1-255 lowercase letters, digits, "),
        ("sales/eu", "'sales/eu' is not a Glue database name"),
        ("sales*", "'sales*' is not a Glue database name"),
        ("", "'' is not a Glue database name"),
        ("s" * 256, f"{'s' * 256!r} is not a Glue database name"),
        ("default", "'default' is granted to the job roles already (DESCRIBE, which Spark's catalog client needs): "),
    ],
)
def test_a_database_name_glue_or_the_grants_refuse_is_refused(block, name, message):
    data = copy.deepcopy(block)
    data["environments"]["dev"]["data_lake"]["existing_databases"] = ["sales_eu", name]
    line = _refusal(data)
    assert line.startswith(f"emr-lineage.environments.dev.data_lake.existing_databases: {message}")


def test_a_database_listed_twice_is_refused(block):
    data = copy.deepcopy(block)
    data["environments"]["dev"]["data_lake"]["existing_databases"] = ["sales", "finance", "sales"]
    assert _refusal(data) == (
        "emr-lineage.environments.dev.data_lake.existing_databases: 'sales' listed twice: list each database once"
    )


def test_a_database_named_as_the_stacks_own_is_refused(block):
    data = copy.deepcopy(block)
    data["environments"]["prod"]["data_lake"]["existing_databases"] = ["emr_lineage_prod_curated"]
    assert _refusal(data, "prod") == (
        "emr-lineage.environments.prod: data_lake.existing_databases: 'emr_lineage_prod_curated' is a name the "
        "stacks give their own databases (emr_lineage_prod_*): list only databases made outside emr-lineage"
    )
    # Another environment's prefix is a name like any other (an environment may use another's databases).
    data["environments"]["prod"]["data_lake"]["existing_databases"] = ["emr_lineage_dev_curated"]
    assert settings_from_context(data, "prod").data_lake.existing_databases == ["emr_lineage_dev_curated"]


def test_the_lifecycle_is_required_for_the_bucket_the_stack_makes_and_refused_for_an_existing_one(block):
    missing = copy.deepcopy(block)
    del missing["environments"]["dev"]["data_lake"]["noncurrent_version_expiration_days"]
    assert _refusal(missing) == (
        "emr-lineage.environments.dev.data_lake: noncurrent_version_expiration_days: missing required key without "
        "existing_bucket (the days the lake bucket the stack makes keeps noncurrent versions)"
    )
    both = _existing(block, noncurrent_version_expiration_days=30)
    assert _refusal(both) == (
        "emr-lineage.environments.dev.data_lake: noncurrent_version_expiration_days applies to the bucket the stack "
        "makes, and existing_bucket is set (its lifecycle is its owner's): remove noncurrent_version_expiration_days"
    )


def test_a_mistyped_key_of_the_existing_bucket_suggests_the_real_one(block):
    line = _refusal(_existing(block, existing_bucket={"kms_key": KEY_ARN}))
    assert line == (
        "emr-lineage.environments.dev.data_lake.existing_bucket.kms_key: unknown key (did you mean 'kms_key_arn'?)"
    )
