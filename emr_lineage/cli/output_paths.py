"""Output files of the commands: never over an input, never in a directory that is not there, one
error line when they cannot be written."""

from __future__ import annotations

import os
from collections.abc import Callable, Sequence
from pathlib import Path

import click

from emr_lineage.cli.output import fail
from emr_lineage.lineage.events.sources import STDIN


def same_file(first: Path, second: Path) -> bool:
    try:
        return os.path.samefile(first, second)
    except OSError:
        return False


def refuse_overwriting_inputs(option: str, output: str, events: Sequence[str], contract: str | None = None) -> None:
    """Fail if ``output`` is an events file, inside an events directory, the contract (paths compared
    resolved, and by identity when both exist: hard links) or in a directory that is not there."""
    if not output:
        fail(f"{option} '': empty path (give a file)")
    target = Path(output).resolve()
    inputs = [("events", Path(path)) for path in events if path != STDIN] + (
        [("contract", Path(contract))] if contract else []
    )
    for kind, path in inputs:
        source = path.resolve()
        if target == source or same_file(target, source):
            fail(f"{option} {output}: is the {kind} file {path}; write the output elsewhere")
        if kind == "events" and source.is_dir() and target.is_relative_to(source):
            fail(
                f"{option} {output}: is inside the events directory {path} (it would be read as events or "
                "overwrite one); write the output elsewhere"
            )
    refuse_missing_directory(option, output)


def refuse_missing_directory(option: str, output: str) -> None:
    """Never created: a typo in the path must not leave directories behind."""
    directory = Path(output).parent
    if not directory.exists():
        fail(f"{option} {output}: directory {directory} does not exist; create it first (mkdir -p {directory})")
    if not directory.is_dir():
        fail(f"{option} {output}: {directory} is not a directory; give a path in a directory")


def write_output(option: str, path: str, write: Callable[[Path], None]) -> None:
    """Write one output file; a path that cannot be written is one error line, exit 2."""
    target = Path(path)
    try:
        write(target)
    except OSError as exc:
        fail(f"{option} {path}: cannot write: {exc.strerror or exc}")
    click.echo(f"wrote {path}", err=True)
