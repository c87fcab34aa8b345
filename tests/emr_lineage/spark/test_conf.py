"""The listener's Spark properties: one builder for EMR and local runs, only the destination differs."""

from __future__ import annotations

import pytest

from emr_lineage.spark.catalogs import catalog_configurations
from emr_lineage.spark.conf import (
    LISTENER_CLASS,
    MASK,
    ListenerConfig,
    ListenerConfigError,
    cluster_listener_properties,
    emr_configurations,
    list_items,
    listener_properties,
    local_listener_properties,
    masked,
    scrubbed,
    with_item,
)
from tests.versions import DEV


def test_for_settings_takes_the_environments_listener_settings() -> None:
    config = ListenerConfig.for_settings(DEV.openlineage, api_url="http://marquez:5000")
    assert (config.namespace, config.timeout_ms, config.compression) == (
        DEV.openlineage.namespace,
        DEV.openlineage.transport_timeout_ms,
        DEV.openlineage.transport_compression,
    )


def test_emr_and_local_differ_only_in_the_destination_and_the_jar() -> None:
    emr = listener_properties(ListenerConfig.for_settings(DEV.openlineage, api_url="http://marquez:5000"))
    local = local_listener_properties(
        ListenerConfig.for_settings(DEV.openlineage, events_file="/tmp/e.jsonl"), jar="/cache/listener.jar"
    )
    assert emr["spark.openlineage.transport.type"] == "http"
    assert emr["spark.openlineage.transport.url"] == "http://marquez:5000"
    assert local["spark.openlineage.transport.type"] == "file"
    assert local["spark.openlineage.transport.location"] == "/tmp/e.jsonl"
    assert local["spark.driver.extraClassPath"] == "/cache/listener.jar" and "spark.driver.extraClassPath" not in emr

    def common(props: dict[str, str]) -> dict[str, str]:
        return {
            k: v
            for k, v in props.items()
            if k != "spark.driver.extraClassPath" and not k.startswith("spark.openlineage.transport.")
        }

    assert common(emr) == common(local)
    assert common(emr)["spark.extraListeners"] == LISTENER_CLASS


def test_a_cluster_gets_the_listener_the_catalogs_and_emrs_iceberg_runtime() -> None:
    listener = ListenerConfig(namespace="ns", timeout_ms=5000, api_url="http://gw:5080")
    configurations = emr_configurations(listener, glue_catalog_id="123456789012", warehouse="s3://lake/curated/")
    catalogs = catalog_configurations(glue_catalog_id="123456789012", warehouse="s3://lake/curated/")
    assert {c["Classification"]: c["Properties"] for c in configurations} == {
        "spark-defaults": {**listener_properties(listener), **catalogs["spark-defaults"]},
        "spark-hive-site": catalogs["spark-hive-site"],
        "iceberg-defaults": {"iceberg.enabled": "true"},
    }
    assert not any("extraClassPath" in key or key == "spark.jars" for key in configurations[0]["Properties"])


def test_both_destinations_make_a_composite_transport_with_the_key_on_its_http_part() -> None:
    config = ListenerConfig(namespace="n", timeout_ms=3000, api_url="http://gw:5080", events_file="/e.jsonl")
    props = local_listener_properties(config, jar="/j.jar", api_key="k")
    transport = {k.removeprefix("spark.openlineage.transport."): v for k, v in props.items() if ".transport." in k}
    assert transport == {
        "type": "composite",
        "transports.file.type": "file",
        "transports.file.location": "/e.jsonl",
        "transports.http.type": "http",
        "transports.http.url": "http://gw:5080",
        "transports.http.endpoint": "/api/v1/lineage",
        "transports.http.timeoutInMillis": "3000",
        "transports.http.auth.type": "api_key",
        "transports.http.auth.apiKey": "k",
    }


def test_a_key_goes_only_to_an_http_transport() -> None:
    to_file = local_listener_properties(
        ListenerConfig(namespace="n", timeout_ms=1, events_file="/e"), jar="j", api_key="k"
    )
    assert not any("auth" in key for key in to_file)
    to_url = local_listener_properties(
        ListenerConfig(namespace="n", timeout_ms=1, api_url="http://u"), jar="j", api_key="k"
    )
    assert to_url["spark.openlineage.transport.auth.apiKey"] == "k"


