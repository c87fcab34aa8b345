"""check_archived: an archived body is checked again as the gateway checked it when it came."""

from __future__ import annotations

import json

from emr_lineage.gateway.ingest import Accepted, check_request
from emr_lineage.lineage.door.event import CheckedEvent
from emr_lineage.lineage.door.one_event import check_archived, one_line_json
from emr_lineage.lineage.door.verdict import Rejected
from tests.emr_lineage.gateway.events import body, clock, event


def test_an_archived_body_gives_the_event_the_gateway_took() -> None:
    raw = body(event())
    taken = check_request(None, raw, api_keys=None, max_bytes=1 << 20, clock=clock)
    again = check_archived(one_line_json(raw))
    assert isinstance(taken, Accepted) and isinstance(again, CheckedEvent)
    assert again == taken.checked
    assert again.event["inputs"][0]["namespace"] == "s3://lake"  # normalised, as the gateway normalised it


def test_an_archived_body_is_read_whole_whatever_the_gateways_limit() -> None:
    raw = body(event(pad="x" * (2 << 20)))
    assert isinstance(check_request(None, raw, api_keys=None, max_bytes=1 << 20, clock=clock), Rejected)
    assert isinstance(check_archived(raw), CheckedEvent)


def test_an_archived_body_that_is_not_one_event_is_refused_with_the_gateways_reason() -> None:
    for value, reason in ([event()], "JSON array"), ("text", "JSON str"), ({"eventType": "START"}, ""):
        refused = check_archived(json.dumps(value).encode())
        assert isinstance(refused, Rejected) and refused.status == 400 and reason in refused.reason
