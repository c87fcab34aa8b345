"""Local spark-submit runs: the properties file, the command, the environment, and what cannot run."""

from __future__ import annotations

import os
import stat
import subprocess
from pathlib import Path

import pytest

from emr_lineage.spark.local import LocalSparkError, java_command, properties_file, run_script, submit_command


def _read_back(path: Path) -> dict[str, str]:
    """The file as java.util.Properties reads it (the JVM itself, so the escaping is checked for real)."""
    source = (
        "import java.io.*; import java.util.*; public class P { public static void main(String[] a) throws Exception {"
        ' Properties p = new Properties(); p.load(new InputStreamReader(new FileInputStream(a[0]), "UTF-8"));'
        ' for (String k : new TreeSet<>(p.stringPropertyNames())) System.out.print(k + "\\u0000" + p.getProperty(k)'
        ' + "\\u0001"); } }'
    )
    java_file = path.parent / "P.java"
    java_file.write_text(source)
    done = subprocess.run(["java", str(java_file), str(path)], capture_output=True, text=True, check=True)
    return dict(item.split("\0", 1) for item in done.stdout.split("\1") if item)


@pytest.mark.spark
def test_the_properties_file_is_private_and_java_reads_back_every_value(tmp_path: Path) -> None:
    properties = {
        "spark.plain": "local[2]",
        "spark.spaces": "  leading and trailing  ",
        "spark.symbols": "a=b:c#d!e\\f",
        "spark.lines": "one\ntwo\tthree",
        "spark.unicode": "événement ✓",
        "spark.jars": "/tmp/with space/listener.jar",
        "# not a comment=": "#!value",
    }
    with properties_file(properties) as path:
        assert stat.S_IMODE(path.stat().st_mode) == 0o600
        assert stat.S_IMODE(path.parent.stat().st_mode) == 0o700
        copy = tmp_path / "copy.properties"
        copy.write_bytes(path.read_bytes())
    assert not path.exists()
    assert _read_back(copy) == properties


def test_the_command_is_pyspark_s_own_spark_submit_with_the_file() -> None:
    command = submit_command(Path("/jobs/x.py"), ["--lake", "/l"], Path("/tmp/p.properties"))
    assert command[0].endswith("pyspark/bin/spark-submit") and os.access(command[0], os.X_OK)
    assert command[1:] == ["--properties-file", "/tmp/p.properties", "/jobs/x.py", "--lake", "/l"]


def test_a_missing_script_and_a_missing_java_are_errors_before_anything_runs(tmp_path, monkeypatch) -> None:
    with pytest.raises(LocalSparkError, match=r"no\.py: no such script"):
        run_script(tmp_path / "no.py", [], {})
    monkeypatch.setenv("JAVA_HOME", str(tmp_path))
    with pytest.raises(LocalSparkError, match=rf"Java not found \(JAVA_HOME={tmp_path} has no bin/java\)"):
        java_command()
    monkeypatch.delenv("JAVA_HOME")
    monkeypatch.setenv("PATH", str(tmp_path))
    with pytest.raises(LocalSparkError, match=r"Java not found \(no java on PATH\)"):
        java_command()
