"""The archive as Athena tables, and the named queries over them: written once, for the stack
(``CfnNamedQuery``, stacks/gateway/archive_catalog.py) and for ``emr-lineage gateway archive query``.

Standard library only. Two tables over the same location, ``raw/date=YYYY-MM-DD/hour=HH/`` of the
archive bucket (:mod:`emr_lineage.aws.archive`), partitioned by projection on ``dt`` (the date of
arrival) and ``hour`` (no crawler, no partitions to add):

* :data:`EVENTS_TABLE`: the common fields of an event as typed columns (Hive JsonSerDe, one JSON
  document per line: the ingest archives each event on one line);
* :data:`RAW_TABLE`: each line whole, as the string ``raw``.

Every query over events sees each event's ``source_account``: the AWS account whose key sent it,
read from the object's key (``"$path"``, :data:`~emr_lineage.aws.archive.ACCOUNT_IN_KEY`), NULL for
an event archived before accounts were recorded; ``${source_account}`` ('' for any) keeps one
account's events. The view :data:`ACCOUNTS_VIEW` (:data:`ACCOUNTS_VIEW_SQL`) is the events table
with that column, for queries of one's own (a view keeps the partition columns, so they still prune).

A query template names its values ``${name}``. Every one of them sits inside a SQL string literal
(``'${name}'``) and :func:`render` doubles the quotes of what it puts there, so a value can never
end the literal. ``since``/``until`` are event time (ISO 8601, UTC); ``since_date``/``since_hour``
and ``until_date``/``until_hour`` bound the partitions read, hour by hour: the arrival hours from
:data:`~emr_lineage.aws.archive.ARRIVAL_SLACK` before ``since`` (as the archive reader allows) to
:attr:`NamedQuery.days_after` days after ``until`` (an event arrives after its eventTime, a late one
hours or days after). Trino, Athena engine 3's engine, prunes projected partitions by both keys:
tests/stacks/gateway/test_archive_on_trino.py sees it list only those hours.
"""

from __future__ import annotations

import datetime as dt
import re
from dataclasses import dataclass

from emr_lineage.aws.archive import ACCOUNT_IN_KEY, ARRIVAL_SLACK

EVENTS_TABLE = "events"
RAW_TABLE = "events_raw"
ACCOUNTS_VIEW = "events_with_account"
ATHENA_CATALOG = "awsdatacatalog"  # Athena's name of the Glue Data Catalog, which a view's definition names
PARTITION_DATE_FORMAT = "%Y-%m-%d"  # projection.dt.format yyyy-MM-dd
PROJECTION_START = "2024-01-01"  # the first projected date (projection.dt.range)
PLACEHOLDER = re.compile(r"\$\{([a-z_]+)\}")
WINDOW = ("since", "until", "since_date", "since_hour", "until_date", "until_hour")  # what window_values fills in


def _partitions(table: str, indent: str) -> str:
    """The arrival hours to read of ``table`` (its alias): dates, then the hours of the first and last."""
    return (
        f"{table}.dt BETWEEN '${{since_date}}' AND '${{until_date}}'\n"
        f"{indent}AND ({table}.dt > '${{since_date}}' OR {table}.hour >= CAST('${{since_hour}}' AS integer))\n"
        f"{indent}AND ({table}.dt < '${{until_date}}' OR {table}.hour <= CAST('${{until_hour}}' AS integer))"
    )


# The account in an object's key (its "$path"), NULL where the key has none; no quote in the pattern.
SOURCE_ACCOUNT = f"""regexp_extract("$path", '{ACCOUNT_IN_KEY}', 1)"""

ACCOUNTS_VIEW_SQL = f"""SELECT e.*, {SOURCE_ACCOUNT} AS source_account FROM "{EVENTS_TABLE}" e"""

