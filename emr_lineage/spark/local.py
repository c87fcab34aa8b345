"""Run a PySpark script on local Spark the way EMR runs a step: ``spark-submit`` with Spark properties.

The script runs in its own ``spark-submit`` process (pyspark's own launcher, with this Python as the
driver's Python), so it is a Spark application of its own with the real OpenLineage listener on its
classpath, exactly as on EMR; only the destination of the lineage differs (see
:func:`emr_lineage.spark.conf.local_listener_properties`). Properties reach Spark through a
``--properties-file`` readable only by this user (an API key never shows in a process list).
"""

from __future__ import annotations

import contextlib
import os
import re
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Iterator, Mapping, Sequence
from importlib.util import find_spec
from pathlib import Path
from typing import IO

from emr_lineage.errors import EmrLineageError, one_line
from emr_lineage.processes import stop_group
from emr_lineage.spark import class_archive as class_archives
from emr_lineage.spark import iceberg

# Spark properties of every local run (a run's own properties win): two cores, no web UI, no progress bars.
LOCAL_SPARK = {
    "spark.master": "local[2]",
    "spark.ui.enabled": "false",
    "spark.ui.showConsoleProgress": "false",
}
# After Ctrl-C or SIGTERM: how long Spark may take to stop (and the listener to send its last events).
STOP_SECONDS = 30.0


class LocalSparkError(EmrLineageError):
    """Local Spark cannot run the script (no such script, no pyspark, no Java)."""


def spark_home() -> Path:
    """The pyspark package's directory: a Spark distribution with ``bin/spark-submit``."""
    spec = find_spec("pyspark")
    if spec is None or spec.origin is None:
        raise LocalSparkError("pyspark is not installed: pip install 'emr-lineage[spark]' (make setup does)")
    return Path(spec.origin).parent


def java_command() -> str:
    """The ``java`` Spark will run ($JAVA_HOME/bin/java, else the one on PATH)."""
    home = os.environ.get("JAVA_HOME")
    java = str(Path(home) / "bin" / "java") if home else shutil.which("java")
    if not java or not os.access(java, os.X_OK):
        where = f"JAVA_HOME={home} has no bin/java" if home else "no java on PATH"
        raise LocalSparkError(
            f"Java not found ({where}): install a Java 17 runtime, Spark 3.5's "
            "(Debian 12: default-jre-headless; make setup does)"
        )
    return java


def _escape(text: str, *, key: bool = False) -> str:
    """``text`` as java.util.Properties reads it back (backslash escapes; Spark reads the file as UTF-8)."""
    out = text.replace("\\", "\\\\").replace("\n", "\\n").replace("\r", "\\r").replace("\t", "\\t")
    if key:
        for char in "=: #!":
            out = out.replace(char, "\\" + char)
    elif out.startswith((" ", "#", "!")):
        out = "\\" + out
    return out


@contextlib.contextmanager
def properties_file(properties: Mapping[str, str]) -> Iterator[Path]:
    """A temporary Java properties file holding ``properties`` (mode 0600 in a 0700 directory)."""
    with tempfile.TemporaryDirectory(prefix="emr-lineage-spark-") as directory:
        path = Path(directory) / "spark.properties"
        lines = [f"{_escape(k, key=True)}={_escape(str(v))}\n" for k, v in sorted(properties.items())]
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        with os.fdopen(fd, "w", encoding="utf-8") as handle:
            handle.writelines(lines)
        yield path


def submit_command(script: Path, args: Sequence[str], properties_path: Path) -> list[str]:
    """The ``spark-submit`` command line of one run."""
    return [str(spark_home() / "bin" / "spark-submit"), "--properties-file", str(properties_path), str(script), *args]


def submit_environment(properties: Mapping[str, str], *, class_archive: bool = True) -> dict[str, str]:
    """The run's environment: this Python drives the script, pyspark's directory is SPARK_HOME, and the
    driver maps the class archive of its classpath when there is one (:mod:`emr_lineage.spark.class_archive`)."""
    env = dict(os.environ)
    env["SPARK_HOME"] = str(spark_home())
    env["PYSPARK_PYTHON"] = env["PYSPARK_DRIVER_PYTHON"] = sys.executable
    archive = class_archives.archive_path(java_command(), spark_home(), properties)
    if class_archive and archive.is_file():
        env = class_archives.with_jvm_options(env, class_archives.using(archive))
    return env


