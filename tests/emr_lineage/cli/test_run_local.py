"""`emr-lineage run-local`: what cannot run is one line and exit 2. A real run (the script's exit status,
arguments and --conf; its lineage through the gateway) is in tests/emr_lineage/gateway/test_local.py."""

from __future__ import annotations

from pathlib import Path

import pytest
from click.testing import CliRunner

from emr_lineage.cli.app import main
from emr_lineage.listener.maven import LISTENER_DIR_ENV_VAR, LocalJars
from emr_lineage.spark import iceberg
from emr_lineage.spark.conf import DRIVER_CLASSPATH
from tests.helpers import one_error_line
from tests.paths import CDK_JSON

SCRIPT = "print('never run')\n"
JARS = LocalJars(Path("listener.jar"), Path("iceberg.jar"))


@pytest.fixture
def script(tmp_path: Path) -> Path:
    path = tmp_path / "job.py"
    path.write_text(SCRIPT)
    return path


def _run(*args: str, env: dict[str, str] | None = None):
    return CliRunner().invoke(main, ["run-local", "--cdk-json", str(CDK_JSON), *args], env=env)


def test_a_missing_script_is_one_line_and_exit_2(tmp_path) -> None:
    one_error_line(_run("--output", str(tmp_path / "e.jsonl"), str(tmp_path / "no.py")), "no.py: no such script")


def test_a_destination_is_required(script) -> None:
    one_error_line(_run(str(script)), "give --url URL, -o/--output FILE or both")


def test_a_listener_jar_not_fetched_is_one_line_and_exit_2(script, tmp_path) -> None:
    result = _run("--output", str(tmp_path / "e.jsonl"), str(script), env={LISTENER_DIR_ENV_VAR: str(tmp_path)})
    one_error_line(result, "not fetched yet: run `make setup` or `emr-lineage listener fetch`")


def test_a_conf_that_is_not_key_value_is_one_line_and_exit_2(script, tmp_path) -> None:
    one_error_line(_run("--output", str(tmp_path / "e"), "--conf", "spark.master", str(script)), "expected KEY=VALUE")


def test_options_after_the_script_without_a_double_dash_are_refused(script, tmp_path) -> None:
    one_error_line(_run("--output", str(tmp_path / "e"), str(script), "--lake", "x"), "No such option")


def _refused_output_unchanged(result, path: Path, before: bytes, fragment: str) -> str:
    line = one_error_line(result, fragment, stdout_empty=True)
    assert path.read_bytes() == before  # byte-identical: the listener never ran
    return line


def test_an_output_that_is_the_script_is_refused_and_the_script_unchanged(script) -> None:
    result = _run("-o", str(script), str(script))
    line = _refused_output_unchanged(result, script, SCRIPT.encode(), f"--output {script}")
    assert "is the script" in line and "write the events elsewhere" in line


def test_an_output_that_is_an_argument_of_the_script_is_refused(script, tmp_path) -> None:
    data = tmp_path / "orders.csv"
    data.write_bytes(b"id,amount\n1,2.5\n")
    result = _run("-o", str(data), str(script), "--", "--input", str(data))
    _refused_output_unchanged(result, data, b"id,amount\n1,2.5\n", "is the script's argument")


def test_an_output_that_is_not_an_events_file_is_refused(script, tmp_path) -> None:
    """The job's input (read by the script, not named on the command line): the listener would append to it."""
    data = tmp_path / "orders.csv"
    data.write_bytes(b"id,amount\n1,2.5\n")
    line = _refused_output_unchanged(_run("-o", str(data), str(script)), data, b"id,amount\n1,2.5\n", "not an events")
    assert "would be appended" in line and "give a new file" in line


def test_an_output_that_is_an_events_file_is_appended_to(script, tmp_path, monkeypatch) -> None:
    events = tmp_path / "events.jsonl"
    events.write_text('{"eventType": "START"}\n')
    ran = []
    monkeypatch.setattr("emr_lineage.cli.run_local.run_script", lambda *args, **kwargs: ran.append(args) or 0)
    monkeypatch.setattr("emr_lineage.cli.run_local.local_jars", lambda versions: JARS)
    _run("-o", str(events), str(script))
    assert ran  # not refused (what the listener writes is checked by the real runs)


def test_an_output_in_a_missing_directory_is_refused_not_created(script, tmp_path) -> None:
    missing = tmp_path / "missing" / "dir"
    line = one_error_line(_run("-o", str(missing / "ev.jsonl"), str(script)), f"directory {missing} does not exist")
    assert f"mkdir -p {missing}" in line
    assert not (tmp_path / "missing").exists()


