"""The JSON text of an OpenLineage event, as every door reads it (the rest of the rule:
:mod:`emr_lineage.lineage.event_rule`).

Standard library only (the gateway's ingest Lambda carries it). An event's text is refused when it has:

* a key given twice with two values: which one counts would be a guess (the same value twice is no
  ambiguity, and the OpenLineage Spark listener 1.53 writes ``run.facets.processing_engine`` so);
* ``NaN`` or ``Infinity``: not JSON (RFC 8259 section 6), and PostgreSQL's ``jsonb``, where Marquez
  keeps the raw event, refuses them;
* a NUL character (``\\u0000``) in a string or key: PostgreSQL's ``jsonb`` and ``text`` refuse it
  (https://www.postgresql.org/docs/current/datatype-json.html); nor a lone UTF-16 surrogate (``\\ud800``),
  which is no Unicode text;
* a value inside more than :data:`MAX_NESTING` objects and arrays: no producer nests that deep, and it
  is the limit the event-file reader's decoder (jiter) has built in, so a deeper line never takes its fast way.

* a number of more than :data:`MAX_NUMBER_LENGTH` characters, or beyond a double's range (Jackson,
  Marquez's parser, refuses the first and turns the second into the text "Infinity").

A batch (a JSON array of events) is split into its events first, so one event that breaks the rule is
refused alone (:func:`decode_batch`); a batch that is not JSON is refused whole.

One gap, kept for speed: the event files' fast decoder (jiter, :mod:`emr_lineage.lineage.events.decode`)
takes a float beyond a double's range as infinity and an integer of up to 4,300 digits, and looking for
them in every line would cost more than the rest of reading it; the gateway, ``replay`` and the careful
way of the file readers refuse them.
"""

from __future__ import annotations

import json
import math
import re
from typing import Any

MAX_NESTING = 200
TOO_DEEP = f"a value is nested in more than {MAX_NESTING} objects and arrays"
# What value_problem looks for, in the text: the escape of a NUL or of a UTF-16 surrogate (paired or
# lone), NaN and Infinity (the standard library's decoder takes them; jiter does not).
_TRIGGERS = re.compile(r"\\u(?:0000|[dD][89a-fA-F])|NaN|Infinity")
_REFUSED_CHARACTERS = re.compile("[\x00\ud800-\udfff]")


class JsonRuleError(ValueError):
    """JSON text an event cannot be: ``reason`` is one line; ``syntax``: it is not JSON at all."""

    def __init__(self, reason: str, syntax: bool = False) -> None:
        super().__init__(reason)
        self.reason, self.syntax = reason, syntax


class DuplicateKey(JsonRuleError):
    """A key given twice in one object with two values (``offset``: where, when known)."""

    def __init__(self, key: str, offset: int | None = None) -> None:
        super().__init__(f"duplicate key {key!r}")
        self.key, self.offset = key, offset


def same_value(first: Any, second: Any) -> bool:
    """True when two decoded JSON values are the same JSON (``1`` is not ``true`` nor ``1.0``; key order
    does not matter): equal, with the same type at every level."""
    if type(first) is not type(second):
        return False
    if isinstance(first, dict):
        return first.keys() == second.keys() and all(same_value(first[key], second[key]) for key in first)
    if isinstance(first, list):
        return len(first) == len(second) and all(map(same_value, first, second))
    return first == second


