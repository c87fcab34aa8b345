"""Decode one event's JSON fast, keeping the standard library's messages and the duplicate-key check.

The usual line is decoded by :func:`usual_value`: jiter (https://github.com/pydantic/jiter,
pydantic's parser) decodes and refuses a repeated key in one pass. Any line it refuses takes the
careful way, :func:`decode_line`, which says what is wrong. orjson is about twice as fast as
``json`` but keeps the last value of a repeated key silently
(https://github.com/ijl/orjson#deserialize: "duplicate keys ... the last one is used"), and its
error messages differ. So there:

* a line that orjson rejects is decoded again by ``json`` (same values as before, e.g. ``NaN``
  or a lone surrogate, which orjson refuses) or reported with ``json``'s message;
* a repeated key is caught by cheap evidence (:func:`may_repeat_a_key`): the number of keys the
  text can hold against the number the decoded value holds. Only when they differ is the text
  parsed again by the slow pure-Python decoder that names the repeated key and its offset.

Every way holds the line to the JSON rule of every door (:mod:`emr_lineage.lineage.event_json`): jiter
refuses NaN, Infinity, lone surrogates and values nested deeper than the rule's limit (its own), and
a line with a NUL escape goes the careful way, which holds its value to the whole rule.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from json.decoder import WHITESPACE, scanstring
from json.scanner import py_make_scanner
from typing import Any

import jiter
import orjson

from emr_lineage.lineage.event_json import (
    DECODER,
    TOO_DEEP,
    DuplicateKey,
    JsonRuleError,
    needs_walk,
    same_value,
    value_problem,
)


def usual_value(raw: bytes) -> Any:
    """The JSON value of a usual line, decoded in one pass, or None for any line that needs a
    closer look (then :func:`decode_line` words its problem, or decodes what only the standard
    library does). jiter refuses a repeated key (``catch_duplicate_keys``, escaped or not, at any
    depth), ``NaN`` and ``Infinity`` (``allow_inf_nan=False``: only the standard library reads
    them), bytes that are not UTF-8 and anything else that is not plain JSON; its integers beyond
    64 bits stay integers, as in the standard library. Object keys are cached: every event has
    the same few dozen names. Replaces an orjson decode plus :func:`may_repeat_a_key` (about 1 us
    a line less)."""
    if b"\\u0000" in raw:  # a NUL, which jiter decodes: the careful way refuses it
        return None
    try:
        return _from_json(raw, catch_duplicate_keys=True, cache_mode="keys", allow_inf_nan=False)
    except ValueError:
        return None


_from_json = jiter.from_json


def line_value(raw: bytes) -> Any:
    """The JSON value of one JSONL line: the usual way, else the careful one (a Problem for a bad
    line). Raises :class:`NotUtf8` for bytes that are not UTF-8."""
    value = usual_value(raw)
    return decode_line(raw) if value is None else value


@dataclass
class Problem:
    """A value that is not usable, and why (its location goes with it)."""

    message: str


def _locating_object(
    s_and_end: tuple[str, int],
    strict: bool,
    scan_once: Any,
    object_hook: Any,
    object_pairs_hook: Any,
    memo: Any = None,
    _w: Any = WHITESPACE.match,
) -> tuple[dict[str, Any], int]:
    """``parse_object`` of the pure Python decoder: like json's, but a key repeated with another value
    raises DuplicateKey with the key's offset. Only used to locate a duplicate."""
    text, end = s_and_end
    pairs: dict[str, Any] = {}
    end = _w(text, end).end()
    if text[end : end + 1] == "}":
        return pairs, end + 1
    while True:
        if text[end : end + 1] != '"':
            raise json.JSONDecodeError("Expecting property name enclosed in double quotes", text, end)
        key_at = end
        key, end = scanstring(text, end + 1, strict)
        end = _w(text, end).end()
        if text[end : end + 1] != ":":
            raise json.JSONDecodeError("Expecting ':' delimiter", text, end)
        end = _w(text, end + 1).end()
        try:
            value, end = scan_once(text, end)
        except StopIteration as exc:
            raise json.JSONDecodeError("Expecting value", text, exc.value) from None
        if key in pairs and not same_value(pairs[key], value):
            raise DuplicateKey(key, key_at)
        pairs.setdefault(key, value)
        end = _w(text, end).end()
        char = text[end : end + 1]
        end += 1
        if char == "}":
            return pairs, end
        if char != ",":
            raise json.JSONDecodeError("Expecting ',' delimiter", text, end - 1)
        end = _w(text, end).end()


