"""The JSON text of an event, as every door reads it: a key repeated with another value, NaN and Infinity,
NULs and lone surrogates, nesting past jiter's limit, trailing data; a batch split so that one bad event
is refused alone."""

from __future__ import annotations

import json
import re
from typing import Any

import jiter
import pytest

from emr_lineage.lineage.event_json import (
    MAX_NESTING,
    TOO_DEEP,
    DuplicateKey,
    JsonRuleError,
    decode_batch,
    decode_event,
    end_of_value,
    needs_walk,
    value_problem,
)

NUL = "a string holds a NUL character (\\u0000), which PostgreSQL cannot store"
NOT_A_NUMBER = "NaN and Infinity are not JSON numbers (RFC 8259 section 6)"
GOOD = json.dumps({"eventType": "START", "job": {"namespace": "n", "name": "j"}})


def refused(text: str) -> str:
    with pytest.raises(JsonRuleError) as info:
        decode_event(text)
    reason = info.value.reason
    assert "\n" not in reason
    return reason


# --- keys ---------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "text",
    [
        '{"a": 1, "a": 2}',
        '{"a": 1, "a": 1.0}',
        '{"a": 1, "a": true}',
        '{"a": null, "a": 0}',
        '{"a": [1, 2], "a": [2, 1]}',
        '{"x": {"job": {"a": {"b": 1}, "a": {"b": 2}}}}',
        '[{"ok": 1}, {"a": "x", "a": "y"}]',
    ],
)
def test_a_key_given_twice_with_two_values_is_refused(text: str) -> None:
    with pytest.raises(DuplicateKey) as info:
        decode_event(text)
    assert info.value.reason == "duplicate key 'a'" and info.value.key == "a"


@pytest.mark.parametrize(
    "text",
    [
        '{"a": 1, "a": 1}',
        '{"a": {"x": 1, "y": [2, {"z": null}]}, "a": {"y": [2, {"z": null}], "x": 1}}',  # key order apart
        '{"processing_engine": {"name": "spark"}, "jobId": 0, "processing_engine": {"name": "spark"}}',
    ],
)
def test_a_key_repeated_with_the_same_value_is_accepted(text: str) -> None:
    assert decode_event(text) == json.loads(text)


# --- numbers and characters ---------------------------------------------------------------------------


@pytest.mark.parametrize("number", ["NaN", "Infinity", "-Infinity"])
def test_nan_and_infinity_are_refused_anywhere(number: str) -> None:
    for text in (f'{{"a": {number}}}', f'{{"a": [1, {{"b": {number}}}]}}', number):
        assert refused(text) == NOT_A_NUMBER


def test_the_words_nan_and_infinity_in_a_string_are_text() -> None:
    assert decode_event('{"NaN": "Infinity", "note": "NaN"}') == {"NaN": "Infinity", "note": "NaN"}


@pytest.mark.parametrize("number", ["1e999", "-1e999", "1" * 1001])
def test_a_number_past_the_range_of_a_double_is_refused(number: str) -> None:
    refused(f'{{"a": {number}}}')


@pytest.mark.parametrize(
    ("text", "reason"),
    [
        ('{"a": "x\\u0000y"}', NUL),
        ('{"a": ["ok", {"b": "\\u0000"}]}', NUL),
        ('{"a\\u0000": 1}', "a key holds a NUL character (\\u0000), which PostgreSQL cannot store"),
        ('{"a": "\\ud800"}', "a string holds a lone UTF-16 surrogate (\\ud800), which is not Unicode text"),
        ('{"a": "x\\udc00y"}', "a string holds a lone UTF-16 surrogate (\\udc00), which is not Unicode text"),
        ('{"a": "\\ude00\\ud83d"}', "a string holds a lone UTF-16 surrogate (\\ude00), which is not Unicode text"),
        ('{"\\udbff": 1}', "a key holds a lone UTF-16 surrogate (\\udbff), which is not Unicode text"),
    ],
)
def test_nul_characters_and_lone_surrogates_are_refused_in_strings_and_keys(text: str, reason: str) -> None:
    assert refused(text) == reason