def unique_object(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    """``object_pairs_hook`` of a decoder: the object, or :class:`DuplicateKey` for a key repeated with
    another value."""
    result = dict(pairs)
    if len(result) != len(pairs):
        first: dict[str, Any] = {}
        for key, value in pairs:
            if key in first and not same_value(first[key], value):
                raise DuplicateKey(key)
            first.setdefault(key, value)
    return result


# Jackson, Marquez's parser, reads numbers of up to 1,000 characters (StreamReadConstraints) and a float
# beyond a double's range as infinity, which it then stores as the text "Infinity".
MAX_NUMBER_LENGTH = 1000
_NOT_FINITE = "a number beyond a double's range (about 1.8e308) is not one PostgreSQL's jsonb or Java keeps"


def _integer(text: str) -> int:
    if len(text) > MAX_NUMBER_LENGTH:
        raise JsonRuleError(f"a number is {len(text)} characters long; the limit is {MAX_NUMBER_LENGTH}")
    return int(text)


def _float(text: str) -> float:
    value = float(text)
    if len(text) > MAX_NUMBER_LENGTH or not math.isfinite(value):
        raise JsonRuleError(
            _NOT_FINITE if len(text) <= MAX_NUMBER_LENGTH else f"a number is over {MAX_NUMBER_LENGTH} characters"
        )
    return value


DECODER = json.JSONDecoder(object_pairs_hook=unique_object, parse_int=_integer, parse_float=_float)


def _character_problem(text: str, what: str) -> str | None:
    found = _REFUSED_CHARACTERS.search(text)
    if found is None:
        return None
    if found.group() == "\x00":
        return f"a {what} holds a NUL character (\\u0000), which PostgreSQL cannot store"
    return f"a {what} holds a lone UTF-16 surrogate (\\u{ord(found.group()):04x}), which is not Unicode text"


def value_problem(value: Any) -> str | None:
    """What a decoded value breaks of the rules a decoder may not see: nesting, NaN and Infinity, NULs and
    lone surrogates (a decoded string holds a surrogate only when it was lone: a pair decodes to one)."""
    stack: list[tuple[Any, int]] = [(value, 0)]  # (value, the objects and arrays around it)
    while stack:
        item, depth = stack.pop()
        if depth > MAX_NESTING:
            return TOO_DEEP
        if isinstance(item, str):
            if problem := _character_problem(item, "string"):
                return problem
        elif isinstance(item, float) and not math.isfinite(item):
            return "NaN and Infinity are not JSON numbers (RFC 8259 section 6)"  # what the decoder took as one
        elif isinstance(item, dict):
            for key in item:
                if problem := _character_problem(key, "key"):
                    return problem
            stack.extend((child, depth + 1) for child in item.values())
        elif isinstance(item, list):
            stack.extend((child, depth + 1) for child in item)
    return None


def needs_walk(text: str, start: int = 0, end: int | None = None) -> bool:
    """Whether the JSON text may break what only :func:`value_problem` sees: it holds what that looks for
    (an escape, NaN, Infinity), or enough brackets to nest too deep (fewer than the limit in all cannot)."""
    end = len(text) if end is None else end
    if _TRIGGERS.search(text, start, end):
        return True
    return text.count("{", start, end) + text.count("[", start, end) > MAX_NESTING


def _decode_at(text: str, position: int) -> tuple[Any, int]:
    """The value at ``position`` and its end, held to the rule (:class:`JsonRuleError`)."""
    try:
        value, end = DECODER.raw_decode(text, position)
    except RecursionError:  # deeper than the decoder goes (about 1,000 levels)
        raise JsonRuleError(TOO_DEEP) from None
    except json.JSONDecodeError as exc:
        raise JsonRuleError(f"not JSON: {exc.msg} (line {exc.lineno}, column {exc.colno})", syntax=True) from None
    problem = value_problem(value) if needs_walk(text, position, end) else None
    if problem:
        raise JsonRuleError(problem)
    return value, end


_SPACE = re.compile(r"[ \t\r\n]*")


def decode_event(text: str) -> Any:
    """The one JSON value of ``text``, held to the rule (:class:`JsonRuleError`, one line)."""
    position = _SPACE.match(text).end()  # type: ignore[union-attr]
    value, end = _decode_at(text, position)
    if _SPACE.match(text, end).end() != len(text):  # type: ignore[union-attr]
        raise JsonRuleError(f"not JSON: extra data after the value (offset {end})", syntax=True)
    return value


# Skips a JSON value's strings and finds its brackets: a value that broke the rule is stepped over. A
# quote no string ends (the text stops inside a string) is a token of its own.
_TOKENS = re.compile(r'"(?:[^"\\]|\\.)*"|"|[\[\]{}]|[,]', re.DOTALL)


def end_of_value(text: str, position: int) -> int:
    """Where the value at ``position`` ends (a container's matching bracket, else the next ``,`` or
    ``]`` at its level); :class:`JsonRuleError` when the text ends first (its brackets never close, or a
    string never does)."""
    depth = 0
    for token in _TOKENS.finditer(text, position):
        mark = token.group()
        if mark == '"':
            break
        if mark in "[{":
            depth += 1
        elif mark in "]}":
            if depth == 0:
                return token.start()
            depth -= 1
            if depth == 0:
                return token.end()
        elif mark == "," and depth == 0:
            return token.start()
    raise JsonRuleError("not JSON: the batch ends inside an event", syntax=True)


def decode_batch(text: str) -> Any:
    """The events of a batch (a JSON array) as a list, each the value or the :class:`JsonRuleError` it
    broke, so one is refused alone; any other JSON value as it is (the caller says what it is instead);
    :class:`JsonRuleError` when the text is not JSON at all (a syntax error anywhere)."""
    position = _SPACE.match(text).end()  # type: ignore[union-attr]
    if text[position : position + 1] != "[":
        return decode_event(text)
    items: list[Any] = []
    position = _SPACE.match(text, position + 1).end()  # type: ignore[union-attr]
    if text[position : position + 1] == "]":
        position = _SPACE.match(text, position + 1).end()  # type: ignore[union-attr]
    else:
        while True:
            try:
                value, position = _decode_at(text, position)
            except JsonRuleError as exc:
                if exc.syntax:
                    raise
                value, position = exc, end_of_value(text, position)
            items.append(value)
            position = _SPACE.match(text, position).end()  # type: ignore[union-attr]
            mark = text[position : position + 1]
            if mark not in (",", "]"):
                raise JsonRuleError(f"not JSON: expected ',' or ']' in the batch (offset {position})", syntax=True)
            position = _SPACE.match(text, position + 1).end()  # type: ignore[union-attr]
            if mark == "]":
                break
    if position != len(text):
        raise JsonRuleError(f"not JSON: extra data after the batch (offset {position})", syntax=True)
    return items
