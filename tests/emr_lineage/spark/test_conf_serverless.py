"""emr_lineage.spark.conf.serverless_spark_defaults: a job run's spark-defaults from the builder clusters use."""

from __future__ import annotations

from emr_lineage.spark import iceberg
from emr_lineage.spark.catalogs import glue_catalog_properties
from emr_lineage.spark.conf import (
    LISTENER_CLASS,
    MASK,
    ListenerConfig,
    ParentContext,
    list_items,
    listener_properties,
    masked,
    serverless_spark_defaults,
)
from emr_lineage.spark.truststore import TrustStore, truststore_properties

LISTENER = ListenerConfig(api_url="http://lineage.internal:80", namespace="emr-lineage-prod", timeout_ms=5000)
PARENT = ParentContext(
    parent_job_namespace="airflow",
    parent_job_name="daily.run_spark",
    parent_run_id="01234567-89ab-4cde-8f01-23456789abcd",
    root_job_namespace="airflow",
    root_job_name="daily",
    root_run_id="11234567-89ab-4cde-8f01-23456789abcd",
)
JAR = "s3://artifacts/listener/openlineage-spark_2.12-1.53.0.jar"
SECRET_ARN = "arn:aws:secretsmanager:eu-west-1:123456789012:secret:ApiKey-AbCdEf"
REFERENCE = f"EMR.secret@{SECRET_ARN}"


def build(user=None, api_key_secret=SECRET_ARN):
    return serverless_spark_defaults(
        LISTENER,
        jar_uri=JAR,
        api_key_secret=api_key_secret,
        parent=PARENT,
        glue_catalog_id="123456789012",
        user_properties=user,
    )


def test_it_is_the_clusters_listener_and_glue_conf_plus_jar_key_and_parent() -> None:
    props = build()
    glue_defaults, hive_site = glue_catalog_properties("123456789012")
    expected = {
        **listener_properties(LISTENER, api_key=REFERENCE),
        **glue_defaults,
        **{f"spark.hadoop.{k}": v for k, v in hive_site.items()},
        **PARENT.spark_properties(),
        "spark.jars": f"{JAR},{iceberg.EMR_RUNTIME_JAR}",
    }
    assert props == expected
    assert props["spark.extraListeners"] == LISTENER_CLASS
    assert props["spark.openlineage.transport.auth.type"] == "api_key"
    assert props["spark.openlineage.transport.auth.apiKey"] == REFERENCE  # EMR Serverless puts the key there
    assert props["spark.openlineage.rootParentRunId"] == PARENT.root_run_id


def test_without_a_key_there_is_no_auth() -> None:
    assert not any(".auth." in key for key in build(api_key_secret=None))


def test_a_callers_parent_group_is_kept_whole_and_ours_not_added() -> None:
    props = build({"spark.openlineage.parentRunId": "21234567-89ab-4cde-8f01-23456789abcd"})
    assert props["spark.openlineage.parentRunId"] == "21234567-89ab-4cde-8f01-23456789abcd"
    assert not any(k.startswith(("spark.openlineage.parentJob", "spark.openlineage.rootParent")) for k in props)
    assert props["spark.openlineage.transport.url"] == LISTENER.api_url  # the other group is still ours


def test_a_callers_transport_is_kept_whole_and_no_key_of_ours_goes_with_it() -> None:
    props = build({"spark.openlineage.transport.type": "console"})
    transport = {k: v for k, v in props.items() if k.startswith("spark.openlineage.transport")}
    assert transport == {"spark.openlineage.transport.type": "console"}
    assert props["spark.openlineage.parentRunId"] == PARENT.parent_run_id


