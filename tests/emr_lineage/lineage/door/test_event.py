"""check_event: the three kinds of OpenLineage event, their FIFO groups, as Marquez takes them."""

from __future__ import annotations

from typing import Any

import pytest

from emr_lineage.lineage.door.event import (
    DATASET_EVENT,
    JOB_EVENT,
    RUN_EVENT,
    CheckedEvent,
    check_event,
    static_group,
)
from emr_lineage.lineage.door.verdict import Rejected
from tests.emr_lineage.gateway.events import RUN_ID, event
from tests.emr_lineage.lineage.rule_events import SPEC, dataset_event, job_event


def passed(value: dict[str, Any]) -> CheckedEvent:
    result = check_event(value, max_bytes=1 << 20)
    assert isinstance(result, CheckedEvent), result
    return result


def test_a_run_event_groups_by_its_run() -> None:
    checked = passed(event())
    assert (checked.kind, checked.group_id, checked.run_id) == (RUN_EVENT, RUN_ID, RUN_ID)


def test_a_job_event_has_no_run_and_groups_by_its_job() -> None:
    checked = passed(job_event())
    assert (checked.kind, checked.run_id) == (JOB_EVENT, None)
    assert checked.group_id == static_group(JOB_EVENT, "airflow", "nightly.load")
    assert checked.group_id == passed(job_event(eventTime="2026-11-22T00:00:00Z")).group_id
    assert checked.group_id != passed(job_event(job={"namespace": "airflow", "name": "other"})).group_id
    assert [d["namespace"] for d in checked.event["inputs"]] == ["s3://lake"]  # normalised as for runs


def test_a_dataset_event_groups_by_its_dataset_once_normalised() -> None:
    checked = passed(dataset_event())
    assert (checked.kind, checked.run_id) == (DATASET_EVENT, None)
    assert checked.event["dataset"]["namespace"] == "s3://lake"
    assert (
        checked.group_id == passed(dataset_event(dataset={"namespace": "s3a://lake", "name": "clean/orders"})).group_id
    )
    assert checked.group_id != static_group(JOB_EVENT, "s3://lake", "clean/orders")  # kinds never share a group


@pytest.mark.parametrize(
    ("value", "fragment"),
    [
        (job_event(job={"namespace": "airflow"}), "job.name is missing"),
        (job_event(job="nightly"), "job is missing or not an object"),
        (job_event(outputs=[{"name": "x"}]), "outputs[0].namespace is missing"),
        (dataset_event(dataset={"name": "x"}), "dataset.namespace is missing"),
        (dataset_event(eventTime="noon"), "eventTime: 'noon' is not an RFC 3339 date-time"),
        # The kind is what the schemaURL names (as Marquez reads it), so an event of no kind is refused
        # for what that kind lacks.
        ({"eventTime": "2026-11-21T12:00:00Z", "producer": "p"}, "schemaURL is missing or not a string"),
        (job_event(schemaURL=f"{SPEC}#/$defs/RunEvent"), "eventType is missing or not a string"),
        ({**job_event(), "job": None}, "job is missing or not an object"),
        ({**dataset_event(), "dataset": None}, "dataset is missing or not an object"),
        ([event()], "JSON array, not an object"),
    ],
)
def test_a_malformed_static_event_is_400(value: Any, fragment: str) -> None:
    result = check_event(value, max_bytes=1 << 20)
    assert isinstance(result, Rejected) and result.status == 400
    assert fragment in result.reason


def test_an_event_over_the_limit_once_canonical_is_413() -> None:
    result = check_event(job_event(), max_bytes=100)
    assert isinstance(result, Rejected) and result.status == 413
