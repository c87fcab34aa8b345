"""The sample jobs' arguments (emr_lineage.pipeline.definition): the tables by name in the Iceberg catalog,
files under --lake; each option one the job file takes (no Spark needed)."""

from __future__ import annotations

import pytest

from emr_lineage.pipeline.definition import (
    JOBS_DIR,
    SCENARIOS,
    TABLE_OPTIONS,
    TABLES_ONLY,
    job_arguments,
    local_tables,
)

JOBS = sorted({job for scenario in SCENARIOS.values() for job in scenario.jobs})


def test_the_tables_are_named_in_the_local_iceberg_catalog_by_their_zone() -> None:
    assert local_tables() == {
        "orders_clean": "lakehouse.clean.orders_clean",
        "revenue_daily": "lakehouse.curated.revenue_daily",
        "customer_ltv": "lakehouse.curated.customer_ltv",
    }


def test_each_job_gets_its_tables_by_name_and_the_lake_only_when_it_reads_or_writes_files() -> None:
    tables = local_tables()
    assert job_arguments("ingest_orders", "/l", tables) == ["--lake", "/l", "--orders-table", tables["orders_clean"]]
    assert job_arguments("customer_ltv", "/l", tables) == [
        "--orders-table",
        tables["orders_clean"],
        "--ltv-table",
        tables["customer_ltv"],
    ]
    assert job_arguments("score_stream", "/l", tables) == ["--lake", "/l"]
    parquet = {"orders_clean": "default.orders_clean", "revenue_daily": "default.revenue_daily"}
    assert job_arguments("revenue_weekly", "/l", parquet) == [
        "--lake",
        "/l",
        "--revenue-table",
        parquet["revenue_daily"],
    ]


@pytest.mark.parametrize("job", JOBS)
def test_every_option_given_is_one_the_job_file_takes(job: str) -> None:
    source = (JOBS_DIR / f"{job}.py").read_text(encoding="utf-8")
    for option in job_arguments(job, "/l", local_tables())[::2]:
        assert f'parser.add_argument("{option}"' in source, f"jobs/{job}.py takes no {option}"
    assert ('parser.add_argument("--lake"' in source) == (job not in TABLES_ONLY)
    assert set(TABLE_OPTIONS.get(job, {})) == {
        o for o in ("--orders-table", "--revenue-table", "--ltv-table") if o in source
    }
