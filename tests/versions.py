"""Versions the tests expect, read from the one source (cdk.json), never written again here."""

from __future__ import annotations

from emr_lineage.settings.loader import load_settings
from tests.paths import CDK_JSON

DEV = load_settings("dev", CDK_JSON)
LISTENER = DEV.versions.openlineage_spark
OPENLINEAGE_VERSION = LISTENER.version
SCALA_VERSION = LISTENER.scala_version
EMR_RELEASE = DEV.emr.release_label
# The listener jar's key in the artifacts bucket, spelled out (its format is under test too).
LISTENER_JAR = f"openlineage-spark_{SCALA_VERSION}-{OPENLINEAGE_VERSION}.jar"
ICEBERG_RUNTIME = DEV.versions.iceberg_spark_runtime
RUNTIME_JAR = f"iceberg-spark-runtime-3.5_{SCALA_VERSION}-{ICEBERG_RUNTIME.version}.jar"
