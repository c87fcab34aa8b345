"""Settings from cdk.json: both environments load; every bad value fails naming its key."""

from __future__ import annotations

import copy
import json
import re
import tomllib
from importlib import metadata

import pytest

from emr_lineage.settings import model
from emr_lineage.settings.limits import ALB_LAMBDA_MAX_BODY_BYTES, EMR_RELEASES, SQS_MAX_MESSAGE_BYTES
from emr_lineage.settings.loader import ConfigError, load_settings, settings_from_context


@pytest.fixture(scope="module")
def block(repo_root):
    return json.loads((repo_root / "cdk.json").read_text())["context"]["emr-lineage"]


def _with(block: dict, path: str, value, env: str = "dev") -> dict:
    """A copy of the config block with one key (dotted path under the env) set, or removed if value is ...."""
    data = copy.deepcopy(block)
    node = data["environments"][env]
    *parents, leaf = path.split(".")
    for part in parents:
        node = node[part]
    if value is ...:
        del node[leaf]
    else:
        node[leaf] = value
    return data


@pytest.mark.parametrize("env", ["dev", "prod"])
def test_both_environments_load(env):
    settings = load_settings(env)
    assert settings.name == env
    assert settings.openlineage.namespace == f"emr-lineage-{env}"


def test_default_environment_is_dev(block):
    assert settings_from_context(block, None).name == "dev"


def test_dev_and_prod_differ_where_the_issue_says(block):
    dev, prod = settings_from_context(block, "dev"), settings_from_context(block, "prod")
    assert dev.network.nat_gateways == 1
    assert prod.network.nat_gateways == prod.network.max_azs
    assert prod.database.multi_az and prod.database.deletion_protection
    assert not dev.database.multi_az


@pytest.mark.parametrize("env", ["dev", "prod"])
def test_gateway_is_on_and_sized_for_the_alb(block, env):
    gateway = settings_from_context(block, env).gateway
    assert gateway.enabled
    assert gateway.max_event_bytes == 750_000 < ALB_LAMBDA_MAX_BODY_BYTES  # within it even base64-encoded
    assert gateway.dead_letter_retention_days == 14
    assert 1 <= gateway.forward_retries <= 10
    assert gateway.dead_letter_after_hours == 4  # docs/gateway.md: the outage the queue rides out


def test_unknown_environment_names_the_known_ones(block):
    with pytest.raises(ConfigError, match=r"unknown environment 'stage' .*defines: dev, prod"):
        settings_from_context(block, "stage")


