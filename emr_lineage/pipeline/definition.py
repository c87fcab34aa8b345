"""The sample pipeline: its jobs in order, where their scripts are and the contract their lineage must match."""

from __future__ import annotations

from pathlib import Path

# The repository's jobs/ folder, shipped in the package as emr_lineage/pipeline/jobs (a link in the
# checkout, files in a wheel), so an installed emr-lineage finds the sample jobs too.
JOBS_DIR = Path(__file__).resolve().parent / "jobs"
CONTRACT = JOBS_DIR / "lineage_contract.yaml"
PIPELINE = ("ingest_orders", "revenue_daily", "customer_ltv", "train_model", "score_stream")
DEFAULT_ROWS = 50_000
# Fewer orders leave a zone of the sample data empty (and Spark ML with nothing to train on).
MIN_ROWS = 100
