"""Spark configuration for the OpenLineage listener: the one place every key is spelled.

Used by the EMR stack (spark-defaults / spark-hive-site classifications of the long-running
cluster and the launch spec), by ``emr-lineage launch`` (parent keys on spark-submit) and by
the local capture (parent keys). Key names follow the OpenLineage Spark integration
(ArgumentParser.java:
https://github.com/OpenLineage/OpenLineage/blob/9ace84b42e289889f9dfe08d96a4b9ec225295df/integration/spark/app/src/main/java/io/openlineage/spark/agent/ArgumentParser.java).
"""

from __future__ import annotations

import os
import uuid
from collections.abc import Mapping
from dataclasses import dataclass

from emr_lineage.errors import EmrLineageError
from emr_lineage.marquez.api import LINEAGE_ENDPOINT

LISTENER_CLASS = "io.openlineage.spark.agent.OpenLineageSparkListener"
GLUE_CLIENT_FACTORY = "com.amazonaws.glue.catalog.metastore.AWSGlueDataCatalogHiveClientFactory"
# EMR classifications (configuration API names).
SPARK_DEFAULTS = "spark-defaults"
SPARK_HIVE_SITE = "spark-hive-site"
# The HTTP transport's api_key auth (sent as "Authorization: Bearer <key>"), which the lineage
# gateway requires. Only bootstrap/install-openlineage.sh writes them, on the node, so the key
# stays out of the cluster's configuration:
# https://openlineage.io/docs/integrations/spark/configuration/transport
AUTH_TYPE_PROPERTY = "spark.openlineage.transport.auth.type"
AUTH_KEY_PROPERTY = "spark.openlineage.transport.auth.apiKey"
AUTH_TYPE_API_KEY = "api_key"
TRANSPORT_URL_PROPERTY = "spark.openlineage.transport.url"
# Parent-run keys, Spark side and environment side, in the same order.
PARENT_KEYS = {
    "parent_job_namespace": ("spark.openlineage.parentJobNamespace", "OPENLINEAGE_PARENT_JOB_NAMESPACE"),
    "parent_job_name": ("spark.openlineage.parentJobName", "OPENLINEAGE_PARENT_JOB_NAME"),
    "parent_run_id": ("spark.openlineage.parentRunId", "OPENLINEAGE_PARENT_RUN_ID"),
    "root_job_namespace": ("spark.openlineage.rootParentJobNamespace", "OPENLINEAGE_ROOT_PARENT_JOB_NAMESPACE"),
    "root_job_name": ("spark.openlineage.rootParentJobName", "OPENLINEAGE_ROOT_PARENT_JOB_NAME"),
    "root_run_id": ("spark.openlineage.rootParentRunId", "OPENLINEAGE_ROOT_PARENT_RUN_ID"),
}


class ParentContextError(EmrLineageError, ValueError):
    """Orchestration context from the environment is incomplete or malformed."""


@dataclass(frozen=True, kw_only=True)
class ListenerConfig:
    """What the listener needs to report to Marquez; built from settings + the API URL."""

    api_url: str
    namespace: str
    timeout_ms: int
    compression: str | None = None
    column_lineage: bool = True


def listener_properties(config: ListenerConfig) -> dict[str, str]:
    """spark-defaults entries that load the listener and point its HTTP transport at Marquez.

    ``spark.extraListeners`` is not additive (a value given at submit time replaces the spark-defaults
    one: https://spark.apache.org/docs/3.5.6/configuration.html#dynamically-loading-spark-properties):
    a job that sets its own listeners at submit time must include this class too; the README says so.
    """
    props = {
        "spark.extraListeners": LISTENER_CLASS,
        "spark.openlineage.namespace": config.namespace,
        "spark.openlineage.transport.type": "http",
        TRANSPORT_URL_PROPERTY: config.api_url,
        "spark.openlineage.transport.endpoint": LINEAGE_ENDPOINT,
        "spark.openlineage.transport.timeoutInMillis": str(config.timeout_ms),
        "spark.openlineage.columnLineage.datasetLineageEnabled": "true" if config.column_lineage else "false",
    }
    if config.compression:
        props["spark.openlineage.transport.compression"] = config.compression
    return props


