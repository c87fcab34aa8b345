"""The archive's named queries: values always inside quoted literals with their quotes doubled, the
partitions pruned to the window (padded), every query filtering on the partition key."""

from __future__ import annotations

import datetime as dt
import re

import pytest

from emr_lineage.aws.archive_queries import (
    EVENTS_TABLE,
    PLACEHOLDER,
    QUERIES,
    RAW_TABLE,
    WINDOW,
    QueryValueError,
    iso_utc,
    render,
    sql_string,
    window_values,
)
from tests.paths import REPO_ROOT

SINCE = dt.datetime(2026, 11, 20, 8, 30, tzinfo=dt.UTC)
UNTIL = dt.datetime(2026, 11, 23, 12, 0, 0, 123456, tzinfo=dt.UTC)
DATASET = {"dataset_namespace": "s3://lake", "dataset_name": "raw/orders"}


def _render(name: str, **extra: str) -> str:
    query = QUERIES[name]
    return render(query, {**window_values(query, SINCE, UNTIL), **extra})


@pytest.mark.parametrize("name", sorted(QUERIES))
def test_every_value_sits_inside_a_string_literal(name: str) -> None:
    sql = QUERIES[name].sql
    assert set(QUERIES[name].parameters) >= {"since_date", "until_date"}
    for match in PLACEHOLDER.finditer(sql):
        assert sql[match.start() - 1] == "'" and sql[match.end()] == "'", (name, match.group(0))


@pytest.mark.parametrize("name", sorted(QUERIES))
def test_every_query_prunes_on_the_partition_key_of_its_table(name: str) -> None:
    sql = QUERIES[name].sql
    table = RAW_TABLE if f'"{RAW_TABLE}"' in sql else EVENTS_TABLE
    assert f'FROM "{table}"' in sql
    assert re.search(r"\b[a-z]\.dt BETWEEN '\$\{since_date\}' AND '\$\{until_date\}'", sql)
    # and by hour on the first and last day
    assert re.search(r"\b[a-z]\.dt > '\$\{since_date\}' OR [a-z]\.hour >= CAST\('\$\{since_hour\}' AS integer\)", sql)
    assert re.search(r"\b[a-z]\.dt < '\$\{until_date\}' OR [a-z]\.hour <= CAST\('\$\{until_hour\}' AS integer\)", sql)


def test_the_window_is_event_time_and_the_partitions_an_hour_before_and_a_day_after() -> None:
    values = window_values(QUERIES["runs_for_dataset"], SINCE, UNTIL)
    assert values == {
        "since": "2026-11-20T08:30:00.000Z",
        "until": "2026-11-23T12:00:00.123Z",
        "since_date": "2026-11-20",
        "since_hour": "7",
        "until_date": "2026-11-24",
        "until_hour": "12",
    }
    # Late events are looked for up to a week after the window.
    late = window_values(QUERIES["late_events"], SINCE, UNTIL)
    assert (late["until_date"], late["until_hour"]) == ("2026-11-30", "12")
    # An hour before midnight: the day before.
    assert window_values(QUERIES["runs_for_dataset"], SINCE.replace(hour=0), UNTIL)["since_date"] == "2026-11-19"


def test_times_with_an_offset_are_utc_and_the_projection_start_bounds_the_dates() -> None:
    tokyo = dt.datetime(2026, 1, 1, 3, 0, tzinfo=dt.timezone(dt.timedelta(hours=9)))
    assert iso_utc(tokyo) == "2025-12-31T18:00:00.000Z"
    early = window_values(QUERIES["late_events"], dt.datetime(2020, 1, 1, 5, tzinfo=dt.UTC), UNTIL)
    assert (early["since_date"], early["since_hour"]) == ("2024-01-01", "0")
    with pytest.raises(QueryValueError, match="is before --since"):
        window_values(QUERIES["late_events"], UNTIL, SINCE)


@pytest.mark.parametrize(
    "name, injected",
    [
        ("x' OR '1'='1", "x'' OR ''1''=''1"),
        ("a'); DROP TABLE events; --", "a''); DROP TABLE events; --"),
        ("back\\slash'", "back\\slash''"),
    ],
)
def test_a_quote_in_a_value_cannot_end_its_literal(name: str, injected: str) -> None:
    sql = _render("runs_for_dataset", dataset_namespace="s3://lake", dataset_name=name)
    assert f"rtrim(d.name, '/') = '{injected}'" in sql
    # Every literal of the rendered SQL is still balanced: no value ended its own.
    assert sql.count("'") % 2 == 0


def test_control_characters_are_refused() -> None:
    for value in ("a\x00b", "line\nbreak", "tab\there"):
        with pytest.raises(QueryValueError, match="control characters"):
            sql_string(value)


def test_missing_and_unknown_values_are_errors() -> None:
    with pytest.raises(QueryValueError, match="needs dataset_namespace, dataset_name"):
        _render("runs_for_dataset")
    with pytest.raises(QueryValueError, match="takes no job"):
        _render("late_events", job="x")


def test_an_optional_value_not_given_means_any() -> None:
    sql = _render("failed_runs_per_job")
    assert "('' = '' OR w.job.name = '')" in sql and "w.eventtype = 'FAIL'" in sql
    assert QUERIES["failed_runs_per_job"].required == ()
    assert QUERIES["runs_for_dataset"].required == ("dataset_namespace", "dataset_name")


def test_rendered_sql_has_no_placeholder_left() -> None:
    for name in QUERIES:
        extra = DATASET if name == "runs_for_dataset" else {}
        sql = _render(name, **extra)
        assert not PLACEHOLDER.search(sql), name
        assert set(WINDOW) & set(QUERIES[name].parameters) >= {"since_date", "until_date"}


def test_the_dataset_matches_as_the_ingest_normalises_it() -> None:
    sql = _render("runs_for_dataset", **DATASET)
    assert "regexp_replace(rtrim(d.namespace, '/'), '^s3[an]?://', 's3://') = 's3://lake'" in sql
    assert "CROSS JOIN UNNEST(w.inputs)" in sql and "CROSS JOIN UNNEST(w.outputs)" in sql


def test_docs_show_each_query_as_it_is() -> None:
    docs = (REPO_ROOT / "docs" / "analysis.md").read_text(encoding="utf-8")
    for query in QUERIES.values():
        assert f"```sql\n{query.sql}\n```" in docs, query.name
