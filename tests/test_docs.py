"""The documentation is reference: every link resolves, and docs/ and --help hold no history.

Links: every relative link of the README, CONTRIBUTING.md, docs/*.md and bench/README.md names a file
or folder of the checkout, and its ``#anchor`` a heading of the target (GitHub's anchors).

History: dates, the machine or session a measurement was taken in, the project's own issue numbers and
what a release spelled differently belong in CHANGELOG.md and bench/README.md, not in docs/ or ``--help``.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from tests.helpers import command_contexts
from tests.paths import REPO_ROOT

DOCS = sorted((REPO_ROOT / "docs").glob("*.md"))
LINKED = [REPO_ROOT / "README.md", REPO_ROOT / "CONTRIBUTING.md", REPO_ROOT / "bench" / "README.md", *DOCS]
_FENCE = re.compile(r"^(```|~~~).*?^\1\s*$", re.S | re.M)
_CODE = re.compile(r"`[^`\n]*`")
_LINK = re.compile(r"!?\[(?:[^\[\]]|\[[^\]]*\])*\]\(([^()\s]+(?:\([^()\s]*\))?[^()\s]*)(?:\s+\"[^\"]*\")?\)")
_HEADING = re.compile(r"^#{1,6}\s+(.+?)\s*#*\s*$", re.M)

HISTORY = {
    "a date": re.compile(r"\b20\d\d-\d\d-\d\d\b"),
    "a session": re.compile(r"\b(?:this|earlier|previous|last|morning) sessions?\b|\bsessions? before\b", re.I),
    "the machine a measurement ran on": re.compile(r"\b\d-(?:core|CPU)\b|\bthis machine\b|\bload average\b", re.I),
    "an issue of the project": re.compile(r"(?<!Marquez )(?<!OpenLineage )\bissue #?\d+", re.I),
    "a release's old spelling": re.compile(r"\bin 0\.\d+\b(?!\s*(?:s|ms|seconds?)\b)|\bits spelling in\b"),
}


def _prose(text: str) -> str:
    """``text`` without fenced code blocks, whose lines stay (empty) so that line numbers hold."""
    return _FENCE.sub(lambda m: "\n" * m.group(0).count("\n"), text)


def slug(heading: str) -> str:
    """GitHub's anchor of a heading: link targets and markup out, lower case, punctuation out, spaces to -."""
    text = re.sub(r"!?\[([^\]]*)\]\([^)]*\)", r"\1", heading)
    text = re.sub(r"<[^>]+>", "", text).lower()
    text = re.sub(r"[^\w\- ]", "", text)
    return text.replace(" ", "-")


def anchors(path: Path) -> set[str]:
    found: set[str] = set()
    for heading in _HEADING.findall(_prose(path.read_text(encoding="utf-8"))):
        base = slug(heading)
        name, n = base, 0
        while name in found:
            n += 1
            name = f"{base}-{n}"
        found.add(name)
    return found


def broken_links(path: Path) -> list[str]:
    broken = []
    for number, line in enumerate(_prose(path.read_text(encoding="utf-8")).splitlines(), 1):
        for target in _LINK.findall(_CODE.sub("", line)):
            if re.match(r"^[a-z][a-z0-9+.-]*:", target):  # https:, mailto: ...
                continue
            file, _, anchor = target.partition("#")
            resolved = (path.parent / file).resolve() if file else path
            if not resolved.exists():
                broken.append(f"{path.name}:{number}: {target} (no such file)")
            elif anchor and resolved.suffix == ".md" and anchor not in anchors(resolved):
                broken.append(f"{path.name}:{number}: {target} (no such heading)")
    return broken


@pytest.mark.parametrize("path", LINKED, ids=lambda p: p.relative_to(REPO_ROOT).as_posix())
def test_every_link_resolves(path: Path) -> None:
    assert broken_links(path) == []


def test_the_link_check_finds_a_missing_file_and_heading(tmp_path: Path) -> None:
    (tmp_path / "other.md").write_text("# Title\n\n## The runs (`--with-runs`)\n\n## Same\n\n## Same\n")
    page = tmp_path / "page.md"
    page.write_text(
        "[ok](other.md#the-runs---with-runs) [ok](other.md#same-1) [ok](#here) [web](https://example.com/x)\n"
        "# Here\n[bad](missing.md) [bad](other.md#nowhere)\n```\n[code](ignored.md)\n```\n`[code](ignored.md)`\n"
    )
    assert broken_links(page) == [
        "page.md:3: missing.md (no such file)",
        "page.md:3: other.md#nowhere (no such heading)",
    ]


def history(text: str) -> list[str]:
    found = []
    for what, pattern in HISTORY.items():
        for match in pattern.finditer(text):
            line = text.count("\n", 0, match.start()) + 1
            found.append(f"line {line}: {what}: {match.group(0)!r}")
    return found


@pytest.mark.parametrize("path", DOCS, ids=lambda p: p.name)
def test_the_docs_hold_no_history(path: Path) -> None:
    assert history(path.read_text(encoding="utf-8")) == []


def _helps() -> dict[str, str]:
    """Every command's and group's --help text, by command line."""
    return {f"emr-lineage {name}".strip(): c.command.get_help(c) for name, c in command_contexts(groups=True).items()}


def test_help_holds_no_history() -> None:
    helps = _helps()
    assert len(helps) > 20
    assert {name: found for name, text in helps.items() if (found := history(text))} == {}


@pytest.mark.parametrize(
    "text",
    [
        "Measured on 2026-11-24 on the 2-core machine",
        "in this session the suite took",
        "fixed in issue 21",
        "(--html FILE in 0.1)",
        '{"Version": "2012-10-17"}',
        "its spelling in 0.1",
        "load average about 2",
    ],
)
def test_the_history_check_finds_it(text: str) -> None:
    assert history(text)


@pytest.mark.parametrize(
    "text",
    [
        "Marquez issue #2733",
        "retrying in 0.5 s",
        "keep that session open",
        "OpenLineage issue 9",
    ],
)
def test_the_history_check_leaves_product_facts(text: str) -> None:
    assert history(text) == []


def test_the_jump_host_trust_policy_the_docs_use_lets_ec2_assume_the_role() -> None:
    """docs/e2e.md creates its SSM jump host's role from this file (no JSON with a date in the docs)."""
    policy = json.loads((REPO_ROOT / "examples" / "ssm-jump-host-trust.json").read_text())
    (statement,) = policy["Statement"]
    assert statement == {"Effect": "Allow", "Principal": {"Service": "ec2.amazonaws.com"}, "Action": "sts:AssumeRole"}
    assert "file://examples/ssm-jump-host-trust.json" in (REPO_ROOT / "docs" / "e2e.md").read_text()
