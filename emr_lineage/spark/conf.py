"""Spark configuration for the OpenLineage listener: the one place every key is spelled (the catalogs':
:mod:`emr_lineage.spark.catalogs`).

Used by the EMR stack (spark-defaults / spark-hive-site / iceberg-defaults classifications of the
long-running cluster and the launch spec), by ``emr-lineage launch`` (parent keys on spark-submit) and by
local runs on local Spark (:mod:`emr_lineage.spark.local`: the same listener properties, with the
jar on the driver's classpath and an events file or URL as the destination). Key names follow the
OpenLineage Spark integration (ArgumentParser.java:
https://github.com/OpenLineage/OpenLineage/blob/9ace84b42e289889f9dfe08d96a4b9ec225295df/integration/spark/app/src/main/java/io/openlineage/spark/agent/ArgumentParser.java).
"""

from __future__ import annotations

import os
import re
import uuid
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass

from emr_lineage.errors import EmrLineageError
from emr_lineage.marquez.api import LINEAGE_ENDPOINT, without_api_path
from emr_lineage.settings.model import OpenLineageSettings
from emr_lineage.spark import iceberg
from emr_lineage.spark.catalogs import (
    ICEBERG_DEFAULTS,
    ICEBERG_ENABLED,
    SPARK_DEFAULTS,
    SPARK_HIVE_SITE,
    catalog_configurations,
    glue_catalog_properties,
)
from emr_lineage.spark.truststore import TrustStore, truststore_properties

LISTENER_CLASS = "io.openlineage.spark.agent.OpenLineageSparkListener"
# The HTTP transport's api_key auth (sent as "Authorization: Bearer <key>"), which the lineage
# gateway requires. On a cluster only bootstrap/install-openlineage.sh writes them, on the node, so
# the key stays out of the cluster's configuration; an EMR Serverless job run gets a reference to the
# secret instead of the key (serverless_spark_defaults):
# https://openlineage.io/docs/integrations/spark/configuration/transport
DRIVER_CLASSPATH = "spark.driver.extraClassPath"
TRANSPORT_PREFIX = "spark.openlineage.transport."
AUTH_TYPE_KEY, AUTH_KEY_KEY = "auth.type", "auth.apiKey"  # below a transport's prefix
AUTH_TYPE_PROPERTY = TRANSPORT_PREFIX + AUTH_TYPE_KEY
AUTH_KEY_PROPERTY = TRANSPORT_PREFIX + AUTH_KEY_KEY
AUTH_TYPE_API_KEY = "api_key"
TRANSPORT_URL_PROPERTY = TRANSPORT_PREFIX + "url"
# The application's job name in events, instead of the one the listener reads from the SparkContext
# at application start, which it can miss under load and send as "unknown" (seen with 1.53.0).
APP_NAME_PROPERTY = "spark.openlineage.appName"
# EMR Serverless job runs: the jar travels with every run (no bootstrap action), Hive's Glue client
# settings as Hadoop properties of spark-defaults, and the application's name.
SPARK_JARS = "spark.jars"
SPARK_APP_NAME = "spark.app.name"
HADOOP_PREFIX = "spark.hadoop."
EXTRA_LISTENERS = "spark.extraListeners"
# Keys a caller (Airflow's EMR Serverless operator) may already have injected: when any key of a
# group is there, none of ours of that group is added (apache/airflow PR #64807's rule).
PARENT_GROUP_PREFIXES = ("spark.openlineage.parent", "spark.openlineage.rootParent")
TRANSPORT_GROUP_PREFIX = "spark.openlineage.transport"
# EMR Serverless puts the named secret's string in a value so marked when the run starts (requests carry the name):
# https://docs.aws.amazon.com/emr/latest/EMR-Serverless-UserGuide/secrets-manager.html
# EMR on EC2 marks the key instead, with the secret's ARN as its value, and reads the secret when it applies
# the configuration: https://docs.aws.amazon.com/emr/latest/ReleaseGuide/storing-sensitive-data.html
SECRET_REFERENCE_PREFIX = "EMR.secret@"
# What `emr-lineage attach` added to a running cluster's spark-defaults (a spark.* key: spark-submit drops,
# with a warning, any other); `detach` removes exactly that.
ATTACHED_PROPERTY = "spark.emr-lineage.attached"
# What stands for a secret in anything shown (dry runs, debug output).
MASK = "****"
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


