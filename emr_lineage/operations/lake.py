"""doctor's row for an existing data lake (``data_lake.existing_bucket``, ``existing_databases``): what must be
true of it before the deploy, since the stacks import it and cannot make it so.

The bucket is in doctor's region and encrypts as ``kms_key_arn`` says (that key; without one SSE-S3 or the AWS
managed key, which need no grant); the whole bucket is a Lake Formation data location where
``registered_with_lake_formation`` says its owner registered it; every existing database is in the Glue
catalog. The first problem fails the row, with its fix.
"""

from __future__ import annotations

from emr_lineage.operations.checks import CheckResult, DoctorClients, Status, aws_call, not_needed
from emr_lineage.settings.data_lake import ExistingBucket, region_partition
from emr_lineage.settings.model import EnvironmentSettings

CHECK, TITLE = "existing-lake", "existing data lake bucket and Glue databases"
# GetBucketLocation's LocationConstraint: none for us-east-1, and "EU" for buckets made as such in eu-west-1.
_LOCATION_REGIONS = {None: "us-east-1", "": "us-east-1", "EU": "eu-west-1"}
KMS_ALGORITHMS = ("aws:kms", "aws:kms:dsse")
# A bucket without a default encryption configuration still encrypts new objects with SSE-S3.
NO_ENCRYPTION_CONFIGURATION = "ServerSideEncryptionConfigurationNotFoundError"
SETTINGS_DOC = "docs/deploy-into-existing.md"


def configured(settings: EnvironmentSettings) -> bool:
    """Whether the environment uses an existing bucket or databases (else the row is not needed)."""
    return settings.data_lake.existing_bucket is not None or bool(settings.data_lake.existing_databases)


NOT_CONFIGURED = "no data_lake.existing_bucket or existing_databases"


def existing_lake(clients: DoctorClients, settings: EnvironmentSettings) -> CheckResult:
    lake = settings.data_lake
    if not configured(settings):
        return not_needed(CHECK, TITLE, NOT_CONFIGURED)
    key = f"emr-lineage.environments.{settings.name}.data_lake"
    passed: list[str] = []
    if lake.existing_bucket is not None:
        problem = _bucket_problem(clients, lake.existing_bucket, key, passed)
        if problem:
            return problem
    missing = []
    for name in lake.existing_databases:
        _, error = aws_call(lambda name=name: clients.glue.get_database(Name=name))
        if error and error.startswith("EntityNotFoundException"):
            missing.append(name)
        elif error:
            return CheckResult(CHECK, TITLE, Status.FAIL, f"Glue database {name}: {error}")
    if missing:
        detail = f"no Glue database {', '.join(missing)} in {clients.region}"
        them = "it" if len(missing) == 1 else "them"
        fix = f"create {them} before the deploy, or take {them} off {key}.existing_databases"
        return CheckResult(CHECK, TITLE, Status.FAIL, detail, fix)
    if lake.existing_databases:
        passed.append(f"databases {', '.join(lake.existing_databases)}")
    return CheckResult(CHECK, TITLE, Status.PASS, "; ".join(passed))


def _bucket_problem(clients: DoctorClients, bucket: ExistingBucket, key: str, passed: list[str]) -> CheckResult | None:
    """The bucket's first problem (None: it has none, and ``passed`` says what it is)."""
    name = bucket.name
    location, error = aws_call(lambda: clients.s3.get_bucket_location(Bucket=name))
    if error:
        return CheckResult(
            CHECK,
            TITLE,
            Status.FAIL,
            f"bucket {name}: {error}",
            f"give the bucket's name in {key}.existing_bucket.name",
        )
    constraint = location.get("LocationConstraint")
    region = _LOCATION_REGIONS.get(constraint, constraint)
    if region != clients.region:
        detail = f"bucket {name} is in {region}, doctor's region is {clients.region}"
        return CheckResult(
            CHECK, TITLE, Status.FAIL, detail, "deploy the environment in the bucket's region (region in cdk.json)"
        )
    encryption = _encryption_problem(clients, bucket, key)
    if encryption:
        return encryption
    passed.append(
        f"bucket {name} in {region}, " + (f"SSE-KMS with {bucket.kms_key_arn}" if bucket.kms_key_arn else "SSE-S3")
    )
    if bucket.registered_with_lake_formation:
        arn = f"arn:{region_partition(clients.region) or 'aws'}:s3:::{name}"
        _, error = aws_call(lambda: clients.lakeformation.describe_resource(ResourceArn=arn))
        if error:
            detail = f"{arn} is no Lake Formation data location: {error}"
            fix = (
                f"set {key}.existing_bucket.registered_with_lake_formation false (the stack then registers it), or "
                "register the whole bucket"
            )
            return CheckResult(CHECK, TITLE, Status.FAIL, detail, fix)
        passed.append("registered with Lake Formation")
    return None


def _encryption_problem(clients: DoctorClients, bucket: ExistingBucket, key: str) -> CheckResult | None:
    """Whether the bucket's default encryption is what ``kms_key_arn`` says (None: it is)."""
    found, error = aws_call(lambda: clients.s3.get_bucket_encryption(Bucket=bucket.name))
    if error and not error.startswith(NO_ENCRYPTION_CONFIGURATION):
        return CheckResult(CHECK, TITLE, Status.FAIL, f"bucket {bucket.name}'s encryption: {error}")
    rules = found["ServerSideEncryptionConfiguration"]["Rules"] if found else []
    default = rules[0].get("ApplyServerSideEncryptionByDefault", {}) if rules else {}
    algorithm, key_id = default.get("SSEAlgorithm", "AES256"), default.get("KMSMasterKeyID")
    setting = f"{key}.existing_bucket.kms_key_arn"
    # SSE-S3, or SSE-KMS with the AWS managed key aws/s3 (no key id), which S3 uses for any role of the account.
    if algorithm not in KMS_ALGORITHMS or key_id is None:
        if bucket.kms_key_arn is None:
            return None
        what = "SSE-S3" if algorithm not in KMS_ALGORITHMS else "the AWS managed key aws/s3"
        detail = f"bucket {bucket.name} encrypts with {what}, not with {bucket.kms_key_arn}"
        return CheckResult(CHECK, TITLE, Status.FAIL, detail, f"set {setting} null")
    resolved = key_id if key_id == bucket.kms_key_arn else _key_arn(clients, key_id)
    if bucket.kms_key_arn is not None and resolved == bucket.kms_key_arn:
        return None
    detail = f"bucket {bucket.name} encrypts with KMS key {resolved}, cdk.json says {bucket.kms_key_arn or 'SSE-S3'}"
    return CheckResult(CHECK, TITLE, Status.FAIL, detail, f"set {setting} to {resolved}")


def _key_arn(clients: DoctorClients, key_id: str) -> str:
    """The ARN of the key the bucket names (an ARN, a key id or an alias); as given where KMS cannot say."""
    metadata, error = aws_call(lambda: clients.kms.describe_key(KeyId=key_id)["KeyMetadata"])
    return key_id if error else metadata["Arn"]
