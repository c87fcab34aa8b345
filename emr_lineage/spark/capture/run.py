"""Run an unmodified PySpark job file with the local lineage capture on.

    python -m emr_lineage.spark.capture.run [--conf KEY=VALUE ...] jobs/ingest_orders.py -- --lake /tmp/lake

Like ``spark-submit`` for a local run: the job's own ``SparkSession.builder...getOrCreate()``
gets the ``--conf`` defaults and a capture; its ``spark.stop()`` flushes the lineage first.
Lineage goes where ``spark.openlineage.transport.*`` says (see ``transport.py``).
"""

from __future__ import annotations

import argparse
import runpy
import sys
from collections.abc import Mapping, Sequence
from pathlib import Path

from emr_lineage.spark.capture import session
from emr_lineage.spark.capture.listener import LineageCapture


class JobFailed(RuntimeError):
    """The job raised or exited non-zero; the message names the job and the error."""


def run_job(
    path: str | Path, args: Sequence[str], defaults: Mapping[str, str] | None = None, *, capture: bool = True
) -> list[LineageCapture]:
    """Run ``path`` as ``__main__`` with ``args``; return the captures of its applications.

    Applications the job left running are finished (and stopped) here. Raises
    :class:`JobFailed` when the job fails; its lineage is still flushed, with FAIL."""
    path = Path(path)
    if not path.is_file():
        raise JobFailed(f"{path}: job file not found")
    session.install_hooks(defaults, capture=capture)
    saved_argv = sys.argv
    sys.argv = [str(path), *args]
    error: BaseException | None = None
    try:
        runpy.run_path(str(path), run_name="__main__")
    except SystemExit as exc:
        if exc.code not in (0, None):
            error = exc
    except Exception as exc:  # noqa: BLE001 - reported as JobFailed below
        error = exc
    finally:
        sys.argv = saved_argv
        for active in session.active_captures():
            session.finish(active.spark, error)
            active.spark.stop()
        captures = session.finished_captures()
        session.uninstall_hooks()
    if error is not None and session.interrupted():
        raise KeyboardInterrupt from error  # the job failed because it was interrupted, not by itself
    if error is not None:
        detail = f"exit status {error.code}" if isinstance(error, SystemExit) else _describe(error)
        raise JobFailed(f"{path.stem} failed: {detail}") from error
    return captures


def _describe(error: BaseException) -> str:
    text = str(error).strip().splitlines()
    return f"{type(error).__name__}: {text[0] if text else ''}".rstrip(": ")


def _conf_pair(text: str) -> tuple[str, str]:
    key, sep, value = text.partition("=")
    if not sep or not key:
        raise argparse.ArgumentTypeError(f"--conf needs KEY=VALUE, got {text!r}")
    return key, value


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m emr_lineage.spark.capture.run", description=__doc__.splitlines()[0]
    )
    parser.add_argument("--conf", action="append", type=_conf_pair, default=[], metavar="KEY=VALUE")
    parser.add_argument("job", help="the job's .py file")
    parser.add_argument("job_args", nargs=argparse.REMAINDER, help="arguments for the job (after --)")
    args = parser.parse_args(argv)
    job_args = args.job_args[1:] if args.job_args[:1] == ["--"] else args.job_args
    try:
        captures = run_job(args.job, job_args, dict(args.conf))
    except JobFailed as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 1
    for capture in captures:
        print(
            f"{capture.app.job_name}: {capture.counts['events']} lineage events, "
            f"{capture.counts['errors']} capture errors"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
