"""Layout of the data lake: zones (key prefixes) and their Glue databases. One place for both.

Used by the data lake stack (databases, locations), the EMR stack (IAM scoping, grants) and
the tools (where the sample pipeline reads and writes).
"""

from __future__ import annotations

from emr_lineage.settings.model import EnvironmentSettings

ZONES = ("raw", "clean", "curated", "models")
# Zones whose tables live in the Glue catalog (the sample pipeline's: orders_clean clean, the others curated).
CATALOG_ZONES = ("clean", "curated")
# Zones Spark jobs only read; everything else they also write.
READ_ONLY_ZONES = ("raw",)
# The catalog's database that Spark's Glue catalog client looks up at every session start.
DEFAULT_DATABASE = "default"
# Where the Iceberg catalog puts a table of a Glue database without a location (an existing database's, say): under
# a zone jobs write. A zone's database has its zone's location, which its tables take.
WAREHOUSE_ZONE = "curated"


def zone_prefix(zone: str) -> str:
    if zone not in ZONES:
        raise ValueError(f"unknown data lake zone {zone!r}; zones are {', '.join(ZONES)}")
    return f"{zone}/"


def warehouse_uri(bucket: str) -> str:
    """The Iceberg catalog's warehouse in the lake ``bucket``: ``s3://<bucket>/curated/``."""
    return f"s3://{bucket}/{zone_prefix(WAREHOUSE_ZONE)}"


def glue_database_name(settings: EnvironmentSettings, zone: str) -> str:
    """``emr_lineage_<env>_<zone>``: Glue names allow lowercase letters, digits and '_'."""
    if zone not in CATALOG_ZONES:
        raise ValueError(f"zone {zone!r} has no Glue database; catalog zones are {', '.join(CATALOG_ZONES)}")
    return f"{settings.glue_database_prefix}_{zone}"
