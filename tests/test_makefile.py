"""The Makefile's test targets, as make would run them (``make -n``: nothing runs)."""

from __future__ import annotations

import re
import subprocess
from pathlib import Path

import pytest

from tests.paths import REPO_ROOT


def _pytest_line(*args: str) -> str:
    done = subprocess.run(["make", "-n", *args], cwd=REPO_ROOT, capture_output=True, text=True, check=True)
    return next(line for line in done.stdout.splitlines() if "pytest" in line)


def test_test_fast_keeps_its_selection_when_pytest_args_are_given() -> None:
    assert _pytest_line("test-fast", "PYTEST_ARGS=-k gateway").endswith('-m "not heavy" -k gateway')
    assert '-m "not heavy"' in _pytest_line("test-fast")
    assert "not heavy" not in _pytest_line("test", "PYTEST_ARGS=-k gateway")


def _fake_python(path: Path, version: str) -> Path:
    """An executable that answers the Makefile's version check as a Python ``version`` would."""
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(f"#!/bin/sh\necho {version}\n", encoding="utf-8")
    path.chmod(0o755)
    return path


def _setup_stops(tmp_path: Path, python: str) -> str:
    """``make setup``'s first step with ``PYTHON=python`` and the virtualenv in tmp_path/venv: its one error line."""
    stamps = tmp_path / "stamps"
    done = subprocess.run(
        ["make", "-B", f"STAMPS={stamps}", f"VENV={tmp_path / 'venv'}", f"PYTHON={python}", f"{stamps}/apt"],
        cwd=REPO_ROOT,
        capture_output=True,
        text=True,
    )
    error, *others = done.stderr.splitlines()
    assert done.returncode == 2 and len(others) == 1 and re.match(r"make(\[\d+\])?: \*\*\* ", others[0])  # make's own
    assert not stamps.exists()  # stopped before apt-get
    return error


@pytest.mark.parametrize(("version", "found"), [(None, "is not found"), ("3.13", "is Python 3.13")])
def test_setup_without_python_3_11_stops_in_one_line_before_installing_anything(
    tmp_path: Path, version: str | None, found: str
) -> None:
    python = str(_fake_python(tmp_path / "my python" / "python", version) if version else tmp_path / "absent")
    error = _setup_stops(tmp_path, python)
    assert error.startswith(f"error: make setup needs Python 3.11 and PYTHON={python} {found}: install Python 3.11")
    assert error.endswith("then run make setup PYTHON=/path/to/python3.11")


def test_setup_with_a_virtualenv_of_another_python_says_to_make_it_again(tmp_path: Path) -> None:
    _fake_python(tmp_path / "venv" / "bin" / "python", "3.12")
    error = _setup_stops(tmp_path, "python3.11")
    assert error.startswith(f"error: make setup needs Python 3.11 and {tmp_path / 'venv'} is Python 3.12: remove it,")
