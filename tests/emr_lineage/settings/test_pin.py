"""Writing the listener pin into cdk.json: one value changes, every other byte stays."""

from __future__ import annotations

import difflib
import json
import stat
from pathlib import Path

import pytest

from emr_lineage.settings.loader import load_settings
from emr_lineage.settings.pin import PIN_KEY, PinFileError, locate_pin, write_pin
from tests.versions import LISTENER

DIGEST = "ab" * 32
OTHER = "cd" * 32


@pytest.fixture
def cdk_json(tmp_path: Path, repo_root: Path) -> Path:
    """A copy of the real cdk.json, not pinned yet (the committed pin set back to null, nothing else)."""
    text = (repo_root / "cdk.json").read_text()
    pin = f'"sha256": "{LISTENER.sha256}"'
    assert text.count(pin) == 1
    path = tmp_path / "cdk.json"
    path.write_text(text.replace(pin, '"sha256": null'))
    return path


def changed_lines(before: str, after: str) -> list[str]:
    return [
        line
        for line in difflib.unified_diff(before.splitlines(), after.splitlines(), lineterm="", n=0)
        if line.startswith(("+", "-")) and not line.startswith(("+++", "---"))
    ]


def test_pinning_changes_only_the_sha256_line(cdk_json: Path) -> None:
    before = cdk_json.read_text()
    cdk_json.chmod(0o640)
    slot = locate_pin(cdk_json)
    assert slot.current is None
    write_pin(slot, DIGEST)

    after = cdk_json.read_text()
    assert changed_lines(before, after) == [
        '-          "sha256": null,',
        f'+          "sha256": "{DIGEST}",',
    ]
    assert stat.S_IMODE(cdk_json.stat().st_mode) == 0o640
    assert load_settings("dev", cdk_json).versions.openlineage_spark.sha256 == DIGEST
    assert locate_pin(cdk_json).current == DIGEST
    assert [p.name for p in cdk_json.parent.iterdir()] == ["cdk.json"]  # no temp file left


def test_a_pinned_value_can_be_replaced(cdk_json: Path) -> None:
    write_pin(locate_pin(cdk_json), DIGEST)
    before = cdk_json.read_text()
    write_pin(locate_pin(cdk_json), OTHER)
    assert changed_lines(before, cdk_json.read_text()) == [
        f'-          "sha256": "{DIGEST}",',
        f'+          "sha256": "{OTHER}",',
    ]


def test_only_the_listener_sha256_is_touched_even_when_other_keys_share_the_name(tmp_path: Path) -> None:
    # Compact, CRLF, a byte order mark, other "sha256" keys before and after, and unicode.
    text = (
        '\ufeff{"sha256": null,\r\n"context": {"x": {"sha256": null}, "emr-lineage": {"versions": '
        '{"marquez": "1", "openlineage_spark": {"sha256"  :  null, "note": "caf\\u00e9 ü"}}}},\r\n'
        '"z": {"sha256": null}}\r\n'
    )
    path = tmp_path / "cdk.json"
    path.write_bytes(text.encode("utf-8"))
    write_pin(locate_pin(path), DIGEST)
    assert path.read_bytes().decode("utf-8") == text.replace('"sha256"  :  null', f'"sha256"  :  "{DIGEST}"')


def test_a_symlinked_cdk_json_stays_a_symlink(cdk_json: Path, tmp_path: Path) -> None:
    link = tmp_path / "link.json"
    link.symlink_to(cdk_json)
    write_pin(locate_pin(link), DIGEST)
    assert link.is_symlink()
    assert json.loads(cdk_json.read_text())["context"]["emr-lineage"]["versions"]["openlineage_spark"]["sha256"] == (
        DIGEST
    )


@pytest.mark.parametrize(
    ("content", "expected"),
    [
        ('{"context": {"emr-lineage": {"versions": {"openlineage_spark": {}}}}}', "cannot pin: "),
        ('{"context": {"emr-lineage": {"versions": []}}}', "is not an object"),
        ('{"context": {"emr-lineage": {"versions": {"openlineage_spark": {"sha256": 5}}}}}', "neither null nor"),
        ('{"context": ', "invalid JSON"),
        ("{} {}", "invalid JSON (Extra data)"),
    ],
)
def test_a_file_that_cannot_take_the_pin_is_one_clear_error(tmp_path: Path, content: str, expected: str) -> None:
    path = tmp_path / "cdk.json"
    path.write_text(content)
    with pytest.raises(PinFileError, match=r"cdk\.json") as raised:
        locate_pin(path)
    assert expected in str(raised.value)


def test_a_file_changed_since_it_was_read_is_not_overwritten(cdk_json: Path) -> None:
    slot = locate_pin(cdk_json)
    cdk_json.write_text(cdk_json.read_text().replace(f'"{LISTENER.version}"', '"9.9.9"'))
    edited = cdk_json.read_text()
    with pytest.raises(PinFileError, match="changed while emr-lineage was running"):
        write_pin(slot, DIGEST)
    assert cdk_json.read_text() == edited
    assert [p.name for p in cdk_json.parent.iterdir()] == ["cdk.json"]


def test_a_directory_that_takes_no_new_file_is_one_clear_error(cdk_json: Path, monkeypatch) -> None:
    # The directory's permissions cannot stop root (the CI user), so the refusal is injected.
    def refused(*args, **kwargs):
        raise PermissionError(13, "Permission denied")

    slot = locate_pin(cdk_json)
    monkeypatch.setattr("emr_lineage.settings.pin.tempfile.mkstemp", refused)
    with pytest.raises(PinFileError, match="cdk.json: cannot write next to it: Permission denied"):
        write_pin(slot, DIGEST)
    assert locate_pin(cdk_json).current is None


def test_the_key_name_in_messages() -> None:
    assert PIN_KEY == "context.emr-lineage.versions.openlineage_spark.sha256"
