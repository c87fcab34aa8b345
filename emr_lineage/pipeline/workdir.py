"""The demo's output directory: claimed with a marker, locked while in use, never someone else's data.

``--out-dir DIR`` may be new, empty, or a directory an earlier demo made (it holds the marker file,
which lists what the demo created there). A non-empty directory without the marker is refused
unless ``force``; even then, only entries the marker lists are ever deleted, and an entry of the
user's that has a name the demo needs is refused. Two demos on one directory cannot interfere:
the second one finds the lock taken.
"""

from __future__ import annotations

import json
import shutil
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path

from filelock import FileLock, Timeout

from emr_lineage.errors import EmrLineageError

MARKER = ".emr-lineage-demo.json"
LOCK = ".emr-lineage-demo.lock"


class OutputDirError(EmrLineageError):
    """The output directory cannot be used (exit 2, nothing touched)."""


def remove_paths(root: Path, names: Sequence[str]) -> None:
    """Delete ``root/name`` for each name, file or directory, if it exists (links are refused)."""
    for name in names:
        target = root / name
        if target.is_symlink():
            raise OutputDirError(f"{target} is a symbolic link; the demo never deletes through links")
        if target.is_dir():
            shutil.rmtree(target)
        elif target.exists():
            target.unlink()


def _recorded(out: Path) -> set[str] | None:
    """The entries an earlier demo recorded as its own, or None when ``out`` has no marker."""
    marker = out / MARKER
    if not marker.is_file():
        return None
    try:
        entries = json.loads(marker.read_text(encoding="utf-8")).get("created", [])
    except (ValueError, AttributeError, OSError):
        raise OutputDirError(f"{marker}: unreadable demo marker; remove it or choose another --out-dir") from None
    return {e for e in entries if isinstance(e, str) and "/" not in e and e not in ("", ".", "..")}


def _check(out: Path, entries: Sequence[str], force: bool) -> set[str]:
    """Refuse an ``out`` the demo must not write to (reads only); return the entries it may replace."""
    try:
        present = {p.name for p in out.iterdir()} - {MARKER, LOCK}
    except OSError as exc:
        raise OutputDirError(f"--out-dir {out}: cannot read it ({exc.strerror or exc})") from None
    recorded = _recorded(out)
    if present and recorded is None and not force:
        raise OutputDirError(
            f"--out-dir {out} is not empty and was not made by emr-lineage demo; choose a new or empty directory, "
            "or pass --force to add the demo's files beside yours (yours are never deleted)"
        )
    foreign = sorted((present & set(entries)) - (recorded or set()))
    if foreign:
        raise OutputDirError(
            f"--out-dir {out} already holds {', '.join(foreign)}, which the demo did not create; "
            "move them or choose another --out-dir (the demo never deletes what it did not create)"
        )
    for name in sorted(present & set(entries)):
        if (out / name).is_symlink():
            raise OutputDirError(f"{out / name} is a symbolic link; the demo never deletes through links")
    return present & set(entries)


@contextmanager
def claimed_output_dir(
    out: str | Path, entries: Sequence[str], *, force: bool = False, clear: bool = True
) -> Iterator[Path]:
    """Claim ``out`` for the demo's ``entries`` and hold its lock while the body runs; ``clear``: delete what
    an earlier demo left there first (a resumed demo keeps it)."""
    if not str(out).strip():
        raise OutputDirError("--out-dir is empty; name a directory for the demo's output, e.g. --out-dir demo-out")
    out = Path(out).expanduser().resolve()
    if out.exists() and not out.is_dir():
        raise OutputDirError(f"--out-dir {out} exists and is not a directory")
    if out.is_dir():
        _check(out, entries, force)  # refuse before writing anything, even the lock file
    try:
        out.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise OutputDirError(f"--out-dir {out}: cannot create it ({exc.strerror or exc})") from None
    lock = FileLock(out / LOCK, timeout=0)
    try:
        lock.acquire()
    except Timeout:
        raise OutputDirError(
            f"--out-dir {out}: another emr-lineage demo is using it; wait for it or choose another"
        ) from None
    except OSError as exc:
        raise OutputDirError(f"--out-dir {out}: not writable ({exc.strerror or exc})") from None
    try:
        replaced = _check(out, entries, force)
        if clear:
            remove_paths(out, sorted(replaced))
        try:
            (out / MARKER).write_text(json.dumps({"created": sorted(set(entries))}) + "\n", encoding="utf-8")
        except OSError as exc:
            raise OutputDirError(f"--out-dir {out}: not writable ({exc.strerror or exc})") from None
        yield out
    finally:
        lock.release()