def test_an_unescaped_nul_is_not_json() -> None:
    assert refused('{"a": "x\x00y"}').startswith("not JSON: Invalid control character")


def test_a_surrogate_pair_is_one_character() -> None:
    assert decode_event('{"a": "\\ud83d\\ude00", "\\ud83d\\ude00": 1}') == {"a": "😀", "😀": 1}
    assert decode_event('{"a": "\\u00e9\\u0001"}') == {"a": "é\x01"}


# --- nesting --------------------------------------------------------------------------------------------


def _inside(depth: int, shape: str) -> str:
    """A JSON value whose innermost value is inside ``depth`` objects and arrays of the ``shape``."""
    opening, closing, innermost = {
        "arrays": ("[", "]", "1"),
        "objects": ('{"a":', "}", '"s"'),
        "mixed": ('[{"a":', "}]", "null"),
        "empty array": ("[", "]", "[]"),
        "empty object": ("[", "]", "{}"),
        "event field": ("[", "]", "true"),
    }[shape]
    if shape == "mixed":  # two containers a step
        return opening * (depth // 2) + ("[" + innermost + "]" if depth % 2 else innermost) + closing * (depth // 2)
    if shape == "event field":  # an event's field holding arrays: the event object is the first container
        return (
            '{"job": {"namespace": "n", "name": "j"}, "x": ' + "[" * (depth - 1) + innermost + "]" * (depth - 1) + "}"
        )
    return opening * depth + innermost + closing * depth


@pytest.mark.parametrize("shape", ["arrays", "objects", "mixed", "empty array", "empty object", "event field"])
def test_nesting_is_accepted_to_200_and_refused_past_it_where_jiter_refuses(shape: str) -> None:
    for depth in (1, 199, 200, 201, 202, 1200):
        text = _inside(depth, shape)
        try:
            jiter.from_json(text.encode())
            jiter_takes = True
        except ValueError:
            jiter_takes = False
        assert jiter_takes == (depth <= MAX_NESTING), (shape, depth)
        if depth <= MAX_NESTING:
            assert decode_event(text) == json.loads(text)
        else:
            assert refused(text) == TOO_DEEP == "a value is nested in more than 200 objects and arrays"


def test_100k_nested_brackets_are_one_problem_not_a_recursion_error() -> None:
    assert refused("[" * 100_000 + "]" * 100_000) == TOO_DEEP
    assert refused('{"a":' * 100_000 + "1" + "}" * 100_000) == TOO_DEEP
    assert refused("[" * 100_000) == TOO_DEEP  # never closed: too deep before its end


def test_the_walk_runs_only_where_the_text_may_break_the_rule() -> None:
    assert not needs_walk(GOOD) and not needs_walk("[" * 100 + "{" * 100)
    assert needs_walk("[" * 100 + "{" * 101)
    for text in ('"\\u0000"', '"\\ud800"', '"\\uDC00"', "NaN", "-Infinity"):
        assert needs_walk(GOOD + text)
    assert not needs_walk('"\\u00e9 \\u0001"')
    assert needs_walk("x" + "[" * 201, 1) and not needs_walk("[" * 201, 1)  # within start and end
    assert value_problem([[[]]]) is None
    assert value_problem({"a": float("nan")}) == NOT_A_NUMBER
    deep: Any = 1
    for _ in range(MAX_NESTING + 1):
        deep = [deep]
    assert value_problem(deep) == TOO_DEEP and value_problem(deep[0]) is None


# --- trailing data ---------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "reason"),
    [
        (GOOD + " " + GOOD, f"not JSON: extra data after the value (offset {len(GOOD)})"),
        (GOOD + "x", f"not JSON: extra data after the value (offset {len(GOOD)})"),
        ("", "not JSON: Expecting value (line 1, column 1)"),
        ("{", "not JSON: Expecting property name enclosed in double quotes (line 1, column 2)"),
    ],
)
def test_one_value_and_nothing_after_it(text: str, reason: str) -> None:
    assert refused(text) == reason


