"""jobs/as_of.py, the helper any job uses to read its inputs as an earlier run read them: its options, the pins
file read through Hadoop's file system, and its refusals (shared Spark session; the pinned read itself on
Iceberg: tests/emr_lineage/pipeline/test_scenario_reproduce.py)."""

from __future__ import annotations

import argparse
import json
from pathlib import Path

import pytest


@pytest.fixture(scope="module")
def as_of(job):
    job("revenue_daily")  # puts jobs/ on the path, as spark-submit does for a job's folder
    import as_of

    return as_of


def _args(as_of, *argv: str) -> argparse.Namespace:
    parser = argparse.ArgumentParser()
    as_of.add_options(parser)
    return parser.parse_args(list(argv))


def test_the_pins_file_gives_each_tables_snapshot_and_must_be_of_the_run_named(as_of, spark, tmp_path: Path) -> None:
    pins = tmp_path / "pins.json"
    pins.write_text(json.dumps({"runId": "r1", "job": "j", "tables": {"lakehouse.clean.orders": 42}}))
    assert as_of.pins(spark, _args(as_of, "--as-of-run", "r1", "--pins", str(pins))) == {"lakehouse.clean.orders": "42"}
    assert as_of.pins(spark, _args(as_of, "--pins", f"file://{pins}")) == {"lakehouse.clean.orders": "42"}
    assert as_of.pins(spark, _args(as_of)) == {}
    with pytest.raises(SystemExit, match=r"pins run r1, not --as-of-run r2"):
        as_of.pins(spark, _args(as_of, "--as-of-run", "r2", "--pins", str(pins)))
    with pytest.raises(SystemExit, match=r"--as-of-run r1 needs --pins FILE"):
        as_of.pins(spark, _args(as_of, "--as-of-run", "r1"))
    pins.write_text("[]")
    with pytest.raises(SystemExit, match=r"not a pins file"):
        as_of.pins(spark, _args(as_of, "--pins", str(pins)))
    with pytest.raises(SystemExit, match=r"not a pins file \(java.io.FileNotFoundException: File .* does not exist\)$"):
        as_of.pins(spark, _args(as_of, "--pins", str(tmp_path / "missing.json")))


def test_a_table_not_pinned_is_read_as_it_is_now_with_a_warning(as_of, spark, capsys) -> None:
    spark.sql("CREATE DATABASE IF NOT EXISTS as_of_test")
    spark.range(3).write.mode("overwrite").saveAsTable("as_of_test.numbers")
    assert as_of.read_table(spark, "as_of_test.numbers", {}).count() == 3
    assert capsys.readouterr().err == ""
    assert as_of.read_table(spark, "as_of_test.numbers", {"lakehouse.other": "1"}).count() == 3
    assert capsys.readouterr().err == "warning: as_of_test.numbers is not pinned: read as it is now\n"