# The window every query starts from: the partitions to read (pruned by projection), the account
# asked for ('' any), and each event's time, parsed once (NULL when it is not an ISO 8601 time Athena
# reads: such events fall outside).
_WINDOWED = f"""WITH w AS (
  SELECT e.*, "$path" AS object_key, {SOURCE_ACCOUNT} AS source_account,
         try(from_iso8601_timestamp(e.eventtime)) AS event_time
  FROM "{EVENTS_TABLE}" e
  WHERE {_partitions("e", "    ")}
    AND ('${{source_account}}' = '' OR {SOURCE_ACCOUNT} = '${{source_account}}')
)"""
ANY_ACCOUNT = ("source_account",)  # every query over the window takes it
_IN_WINDOW = "w.event_time BETWEEN from_iso8601_timestamp('${since}') AND from_iso8601_timestamp('${until}')"
# A dataset as the ingest normalises it: s3a:// and s3n:// are s3://, a trailing slash does not count.
# ``d`` is the row of an UNNEST of inputs or outputs: Trino (Athena engine 3) expands an array of
# rows into one column per field, so its alias names both (``AS d(namespace, name)``).
_DATASET = (
    "regexp_replace(rtrim(d.namespace, '/'), '^s3[an]?://', 's3://') = '${dataset_namespace}' "
    "AND rtrim(d.name, '/') = '${dataset_name}'"
)


@dataclass(frozen=True)
class NamedQuery:
    """A question the archive answers: its name, what it answers, its SQL template and its values
    (``optional`` ones are '' when not given, which the SQL reads as "any")."""

    name: str
    description: str
    sql: str
    optional: tuple[str, ...] = ()
    days_after: int = 1  # partitions scanned after the window

    @property
    def parameters(self) -> tuple[str, ...]:
        """The template's values, in order of first use."""
        return tuple(dict.fromkeys(PLACEHOLDER.findall(self.sql)))

    @property
    def required(self) -> tuple[str, ...]:
        return tuple(p for p in self.parameters if p not in self.optional and p not in WINDOW)


_DATASET_RUNS = NamedQuery(
    "runs_for_dataset",
    "Runs that read or wrote a dataset (namespace and name) in an event-time window",
    f"""{_WINDOWED},
accesses AS (
  SELECT w.run.runid AS run_id, w.job.namespace AS job_namespace, w.job.name AS job_name,
         'read' AS access, w.event_time
  FROM w CROSS JOIN UNNEST(w.inputs) AS d(namespace, name)
  WHERE {_IN_WINDOW} AND {_DATASET}
  UNION ALL
  SELECT w.run.runid, w.job.namespace, w.job.name, 'write', w.event_time
  FROM w CROSS JOIN UNNEST(w.outputs) AS d(namespace, name)
  WHERE {_IN_WINDOW} AND {_DATASET}
)
SELECT run_id, job_namespace, job_name, access,
       min(event_time) AS first_event, max(event_time) AS last_event, count(*) AS events
FROM accesses
GROUP BY run_id, job_namespace, job_name, access
ORDER BY first_event, run_id, access""",
    optional=ANY_ACCOUNT,
)

_FAILED_RUNS = NamedQuery(
    "failed_runs_per_job",
    "Runs that ended FAIL, per job, in an event-time window (job: a job name, or '' for every job)",
    f"""{_WINDOWED}
SELECT w.job.namespace AS job_namespace, w.job.name AS job_name,
       count(DISTINCT w.run.runid) AS failed_runs, max(w.event_time) AS last_failure
FROM w
WHERE {_IN_WINDOW} AND w.eventtype = 'FAIL' AND ('${{job}}' = '' OR w.job.name = '${{job}}')
GROUP BY w.job.namespace, w.job.name
ORDER BY failed_runs DESC, job_name""",
    optional=("job", *ANY_ACCOUNT),
)

_PER_PRODUCER = NamedQuery(
    "events_per_producer_per_day",
    "Events per producer (the OpenLineage integration and its version) per UTC day of their eventTime",
    f"""{_WINDOWED}
SELECT date(w.event_time AT TIME ZONE 'UTC') AS event_date, w.producer, count(*) AS events
FROM w
WHERE {_IN_WINDOW}
GROUP BY date(w.event_time AT TIME ZONE 'UTC'), w.producer
ORDER BY event_date, producer""",
    optional=ANY_ACCOUNT,
)

_PER_ACCOUNT = NamedQuery(
    "events_per_source_account",
    "Events per source account (the AWS account whose key sent them; empty for events archived before "
    "accounts were recorded) per UTC day of their eventTime",
    f"""{_WINDOWED}
SELECT date(w.event_time AT TIME ZONE 'UTC') AS event_date, coalesce(w.source_account, '') AS source_account,
       count(*) AS events
FROM w
WHERE {_IN_WINDOW}
GROUP BY date(w.event_time AT TIME ZONE 'UTC'), coalesce(w.source_account, '')
ORDER BY event_date, source_account""",
    optional=ANY_ACCOUNT,
)

