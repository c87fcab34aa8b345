"""tests/conftest.py leaves a folder of one need uncollected only when -m surely leaves out all its tests."""

from __future__ import annotations

import pytest

from tests.conftest import _leaves_out

SYNTH = frozenset({"synth", "heavy"})


@pytest.mark.parametrize(
    ("markexpr", "left_out"),
    [
        ("not heavy", True),
        ("not synth", True),
        ("slow and not heavy", True),
        ("not (heavy or browser)", True),
        ("heavy", False),
        ("not heavy or slow", False),
        ("not spark", False),
        ("not heavy(reason='x')", False),
        ("not (", False),
    ],
)
def test_a_folder_is_skipped_only_when_every_marking_of_its_tests_is_deselected(markexpr: str, left_out: bool) -> None:
    assert _leaves_out(markexpr, SYNTH) is left_out