@pytest.fixture
def fake_spark(monkeypatch):
    """run_script replaced: records the Spark properties of each run; ``write`` lines go to the events file."""

    class Spark:
        runs: list[dict[str, str]] = []
        write: list[str] = []
        status = 0

        def __call__(self, script, args, properties, **kwargs) -> int:
            self.runs.append(dict(properties))
            for key in ("spark.openlineage.transport.location", "spark.openlineage.transport.transports.file.location"):
                if key in properties and self.write:
                    with open(properties[key], "a") as handle:
                        handle.writelines(self.write)
            return self.status

    fake = Spark()
    monkeypatch.setattr("emr_lineage.cli.run_local.run_script", fake)
    monkeypatch.setattr("emr_lineage.cli.run_local.local_jars", lambda versions: JARS)
    return fake


@pytest.mark.parametrize("url", ["notaurl", "ftp://host/x", "http://", "http://host:5080/api/v1?x=1"])
def test_a_url_that_is_not_an_http_base_url_is_refused_before_spark(url, script, tmp_path, fake_spark) -> None:
    line = one_error_line(_run("--url", url, "-o", str(tmp_path / "e.jsonl"), str(script)), f"--url {url!r}")
    assert "http" in line
    assert fake_spark.runs == []


@pytest.mark.parametrize(
    "url, base, endpoint",
    [
        ("http://host:5080/api/v1", "http://host:5080", "/api/v1/lineage"),
        ("http://host:5080/api/v1/lineage", "http://host:5080", "/api/v1/lineage"),
        ("http://host:5080/", "http://host:5080", "/api/v1/lineage"),
        ("https://proxy.example/lineage-gateway", "https://proxy.example", "/lineage-gateway/api/v1/lineage"),
    ],
)
def test_a_url_with_a_path_reaches_the_listener_as_url_and_endpoint(url, base, endpoint, script, fake_spark) -> None:
    """The listener refuses a transport URL with a path beside an endpoint ("You can't pass both uri and
    endpoint parameters") and then sends nothing, not even to the file."""
    result = _run("--url", url, str(script))
    assert result.exit_code == 0, result.output
    (properties,) = fake_spark.runs
    assert properties["spark.openlineage.transport.url"] == base
    assert properties["spark.openlineage.transport.endpoint"] == endpoint


def test_no_events_from_a_script_that_succeeded_is_exit_1(script, tmp_path, fake_spark) -> None:
    events = tmp_path / "e.jsonl"
    result = _run("-o", str(events), str(script))
    assert result.exit_code == 1, result.output
    (line,) = result.stderr.splitlines()
    assert line.startswith("error: ") and f"the listener wrote no events to {events}" in line
    assert "Spark's output" in line


def test_events_written_is_the_scripts_exit_status(script, tmp_path, fake_spark) -> None:
    events = tmp_path / "e.jsonl"
    fake_spark.write = ['{"eventType": "START"}\n']
    fake_spark.status = 3
    assert _run("-o", str(events), str(script)).exit_code == 3
    fake_spark.status = 0
    result = _run("-o", str(events), str(script))
    assert result.exit_code == 0 and result.stderr == ""


@pytest.mark.parametrize(
    "script_args, warehouse",
    [(["--lake", "/data/lake"], "/data/lake"), (["--x", "1", "--lake=/data/lake"], "/data/lake"), ([], None)],
    ids=["lake", "lake=", "no-lake"],
)
def test_the_iceberg_runtime_sits_beside_the_listener_and_the_lake_is_the_catalog_s_warehouse(
    script_args, warehouse, script, tmp_path, fake_spark, monkeypatch
) -> None:
    monkeypatch.chdir(tmp_path)
    fake_spark.write = ['{"eventType": "START"}\n']
    result = _run("-o", str(tmp_path / "e.jsonl"), str(script), "--", *script_args)
    assert result.exit_code == 0, result.output
    (properties,) = fake_spark.runs
    assert properties[DRIVER_CLASSPATH] == "listener.jar:iceberg.jar"  # the listener sees Iceberg's classes
    assert properties[iceberg.SQL_EXTENSIONS] == iceberg.EXTENSIONS
    assert properties[f"{iceberg.CATALOG_PROPERTY}.type"] == "hadoop"
    assert properties[f"{iceberg.CATALOG_PROPERTY}.warehouse"] == (warehouse or str(tmp_path))
