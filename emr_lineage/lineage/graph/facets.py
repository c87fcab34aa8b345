"""What a run's events say, read from their facets one value at a time: schemas flattened, statistics as
counts, the catalog table a dataset is, the properties of the application; and the one rule that picks,
of two reports, the one that stands (:func:`later`). :mod:`emr_lineage.lineage.graph.history` keeps them per run.
"""

from __future__ import annotations

import datetime as dt
import sys
from collections.abc import Mapping
from typing import Any

from emr_lineage.lineage.times import placed

_EMPTY: Mapping[str, Any] = {}
Fields = tuple[tuple[str, str], ...]  # (field, type) as reported, nested fields as ``parent.child``
Counts = tuple[int | None, int | None, int | None]  # rowCount, size (bytes), fileCount as reported
Property = tuple[dt.datetime | None, str]  # a reported value and the time of its event
COUNTS = ("rowCount", "size", "fileCount")
# The facets whose string fields are a run's properties, named ``<facet>.<field>``; of spark_properties
# (the Spark properties the listener captures) each property, ``spark_properties.<property>``.
PROPERTY_FACETS = {
    "run": ("processing_engine", "spark_applicationDetails", "spark_properties"),
    "job": ("sourceCodeLocation",),
}


def kept(value: str) -> str:
    """One copy of a name that thousands of events repeat (see ``from_events._kept``)."""
    return sys.intern(value)


def later(first: Any, second: Any) -> Any:
    """Of two reports (a :data:`Schema`, :data:`Statistics` or :data:`Property`), the one reported last: the
    later event time (:func:`~emr_lineage.lineage.times.placed`: an event without one counts as the
    earliest), then the larger value (a count not reported as the smallest)."""
    if first is None:
        return second
    return first if _rank(first) >= _rank(second) else second


def _rank(report: tuple[dt.datetime | None, Any]) -> tuple[dt.datetime, Any]:
    value = report[1]
    if type(value) is tuple and value and type(value[0]) is not tuple:  # Counts
        value = tuple(-1 if count is None else count for count in value)
    return placed(report[0]), value


def catalog_table(facets: dict[str, Any]) -> str | None:
    """The catalog table name a dataset was read or written as: the ``catalog`` facet's name and the ``symlinks``
    facet's TABLE identifier (``lakehouse`` and ``clean.orders_clean``: ``lakehouse.clean.orders_clean``)."""
    catalog, symlinks = facets.get("catalog"), facets.get("symlinks")
    if type(catalog) is not dict or type(symlinks) is not dict or type(catalog.get("name")) is not str:
        return None
    for identifier in symlinks.get("identifiers") or ():
        if type(identifier) is dict and identifier.get("type") == "TABLE" and type(identifier.get("name")) is str:
            return kept(f"{catalog['name']}.{identifier['name']}")
    return None


def counts(facet: Any) -> Counts | None:
    """A statistics facet's (rowCount, size, fileCount), a field that is not a count as None; None without any."""
    if type(facet) is not dict:
        return None
    found = tuple(v if type(v) is int and v >= 0 else None for v in (facet.get(name) for name in COUNTS))
    return found if any(v is not None for v in found) else None  # type: ignore[return-value]


def flatten(fields: Any, prefix: str = "") -> Fields:
    """A ``schema`` facet's fields as (name, type), nested ones named ``parent.child``."""
    flat: list[tuple[str, str]] = []
    for column in fields or ():
        if type(column) is not dict or not column.get("name"):
            continue
        name = f"{prefix}{column['name']}"
        flat.append((kept(name), kept(str(column.get("type") or ""))))
        flat.extend(flatten(column.get("fields"), f"{name}."))
    return tuple(flat)


def add_properties(
    properties: dict[str, Property], facets: dict[str, Any], names: tuple[str, ...], time: dt.datetime | None
) -> None:
    """Each string field of the facets ``names`` into ``properties`` (``<facet>.<field>``), the later report kept."""
    for name in names:
        facet = facets.get(name)
        if type(facet) is not dict:
            continue
        fields = facet.get("properties") if name == "spark_properties" else facet
        for field_name, value in (fields if type(fields) is dict else _EMPTY).items():
            if type(value) is str and not field_name.startswith("_"):  # not _producer, _schemaURL
                key = kept(f"{name}.{field_name}")
                properties[key] = later(properties.get(key), (time, value))


def scanned_snapshot(input_facets: dict[str, Any]) -> float | None:
    """The snapshot an Iceberg scan read (``icebergScanReport.snapshotId``), as the listener sends it: a JSON
    double, so an id above 2**53 arrives rounded (the ``version`` facet is exact but names the table's current
    snapshot, also when the job read an older one: :func:`emr_lineage.analysis.runs.read_versions`)."""
    report = input_facets.get("icebergScanReport")
    value = report.get("snapshotId") if type(report) is dict else None
    return float(value) if type(value) in (int, float) else None
