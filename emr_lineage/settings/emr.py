"""Settings of the Spark side: EMR clusters (ephemeral and long-running) and EMR Serverless.

Part of the typed cdk.json model (:mod:`emr_lineage.settings.model` composes these).
"""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import Field, field_validator, model_validator

from emr_lineage.settings.base import Strict
from emr_lineage.settings.limits import EMR_RELEASES, EmrRelease

INSTANCE_TYPE = r"^[a-z][a-z0-9-]*\.[a-z0-9]+$"


class EmrSettings(Strict):
    """EMR clusters: the ephemeral launch spec and the optional long-running cluster."""

    release_label: Annotated[
        str,
        Field(
            pattern=r"^emr-\d+\.\d+\.\d+$",
            description="The EMR release, one of `EMR_RELEASES` in "
            "[`emr_lineage/settings/limits.py`](../emr_lineage/settings/limits.py) (EMR 7.8–7.13: Spark 3.5, "
            "Scala 2.12), whose Spark the local `pyspark` pin must equal (a test checks it).",
        ),
    ]
    applications: Annotated[
        list[Literal["Spark", "Hadoop", "Livy", "JupyterEnterpriseGateway", "Hive"]],
        Field(min_length=1, description="EMR applications of the clusters; must include `Spark`."),
    ]
    primary_instance_type: Annotated[str, Field(pattern=INSTANCE_TYPE, description="EC2 type of the primary node.")]
    core_instance_type: Annotated[str, Field(pattern=INSTANCE_TYPE, description="EC2 type of the core nodes.")]
    core_instance_count: Annotated[int, Field(ge=1, le=100, description="Number of core nodes.")]
    ebs_volume_gib: Annotated[int, Field(ge=32, le=16384, description="EBS volume of each node (GiB).")]
    # EMR's AutoTerminationPolicy accepts 60 s .. 7 days
    # (https://docs.aws.amazon.com/emr/latest/APIReference/API_AutoTerminationPolicy.html).
    idle_timeout_seconds: Annotated[
        int, Field(ge=60, le=604800, description="Auto-termination of an idle ephemeral cluster (seconds).")
    ]
    long_running_cluster: bool = Field(
        description="Also deploy a shared cluster from the same launch spec (needs `ec2_key_name`)."
    )
    lake_formation_runtime_role: bool = Field(
        description="Create a runtime role for steps and enable Lake Formation in the security configuration."
    )
    in_transit_encryption: bool = Field(
        description="TLS between the nodes; needs the certificates zip (`emr-lineage tls` after the deploy)."
    )
    ec2_key_name: Annotated[str, Field(min_length=1, max_length=255)] | None = Field(
        default=None, description="An EC2 key pair for the nodes; required with `long_running_cluster`."
    )

    @model_validator(mode="after")
    def _long_running_needs_authentication(self) -> EmrSettings:
        if self.long_running_cluster and not self.ec2_key_name:
            raise ValueError(
                "ec2_key_name is required when long_running_cluster is true "
                "(a shared cluster needs key-pair authentication; cdk-nag EMR6)"
            )
        return self

    @field_validator("release_label")
    @classmethod
    def _supported_release(cls, value: str) -> str:
        if value not in EMR_RELEASES:
            raise ValueError(
                f"release_label {value} is not supported; emr-lineage runs on {', '.join(EMR_RELEASES)} "
                "(EMR 7.x with Spark 3.5 on Scala 2.12, what the pinned listener and pyspark are built for)"
            )
        return value

    @field_validator("applications")
    @classmethod
    def _spark_included(cls, value: list[str]) -> list[str]:
        if "Spark" not in value:
            raise ValueError("applications must include Spark (the lineage listener is a Spark listener)")
        if len(set(value)) != len(value):
            raise ValueError("applications lists an application twice")
        return value

    @property
    def release(self) -> EmrRelease:
        """Spark and Scala of the configured release (see EMR_RELEASES)."""
        return EMR_RELEASES[self.release_label]


class EmrServerlessSettings(Strict):
    """EMR Serverless: one Spark application (the release of ``emr``) for job runs without clusters.

    Limits: https://docs.aws.amazon.com/emr/latest/EMR-Serverless-UserGuide/application-capacity.html
    and StartJobRun's executionTimeoutMinutes (5 minutes at least, https://docs.aws.amazon.com/emr-serverless/latest/APIReference/API_StartJobRun.html).
    """

    enabled: bool = Field(
        default=False,
        description="An EMR Serverless Spark application at `emr.release_label` for `launch --serverless` and "
        "`e2e --serverless` ([launch.md](launch.md)).",
    )
    max_vcpu: Annotated[
        int, Field(ge=1, le=4000, description="The application's maximum vCPUs, across all its running jobs.")
    ] = 16
    max_memory_gib: Annotated[
        int, Field(ge=2, le=16000, description="The application's maximum memory (GiB), across all its running jobs.")
    ] = 64
    idle_timeout_minutes: Annotated[
        int,
        Field(
            ge=1, le=10080, description="The application stops (and costs nothing) after this long without a job run."
        ),
    ] = 15
    job_timeout_minutes: Annotated[
        int,
        Field(
            ge=5,
            le=1440,
            description="A job run's total deadline: EMR Serverless cancels it after this long, and `launch` stops "
            "waiting.",
        ),
    ] = 120