class ListenerConfigError(EmrLineageError, ValueError):
    """A listener configuration without a destination."""


@dataclass(frozen=True, kw_only=True)
class ListenerConfig:
    """Where and how the listener reports: built from an environment's settings plus a destination.

    The destination is ``api_url`` (HTTP transport: Marquez's base URL, or the lineage gateway's),
    ``events_file`` (file transport: one JSON event per line, appended; local runs only) or both (the
    composite transport sends each event to both). Everything else is the same on EMR and locally.
    """

    namespace: str
    timeout_ms: int
    api_url: str | None = None
    events_file: str | None = None
    compression: str | None = None
    column_lineage: bool = True

    def __post_init__(self) -> None:
        if self.api_url is None and self.events_file is None:
            raise ListenerConfigError("the listener needs a destination: an API URL, an events file or both")

    @classmethod
    def for_settings(
        cls, openlineage: OpenLineageSettings, *, api_url: str | None = None, events_file: str | None = None
    ) -> ListenerConfig:
        """The environment's listener settings (namespace, timeout, compression) with a destination."""
        return cls(
            namespace=openlineage.namespace,
            timeout_ms=openlineage.transport_timeout_ms,
            compression=openlineage.transport_compression,
            api_url=api_url,
            events_file=events_file,
        )


def _transports(config: ListenerConfig, api_key: str | None) -> dict[str, dict[str, str]]:
    """Each destination's transport keys (relative to its prefix), by composite transport name."""
    transports = {}
    if config.events_file is not None:
        transports["file"] = {"type": "file", "location": config.events_file}
    if config.api_url is not None:
        url, endpoint = transport_url(config.api_url)
        transports["http"] = {
            "type": "http",
            "url": url,
            "endpoint": endpoint,
            "timeoutInMillis": str(config.timeout_ms),
        }
        if config.compression:
            transports["http"]["compression"] = config.compression
        if api_key:
            transports["http"].update({AUTH_TYPE_KEY: AUTH_TYPE_API_KEY, AUTH_KEY_KEY: api_key})
    return transports


def transport_url(api_url: str) -> tuple[str, str]:
    """The HTTP transport's ``url`` and ``endpoint`` for a server's URL: the listener refuses a URL with a
    path beside an endpoint ("You can't pass both uri and endpoint parameters", then reports nothing), so a
    path goes into the endpoint, before ``/api/v1/lineage`` (a pasted ``/api/v1`` or ``/api/v1/lineage``
    dropped): ``http://proxy/gw`` -> (``http://proxy``, ``/gw/api/v1/lineage``). A URL without a path is
    kept as it is (the stacks' load balancer URL, whose host is a CDK token until deployed: no URL parser)."""
    scheme, separator, rest = api_url.partition("://")
    authority, _, path = rest.partition("/")
    if not separator or not path.strip("/"):
        return api_url.rstrip("/"), LINEAGE_ENDPOINT
    path = without_api_path("/" + path)
    return f"{scheme}://{authority}", path + LINEAGE_ENDPOINT


def listener_properties(config: ListenerConfig, *, api_key: str | None = None) -> dict[str, str]:
    """Spark properties that load the listener and point its transport at ``config``'s destination;
    ``api_key`` is the HTTP transport's Bearer key (local runs), or what EMR Serverless replaces by it
    (job runs: :func:`serverless_spark_defaults`); on a cluster the bootstrap action writes it on the
    node, so it never is in a cluster's configuration.

    ``spark.extraListeners`` is not additive (a value given at submit time replaces the spark-defaults
    one: https://spark.apache.org/docs/3.5.6/configuration.html#dynamically-loading-spark-properties):
    a job that sets its own listeners at submit time must include this class too; docs/listener.md says so.
    Transport keys, the composite one included: https://openlineage.io/docs/client/java/configuration
    """
    props = {
        EXTRA_LISTENERS: LISTENER_CLASS,
        "spark.openlineage.namespace": config.namespace,
        "spark.openlineage.columnLineage.datasetLineageEnabled": "true" if config.column_lineage else "false",
    }
    transports = _transports(config, api_key)
    if len(transports) == 1:
        (keys,) = transports.values()
        props.update({f"{TRANSPORT_PREFIX}{key}": value for key, value in keys.items()})
        return props
    props[f"{TRANSPORT_PREFIX}type"] = "composite"
    for name, keys in transports.items():
        props.update({f"{TRANSPORT_PREFIX}transports.{name}.{key}": value for key, value in keys.items()})
    return props