@pytest.mark.parametrize(
    ("path", "value", "message"),
    [
        (
            "network.nat_gateways",
            ...,
            r"environments\.dev\.network: missing nat_gateways: they size the VPC the stacks create \(or name an "
            r"existing one with existing_vpc\)",
        ),
        ("network.nat_gateways", "1", r"environments\.dev\.network\.nat_gateways: Input should be a valid integer"),
        (
            "network.nat_gatways",
            1,
            r"environments\.dev\.network\.nat_gatways: unknown key \(did you mean 'nat_gateways'\?\)",
        ),
        ("network.vpc_cidr", "10.0.0.0/33", r"network\.vpc_cidr: '10\.0\.0\.0/33' is not a valid CIDR"),
        ("network.vpc_cidr", "10.0.0.0/8", r"network\.vpc_cidr: vpc_cidr 10\.0\.0\.0/8 must be between /16 and /18"),
        # 2 AZs of public /24, private /20 and isolated /24 subnets do not fit in a /19.
        (
            "network.vpc_cidr",
            "10.0.0.0/19",
            r"environments\.dev\.network\.vpc_cidr: vpc_cidr 10\.0\.0\.0/19 must be between /16 and /18 to hold "
            r"2 AZs \(max_azs\) of public /24, private /20, isolated /24 subnets",
        ),
        ("network.vpc_cidr", "10.0.0.0/24", r"environments\.dev\.network\.vpc_cidr: vpc_cidr 10\.0\.0\.0/24 must be"),
        ("network.vpc_cidr", "fd00::/56", r"environments\.dev\.network\.vpc_cidr: vpc_cidr fd00::/56 must be an IPv4"),
        ("network.nat_gateways", 3, r"network: nat_gateways \(3\) cannot exceed max_azs \(2\)"),
        (
            "network.interface_endpoints",
            ["sts", "kinesis"],
            r"network\.interface_endpoints\.1: Input should be 'sts', ",
        ),
        (
            "network.flow_logs_retention_days",
            10,
            r"flow_logs_retention_days: 10 is not a CloudWatch Logs retention period",
        ),
        ("marquez.web_allowed_cidrs", ["0.0.0.0/0"], r"marquez\.web_allowed_cidrs: 0\.0\.0\.0/0 opens the lineage UI"),
        (
            "marquez.web_allowed_cidrs",
            ["10.40.0.0/16", "203.0.113.0/24"],
            r"environments\.dev\.marquez\.web_allowed_cidrs: 203\.0\.113\.0/24 is not a private network; "
            r"the lineage UI is internal",
        ),
        (
            "marquez.web_allowed_cidrs",
            ["8.8.8.8/32"],
            r"environments\.dev\.marquez\.web_allowed_cidrs: 8\.8\.8\.8/32 is not a private network",
        ),
        (
            "marquez.web_allowed_cidrs",
            ["10.0.0.0/7"],
            r"environments\.dev\.marquez\.web_allowed_cidrs: 10\.0\.0\.0/7 is wider than /8",
        ),
        (
            "marquez.web_allowed_cidrs",
            ["fd00::/8"],
            r"environments\.dev\.marquez\.web_allowed_cidrs: fd00::/8 is IPv6",
        ),
        ("tags", {"project": "x", "aws:cloudformation:stack-name": "x"}, r"environments\.dev\.tags: tag key 'aws:clou"),
        ("tags", {"AWS:Owner": "x"}, r"environments\.dev\.tags: tag key 'AWS:Owner': the 'aws:' prefix is reserved"),
        (
            "emr.release_label",
            "emr-8.0.0",
            r"environments\.dev\.emr\.release_label: release_label emr-8\.0\.0 is not supported; emr-lineage runs on "
            r"emr-7\.",
        ),
        (
            "emr.release_label",
            "emr-6.15.0",
            r"environments\.dev\.emr\.release_label: release_label emr-6\.15\.0 is not",
        ),
        (
            "emr.release_label",
            "emr-7.99.0",
            r"environments\.dev\.emr\.release_label: release_label emr-7\.99\.0 is not",
        ),
        ("marquez.web_allowed_cidrs", [], r"marquez\.web_allowed_cidrs: List should have at least 1 item"),
        ("marquez.task_memory_mib", 1000, r"marquez: task_memory_mib 1000 is not valid with task_cpu 1024"),
        (
            "database.postgres_version",
            "13",
            r"database\.postgres_version: postgres_version 13: Marquez needs PostgreSQL 14",
        ),
        (
            "database.postgres_version",
            "17.2",
            r"database\.postgres_version: postgres_version 17\.2: give the major version only \(e\.g\. \"17\"\); RDS",
        ),
        ("database.postgres_version", "seventeen", r"database\.postgres_version: postgres_version 'seventeen': a Post"),
        ("database.multi_az", "false", r"database\.multi_az: Input should be a valid boolean"),
        (
            "database.backup_retention_days",
            0,
            r"database\.backup_retention_days: Input should be greater than or equal to 1",
        ),
        (
            "removal_policy",
            "delete",
            r"environments\.dev\.removal_policy: 'delete' is not one of \['destroy', 'retain', 'snapshot'\]",
        ),
        ("account", "12345", r"environments\.dev\.account: String should match pattern"),
        ("region", "mars-1", r"environments\.dev\.region: String should match pattern"),
        ("openlineage.listener_source", "maven", r"openlineage\.listener_source: Input should be 'bundle' or 'emr'"),
        ("gateway.enabled", "true", r"environments\.dev\.gateway\.enabled: Input should be a valid boolean"),
        ("gateway.enabled", ..., r"environments\.dev\.gateway\.enabled: missing required key"),
        ("emr", "x", r"environments\.dev\.emr: expected an object \(\{\.\.\.\}\), not a JSON string$"),
        ("gateway", [1], r"environments\.dev\.gateway: expected an object \(\{\.\.\.\}\), not a JSON array$"),
        (
            "gateway.max_event_byte",
            1024,
            r"environments\.dev\.gateway\.max_event_byte: unknown key \(did you mean 'max_event_bytes'\?\)",
        ),
        (
            "gateway.max_event_bytes",
            1_000_001,
            r"environments\.dev\.gateway\.max_event_bytes: max_event_bytes 1000001 is more than the ALB's largest "
            r"Lambda request body \(1000000 bytes\)",
        ),
        ("gateway.max_event_bytes", 100, r"gateway\.max_event_bytes: Input should be greater than or equal to 1024"),
        ("gateway.forward_retries", 0, r"gateway\.forward_retries: Input should be greater than or equal to 1"),
        ("gateway.forward_retries", 11, r"gateway\.forward_retries: Input should be less than or equal to 10"),
        (
            "gateway.dead_letter_retention_days",
            15,
            r"gateway\.dead_letter_retention_days: Input should be less than or equal to 14",
        ),
        (
            "gateway.dead_letter_retention_days",
            0,
            r"gateway\.dead_letter_retention_days: Input should be greater than or equal to 1",
        ),
        (
            "gateway.dead_letter_after_hours",
            0,
            r"gateway\.dead_letter_after_hours: Input should be greater than or equal to 1",
        ),
        (
            "gateway.dead_letter_after_hours",
            73,
            r"gateway\.dead_letter_after_hours: Input should be less than or equal to 72",
        ),
        (
            "gateway.max_receive_count",
            5,
            r"environments\.dev\.gateway\.max_receive_count: unknown key",
        ),
        # Athena's cutoff minimum is 10 MB; CloudFormation takes it as a 32-bit integer of bytes.
        (
            "gateway.athena_scan_limit_mb",
            9,
            r"gateway\.athena_scan_limit_mb: Input should be greater than or equal to 10",
        ),
        (
            "gateway.athena_scan_limit_mb",
            2148,
            r"gateway\.athena_scan_limit_mb: Input should be less than or equal to 2147",
        ),
        (
            "gateway.athena_scan_limit",
            100,
            r"environments\.dev\.gateway\.athena_scan_limit: unknown key \(did you mean 'athena_scan_limit_mb'\?\)",
        ),
        (
            "gateway.archive_readers",
            ["arn:aws:iam::123456789012:user/someone"],
            r"gateway\.archive_readers\.0: String should match pattern",
        ),
    ],
)
def test_bad_values_fail_with_a_message_naming_the_key(block, path, value, message):
    with pytest.raises(ConfigError, match=message) as excinfo:
        settings_from_context(_with(block, path, value), "dev")
    assert str(excinfo.value).startswith("invalid configuration in cdk.json context:")