_LATE_EVENTS = NamedQuery(
    "late_events",
    "Events that reached the gateway in an hour starting more than an hour after their eventTime "
    "(what an archive reader's one-hour slack misses), up to 7 days late",
    f"""{_WINDOWED},
arrivals AS (
  SELECT w.*, with_timezone(date_add('hour', w.hour, date_parse(w.dt, '%Y-%m-%d')), 'UTC') AS arrival_hour
  FROM w
  WHERE {_IN_WINDOW}
)
SELECT arrival_hour, event_time, date_diff('minute', event_time, arrival_hour) AS minutes_late,
       eventtype, job.name AS job_name, run.runid AS run_id, producer, object_key
FROM arrivals
WHERE arrival_hour > event_time + INTERVAL '1' HOUR
ORDER BY minutes_late DESC, object_key""",
    optional=ANY_ACCOUNT,
    days_after=7,
)

_UNREADABLE = NamedQuery(
    "unreadable_lines",
    "Archive lines that are not a JSON object (an event archived over several lines before the "
    "one-line rule), per object, by arrival date",
    f"""SELECT r.dt, "$path" AS object_key, count(*) AS lines
FROM "{RAW_TABLE}" r
WHERE {_partitions("r", "  ")}
  AND try(CAST(json_parse(r.raw) AS map(varchar, json))) IS NULL
GROUP BY r.dt, "$path"
ORDER BY r.dt, object_key""",
)

QUERIES: dict[str, NamedQuery] = {
    q.name: q for q in (_DATASET_RUNS, _FAILED_RUNS, _PER_PRODUCER, _PER_ACCOUNT, _LATE_EVENTS, _UNREADABLE)
}


class QueryValueError(ValueError):
    """A value a query cannot take (missing, unknown, or not text SQL can hold)."""


def sql_string(value: str) -> str:
    """``value`` as the content of a SQL string literal: quotes doubled. NUL and other control
    characters are refused (no dataset or job name has them)."""
    if any(ord(c) < 0x20 or ord(c) == 0x7F for c in value):
        raise QueryValueError(f"{value!r}: control characters cannot be in a query value")
    return value.replace("'", "''")


def iso_utc(moment: dt.datetime) -> str:
    """``2026-11-23T10:00:00.000Z``: an instant as Athena's from_iso8601_timestamp reads it."""
    return moment.astimezone(dt.UTC).strftime("%Y-%m-%dT%H:%M:%S.") + f"{moment.microsecond // 1000:03d}Z"


def window_values(query: NamedQuery, since: dt.datetime, until: dt.datetime) -> dict[str, str]:
    """The window's values: the event times, and the arrival dates and hours the partitions are pruned to."""
    if until < since:
        raise QueryValueError(f"--until {iso_utc(until)} is before --since {iso_utc(since)}")
    first = since.astimezone(dt.UTC) - ARRIVAL_SLACK
    last = until.astimezone(dt.UTC) + dt.timedelta(days=query.days_after)
    since_date = first.strftime(PARTITION_DATE_FORMAT)
    if since_date < PROJECTION_START:
        since_date, first = PROJECTION_START, first.replace(hour=0)
    return {
        "since": iso_utc(since),
        "until": iso_utc(until),
        "since_date": since_date,
        "since_hour": str(first.hour),
        "until_date": last.strftime(PARTITION_DATE_FORMAT),
        "until_hour": str(last.hour),
    }


def render(query: NamedQuery, values: dict[str, str]) -> str:
    """``query``'s SQL with every ``${name}`` replaced by its value, quotes doubled; a missing or unknown
    value is a :class:`QueryValueError`."""
    given = {k: v for k, v in values.items() if v is not None}
    missing = [p for p in query.parameters if p not in given and p not in query.optional]
    if missing:
        raise QueryValueError(f"query {query.name} needs {', '.join(missing)}")
    unknown = sorted(set(given) - set(query.parameters) - set(WINDOW))
    if unknown:
        raise QueryValueError(f"query {query.name} takes no {', '.join(unknown)}")
    escaped = {name: sql_string(given.get(name, "")) for name in query.parameters}
    return PLACEHOLDER.sub(lambda m: escaped[m.group(1)], query.sql)