def test_a_config_without_a_destination_is_refused() -> None:
    with pytest.raises(ListenerConfigError, match="needs a destination"):
        ListenerConfig(namespace="n", timeout_ms=1)


@pytest.mark.parametrize(
    "api_url, url, endpoint",
    [
        ("http://marquez:5000", "http://marquez:5000", "/api/v1/lineage"),
        ("http://${Token[TOKEN.1]}", "http://${Token[TOKEN.1]}", "/api/v1/lineage"),  # the stacks' URL, kept
        ("http://gw:5080/api/v1", "http://gw:5080", "/api/v1/lineage"),
        ("http://gw:5080/api/v1/lineage/", "http://gw:5080", "/api/v1/lineage"),
        ("https://proxy/gw", "https://proxy", "/gw/api/v1/lineage"),
    ],
)
def test_the_http_transport_gets_a_url_without_a_path_and_the_path_in_its_endpoint(api_url, url, endpoint) -> None:
    props = listener_properties(ListenerConfig(namespace="n", timeout_ms=1, api_url=api_url))
    assert (props["spark.openlineage.transport.url"], props["spark.openlineage.transport.endpoint"]) == (url, endpoint)


SECRET = "arn:aws:secretsmanager:eu-west-1:123456789012:secret:emr-lineage-dev-gateway-api-key-AbCdEf"


def test_a_running_cluster_gets_the_listener_the_jar_and_a_reference_to_the_key() -> None:
    listener = ListenerConfig.for_settings(DEV.openlineage, api_url="http://lineage.internal:80")
    props = cluster_listener_properties(listener, jar_uri="s3://b/l.jar", api_key_secret=SECRET)
    assert props.pop("spark.jars") == "s3://b/l.jar"
    assert props.pop("EMR.secret@spark.openlineage.transport.auth.apiKey") == SECRET  # EMR on EC2 marks the key
    without_key = listener_properties(listener)
    assert {k: v for k, v in props.items() if k != "spark.openlineage.transport.auth.type"} == without_key
    assert props["spark.openlineage.transport.auth.type"] == "api_key"
    gateway_off = cluster_listener_properties(listener, jar_uri="s3://b/l.jar", api_key_secret=None)
    assert gateway_off == {"spark.jars": "s3://b/l.jar", **without_key}


def test_a_reference_to_a_secret_is_shown_but_a_credential_is_masked() -> None:
    shown = masked(
        {
            "EMR.secret@spark.openlineage.transport.auth.apiKey": SECRET,
            "spark.openlineage.transport.auth.apiKey": "plain",
            "spark.hadoop.fs.s3a.secret.key": "plain",
        }
    )
    assert shown == {
        "EMR.secret@spark.openlineage.transport.auth.apiKey": SECRET,
        "spark.openlineage.transport.auth.apiKey": MASK,
        "spark.hadoop.fs.s3a.secret.key": MASK,
    }


@pytest.mark.parametrize(
    "value, expected",
    [(None, "x.jar"), ("", "x.jar"), ("a.jar, b.jar", "a.jar,b.jar,x.jar"), ("x.jar,a.jar", "x.jar,a.jar")],
)
def test_an_item_is_appended_to_a_spark_list_once(value, expected) -> None:
    assert with_item(value, "x.jar") == expected
    assert list_items(expected) == expected.split(",")


def test_scrubbed_masks_each_secret_where_it_stands_alone_and_leaves_other_words_whole() -> None:
    message = "ValidationException: value 'ab' of key x is invalid; table ab,tab; Bearer s3cr3t-key, s3cr3t-key2"
    assert scrubbed(message, ["ab", "s3cr3t-key", ""]) == (
        f"ValidationException: value '{MASK}' of key x is invalid; table {MASK},tab; Bearer {MASK}, s3cr3t-key2"
    )