def local_listener_properties(
    config: ListenerConfig, *, jar: str, beside: Sequence[str] = (), api_key: str | None = None
) -> dict[str, str]:
    """:func:`listener_properties` for a Spark that is not EMR (local runs): the jar goes on the driver
    JVM's classpath (``spark.driver.extraClassPath``), as on EMR, where the bootstrap action puts it in
    Spark's jars directory; the listener runs in the driver only. Not ``spark.jars``: that loads it
    through Spark's own class loader, copies the 43 MB jar for every application, and the listener then
    logs reflective-access warnings for its extension classes (seen with 1.53.0). ``beside``: jars whose
    classes the listener must see, after it (the Iceberg runtime). ``api_key``, when given, is the HTTP
    transport's Bearer key."""
    return {DRIVER_CLASSPATH: os.pathsep.join([jar, *beside]), **listener_properties(config, api_key=api_key)}


def emr_configurations(listener: ListenerConfig, *, glue_catalog_id: str, warehouse: str) -> list[dict]:
    """The EMR ``Configurations`` list (RunJobFlow shape) for lineage and the catalogs
    (:func:`~emr_lineage.spark.catalogs.catalog_configurations`), with EMR's Iceberg runtime on the classpath."""
    catalogs = catalog_configurations(glue_catalog_id=glue_catalog_id, warehouse=warehouse)
    return [
        {"Classification": SPARK_DEFAULTS, "Properties": {**listener_properties(listener), **catalogs[SPARK_DEFAULTS]}},
        {"Classification": SPARK_HIVE_SITE, "Properties": catalogs[SPARK_HIVE_SITE]},
        {"Classification": ICEBERG_DEFAULTS, "Properties": dict(ICEBERG_ENABLED)},
    ]


def spark_defaults_of(configurations: list[dict]) -> dict[str, str]:
    """The ``spark-defaults`` properties of an EMR ``Configurations`` list (RunJobFlow shape; {} if none)."""
    for configuration in configurations:
        if configuration.get("Classification") == SPARK_DEFAULTS:
            return dict(configuration.get("Properties") or {})
    return {}


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


def serverless_spark_defaults(
    listener: ListenerConfig,
    *,
    jar_uri: str,
    api_key_secret: str | None,
    parent: ParentContext,
    glue_catalog_id: str,
    app_name: str | None = None,
    user_properties: Mapping[str, str] | None = None,
    truststore: TrustStore | None = None,
) -> dict[str, str]:
    """The ``spark-defaults`` of an EMR Serverless job run: what a cluster gets from its configurations
    (:func:`listener_properties`, :func:`~emr_lineage.spark.catalogs.glue_catalog_properties`, Hive's as
    ``spark.hadoop.*``; for ``iceberg-defaults``, EMR's Iceberg runtime in ``spark.jars``, whose catalog is in
    the application's configuration), its bootstrap action (the jar, here ``spark.jars``, and the HTTP
    transport's ``api_key``) and its step (the parent keys), merged into ``user_properties``.

    The API key goes as a reference to ``api_key_secret`` (its ARN; None: no auth), which EMR
    Serverless resolves when the run starts: the key's value is never in the request, nor in what
    GetJobRun returns. The secret's string must be the key itself (not JSON).

    The caller's keys win: a parent group (``spark.openlineage.parent*``/``rootParent*``) or transport
    (``spark.openlineage.transport*``) already there is left whole, as Airflow's injection does;
    ``spark.jars`` and ``spark.extraListeners`` are lists, ours appended to the caller's. ``truststore`` (with
    ``openlineage.trusted_ca``: no bootstrap imports it here) comes last, by :func:`truststore_properties`.
    """
    user = dict(user_properties or {})
    glue_defaults, hive_site = glue_catalog_properties(glue_catalog_id)
    ours = {
        **listener_properties(listener, api_key=secret_reference(api_key_secret) if api_key_secret else None),
        **glue_defaults,
        **{HADOOP_PREFIX + key: value for key, value in hive_site.items()},
        **parent.spark_properties(),
    }
    if app_name:
        ours[SPARK_APP_NAME] = app_name
    if any(key.startswith(PARENT_GROUP_PREFIXES) for key in user):
        ours = {k: v for k, v in ours.items() if not k.startswith(PARENT_GROUP_PREFIXES)}
    if any(key.startswith(TRANSPORT_GROUP_PREFIX) for key in user):
        ours = {k: v for k, v in ours.items() if not k.startswith(TRANSPORT_GROUP_PREFIX)}
    merged = {**ours, **user}
    # The runtime beside the listener's jar: one class loader, so the listener sees Iceberg's classes.
    merged[SPARK_JARS] = with_item(with_item(user.get(SPARK_JARS), jar_uri), iceberg.EMR_RUNTIME_JAR)
    merged[EXTRA_LISTENERS] = with_item(user.get(EXTRA_LISTENERS), LISTENER_CLASS)
    if truststore is not None:
        merged.update(truststore_properties(truststore, merged))
    return merged


