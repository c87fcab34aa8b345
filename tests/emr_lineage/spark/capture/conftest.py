"""A capture on the shared Spark session, writing real JSONL through the file transport."""

from __future__ import annotations

import json

import pytest

from emr_lineage.lineage.schemas import check_event
from emr_lineage.spark.capture.listener import LineageCapture
from emr_lineage.spark.capture.transport import make_client


class Captured:
    """One started capture; ``finish()`` stops it and returns its events (each schema-checked)."""

    def __init__(self, spark, path) -> None:
        self.path = path
        client = make_client(
            {
                "spark.openlineage.transport.type": "file",
                "spark.openlineage.transport.location": str(path),
            }
        )
        self.capture = LineageCapture(spark, client).start()

    def finish(self) -> list[dict]:
        self.capture.finish()
        events = [json.loads(line) for line in self.path.read_text().splitlines()]
        for number, event in enumerate(events, start=1):
            problem = check_event(event, strict=True)
            assert problem is None, f"event {number} of {self.path} is invalid: {problem}"
        return events


@pytest.fixture
def captured(spark, tmp_path):
    started = Captured(spark, tmp_path / "events.jsonl")
    yield started
    started.capture.finish()  # no-op when the test finished it


def actions(events: list[dict], app: str) -> dict[str, list[dict]]:
    """Action runs (runId -> its events) of the application job ``app``."""
    runs: dict[str, list[dict]] = {}
    for event in events:
        if event["job"]["name"] != app:
            runs.setdefault(event["run"]["runId"], []).append(event)
    return runs
