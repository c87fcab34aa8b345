"""The sample pipeline: its jobs in order, their arguments (the tables they read and write), where their scripts
are and the contract their lineage must match.

A :class:`Scenario` is what ``emr-lineage demo --scenario NAME`` runs: the job files of ``jobs/``
in order and the contract of their lineage. ``standard`` is the pipeline itself; ``schema-change``
runs it, then a new version of ``revenue_daily`` that evolves the schema of the table
``curated/revenue_daily`` in place (Iceberg's DDL) and writes it again, then a job that reads it
(docs/pipeline.md).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

from emr_lineage.spark import iceberg

# The repository's jobs/ folder, shipped in the package as emr_lineage/pipeline/jobs (a link in the
# checkout, files in a wheel), so an installed emr-lineage finds the sample jobs too.
JOBS_DIR = Path(__file__).resolve().parent / "jobs"
CONTRACT = JOBS_DIR / "lineage_contract.yaml"
PIPELINE = ("ingest_orders", "revenue_daily", "customer_ltv", "train_model", "score_stream")
DEFAULT_ROWS = 50_000
# Fewer orders leave a zone of the sample data empty (and Spark ML with nothing to train on).
MIN_ROWS = 100

# The pipeline's Iceberg tables and the zone of each, their database: locally a namespace of the Hadoop catalog
# whose warehouse is the lake (the table at <lake>/<zone>/<table>), on EMR the zone's Glue database.
TABLE_ZONES = {"orders_clean": "clean", "revenue_daily": "curated", "customer_ltv": "curated"}
# The tables each job file reads or writes, by the option that names one; raw inputs, the model and the
# streamed scores stay files under --lake.
TABLE_OPTIONS = {
    "ingest_orders": {"--orders-table": "orders_clean"},
    "revenue_daily": {"--orders-table": "orders_clean", "--revenue-table": "revenue_daily"},
    "revenue_daily_v2": {"--orders-table": "orders_clean", "--revenue-table": "revenue_daily"},
    "customer_ltv": {"--orders-table": "orders_clean", "--ltv-table": "customer_ltv"},
    "train_model": {"--orders-table": "orders_clean"},
    "revenue_weekly": {"--revenue-table": "revenue_daily"},
}
# Job files that read and write tables only: no --lake.
TABLES_ONLY = frozenset({"revenue_daily", "revenue_daily_v2", "customer_ltv"})


def local_tables() -> dict[str, str]:
    """Each table's name in the local Iceberg catalog, e.g. ``lakehouse.curated.revenue_daily``."""
    return {table: iceberg.table_name(zone, table) for table, zone in TABLE_ZONES.items()}


def job_arguments(job: str, lake: str, tables: Mapping[str, str]) -> list[str]:
    """The arguments of ``jobs/<job>.py``: ``--lake`` (unless it reads and writes tables only), and each table
    it reads or writes by its option, named as ``tables`` names it."""
    arguments = [] if job in TABLES_ONLY else ["--lake", lake]
    for option, table in TABLE_OPTIONS.get(job, {}).items():
        arguments += [option, tables[table]]
    return arguments


# Job files whose application (the OpenLineage job) has another name: a new version of a job.
APPLICATION_OF_JOB = {"revenue_daily_v2": "revenue_daily"}


def application_name(job: str) -> str:
    """The Spark application name (OpenLineage job name) of the job file ``jobs/<job>.py``."""
    return APPLICATION_OF_JOB.get(job, job)


@dataclass(frozen=True)
class Scenario:
    name: str
    summary: str  # one line, for --help
    jobs: tuple[str, ...]  # job files of jobs/ (without .py), in the order they run
    contract: Path


STANDARD = Scenario("standard", "the five sample jobs", PIPELINE, CONTRACT)
# The dataset whose schema the schema-change scenario evolves: the table revenue_daily's location (relative to
# the lake).
CHANGED_DATASET = "curated/revenue_daily"
SCHEMA_CHANGE = Scenario(
    "schema-change",
    f"the five jobs, then revenue_daily_v2 evolves the table {CHANGED_DATASET} in place (adds "
    "average_order_value, drops customers, widens orders int -> bigint) and writes it, then revenue_weekly reads it",
    (*PIPELINE, "revenue_daily_v2", "revenue_weekly"),
    JOBS_DIR / "lineage_contract_schema_change.yaml",
)
# After the five jobs, revenue_daily reproduced (emr_lineage.pipeline.reproduce): its lineage is the standard one.
REPRODUCE = Scenario(
    "reproduce",
    "the five jobs, then orders_clean changes, revenue_daily runs again, then as of its first run "
    "(--as-of-run): the first run's rows again",
    PIPELINE,
    CONTRACT,
)
SCENARIOS = {scenario.name: scenario for scenario in (STANDARD, SCHEMA_CHANGE, REPRODUCE)}