def test_whitespace_around_the_value_is_fine() -> None:
    assert decode_event(" \r\n\t" + GOOD + " \r\n\t") == json.loads(GOOD)


# --- batches ---------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("bad", "reason"),
    [
        ('{"a": NaN}', NOT_A_NUMBER),
        ('{"a": 1, "a": 2}', "duplicate key 'a'"),
        ('{"a": "\\u0000"}', NUL),
        ("[" * 100_000 + "]" * 100_000, TOO_DEEP),
        ('{"x": ' + "[" * 100_000 + "]" * 100_000 + "}", TOO_DEEP),
        ('{"x": ' + "[" * 201 + "]" * 201 + "}", TOO_DEEP),
        ('{"a": NaN, "s": "]]},[{"}', NOT_A_NUMBER),  # brackets in its strings are text
    ],
)
def test_a_batch_refuses_the_bad_event_alone(bad: str, reason: str) -> None:
    events = decode_batch(f"[{GOOD},\n {bad} , {GOOD}]")
    assert len(events) == 3 and events[0] == events[2] == json.loads(GOOD)
    assert isinstance(events[1], JsonRuleError) and events[1].reason == reason


def test_a_batch_of_good_events_and_other_values() -> None:
    assert decode_batch(f" [ {GOOD} , {GOOD} ] ") == [json.loads(GOOD)] * 2
    assert decode_batch("[]") == decode_batch(" [ \n ] ") == []
    assert decode_batch(GOOD) == json.loads(GOOD)  # not an array: the caller says what it is instead
    assert decode_batch("[1, [2], null]") == [1, [2], None]


@pytest.mark.parametrize(
    ("text", "reason"),
    [
        (f"[{GOOD}] x", rf"not JSON: extra data after the batch \(offset {len(GOOD) + 3}\)"),
        (f"[{GOOD}] [{GOOD}]", rf"not JSON: extra data after the batch \(offset {len(GOOD) + 3}\)"),
        # (The offset is that of the character after the unexpected one: see the report.)
        (f"[{GOOD} {GOOD}]", r"not JSON: expected ',' or '\]' in the batch \(offset \d+\)"),
        (f"[{GOOD}", rf"not JSON: expected ',' or '\]' in the batch \(offset {len(GOOD) + 1}\)"),
        (f"[{GOOD}, " + "[" * 100_000, "not JSON: the batch ends inside an event"),
        ('{"a": NaN}', re.escape(NOT_A_NUMBER)),  # one event, not a batch: refused as it is
    ],
)
def test_a_batch_that_is_not_json_values_is_refused_whole(text: str, reason: str) -> None:
    with pytest.raises(JsonRuleError) as info:
        decode_batch(text)
    assert re.fullmatch(reason, info.value.reason), info.value.reason


def test_the_end_of_a_value_skips_its_strings_and_is_not_found_in_text_cut_short() -> None:
    """end_of_value (also the .json list reader's, whose window may cut an item): a container ends at its
    closing bracket, a scalar before the next , or ] of its level; text that stops inside the value, or
    inside one of its strings, has no end (not a bracket of the cut string taken for one)."""
    assert end_of_value('x{"s": "]}", "t": [1]}, 2', 1) == 22
    assert end_of_value("[1, 12345, 3]", 4) == 9 and end_of_value("[12345]", 1) == 6
    for cut in ('{"s": "] , }', '{"s": "x\\', "[[1, 2]", "12345"):
        with pytest.raises(JsonRuleError, match="the batch ends inside an event") as info:
            end_of_value(cut, 0)
        assert info.value.syntax
