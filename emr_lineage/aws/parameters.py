"""Names of the SSM parameters the stacks publish and the tools read: one place for all.

Stacks write them (``aws_ssm.StringParameter``); ``emr-lineage`` reads them with boto3.
"""

from __future__ import annotations

PREFIX = "/emr-lineage"


def _name(env: str, leaf: str) -> str:
    return f"{PREFIX}/{env}/{leaf}"


def marquez_api_url(env: str) -> str:
    """Base URL of the Marquez API (what the OpenLineage HTTP transport uses)."""
    return _name(env, "marquez/api-url")


def marquez_web_url(env: str) -> str:
    """URL of the Marquez web UI."""
    return _name(env, "marquez/web-url")


def marquez_database_id(env: str) -> str:
    """Identifier of Marquez's RDS instance (unique to the stack that made it)."""
    return _name(env, "marquez/database-id")


def emr_launch_spec(env: str) -> str:
    """JSON RunJobFlow request (minus Steps) for ephemeral clusters."""
    return _name(env, "emr/launch-spec")


def artifacts_bucket(env: str) -> str:
    """Name of the EMR artifacts bucket (bootstrap scripts, jobs, listener jar)."""
    return _name(env, "emr/artifacts-bucket")


def serverless_application_id(env: str) -> str:
    """Id of the EMR Serverless Spark application (when ``emr_serverless.enabled``)."""
    return _name(env, "emr-serverless/application-id")


def serverless_job_role_arn(env: str) -> str:
    """ARN of the EMR Serverless job runtime role (what a job run executes as)."""
    return _name(env, "emr-serverless/job-role-arn")


def data_lake_bucket(env: str) -> str:
    """Name of the data lake bucket (raw, clean, curated and models zones)."""
    return _name(env, "datalake/bucket")


def gateway_archive_bucket(env: str) -> str:
    """Name of the lineage gateway's archive bucket (raw events as received, by date and hour)."""
    return _name(env, "gateway/archive-bucket")


def gateway_queue_url(env: str) -> str:
    """URL of the lineage gateway's FIFO queue (ingest -> forwarder)."""
    return _name(env, "gateway/queue-url")


def gateway_dead_letter_queue_url(env: str) -> str:
    """URL of the lineage gateway's FIFO dead-letter queue (events the forwarder gave up on)."""
    return _name(env, "gateway/dead-letter-queue-url")


def gateway_api_key_secret(env: str) -> str:
    """ARN of the Secrets Manager secret holding the gateway's API key (a Bearer token)."""
    return _name(env, "gateway/api-key-secret-arn")


def gateway_spoke_key_secret(env: str, account: str) -> str:
    """ARN of the secret holding spoke account ``account``'s API key (``gateway.spoke_accounts``): what that
    account's clients send, and the spoke environment's ``hub.api_key_secret_arn``."""
    return _name(env, f"gateway/spokes/{account}/api-key-secret-arn")


def gateway_endpoint_service_name(env: str) -> str:
    """Name of the VPC endpoint service through which spoke accounts send lineage (``gateway.spoke_accounts``)."""
    return _name(env, "gateway/endpoint-service-name")


def hub_endpoint_id(env: str) -> str:
    """Id of a spoke's interface VPC endpoint to its hub's endpoint service (``hub``)."""
    return _name(env, "hub/endpoint-id")


def gateway_athena_workgroup(env: str) -> str:
    """Name of the Athena workgroup that queries the archive (encrypted results, a scan limit)."""
    return _name(env, "gateway/athena-workgroup")


def gateway_archive_database(env: str) -> str:
    """Name of the Glue database of the archive's tables (``events``, ``events_raw``)."""
    return _name(env, "gateway/archive-database")


def gateway_athena_results(env: str) -> str:
    """The S3 location (``s3://bucket/prefix/``) of the archive workgroup's query results."""
    return _name(env, "gateway/athena-results")