def glue_catalog_properties(catalog_id: str) -> tuple[dict[str, str], dict[str, str]]:
    """(spark-defaults, spark-hive-site) entries for the Glue Data Catalog.

    The catalog id is set explicitly so the listener can build Glue symlink names without an
    STS call, which fails in private subnets without an STS endpoint (OpenLineage #4163).
    """
    spark_defaults = {"spark.glue.accountId": catalog_id}
    hive_site = {
        "hive.metastore.client.factory.class": GLUE_CLIENT_FACTORY,
        "hive.metastore.glue.catalogid": catalog_id,
    }
    return spark_defaults, hive_site


def emr_configurations(listener: ListenerConfig, *, glue_catalog_id: str) -> list[dict]:
    """The EMR ``Configurations`` list (RunJobFlow shape) for lineage + Glue catalog."""
    glue_defaults, hive_site = glue_catalog_properties(glue_catalog_id)
    return [
        {"Classification": SPARK_DEFAULTS, "Properties": {**listener_properties(listener), **glue_defaults}},
        {"Classification": SPARK_HIVE_SITE, "Properties": hive_site},
    ]


@dataclass(frozen=True, kw_only=True)
class ParentContext:
    """The orchestrator's run that a Spark application reports as its parent (and root)."""

    parent_job_namespace: str
    parent_job_name: str
    parent_run_id: str
    root_job_namespace: str | None = None
    root_job_name: str | None = None
    root_run_id: str | None = None

    def __post_init__(self) -> None:
        for field in ("parent_run_id", "root_run_id"):
            value = getattr(self, field)
            if value is not None:
                try:
                    uuid.UUID(value)
                except ValueError:
                    env_name = PARENT_KEYS[field][1]
                    raise ParentContextError(f"{env_name}={value!r} is not a UUID") from None
        root = (self.root_job_namespace, self.root_job_name, self.root_run_id)
        if any(root) and not all(root):
            raise ParentContextError(
                "root parent context is partial: set all of "
                + ", ".join(PARENT_KEYS[k][1] for k in ("root_job_namespace", "root_job_name", "root_run_id"))
            )

    @classmethod
    def new(cls, *, namespace: str, job_name: str) -> ParentContext:
        """A fresh parent run (the launcher prints its id so it can be found in Marquez)."""
        return cls(parent_job_namespace=namespace, parent_job_name=job_name, parent_run_id=str(uuid.uuid4()))

    @classmethod
    def from_env(cls, environ: Mapping[str, str] | None = None) -> ParentContext | None:
        """Read OPENLINEAGE_PARENT_* / OPENLINEAGE_ROOT_PARENT_*; None when none is set."""
        environ = os.environ if environ is None else environ
        values = {field: environ.get(env_name) or None for field, (_, env_name) in PARENT_KEYS.items()}
        if not any(values.values()):
            return None
        parent = ("parent_job_namespace", "parent_job_name", "parent_run_id")
        missing = [PARENT_KEYS[f][1] for f in parent if not values[f]]
        if missing:
            raise ParentContextError("parent context is partial: missing " + ", ".join(missing))
        return cls(**values)

    def spark_properties(self) -> dict[str, str]:
        """``spark.openlineage.parent*`` / ``rootParent*`` entries (only those that are set)."""
        return {
            spark_key: getattr(self, field)
            for field, (spark_key, _) in PARENT_KEYS.items()
            if getattr(self, field) is not None
        }


def spark_submit_conf_args(properties: Mapping[str, str]) -> list[str]:
    """``--conf k=v`` pairs for spark-submit, in a stable order."""
    args: list[str] = []
    for key in sorted(properties):
        args += ["--conf", f"{key}={properties[key]}"]
    return args
