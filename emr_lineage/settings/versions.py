"""What every environment runs: Marquez's images and the OpenLineage Spark listener jar (the top-level
``versions`` object of the typed cdk.json model, :mod:`emr_lineage.settings.model`)."""

from __future__ import annotations

from typing import Annotated, ClassVar, Literal

from pydantic import Field

from emr_lineage.settings.base import Strict
from emr_lineage.settings.operations import MarquezImage


class ListenerArtifact(Strict):
    """The OpenLineage Spark listener jar: Maven coordinates and the checksum it must match.

    Maven fetches it (``emr-lineage listener fetch``; the repository, or a mirror, is Maven's own
    settings.xml, see docs/listener.md).
    """

    version: Annotated[
        str,
        Field(
            pattern=r"^\d+\.\d+\.\d+$",
            description="Version of the listener artifact "
            "`io.openlineage:openlineage-spark_<scala_version>:<version>`.",
        ),
    ]
    scala_version: Literal["2.12", "2.13"] = Field(
        description="Scala version of the listener artifact: 2.12 for the Spark 3.5 of EMR 7."
    )
    # None until a maintainer has pinned it; until then the jar is not used anywhere.
    sha256: Annotated[str, Field(pattern=r"^[0-9a-f]{64}$")] | None = Field(
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

    @property
    def artifact_id(self) -> str:
        return f"openlineage-spark_{self.scala_version}"

    @property
    def file_name(self) -> str:
        return f"{self.artifact_id}-{self.version}.jar"

    @property
    def coordinates(self) -> str:
        """Maven's ``groupId:artifactId:version``, e.g. ``io.openlineage:openlineage-spark_2.12:1.53.0``."""
        return f"{self.group_id}:{self.artifact_id}:{self.version}"


class Versions(Strict):
    """What every environment runs: Marquez's images and the OpenLineage listener."""

    marquez: Annotated[
        str, Field(pattern=r"^\d+\.\d+\.\d+$", description="Image tag of both Marquez images (API and web UI).")
    ]
    marquez_image: MarquezImage = Field(description="The Marquez images' repositories.")
    openlineage_spark: ListenerArtifact = Field(description="The OpenLineage Spark listener jar.")
