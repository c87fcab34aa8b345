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


def _texts() -> dict[str, str]:
    docs = [REPO_ROOT / "README.md", *sorted((REPO_ROOT / "docs").glob("*.md"))]
    texts = {str(path.relative_to(REPO_ROOT)): path.read_text(encoding="utf-8") for path in docs}
    for name, context in command_contexts().items():
        texts[f"emr-lineage {name} --help"] = context.command.get_help(context)
    return texts


def examples(texts: dict[str, str]) -> list[tuple[str, str, list[str]]]:
    """(where, job, its arguments) of each example in ``texts``."""
    found = []
    for where, text in texts.items():
        joined = re.sub(r"\\\n\s*", " ", text)
        for job, args in _EXAMPLE.findall(joined):
            found.append((where, job, shlex.split(args.replace("\\", ""))))
    return found


EXAMPLES = examples(_texts())


def test_the_examples_are_found() -> None:
    assert {job for _, job, _ in EXAMPLES} >= {"revenue_daily", "train_model"}
    assert {where for where, _, _ in EXAMPLES} >= {"docs/deploy.md", "emr-lineage launch --help"}


@pytest.mark.parametrize(("where", "job", "args"), EXAMPLES, ids=[f"{w}:{j}" for w, j, _ in EXAMPLES])
def test_an_example_gives_the_job_arguments_it_takes(
    where: str, job: str, args: list[str], monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    parse = argparse.ArgumentParser.parse_args

    def parse_then_stop(parser: argparse.ArgumentParser, argv: list[str] | None = None, namespace=None):
        parse(parser, argv, namespace)
        raise _Parsed

    monkeypatch.setattr(argparse.ArgumentParser, "parse_args", parse_then_stop)
    try:
        load_job(job).main(args)
    except SystemExit:
        pytest.fail(f"{where}: jobs/{job}.py refuses {shlex.join(args)}: {capsys.readouterr().err.strip()}")
    except _Parsed:
        return
    pytest.fail(f"jobs/{job}.py parsed no arguments")


def test_an_example_with_an_option_the_job_does_not_take_fails(monkeypatch, capsys) -> None:
    ((where, job, args),) = examples({"x.md": "`emr-lineage launch --job jobs/revenue_daily.py -- --date 2024-01-01`"})
    with pytest.raises(pytest.fail.Exception, match="refuses --date"):
        test_an_example_gives_the_job_arguments_it_takes(where, job, args, monkeypatch, capsys)
