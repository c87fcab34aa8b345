"""OpenLineage events and a fixed clock for the gateway tests."""

from __future__ import annotations

import datetime as dt
import json
from typing import Any

RUN_ID = "0190f3f2-7a3b-7c2d-9e1f-123456789abc"
PARENT_RUN_ID = "0190f3f2-0000-7000-8000-00000000aaaa"
ROOT_RUN_ID = "0190f3f2-0000-7000-8000-00000000bbbb"
KEY = "s3cr3t-key"
RECEIVED = dt.datetime(2026, 11, 23, 17, 5, 9, tzinfo=dt.UTC)


def clock() -> dt.datetime:
    return RECEIVED


PRODUCER = "https://github.com/OpenLineage/OpenLineage/tree/1.40.0/integration/spark"


def facet(schema: str, **fields: Any) -> dict[str, Any]:
    """A facet with the two fields every facet has (the event rule refuses one without them)."""
    return {"_producer": PRODUCER, "_schemaURL": f"https://openlineage.io/spec/facets/{schema}", **fields}


def event(*, parent: str | None = None, root: Any = None, run_id: str = RUN_ID, **changes: Any) -> dict[str, Any]:
    facets: dict[str, Any] = {}
    if parent:
        facets["parent"] = facet(
            "1-1-0/ParentRunFacet.json", run={"runId": parent}, job={"namespace": "emr-lineage-dev", "name": "app"}
        )
        if root is not None:
            facets["parent"]["root"] = {"run": {"runId": root}, "job": {"namespace": "airflow", "name": "dag"}}
    base: dict[str, Any] = {
        "eventType": "COMPLETE",
        "eventTime": "2026-11-21T12:00:03.250+01:00",
        "producer": PRODUCER,
        "schemaURL": "https://openlineage.io/spec/2-0-2/OpenLineage.json#/$defs/RunEvent",
        "run": {"runId": run_id, "facets": facets},
        "job": {"namespace": "emr-lineage-dev", "name": "app.write"},
        "inputs": [{"namespace": "s3a://lake", "name": "raw/orders"}],
        "outputs": [
            {
                "namespace": "s3n://lake/",
                "name": "clean/orders",
                "facets": {
                    "columnLineage": facet(
                        "1-2-0/ColumnLineageDatasetFacet.json",
                        fields={
                            "amount": {
                                "inputFields": [{"namespace": "s3a://lake", "name": "raw/orders", "field": "amount"}]
                            }
                        },
                    )
                },
            }
        ],
    }
    base.update(changes)
    return base


def body(value: Any) -> bytes:
    return json.dumps(value, indent=2).encode()


def auth(key: str = KEY, name: str = "Authorization", scheme: str = "Bearer") -> dict[str, str]:
    return {name: f"{scheme} {key}", "content-type": "application/json"}
