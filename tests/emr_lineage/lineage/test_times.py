"""The one event-time parser and the one order by event time."""

from __future__ import annotations

import datetime as dt

import pytest

from emr_lineage.lineage.times import NoOffset, by_event_time, event_time, parse_time

UTC = dt.UTC


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("2026-11-23T10:00:00Z", dt.datetime(2026, 11, 23, 10, tzinfo=UTC)),
        ("2026-11-23T11:30:00+01:30", dt.datetime(2026, 11, 23, 10, tzinfo=UTC)),
        (" 2026-11-23T10:00:00.123456Z ", dt.datetime(2026, 11, 23, 10, 0, 0, 123456, tzinfo=UTC)),
        ("2026-11-23", dt.datetime(2026, 11, 23, tzinfo=UTC)),
        ("2026-11-23T10:00", dt.datetime(2026, 11, 23, 10, tzinfo=UTC)),
        ("2026-11-23t10:00:00z", dt.datetime(2026, 11, 23, 10, tzinfo=UTC)),  # RFC 3339 allows lower case
    ],
)
def test_a_time_is_read_as_utc(text: str, expected: dt.datetime) -> None:
    parsed = parse_time(text)
    assert parsed == expected and parsed.utcoffset() == dt.timedelta(0)


def test_a_time_without_an_offset_is_refused_where_one_is_required() -> None:
    with pytest.raises(NoOffset, match="no UTC offset"):
        parse_time("2026-11-23T10:00:00", require_offset=True)
    assert parse_time("2026-11-23T10:00:00+00:00", require_offset=True).tzinfo is not None


@pytest.mark.parametrize("text", ["", "yesterday", "2026-13-01T00:00Z", "10:00"])
def test_text_that_is_no_time_is_a_value_error(text: str) -> None:
    with pytest.raises(ValueError):
        parse_time(text)


@pytest.mark.parametrize("value", [None, 17, "not a time", ["2026-11-23"]])
def test_an_event_without_a_readable_time_has_none(value: object) -> None:
    assert event_time({"eventTime": value}) is None
    assert event_time({}) is None


def test_events_are_ordered_by_time_stably_with_the_timeless_last() -> None:
    events = [
        {"id": "late", "eventTime": "2026-11-23T12:00:00Z"},
        {"id": "none"},
        {"id": "early", "eventTime": "2026-11-23T11:00:00+00:00"},
        {"id": "same-as-early", "eventTime": "2026-11-23T12:00:00+01:00"},
    ]
    assert [e["id"] for e in by_event_time(events)] == ["early", "same-as-early", "late", "none"]
    wrapped = [("x", e) for e in events]
    assert [w[1]["id"] for w in by_event_time(wrapped, lambda w: w[1])] == ["early", "same-as-early", "late", "none"]
