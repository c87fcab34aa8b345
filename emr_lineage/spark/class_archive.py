"""A class data sharing archive for local Spark: the classes a Spark driver loads, mapped from one file
instead of read from pyspark's ~250 jars at every start.

JDK 17's dynamic AppCDS (https://docs.oracle.com/en/java/javase/17/vm/class-data-sharing.html): a JVM
started with ``-XX:ArchiveClassesAtExit=FILE`` writes the classes it loaded; one started with
``-XX:SharedArchiveFile=FILE`` maps them. Measured here (a small application with the listener, 2
cores): 5.5 s -> 3.4 s wall, 7.1 s -> 4.3 s of CPU per run; every job of the demo starts a JVM.

A JVM accepts an archive only for the classpath it was made with, each jar with the size and
modification time it had then: a jar fetched again (the listener, after its cache was cleared) or a
reinstalled pyspark, and the JVM silently refuses the archive. So there is one archive per (``java``,
Spark, driver classpath, and the size and modification time of each of their jars), named by their
hash; a run whose classpath has none runs as before. :func:`emr_lineage.spark.local.prepare_class_archive`
makes one (``emr-lineage listener fetch`` does, for the listener's classpath, so ``make setup`` does).
The JVM's own messages about the archive are turned off: an archive it cannot use is not the user's
problem.

An archive is 150-200 MB and no run can use one again once a file it was made from has changed or gone (a
deleted virtualenv, a jar fetched again), so each archive has a record of what it was made for beside it
(``NAME.json``), and preparing one removes the archives whose files changed, those without a record, and
what a killed run left (:func:`prune`).
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import re
import shutil
import time
from collections.abc import Mapping
from pathlib import Path

from emr_lineage.spark.conf import DRIVER_CLASSPATH

ARCHIVE_DIR_ENV_VAR = "EMR_LINEAGE_SPARK_ARCHIVE_DIR"
JVM_OPTIONS_ENV_VAR = "SPARK_SUBMIT_OPTS"  # spark-submit passes these to the driver's JVM
_QUIET = "-Xlog:cds=off -Xlog:cds+dynamic=off"
# An archive's file name and its record's: a hash and the suffix (prune touches no other file).
_NAME = re.compile(r"[0-9a-f]{20}\.(?:jsa|json)")
# Where an archive (or a record) is written, beside the others, until it is whole; a making folder older than
# this was left by a process that was killed (making one takes about 20 s).
MAKING_PREFIX = ".making-"
_MAKING_ABANDONED_SECONDS = 3600


def archive_dir() -> Path:
    """Where the archives are: $EMR_LINEAGE_SPARK_ARCHIVE_DIR, else the user cache."""
    if os.environ.get(ARCHIVE_DIR_ENV_VAR):
        return Path(os.environ[ARCHIVE_DIR_ENV_VAR])
    from platformdirs import user_cache_dir

    return Path(user_cache_dir("emr-lineage")) / "spark-class-archive"


def archive_path(java: str, spark_home: Path, properties: Mapping[str, str]) -> Path:
    """The archive of a run with ``properties``: one per java binary, Spark and driver classpath, as their
    files are now (the jars' sizes and modification times, which the JVM checks before it maps one)."""
    return archive_dir() / _name(os.path.realpath(java), spark_home, properties.get(DRIVER_CLASSPATH, ""))


def _name(binary: str, spark_home: Path, classpath: str) -> str:
    jars = [entry for entry in classpath.split(os.pathsep) if entry] + sorted(map(str, spark_home.glob("jars/*.jar")))
    key = [binary, os.stat(binary).st_mtime_ns, str(spark_home), classpath, [[jar, _identity(jar)] for jar in jars]]
    return f"{hashlib.sha256(json.dumps(key).encode()).hexdigest()[:20]}.jsa"


def record(archive: Path, java: str, spark_home: Path, properties: Mapping[str, str]) -> None:
    """Write what ``archive`` is made for beside it (whole or not at all), before anything else is done with it:
    :func:`prune` removes an archive without one. A cache folder it cannot write to gets none."""
    made_for = {
        "java": os.path.realpath(java),
        "spark_home": str(spark_home),
        "classpath": properties.get(DRIVER_CLASSPATH, ""),
    }
    path = _record_path(archive)
    written = path.with_name(f"{MAKING_PREFIX}{os.getpid()}-{path.name}")
    try:
        written.write_text(json.dumps(made_for), encoding="utf-8")
        written.replace(path)
    except OSError:
        with contextlib.suppress(OSError):
            written.unlink(missing_ok=True)


def prune(keep: Path) -> list[Path]:
    """Remove, beside ``keep``, the archives no run can use any more (a file they were made from has changed or
    is gone: their name is not the one a run would look for now) or that have no record, the records of
    such archives, and what a killed process left while making one; return the archives removed. Only
    files named as this module names them are touched, and one that cannot be removed stays."""
    removed = []
    for path in sorted(keep.parent.iterdir()):
        if path.name.startswith(MAKING_PREFIX) and _older_than(path, _MAKING_ABANDONED_SECONDS):
            _remove(path)
        elif not _NAME.fullmatch(path.name) or path.is_symlink() or not path.is_file():
            continue
        elif path.suffix == ".jsa" and path != keep and not _usable(path):
            _remove(path)
            _remove(_record_path(path))
            removed.append(path)
        elif path.suffix == ".json" and not path.with_suffix(".jsa").exists() and not _usable(path):
            _remove(path)  # the record of an archive gone, or never made, for files that have changed since
    return removed


def _usable(path: Path) -> bool:
    """Whether the record of archive ``path`` (or the record ``path``) names it: its files are as they were."""
    try:
        made_for = json.loads(_record_path(path).read_text(encoding="utf-8"))
        java, home, classpath = (made_for[key] for key in ("java", "spark_home", "classpath"))
        if not all(isinstance(value, str) for value in (java, home, classpath)):
            return False
        return _name(java, Path(home), classpath) == path.with_suffix(".jsa").name
    except (OSError, ValueError, LookupError, TypeError, RecursionError):  # none, not one of ours, java gone
        return False


def _older_than(path: Path, seconds: float) -> bool:
    try:
        return time.time() - path.lstat().st_mtime > seconds
    except OSError:
        return False


def _remove(path: Path) -> None:
    with contextlib.suppress(OSError):
        if path.is_dir() and not path.is_symlink():
            shutil.rmtree(path)
        else:
            path.unlink(missing_ok=True)


def _record_path(archive: Path) -> Path:
    return archive.with_suffix(".json")


def _identity(path: str) -> tuple[int, int] | None:
    """A file's size and modification time (None when it is not there)."""
    try:
        stat = os.stat(path)
    except OSError:
        return None
    return stat.st_size, stat.st_mtime_ns


def with_jvm_options(env: Mapping[str, str], options: str) -> dict[str, str]:
    """``env`` with ``options`` after the driver JVM options it already has."""
    return {**env, JVM_OPTIONS_ENV_VAR: f"{env.get(JVM_OPTIONS_ENV_VAR, '')} {options}".strip()}


def using(archive: Path) -> str:
    return f"-XX:SharedArchiveFile={archive} {_QUIET}"


def making(archive: Path) -> str:
    return f"-XX:ArchiveClassesAtExit={archive} {_QUIET}"