def test_all_problems_are_reported_at_once(block):
    data = _with(_with(block, "network.max_azs", "2"), "database.multi_az", ...)
    with pytest.raises(ConfigError) as excinfo:
        settings_from_context(data, "dev")
    text = str(excinfo.value)
    assert "network.max_azs" in text and "database.multi_az" in text


def test_optional_keys_may_be_absent_or_null(block):
    data = _with(_with(block, "account", ...), "region", None)
    settings = settings_from_context(data, "dev")
    assert settings.account is None and settings.region is None


def test_missing_block_or_environments(block):
    with pytest.raises(ConfigError, match="no 'emr-lineage' object"):
        settings_from_context(None, "dev")
    with pytest.raises(ConfigError, match="environments: missing or empty"):
        settings_from_context({"versions": block["versions"]}, "dev")


def test_versions_are_shared_and_validated(block):
    data = copy.deepcopy(block)
    data["versions"]["marquez"] = "latest"
    with pytest.raises(ConfigError, match=r"emr-lineage\.versions\.marquez: String should match pattern"):
        settings_from_context(data, "prod")


def test_versions_missing_or_not_an_object_is_said_so(block):
    data = copy.deepcopy(block)
    del data["versions"]
    with pytest.raises(ConfigError, match=r"emr-lineage\.versions: missing required key$"):
        settings_from_context(data, "dev")
    for value, kind in ((3, "number"), (None, "null")):
        data["versions"] = value
        with pytest.raises(
            ConfigError, match=rf"emr-lineage\.versions: expected an object \(\{{\.\.\.\}}\), not a JSON {kind}$"
        ):
            settings_from_context(data, "dev")


def test_unreadable_cdk_json_is_a_config_error(tmp_path):
    broken = tmp_path / "cdk.json"
    broken.write_text('{"context": {')
    with pytest.raises(ConfigError, match=r"cdk\.json:1:\d+: invalid JSON"):
        load_settings("dev", cdk_json=broken)
    with pytest.raises(ConfigError, match="not found"):
        load_settings("dev", cdk_json=tmp_path / "missing.json")


def test_listener_artifact_names_its_maven_coordinates_and_file():
    artifact = load_settings("dev").versions.openlineage_spark
    assert artifact.coordinates == f"io.openlineage:openlineage-spark_2.12:{artifact.version}"
    assert artifact.file_name == f"openlineage-spark_2.12-{artifact.version}.jar"


def test_the_maven_repository_is_maven_s_own_setting_not_cdk_json(block):
    # A mirror goes into Maven's settings.xml (docs/listener.md); the key is gone, and the loader is strict.
    data = copy.deepcopy(block)
    data["versions"]["openlineage_spark"]["maven_repository"] = "https://repo1.maven.org/maven2"
    with pytest.raises(ConfigError, match=r"versions\.openlineage_spark\.maven_repository"):
        settings_from_context(data, "dev")


