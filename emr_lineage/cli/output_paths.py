"""Output files of the commands: never over an input, never in a directory that is not there, one
error line when they cannot be written; a rendering written to stdout or a file (:func:`emit_output`)."""

from __future__ import annotations

import json
import os
import threading
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
    inputs = [("events file", path) for path in events if path != STDIN] + (
        [("contract file", contract)] if contract else []
    )
    refuse_output_over(option, output, inputs, "the output")


def refuse_output_over(option: str, output: str, inputs: Sequence[tuple[str, str]], what: str) -> None:
    """The one check of every output path against what the command reads: fail if ``output`` is one of
    ``inputs`` (``(kind, path)``: paths compared resolved, and by identity when both exist: hard links),
    inside an events directory (kind ``events file``) or in a directory that is not there. ``what`` the
    command writes names the fix (write it elsewhere)."""
    if not output:
        fail(f"{option} '': empty path (give a file)")
    target = Path(output).resolve()
    for kind, path in inputs:
        source = Path(path).resolve()
        if target == source or same_file(target, source):
            fail(f"{option} {output}: is the {kind} {path}; write {what} elsewhere")
        if kind == "events file" and source.is_dir() and target.is_relative_to(source):
            fail(
                f"{option} {output}: is inside the events directory {path} (it would be read as events or "
                f"overwrite one); write {what} elsewhere"
            )
    refuse_missing_directory(option, output)


def refuse_missing_directory(option: str, output: str) -> None:
    """Never created: a typo in the path must not leave directories behind."""
    directory = Path(output).parent
    if not directory.exists():
        fail(f"{option} {output}: directory {directory} does not exist; create it first (mkdir -p {directory})")
    if not directory.is_dir():
        fail(f"{option} {output}: {directory} is not a directory; give a path in a directory")


# The longest first line read to tell an events file (an event with much column lineage is a few MB).
_FIRST_LINE_BYTES = 64 * 1024 * 1024


def refuse_appending_to_other_files(option: str, output: str, what: str) -> None:
    """For an output ``what`` is appended to (run-local's events): it is new, empty or an events file (its
    first line a JSON object); anything else there (a script, a job's CSV, a report) is refused unchanged."""
    path = Path(output)
    if path.is_dir():
        fail(f"{option} {output}: is a directory; give a file for {what}")
    if not path.is_file():
        return
    try:
        with path.open("rb") as handle:
            first = b""
            while not first.strip():
                first = handle.readline(_FIRST_LINE_BYTES)
                if not first:
                    return  # empty, or blank lines only
    except OSError as exc:
        fail(f"{option} {output}: cannot read: {exc.strerror or exc}")
    try:
        is_events = isinstance(json.loads(first), dict)
    except ValueError:
        is_events = False
    if not is_events:
        fail(
            f"{option} {output}: not an events file (its first line is not a JSON event), and {what} would be "
            "appended to it; give a new file or an events file"
        )


def write_output(option: str, path: str, write: Callable[[Path], None]) -> None:
    """Write one output file; a path that cannot be written is one error line, exit 2."""
    target = Path(path)
    try:
        write(target)
    except OSError as exc:
        fail(f"{option} {path}: cannot write: {exc.strerror or exc}")
    click.echo(f"wrote {path}", err=True)


def emit_output(text: str | bytes, output: str | None, meanwhile: Callable[[], None] = lambda: None) -> None:
    """Write the rendering (UTF-8 bytes are written as they are: a large graph's JSON is not copied).
    ``meanwhile`` runs while a file is written (see :func:`_write_while`)."""
    data = text if isinstance(text, bytes) else text.encode("utf-8")
    if output:
        write_output("--output", output, lambda path: _write_while(path, data, meanwhile))
    else:
        meanwhile()
        click.echo(data, nl=not data.endswith(b"\n"))


def _write_while(path: Path, data: bytes, meanwhile: Callable[[], None]) -> None:
    """Write ``data`` to ``path`` in a thread while ``meanwhile`` runs here: the write lets go of the
    GIL, so a large graph's memory is given back at the same time (for 200k events, about 0.03 s of
    the 0.06 s write). Whatever stops the write is raised here, where the command's handlers are.
    A daemon thread: interrupted while it waits on a file that takes no bytes (a FIFO nobody reads,
    a stalled mount), the command still ends."""
    failed: list[BaseException] = []

    def write() -> None:
        try:
            path.write_bytes(data)
        except BaseException as exc:
            failed.append(exc)

    writer = threading.Thread(target=write, name="emr-lineage-output", daemon=True)
    writer.start()
    try:
        meanwhile()
    finally:
        writer.join()
    if failed:
        raise failed[0]
