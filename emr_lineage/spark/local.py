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
import shutil
import signal
import subprocess
import sys
import tempfile
from collections.abc import Iterator, Mapping, Sequence
from importlib.util import find_spec
from pathlib import Path
from typing import IO

from emr_lineage.errors import EmrLineageError

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
            f"Java not found ({where}): install a Java 17 runtime (Debian: openjdk-17-jre-headless; make setup does)"
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


def submit_environment(base: Mapping[str, str] | None = None) -> dict[str, str]:
    """The run's environment: this Python drives the script, pyspark's directory is SPARK_HOME."""
    env = dict(os.environ if base is None else base)
    env["SPARK_HOME"] = str(spark_home())
    env["PYSPARK_PYTHON"] = env["PYSPARK_DRIVER_PYTHON"] = sys.executable
    return env


def run_script(
    script: str | Path,
    args: Sequence[str],
    properties: Mapping[str, str],
    *,
    stdout: IO[bytes] | int | None = None,
    stderr: IO[bytes] | int | None = None,
) -> int:
    """Run ``script`` with ``args`` on local Spark with ``properties`` (over :data:`LOCAL_SPARK`); return its
    exit status. Ctrl-C or SIGTERM (KeyboardInterrupt here) stops the whole run, then is raised again."""
    script = Path(script)
    if not script.is_file():
        raise LocalSparkError(f"{script}: no such script; give the path of a PySpark .py file")
    java_command()
    with properties_file({**LOCAL_SPARK, **properties}) as path:
        process = subprocess.Popen(
            submit_command(script.resolve(), args, path),
            env=submit_environment(),
            stdout=stdout,
            stderr=stderr,
            start_new_session=True,  # one process group: Spark's JVM and the script's Python stop together
        )
        try:
            return process.wait()
        except KeyboardInterrupt:
            stop(process)
            raise
        finally:
            if process.poll() is None:
                stop(process)


def stop(process: subprocess.Popen, seconds: float = STOP_SECONDS) -> None:
    """SIGTERM to the run's process group (Spark stops its application, the listener sends what it
    has), SIGKILL after ``seconds``."""
    with contextlib.suppress(ProcessLookupError):
        os.killpg(process.pid, signal.SIGTERM)
    try:
        process.wait(seconds)
    except subprocess.TimeoutExpired:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(process.pid, signal.SIGKILL)
        process.wait()