def run_script(
    script: str | Path,
    args: Sequence[str],
    properties: Mapping[str, str],
    *,
    stdout: IO[bytes] | int | None = None,
    stderr: IO[bytes] | int | None = None,
    class_archive: bool = True,
    env: Mapping[str, str] | None = None,
) -> int:
    """Run ``script`` with ``args`` on local Spark with ``properties`` (over :data:`LOCAL_SPARK`); return its
    exit status. Ctrl-C or SIGTERM (KeyboardInterrupt here) stops the whole run, then is raised again.
    ``class_archive=False``: without the class archive (a benchmark's equal footing); ``env``: the
    environment to run in (default: :func:`submit_environment`)."""
    script = Path(script)
    if not script.is_file():
        raise LocalSparkError(f"{script}: no such script; give the path of a PySpark .py file")
    properties = {**LOCAL_SPARK, **properties}
    env = env if env is not None else submit_environment(properties, class_archive=class_archive)
    with properties_file(properties) as path:
        process = subprocess.Popen(
            submit_command(script.resolve(), args, path),
            env=env,
            stdout=stdout,
            stderr=stderr,
            start_new_session=True,  # one process group: Spark's JVM and the script's Python stop together
        )
        try:
            return process.wait()
        finally:  # Ctrl-C or SIGTERM here: Spark stops its application, the listener sends what it has
            if process.poll() is None:
                stop_group(process, STOP_SECONDS)


# A line of Spark's output that names an exception and its message: Java's ``Exception in thread "main"
# x.y.Z: ...``, ``Caused by: x.y.Z: ...`` and ``: x.y.Z: ...`` (py4j's), Python's last traceback line ``x.Error: ...``.
_EXCEPTION_LINE = re.compile(
    r'^(?:Exception in thread "[^"]*" |Caused by: |: )?[A-Za-z_][\w.$]*(?:Exception|Error): (.+)$'
)
_NOT_A_REASON = ("at ", "File ", "...", "Traceback ")


def failure_reason(output: str) -> str:
    """Why a Spark run failed, from its output: the message of the last exception it names (the deepest
    ``Caused by``, or a PySpark error after the JVM's), else its last line that is not a stack frame or a
    log line; one line, at most 300 characters."""
    lines = [line.strip() for line in output.splitlines() if line.strip()]
    reasons = [match.group(1) for line in lines if (match := _EXCEPTION_LINE.match(line))]
    if not reasons:
        reasons = [line for line in lines if not line.startswith(_NOT_A_REASON) and not _LOG_LINE.match(line)]
    return one_line(reasons[-1]) if reasons else "no output"


_LOG_LINE = re.compile(r"^\d\d/\d\d/\d\d \d\d:\d\d:\d\d ")  # log4j's "26/11/28 21:49:36 WARN ..."


# What prepare_class_archive runs once: reads and writes of the kinds the sample jobs do (files, and Iceberg
# tables: sys.argv[2] names one), so that the driver loads (and the archive keeps) the classes they need.
_WARM_UP = """
import sys
from pyspark.sql import SparkSession, functions as F
spark = SparkSession.builder.appName("emr_lineage_class_archive").getOrCreate()
data = spark.range(2000).select("id", (F.col("id") % 7).alias("k"), F.current_date().alias("d"))
data.write.mode("overwrite").option("header", "true").csv(sys.argv[1] + "/csv")
spark.read.option("header", "true").csv(sys.argv[1] + "/csv").groupBy("k").agg(F.sum("id")).write.parquet(
    sys.argv[1] + "/parquet"
)
spark.read.parquet(sys.argv[1] + "/parquet").write.mode("overwrite").saveAsTable(sys.argv[2])
spark.table(sys.argv[2]).createOrReplaceTempView("t")
spark.sql("SELECT k, COUNT(*) FROM t GROUP BY k ORDER BY k").collect()
spark.stop()
"""


def prepare_class_archive(properties: Mapping[str, str]) -> tuple[Path, bool]:
    """Make the class archive of runs with ``properties`` (their driver classpath, with the Iceberg runtime
    on it) unless it exists: (its path, whether it was made now). One small application runs with the
    archive written at its exit (about 20 s here); the file appears whole or not at all. Either way, the
    archives no run can use any more are removed (:func:`emr_lineage.spark.class_archive.prune`)."""
    java, home = java_command(), spark_home()
    archive = class_archives.archive_path(java, home, properties)
    archive.parent.mkdir(parents=True, exist_ok=True)
    class_archives.record(archive, java, home, properties)  # first: a prune elsewhere keeps it from then on
    made = not archive.is_file()
    if made:
        _make_class_archive(archive, properties)
    class_archives.prune(archive)
    return archive, made


def _make_class_archive(archive: Path, properties: Mapping[str, str]) -> None:
    with tempfile.TemporaryDirectory(prefix=class_archives.MAKING_PREFIX, dir=archive.parent) as work:
        script, made = Path(work) / "warm_up.py", Path(work) / archive.name
        script.write_text(_WARM_UP, encoding="utf-8")
        data = Path(work) / "data"
        properties = {**properties, **iceberg.hadoop_catalog_properties(str(data))}
        env = class_archives.with_jvm_options(
            submit_environment(properties, class_archive=False), class_archives.making(made)
        )
        with (Path(work) / "spark.log").open("wb") as log:
            table = iceberg.table_name("warm_up", "t")
            status = run_script(script, [str(data), table], properties, stdout=log, stderr=log, env=env)
        if status != 0 or not made.is_file():
            reason = failure_reason((Path(work) / "spark.log").read_text(errors="replace"))
            raise LocalSparkError(f"could not make the class archive for local Spark: {reason}")
        made.replace(archive)
