"""No function of the package, the stacks or app.py is longer than MAX_LINES, counted from its ``def``
line to its last line (decorators not counted, docstring and comments counted): a longer one is split."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

from tests.paths import REPO_ROOT

MAX_LINES = 80
SOURCES = ("emr_lineage", "stacks")
MODULES = sorted([REPO_ROOT / "app.py", *(path for folder in SOURCES for path in (REPO_ROOT / folder).rglob("*.py"))])


def long_functions(source: str, max_lines: int = MAX_LINES) -> list[str]:
    """``name (n lines, line l)`` of every function or method of ``source`` over ``max_lines``, nested ones too."""
    found = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
            length = node.end_lineno - node.lineno + 1
            if length > max_lines:
                found.append(f"{node.name} ({length} lines, line {node.lineno})")
    return found


@pytest.mark.parametrize("path", MODULES, ids=lambda path: path.relative_to(REPO_ROOT).as_posix())
def test_no_function_is_over_the_limit(path: Path) -> None:
    found = long_functions(path.read_text())
    assert not found, f"over {MAX_LINES} lines, to split: {'; '.join(found)}"


def test_the_count_runs_from_def_to_last_line() -> None:
    body = "\n".join(f"    x{i} = {i}" for i in range(MAX_LINES - 1))
    at_limit = f"@decorator\ndef f():\n{body}\n"
    assert long_functions(at_limit) == []
    assert long_functions(at_limit + "    one_more = 1\n") == [f"f ({MAX_LINES + 1} lines, line 2)"]
