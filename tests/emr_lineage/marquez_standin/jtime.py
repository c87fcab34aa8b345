"""Times as Marquez reads and writes them. An instant is an int of nanoseconds since the epoch:
event times keep their nine digits in the stored event, PostgreSQL keeps microseconds, and Java
prints an Instant (ISO_INSTANT: fraction in groups of 3 digits) differently from a ZonedDateTime
(ISO_OFFSET_DATE_TIME: fraction without trailing zeros, the event's own offset)."""

from __future__ import annotations

import datetime
from dataclasses import dataclass

NS = 1_000_000_000
EPOCH = datetime.datetime(1970, 1, 1, tzinfo=datetime.UTC)


class TimeParseError(ValueError):
    """A java.time DateTimeParseException; ``str()`` is Java's message."""


@dataclass(frozen=True)
class Zoned:
    """A ZonedDateTime with a fixed offset: the instant and the offset it was written with."""

    instant: int
    offset: int = 0  # seconds east of UTC


def from_datetime(value: datetime.datetime) -> int:
    """Nanoseconds since the epoch of an aware (or UTC-naive) datetime."""
    if value.tzinfo is None:
        value = value.replace(tzinfo=datetime.UTC)
    delta = value - EPOCH
    return (delta.days * 86_400 + delta.seconds) * NS + delta.microseconds * 1000


def db_time(instant: int) -> int:
    """The instant as PostgreSQL's timestamptz keeps it: rounded to microseconds."""
    return (instant + 500) // 1000 * 1000


def _fraction(nanos: int, grouped: bool) -> str:
    if not nanos:
        return ""
    digits = f"{nanos:09d}"
    if grouped:  # ISO_INSTANT prints 3, 6 or 9 digits
        while digits.endswith("000"):
            digits = digits[:-3]
    else:
        digits = digits.rstrip("0")
    return "." + digits


def _local(instant: int, offset: int) -> tuple[datetime.datetime, int]:
    seconds, nanos = divmod(instant + offset * NS, NS)
    return EPOCH + datetime.timedelta(seconds=seconds), nanos


def format_instant(instant: int | None) -> str | None:
    """Jackson's java.time.Instant: e.g. 2026-11-27T19:00:21.736Z, 2026-11-27T19:02:36.063491Z."""
    if instant is None:
        return None
    moment, nanos = _local(instant, 0)
    return moment.strftime("%Y-%m-%dT%H:%M:%S") + _fraction(nanos, grouped=True) + "Z"


def format_offset(offset: int) -> str:
    if offset == 0:
        return "Z"
    sign = "+" if offset > 0 else "-"
    hours, rest = divmod(abs(offset), 3600)
    minutes, seconds = divmod(rest, 60)
    return f"{sign}{hours:02d}:{minutes:02d}" + (f":{seconds:02d}" if seconds else "")


def format_zoned(value: Zoned) -> str:
    """Jackson's ZonedDateTime (ISO_OFFSET_DATE_TIME): e.g. 2026-11-27T19:01:04.96Z."""
    moment, nanos = _local(value.instant, value.offset)
    return moment.strftime("%Y-%m-%dT%H:%M:%S") + _fraction(nanos, grouped=False) + format_offset(value.offset)


class _Cursor:
    def __init__(self, text: str) -> None:
        self.text = text
        self.pos = 0

    def fail(self) -> TimeParseError:
        return TimeParseError(f"Text '{self.text}' could not be parsed at index {self.pos}")

    def digits(self, low: int, high: int) -> int:
        end = self.pos
        while end < len(self.text) and end - self.pos < high and self.text[end].isdigit() and self.text[end].isascii():
            end += 1
        if end - self.pos < low:
            raise self.fail()
        value = int(self.text[self.pos : end])
        self.pos = end
        return value

    def literal(self, chars: str) -> bool:
        if self.pos < len(self.text) and self.text[self.pos].upper() in chars:
            self.pos += 1
            return True
        return False

    def expect(self, chars: str) -> None:
        if not self.literal(chars):
            raise self.fail()


def _offset(cursor: _Cursor, required: bool) -> int | None:
    if cursor.literal("Z"):
        return 0
    if cursor.pos >= len(cursor.text) or cursor.text[cursor.pos] not in "+-":
        if required:
            raise cursor.fail()
        return None
    sign = -1 if cursor.text[cursor.pos] == "-" else 1
    cursor.pos += 1
    hours, minutes, seconds = cursor.digits(2, 2), 0, 0
    if cursor.literal(":") or (cursor.pos < len(cursor.text) and cursor.text[cursor.pos].isdigit()):
        minutes = cursor.digits(2, 2)
        if cursor.literal(":"):
            seconds = cursor.digits(2, 2)
    return sign * (hours * 3600 + minutes * 60 + seconds)


def _date_time(cursor: _Cursor) -> tuple[datetime.datetime, int]:
    year = cursor.digits(4, 10)
    cursor.expect("-")
    month = cursor.digits(2, 2)
    cursor.expect("-")
    day = cursor.digits(2, 2)
    cursor.expect("T")
    hour = cursor.digits(2, 2)
    cursor.expect(":")
    minute = cursor.digits(2, 2)
    second = nanos = 0
    if cursor.literal(":"):
        second = cursor.digits(2, 2)
        if cursor.literal("."):
            start = cursor.pos
            fraction = cursor.digits(0, 9) if cursor.pos < len(cursor.text) and cursor.text[start].isdigit() else 0
            width = cursor.pos - start
            nanos = fraction * 10 ** (9 - width) if width else 0
    try:
        moment = datetime.datetime(year, month, day, hour, minute, second, tzinfo=datetime.UTC)
    except ValueError as error:
        raise TimeParseError(f"Text '{cursor.text}' could not be parsed: {error}") from None
    return moment, nanos


def _parse(text: str, offset_required: bool) -> Zoned:
    cursor = _Cursor(text)
    moment, nanos = _date_time(cursor)
    offset = _offset(cursor, offset_required)
    if offset_required and cursor.literal("["):
        end = text.find("]", cursor.pos)
        if end < 0:
            raise cursor.fail()
        cursor.pos = end + 1
    if cursor.pos != len(text):
        raise TimeParseError(f"Text '{text}' could not be parsed, unparsed text found at index {cursor.pos}")
    local = from_datetime(moment) + nanos
    offset = offset or 0
    return Zoned(local - offset * NS, offset)


def parse_event_time(text: str) -> Zoned:
    """An event's eventTime (Marquez's FlexibleDateTimeDeserializer): ISO local date-time with an
    optional offset; without one the server's zone (UTC on the recorded server) is taken."""
    return _parse(text, offset_required=False)


def parse_query_time(text: str) -> int:
    """A before/after query parameter (ZonedDateTime.parse): the offset is required."""
    return _parse(text, offset_required=True).instant
