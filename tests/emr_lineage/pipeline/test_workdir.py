"""The demo's --out-dir: never someone else's data, never two demos at once (no Spark needed)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner
from filelock import FileLock

from emr_lineage.cli.app import main
from emr_lineage.pipeline.demo import DEMO_ENTRIES
from emr_lineage.pipeline.workdir import LOCK, MARKER, OutputDirError, claimed_output_dir
from tests.paths import CDK_JSON


def _tree(root: Path) -> dict[str, str]:
    return {str(p.relative_to(root)): p.read_text() if p.is_file() else "<dir>" for p in sorted(root.rglob("*"))}


def _demo(*args: str) -> tuple[int, str]:
    result = CliRunner().invoke(main, ["demo", "--cdk-json", str(CDK_JSON), *args])
    return result.exit_code, result.stderr


def test_a_new_directory_is_claimed_with_a_marker(tmp_path: Path) -> None:
    out = tmp_path / "new"
    with claimed_output_dir(out, DEMO_ENTRIES) as claimed:
        assert claimed == out.resolve()
        assert json.loads((out / MARKER).read_text())["created"] == sorted(DEMO_ENTRIES)


def test_a_foreign_non_empty_directory_is_refused_and_untouched(tmp_path: Path) -> None:
    (tmp_path / "lake").mkdir()
    (tmp_path / "lake" / "precious.parquet").write_text("user data")
    (tmp_path / "notes.txt").write_text("mine")
    before = _tree(tmp_path)
    code, err = _demo("--out-dir", str(tmp_path), "--rows", "200")
    assert code == 2, err
    assert err.startswith("error: --out-dir ") and "not empty" in err and "--force" in err and err.count("\n") == 1
    assert _tree(tmp_path) == before


def test_force_keeps_the_users_entries_and_refuses_a_name_clash(tmp_path: Path) -> None:
    (tmp_path / "notes.txt").write_text("mine")
    with claimed_output_dir(tmp_path, DEMO_ENTRIES, force=True):
        pass
    assert (tmp_path / "notes.txt").read_text() == "mine"
    # A user's entry with a name the demo needs is never deleted, even with --force.
    other = tmp_path / "other"
    (other / "events.jsonl").parent.mkdir()
    (other / "events.jsonl").write_text("user events")
    with pytest.raises(OutputDirError, match="events.jsonl, which the demo did not create"):
        with claimed_output_dir(other, DEMO_ENTRIES, force=True):
            pass
    assert (other / "events.jsonl").read_text() == "user events"


def test_a_second_run_replaces_only_what_the_first_created(tmp_path: Path) -> None:
    with claimed_output_dir(tmp_path, DEMO_ENTRIES):
        (tmp_path / "lake").mkdir()
        (tmp_path / "lake" / "old").write_text("from the first demo")
    (tmp_path / "notes.txt").write_text("added by the user later")
    with claimed_output_dir(tmp_path, DEMO_ENTRIES):
        assert not (tmp_path / "lake").exists()
    assert (tmp_path / "notes.txt").read_text() == "added by the user later"


def test_an_empty_out_is_an_error(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    (tmp_path / "keep.txt").write_text("x")
    code, err = _demo("--out-dir", "", "--rows", "200")
    assert code == 2 and "--out-dir is empty" in err
    assert sorted(p.name for p in tmp_path.iterdir()) == ["keep.txt"]


def test_two_demos_on_one_directory_cannot_interfere(tmp_path: Path) -> None:
    out = tmp_path / "shared"
    out.mkdir()
    with FileLock(out / LOCK, timeout=0):  # the first demo holds the lock
        code, err = _demo("--out-dir", str(out), "--rows", "200")
    assert code == 2 and "another emr-lineage demo is using it" in err
    assert not (out / MARKER).exists()


def test_a_symlinked_lake_is_refused_not_followed(tmp_path: Path) -> None:
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    (elsewhere / "data").write_text("not the demo's")
    out = tmp_path / "out"
    with claimed_output_dir(out, DEMO_ENTRIES):
        pass
    (out / "lake").symlink_to(elsewhere)
    code, err = _demo("--out-dir", str(out), "--rows", "200")
    assert code == 2 and "symbolic link" in err
    assert (elsewhere / "data").read_text() == "not the demo's"


def test_an_unusable_out_is_one_line(tmp_path: Path) -> None:
    # A path below a file cannot be created, whoever runs the test (root included).
    (tmp_path / "a-file").write_text("x")
    code, err = _demo("--out-dir", str(tmp_path / "a-file" / "demo"), "--rows", "200")
    assert code == 2 and err.startswith("error: --out") and "Traceback" not in err