def test_private_web_allowed_cidrs_of_every_rfc1918_range_are_accepted(block):
    cidrs = ["10.0.0.0/8", "172.16.0.0/12", "192.168.10.0/24", "10.40.1.7/32"]
    settings = settings_from_context(_with(block, "marquez.web_allowed_cidrs", cidrs), "dev")
    assert settings.marquez.web_allowed_cidrs == cidrs


@pytest.mark.parametrize("release", sorted(EMR_RELEASES))
def test_every_listed_release_is_accepted(block, release):
    settings = settings_from_context(_with(block, "emr.release_label", release), "dev")
    assert settings.emr.release == EMR_RELEASES[release]


def test_a_scala_2_13_listener_is_refused_for_a_scala_2_12_release(block):
    data = copy.deepcopy(block)
    data["versions"]["openlineage_spark"]["scala_version"] = "2.13"
    release = data["environments"]["dev"]["emr"]["release_label"]
    with pytest.raises(
        ConfigError, match=rf"{re.escape(release)} runs Spark .* on Scala 2\.12, but .*scala_version is 2\.13"
    ):
        settings_from_context(data, "dev")


def _pin(requirements_text: str, package: str) -> str:
    (version,) = re.findall(rf"^{package}==(\S+)", requirements_text, flags=re.MULTILINE)
    return version


def test_local_pyspark_is_the_spark_of_every_configured_emr_release(block, repo_root):
    """Local Spark tests must run the Spark the clusters run: the release table decides, in one place."""
    installed = metadata.version("pyspark")
    pinned = _pin(
        "\n".join(
            tomllib.loads((repo_root / "pyproject.toml").read_text())["project"]["optional-dependencies"]["spark"]
        ),
        "pyspark",
    )
    locked = _pin((repo_root / "requirements.lock").read_text(), "pyspark")
    for env in block["environments"]:
        emr = settings_from_context(block, env).emr
        spark = emr.release.spark
        assert installed == spark, f"pyspark {installed} installed, but {env} runs {emr.release_label} (Spark {spark})"
        assert pinned == locked == spark, (
            f"requirements pin pyspark {pinned}/{locked}; {emr.release_label} runs {spark}"
        )


def test_max_event_bytes_must_fit_one_sqs_message(block, monkeypatch):
    """Whatever the ALB passes, an accepted event must fit one SQS message (the queue's MaximumMessageSize)."""
    monkeypatch.setattr(model, "ALB_LAMBDA_MAX_BODY_BYTES", 2 * SQS_MAX_MESSAGE_BYTES)
    too_big = _with(block, "gateway.max_event_bytes", SQS_MAX_MESSAGE_BYTES + 1)
    with pytest.raises(
        ConfigError, match=r"max_event_bytes 1048577 is more than SQS's largest message \(1048576 bytes\)"
    ):
        settings_from_context(too_big, "dev")
    largest = settings_from_context(_with(block, "gateway.max_event_bytes", SQS_MAX_MESSAGE_BYTES), "dev")
    assert largest.gateway.max_event_bytes == SQS_MAX_MESSAGE_BYTES


def _sharing_one_account(block: dict, *, prod_manages: bool) -> dict:
    data = copy.deepcopy(block)
    for env in ("dev", "prod"):
        data["environments"][env].update(account="123456789012", region="eu-west-1")
    data["environments"]["prod"]["data_lake"]["manage_lake_formation_settings"] = prod_manages
    return data


def test_two_environments_of_one_account_may_not_both_manage_its_lake_formation_settings(block):
    shared = _sharing_one_account(block, prod_manages=True)
    for env, other in (("dev", "prod"), ("prod", "dev")):
        with pytest.raises(ConfigError) as excinfo:
            settings_from_context(shared, env)
        message = str(excinfo.value)
        assert message.startswith(f"emr-lineage.environments.{env}.data_lake.manage_lake_formation_settings: ")
        assert f"{env} and {other} share account 123456789012 in eu-west-1" in message
        assert message.endswith("set it false in one of them (docs/deploy.md, 'Several environments in one account')")
    one_owner = _sharing_one_account(block, prod_manages=False)
    assert settings_from_context(one_owner, "dev").data_lake.manage_lake_formation_settings
    assert not settings_from_context(one_owner, "prod").data_lake.manage_lake_formation_settings


def test_an_environment_that_does_not_manage_the_lake_formation_settings_adds_no_admins(block):
    data = _with(block, "data_lake.manage_lake_formation_settings", False)
    data["environments"]["dev"]["data_lake"]["admin_arns"] = ["arn:aws:iam::123456789012:role/lake-admin"]
    with pytest.raises(ConfigError, match=r"data_lake: admin_arns are added by the environment that manages"):
        settings_from_context(data, "dev")