def list_items(value: str | None) -> list[str]:
    """The items of a comma-separated Spark list property (``spark.jars``, ``spark.extraListeners``)."""
    return [item.strip() for item in (value or "").split(",") if item.strip()]


def with_item(value: str | None, item: str) -> str:
    """A Spark list property with ``item`` appended, unless it is there already."""
    listed = list_items(value)
    return ",".join(listed if item in listed else [*listed, item])


def cluster_listener_properties(
    listener: ListenerConfig, *, jar_uri: str, api_key_secret: str | None
) -> dict[str, str]:
    """What a running cluster's ``spark-defaults`` get from ``emr-lineage attach`` (no bootstrap action):
    the jar in ``spark.jars`` and :func:`listener_properties`; with ``api_key_secret`` (its ARN), the HTTP
    transport's api_key auth whose key EMR reads from that secret when it applies the configuration (the
    property's key marked ``EMR.secret@``, the ARN as its value): the key's value is never in the request,
    nor in what DescribeCluster or ListInstanceGroups return."""
    properties = {SPARK_JARS: jar_uri, **listener_properties(listener, api_key=api_key_secret)}
    if api_key_secret:
        for key in [k for k, v in properties.items() if k.endswith("." + AUTH_KEY_KEY) and v == api_key_secret]:
            properties[SECRET_REFERENCE_PREFIX + key] = properties.pop(key)
    return properties


def secret_reference(secret_id: str) -> str:
    """The EMR Serverless configuration value that stands for the string secret ``secret_id`` holds."""
    return SECRET_REFERENCE_PREFIX + secret_id


def is_secret_reference(value: str) -> bool:
    return value.startswith(SECRET_REFERENCE_PREFIX)


# Keys whose value is a credential: Spark's own rule (spark.redaction.regex's default,
# https://spark.apache.org/docs/3.5.6/configuration.html#runtime-environment) and what the OpenLineage
# transports take (an apiKey, an Authorization header).
_SECRET_KEY = re.compile(r"secret|password|token|access[.]key|api[._-]?key|authorization", re.IGNORECASE)


def is_secret(key: str) -> bool:
    """A Spark property whose value is a credential: any transport's API key or Authorization header,
    and what Spark itself redacts (``fs.s3a.secret.key``, a password, a token, an access key)."""
    return bool(_SECRET_KEY.search(key))


def masked(properties: Mapping[str, str]) -> dict[str, str]:
    """``properties`` with every credential's value replaced by :data:`MASK`: what may be shown. A
    reference to a secret is shown: it names where the key is, not the key (EMR Serverless's
    ``EMR.secret@<ARN>`` value; EMR on EC2's ``EMR.secret@<key>`` key, whose value is the ARN)."""
    return {
        key: MASK if is_secret(key) and not is_secret_reference(value) and not is_secret_reference(key) else value
        for key, value in properties.items()
    }


def scrubbed(message: str, secrets: Iterable[str]) -> str:
    """``message`` (an AWS error, say) with each of ``secrets`` replaced by :data:`MASK` where it stands as a
    whole token: a short value is not blanked inside other words (a key "ab" leaves "table" alone)."""
    for secret in sorted({s for s in secrets if s}, key=len, reverse=True):
        message = re.sub(rf"(?<![A-Za-z0-9]){re.escape(secret)}(?![A-Za-z0-9])", MASK, message)
    return message