# The .json reader's (sources.py): no duplicate check (it locates one afterwards), the rule's numbers.
PLAIN_DECODER = json.JSONDecoder(parse_int=DECODER.parse_int, parse_float=DECODER.parse_float)
_LOCATING_DECODER = json.JSONDecoder()
_LOCATING_DECODER.parse_object = _locating_object  # type: ignore[assignment]
_LOCATING_DECODER.scan_once = py_make_scanner(_LOCATING_DECODER)


def duplicate_at(text: str, start: int) -> tuple[str, int] | None:
    """(key, offset) of the first key repeated with another value (in text order) of the JSON value at
    ``start``; None when every repeated key repeats its value."""
    try:
        _LOCATING_DECODER.raw_decode(text, start)
    except DuplicateKey as exc:
        return exc.key, exc.offset if exc.offset is not None else start
    except RecursionError:  # deeper than the pure-Python parser goes: the C one finds the key, not where
        try:
            DECODER.raw_decode(text, start)
        except DuplicateKey as exc:
            return exc.key, start
        except (ValueError, RecursionError):
            return None
    except ValueError:
        return None
    return None


def may_repeat_a_key(raw: bytes, value: Any) -> bool:
    """False only if the JSON text ``raw`` (decoded into ``value``) surely has no repeated key.

    Outside strings, a colon only ends a key; inside them it is ``:`` or an escape ``\\u003a``. A
    repeated key drops its pair (colon included) from the decoded value, and orjson writes every
    colon of the value as ``:``. So without ``\\u003`` in the text, the text has exactly as many
    colons as the re-encoded value when no key is repeated, and more when one is. Costs one
    ``orjson.dumps`` and three byte scans; any doubt answers True (the caller then parses the
    slow way, which names the key).
    """
    if not isinstance(value, dict | list):
        return False
    try:
        compact = orjson.dumps(value)
    except orjson.JSONEncodeError:  # e.g. an integer beyond 64 bits (the standard library decoded it)
        return True
    # One backslash search first: most lines hold no escape at all (a one-byte search is the fast one).
    return (b"\\" in raw and b"\\u003" in raw) or raw.count(b":") != compact.count(b":")


def _slow_line(text: str) -> Any:
    """The value of one JSONL line by the standard library, or a Problem for a repeated key."""
    try:
        return DECODER.decode(text)
    except DuplicateKey as exc:
        located = duplicate_at(text, len(text) - len(text.lstrip(" \t\r"))) or (exc.key, None)
        column = f" (column {located[1] + 1})" if located[1] is not None else ""
        return Problem(f"duplicate key {located[0]!r}{column}")


class NotUtf8(ValueError):
    """The bytes are not UTF-8 (``start``: offset of the first bad byte in them)."""

    def __init__(self, reason: str, start: int) -> None:
        super().__init__(reason)
        self.reason, self.start = reason, start


def decode_line(raw: bytes) -> Any:
    """The JSON value of one JSONL line (bytes), or a Problem (invalid JSON, a repeated key, what else the
    JSON rule refuses).

    Raises :class:`NotUtf8` for bytes that are not UTF-8 (the whole source is unreadable).
    """
    try:
        value = orjson.loads(raw)
    except orjson.JSONDecodeError:
        try:
            text = raw.decode("utf-8").removesuffix("\n")
        except UnicodeDecodeError as exc:
            raise NotUtf8(exc.reason, exc.start) from None
        try:
            value = _slow_line(text)
        except json.JSONDecodeError as exc:
            return Problem(f"invalid JSON: {exc.msg} (column {exc.colno})")
        except RecursionError:  # deeper than the standard library's decoder goes (about 1,000 levels)
            return Problem(TOO_DEEP)
        except JsonRuleError as exc:  # a number the rule refuses
            return Problem(exc.reason)
        return _held_to_the_rule(text, value)
    text = raw.decode("utf-8").removesuffix("\n")
    if may_repeat_a_key(raw, value):
        try:
            value = _slow_line(text)
        except JsonRuleError as exc:
            return Problem(exc.reason)
    return _held_to_the_rule(text, value)


def _held_to_the_rule(text: str, value: Any) -> Any:
    """``value``, or a Problem when it breaks what only the decoded value shows (nesting, NaN, NULs...)."""
    if type(value) is Problem or not needs_walk(text):
        return value
    problem = value_problem(value)
    return value if problem is None else Problem(problem)
