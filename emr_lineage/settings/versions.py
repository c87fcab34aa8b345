"""What every environment runs: Marquez's images, the OpenLineage Spark listener jar and the Iceberg Spark runtime
of local runs (the top-level ``versions`` object of the typed cdk.json model, :mod:`emr_lineage.settings.model`)."""

from __future__ import annotations

from typing import Annotated, ClassVar, Literal

from pydantic import Field

from emr_lineage.settings.base import Strict
from emr_lineage.settings.operations import MarquezImage

_VERSION = r"^\d+\.\d+\.\d+$"
_SHA256 = r"^[0-9a-f]{64}$"


class MavenJar:
    """What a pinned jar of Maven Central is to ``emr-lineage listener fetch``: its coordinates, its file and
    where its pin is in cdk.json. Mixed into the models below, which hold ``version`` and ``sha256``."""

    version: str
    sha256: str | None
    group_id: ClassVar[str]
    title: ClassVar[str]  # what the jar is, in messages
    marker_class: ClassVar[str]  # a class file only this jar has: a Maven mix-up is caught before the checksum
    versions_key: ClassVar[str]  # its key under ``versions`` in cdk.json

    @property
    def artifact_id(self) -> str:
        raise NotImplementedError

    @property
    def file_name(self) -> str:
        return f"{self.artifact_id}-{self.version}.jar"

    @property
    def coordinates(self) -> str:
        """Maven's ``groupId:artifactId:version``, e.g. ``io.openlineage:openlineage-spark_2.12:1.53.0``."""
        return f"{self.group_id}:{self.artifact_id}:{self.version}"

    @property
    def pin_path(self) -> tuple[str, ...]:
        """Where its SHA-256 is in cdk.json, key by key from the root."""
        return ("context", "emr-lineage", "versions", self.versions_key, "sha256")


class ListenerArtifact(MavenJar, Strict):
    """The OpenLineage Spark listener jar: Maven coordinates and the checksum it must match.

    Maven fetches it (``emr-lineage listener fetch``; the repository, or a mirror, is Maven's own
    settings.xml, see docs/listener.md).
    """

    version: Annotated[
        str,
        Field(
            pattern=_VERSION,
            description="Version of the listener artifact "
            "`io.openlineage:openlineage-spark_<scala_version>:<version>`.",
        ),
    ]
    scala_version: Literal["2.12", "2.13"] = Field(
        description="Scala version of the listener artifact: 2.12 for the Spark 3.5 of EMR 7."
    )
    # None until a maintainer has pinned it; until then the jar is not used anywhere.
    sha256: Annotated[str, Field(pattern=_SHA256)] | None = Field(
        default=None,
        description="The jar's SHA-256, written by `emr-lineage listener fetch --pin`; until it is set, "
        "`listener fetch` and `listener stage` refuse and clusters stop at boot with a clear message. The jar comes "
        "from Maven (`mvn` as configured: a mirror goes into Maven's `settings.xml`, not here).",
    )
    pgp_fingerprint: Annotated[str, Field(pattern=r"^[0-9A-F]{40}$")] | None = Field(
        default=None,
        description="The release signing key's fingerprint (40 hex digits); `listener fetch --pin` then also checks "
        "the jar's `.asc` signature with the key file given by `--pgp-key`. Null: Maven's checksums only "
        "([what is verified](listener.md#what-is-verified-and-what-is-not)).",
    )

    group_id: ClassVar[str] = "io.openlineage"
    title: ClassVar[str] = "the OpenLineage listener jar"
    marker_class: ClassVar[str] = "io/openlineage/spark/agent/OpenLineageSparkListener.class"
    versions_key: ClassVar[str] = "openlineage_spark"

    @property
    def artifact_id(self) -> str:
        return f"openlineage-spark_{self.scala_version}"


class IcebergRuntime(MavenJar, Strict):
    """The Apache Iceberg Spark runtime jar of local runs (EMR has its own Iceberg): Maven coordinates and the
    checksum it must match. It goes on the driver's classpath beside the listener (docs/listener.md)."""

    version: Annotated[
        str,
        Field(
            pattern=_VERSION,
            description="Version of the runtime artifact "
            "`org.apache.iceberg:iceberg-spark-runtime-<spark_version>_<scala_version>:<version>`.",
        ),
    ]
    spark_version: Literal["3.5"] = Field(
        description="Spark version the runtime is built for: 3.5, the Spark of local runs (the pinned pyspark)."
    )
    scala_version: Literal["2.12"] = Field(description="Scala version of the runtime artifact: 2.12, local Spark's.")
    sha256: Annotated[str, Field(pattern=_SHA256)] | None = Field(
        default=None,
        description="The jar's SHA-256, written by `emr-lineage listener fetch --pin`; until it is set, "
        "`listener fetch` refuses and local runs (`demo`, `run-local`) stop with a clear message.",
    )

    group_id: ClassVar[str] = "org.apache.iceberg"
    title: ClassVar[str] = "the Iceberg Spark runtime jar"
    marker_class: ClassVar[str] = "org/apache/iceberg/spark/SparkCatalog.class"
    versions_key: ClassVar[str] = "iceberg_spark_runtime"

    @property
    def artifact_id(self) -> str:
        return f"iceberg-spark-runtime-{self.spark_version}_{self.scala_version}"


class Versions(Strict):
    """What every environment runs: Marquez's images, the OpenLineage listener, the Iceberg runtime of local runs."""

    marquez: Annotated[str, Field(pattern=_VERSION, description="Image tag of both Marquez images (API and web UI).")]
    marquez_image: MarquezImage = Field(description="The Marquez images' repositories.")
    openlineage_spark: ListenerArtifact = Field(description="The OpenLineage Spark listener jar.")
    iceberg_spark_runtime: IcebergRuntime = Field(
        description="The Apache Iceberg Spark runtime jar of local Spark (`demo`, `run-local`), on the driver's "
        "classpath beside the listener."
    )
