"""The sample pipeline: its jobs in order, where their scripts are and the contract their lineage must match.

A :class:`Scenario` is what ``emr-lineage demo --scenario NAME`` runs: the job files of ``jobs/``
in order and the contract of their lineage. ``standard`` is the pipeline itself; ``schema-change``
runs it, then a new version of ``revenue_daily`` that rewrites ``curated/revenue_daily`` with
another schema, then a job that reads it (docs/pipeline.md).
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

# The repository's jobs/ folder, shipped in the package as emr_lineage/pipeline/jobs (a link in the
# checkout, files in a wheel), so an installed emr-lineage finds the sample jobs too.
JOBS_DIR = Path(__file__).resolve().parent / "jobs"
CONTRACT = JOBS_DIR / "lineage_contract.yaml"
PIPELINE = ("ingest_orders", "revenue_daily", "customer_ltv", "train_model", "score_stream")
DEFAULT_ROWS = 50_000
# Fewer orders leave a zone of the sample data empty (and Spark ML with nothing to train on).
MIN_ROWS = 100

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
# The dataset the schema-change scenario rewrites with another schema (relative to the lake).
CHANGED_DATASET = "curated/revenue_daily"
SCHEMA_CHANGE = Scenario(
    "schema-change",
    f"the five jobs, then revenue_daily_v2 rewrites {CHANGED_DATASET} (adds average_order_value, "
    "removes customers, revenue double -> decimal(18,2)), then revenue_weekly reads it",
    (*PIPELINE, "revenue_daily_v2", "revenue_weekly"),
    JOBS_DIR / "lineage_contract_schema_change.yaml",
)
SCENARIOS = {scenario.name: scenario for scenario in (STANDARD, SCHEMA_CHANGE)}