def test_jars_and_listeners_are_appended_to_the_callers_once() -> None:
    props = build({"spark.jars": "s3://mine/a.jar", "spark.extraListeners": f"com.example.Mine,{LISTENER_CLASS}"})
    assert props["spark.jars"] == f"s3://mine/a.jar,{JAR},{iceberg.EMR_RUNTIME_JAR}"
    assert props["spark.extraListeners"] == f"com.example.Mine,{LISTENER_CLASS}"
    assert build({"spark.executor.memory": "4g"})["spark.executor.memory"] == "4g"


def test_emrs_iceberg_runtime_goes_beside_the_listener_jar_once_and_the_catalog_stays_the_applications() -> None:
    """As iceberg-defaults does on a cluster: the runtime on the listener's classpath (both in spark.jars); the
    catalog itself is in the application's configuration, which knows the lake bucket (stacks/emr/serverless.py)."""
    assert list_items(build()["spark.jars"]) == [JAR, iceberg.EMR_RUNTIME_JAR]
    assert list_items(build({"spark.jars": iceberg.EMR_RUNTIME_JAR})["spark.jars"]) == [iceberg.EMR_RUNTIME_JAR, JAR]
    assert not any(key.startswith((iceberg.CATALOG_PROPERTY, iceberg.SQL_EXTENSIONS)) for key in build())


def test_masked_hides_every_transports_key_and_shows_a_reference_to_one() -> None:
    props = {
        "spark.openlineage.transport.auth.apiKey": "a",
        "spark.openlineage.transport.transports.http.auth.apiKey": "b",
        "spark.openlineage.transport.transports.other.auth.apiKey": REFERENCE,
        "spark.openlineage.namespace": "ns",
    }
    assert masked(props) == {
        "spark.openlineage.transport.auth.apiKey": MASK,
        "spark.openlineage.transport.transports.http.auth.apiKey": MASK,
        "spark.openlineage.transport.transports.other.auth.apiKey": REFERENCE,
        "spark.openlineage.namespace": "ns",
    }


def test_masked_hides_what_spark_redacts_and_any_authorization_header() -> None:
    secrets = {
        "spark.hadoop.fs.s3a.secret.key": "s",
        "spark.hadoop.fs.s3a.access.key": "a",
        "spark.hadoop.fs.s3a.session.token": "t",
        "spark.hadoop.javax.jdo.option.ConnectionPassword": "p",
        "spark.openlineage.transport.headers.Authorization": "Bearer b",
        "spark.openlineage.transport.transports.kafka.properties.sasl.jaas.config.apikey": "k",
    }
    kept = {
        "spark.openlineage.transport.auth.type": "api_key",
        "spark.openlineage.transport.url": "http://gw:5080",
        "spark.hadoop.fs.s3a.aws.credentials.provider": "com.amazonaws.auth.InstanceProfileCredentialsProvider",
    }
    assert masked({**secrets, **kept}) == {**dict.fromkeys(secrets, MASK), **kept}


def test_a_trusted_cas_truststore_goes_to_the_driver_after_the_callers_options() -> None:
    store = TrustStore(
        path="emr-lineage-truststore/truststore.p12",
        archive="s3://artifacts/truststores/0123.zip#emr-lineage-truststore",
    )
    mine = {"spark.driver.extraJavaOptions": "-Dmy.flag=1", "spark.archives": "s3://mine/venv.tar.gz#environment"}
    props = serverless_spark_defaults(
        LISTENER,
        jar_uri=JAR,
        api_key_secret=SECRET_ARN,
        parent=PARENT,
        glue_catalog_id="123456789012",
        user_properties=mine,
        truststore=store,
    )
    assert props == {**build(mine), **truststore_properties(store, mine)}
    assert props["spark.driver.extraJavaOptions"].startswith("-Dmy.flag=1 -Djavax.net.ssl.trustStore=")
    assert props["spark.archives"] == f"s3://mine/venv.tar.gz#environment,{store.archive}"
    assert "spark.executor.extraJavaOptions" not in props  # executors send no lineage
    assert not any("trustStore" in value for value in build().values())  # without a trusted CA, nothing of it
