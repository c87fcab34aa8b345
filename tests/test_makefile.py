"""The Makefile's test targets, as make would run them (``make -n``: nothing runs)."""

from __future__ import annotations

import subprocess

from tests.paths import REPO_ROOT


def _pytest_line(*args: str) -> str:
    done = subprocess.run(["make", "-n", *args], cwd=REPO_ROOT, capture_output=True, text=True, check=True)
    return next(line for line in done.stdout.splitlines() if "pytest" in line)


def test_test_fast_keeps_its_selection_when_pytest_args_are_given() -> None:
    assert _pytest_line("test-fast", "PYTEST_ARGS=-k gateway").endswith('-m "not heavy" -k gateway')
    assert '-m "not heavy"' in _pytest_line("test-fast")
    assert "not heavy" not in _pytest_line("test", "PYTEST_ARGS=-k gateway")
