"""Every example that runs a sample job (``jobs/NAME.py -- ARGS`` in the README, docs/ and ``--help``) gives
the job arguments it takes: each is parsed by the job's own argument parser, which stops before Spark."""

from __future__ import annotations

import argparse
import re
import shlex

import pytest

from tests.helpers import command_contexts
from tests.jobs.conftest import load_job
from tests.paths import REPO_ROOT

# A sample job and what follows its `--` up to the end of the line or of the inline code; a line that ends
# with a backslash goes on on the next.
_EXAMPLE = re.compile(r"jobs/(\w+)\.py -- ([^`\n]*)")


class _Parsed(Exception):
    """Raised once the job's parser took the arguments: the job stops before it starts Spark."""


def _docs() -> dict[str, str]:
    docs = [REPO_ROOT / "README.md", *sorted((REPO_ROOT / "docs").glob("*.md"))]
    return {str(path.relative_to(REPO_ROOT)): path.read_text(encoding="utf-8") for path in docs}


def _helps() -> dict[str, str]:
    """Every command's --help (read when the test runs: collecting it would import every command)."""
    return {f"emr-lineage {name} --help": c.command.get_help(c) for name, c in command_contexts().items()}


def examples(texts: dict[str, str]) -> list[tuple[str, str, list[str]]]:
    """(where, job, its arguments) of each example in ``texts``."""
    found = []
    for where, text in texts.items():
        joined = re.sub(r"\\\n\s*", " ", text)
        for job, args in _EXAMPLE.findall(joined):
            found.append((where, job, shlex.split(args.replace("\\", ""))))
    return found


def refusal(job: str, args: list[str], monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> str:
    """Why jobs/``job``.py's parser refuses ``args`` ("" when it takes them)."""
    parse = argparse.ArgumentParser.parse_args

    def parse_then_stop(parser: argparse.ArgumentParser, argv: list[str] | None = None, namespace=None):
        parse(parser, argv, namespace)
        raise _Parsed

    with monkeypatch.context() as patch:
        patch.setattr(argparse.ArgumentParser, "parse_args", parse_then_stop)
        try:
            load_job(job).main(args)
        except SystemExit:
            return f"jobs/{job}.py refuses {shlex.join(args)}: {capsys.readouterr().err.strip()}"
        except _Parsed:
            return ""
    return f"jobs/{job}.py parsed no arguments"


DOC_EXAMPLES = examples(_docs())


def test_the_examples_are_found() -> None:
    assert {job for _, job, _ in DOC_EXAMPLES} >= {"revenue_daily", "revenue_weekly"}
    assert {where for where, _, _ in DOC_EXAMPLES} >= {"docs/deploy.md", "README.md"}
    assert {job for _, job, _ in examples(_helps())} >= {"revenue_daily", "train_model"}


@pytest.mark.parametrize(("where", "job", "args"), DOC_EXAMPLES, ids=[f"{w}:{j}" for w, j, _ in DOC_EXAMPLES])
def test_a_docs_example_gives_the_job_arguments_it_takes(
    where: str, job: str, args: list[str], monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    assert refusal(job, args, monkeypatch, capsys) == "", where


def test_every_help_example_gives_the_job_arguments_it_takes(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    refused = {where: refusal(job, args, monkeypatch, capsys) for where, job, args in examples(_helps())}
    assert {where: why for where, why in refused.items() if why} == {}


def test_an_example_with_an_option_the_job_does_not_take_is_refused(monkeypatch, capsys) -> None:
    ((_, job, args),) = examples({"x.md": "`emr-lineage launch --job jobs/revenue_daily.py -- --date 2024-01-01`"})
    assert "refuses --date" in refusal(job, args, monkeypatch, capsys)
