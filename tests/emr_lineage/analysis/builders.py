"""Hand-built OpenLineage events for the analysis tests, made with openlineage-python as
tests/emr_lineage/generated_events.py makes its: one Spark application run per call, its datasets with
schema, column lineage and version facets where a test needs them."""

from __future__ import annotations

import datetime as dt
import json
import uuid
from typing import Any

from openlineage.client.event_v2 import InputDataset, Job, OutputDataset, Run, RunEvent, RunState
from openlineage.client.facet_v2 import (
    column_lineage_dataset,
    dataset_version_dataset,
    input_statistics_input_dataset,
    job_type_job,
    output_statistics_output_dataset,
    parent_run,
    processing_engine_run,
    schema_dataset,
)
from openlineage.client.serde import Serde

from emr_lineage.lineage.naming import dataset_identity
from tests.emr_lineage.generated_events import PRODUCER

NAMESPACE = "emr-lineage-dev"
T0 = dt.datetime(2026, 11, 23, 9, 0, tzinfo=dt.UTC)


def at(minutes: float) -> dt.datetime:
    return T0 + dt.timedelta(minutes=minutes)


def dataset(
    uri: str,
    fields: dict[str, str] | None = None,
    *,
    version: str | None = None,
    columns: dict[str, list[tuple[str, str]]] | None = None,
    output: bool = False,
    rows: int | None = None,
) -> InputDataset | OutputDataset:
    """A dataset of ``uri`` with a schema (field -> type), a version, column lineage
    (output field -> [(input uri, input field)]) and statistics (``rows``, bytes 100 a row, one file),
    each only when given."""
    facets: dict[str, Any] = {}
    if fields is not None:
        facets["schema"] = schema_dataset.SchemaDatasetFacet(
            fields=[schema_dataset.SchemaDatasetFacetFields(name=n, type=t) for n, t in fields.items()]
        )
    if version is not None:
        facets["version"] = dataset_version_dataset.DatasetVersionDatasetFacet(datasetVersion=version)
    if columns:
        facets["columnLineage"] = column_lineage_dataset.ColumnLineageDatasetFacet(
            fields={
                out_field: column_lineage_dataset.Fields(
                    inputFields=[
                        column_lineage_dataset.InputField(*dataset_identity(in_uri), field=in_field)
                        for in_uri, in_field in sources
                    ]
                )
                for out_field, sources in columns.items()
            }
        )
    if output:
        statistics = output_statistics_output_dataset.OutputStatisticsOutputDatasetFacet
        return OutputDataset(
            *dataset_identity(uri),
            facets=facets,
            outputFacets={}
            if rows is None
            else {"outputStatistics": statistics(rowCount=rows, size=rows * 100, fileCount=1)},
        )
    read = input_statistics_input_dataset.InputStatisticsInputDatasetFacet
    return InputDataset(
        *dataset_identity(uri),
        facets=facets,
        inputFacets={} if rows is None else {"inputStatistics": read(rowCount=rows, size=rows * 100, fileCount=1)},
    )


def app_run(
    app: str,
    start: dt.datetime,
    *,
    inputs: list[InputDataset] = (),  # type: ignore[assignment]
    outputs: list[OutputDataset] = (),  # type: ignore[assignment]
    final: str = "COMPLETE",
    seconds: float = 60,
    run_id: str | None = None,
    spark: str | None = None,
) -> list[dict[str, Any]]:
    """One Spark application: its START and final event, and one action (``<app>.write``) whose
    START carries the inputs (with their versions) and whose final event carries the outputs; the
    action's events name Spark version ``spark`` (the processing_engine facet) when given."""
    app_run_id = run_id or str(uuid.uuid4())
    engine = (
        {"processing_engine": processing_engine_run.ProcessingEngineRunFacet(version=spark, name="spark")}
        if spark
        else {}
    )
    app_job = Job(
        namespace=NAMESPACE,
        name=app,
        facets={
            "jobType": job_type_job.JobTypeJobFacet(processingType="BATCH", integration="SPARK", jobType="APPLICATION")
        },
    )
    action_run = Run(
        runId=str(uuid.uuid4()),
        facets={
            "parent": parent_run.ParentRunFacet(
                run=parent_run.Run(runId=app_run_id), job=parent_run.Job(namespace=NAMESPACE, name=app)
            ),
            **engine,
        },
    )
    action_job = Job(namespace=NAMESPACE, name=f"{app}.write")
    end = start + dt.timedelta(seconds=seconds)

    def event(state: str, when: dt.datetime, run: Run, job: Job, **datasets: Any) -> RunEvent:
        return RunEvent(
            eventType=RunState[state], eventTime=when.isoformat(), run=run, job=job, producer=PRODUCER, **datasets
        )

    events = [
        event("START", start, Run(runId=app_run_id), app_job),
        event("START", start + dt.timedelta(seconds=1), action_run, action_job, inputs=list(inputs)),
        event(final, end - dt.timedelta(seconds=1), action_run, action_job, inputs=list(inputs), outputs=list(outputs)),
        event(final, end, Run(runId=app_run_id), app_job),
    ]
    return [json.loads(Serde.to_json(e)) for e in events]
