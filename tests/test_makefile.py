"""The Makefile's test targets, as make would run them (``make -n``: nothing runs)."""

from __future__ import annotations

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


@pytest.mark.parametrize(
    ("interpreter", "found"),
    [("python3.99-absent", "is not found"), ("{fake}", "is Python 3.13")],
)
def test_setup_without_python_3_11_stops_in_one_line_before_installing_anything(
    tmp_path: Path, interpreter: str, found: str
) -> None:
    fake = tmp_path / "python"
    fake.write_text("#!/bin/sh\necho 3.13\n", encoding="utf-8")  # what a Python 3.13 prints for the check
    fake.chmod(0o755)
    python = interpreter.format(fake=fake)
    stamps = tmp_path / "stamps"
    done = subprocess.run(
        ["make", "-B", f"STAMPS={stamps}", f"VENV={tmp_path / 'venv'}", f"PYTHON={python}", f"{stamps}/apt"],
        cwd=REPO_ROOT,
        capture_output=True,
        text=True,
    )
    assert done.returncode == 2
    error = done.stderr.splitlines()[0]
    assert error.startswith(f"error: make setup needs Python 3.11 and PYTHON={python} {found}: install Python 3.11")
    assert error.endswith("then run make setup PYTHON=/path/to/python3.11")
    assert not stamps.exists()  # stopped before apt-get
