"""OpenLineage events for the local capture, built only with ``openlineage-python``.

Shapes follow the OpenLineage Spark integration's own expected events
(https://github.com/OpenLineage/OpenLineage/tree/8f02abfb7a252783b95df79f443edb13959bf52c/integration/spark/app/integrations/container):
an application run (``jobType`` APPLICATION) and one child run per Spark action
(``jobType`` SQL_JOB) whose ``parent`` facet points at the application run, datasets named
by :func:`emr_lineage.lineage.naming.dataset_identity`, ``schema``/``symlinks``/``columnLineage``/
``lifecycleStateChange`` dataset facets.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, datetime

from openlineage.client import event_v2 as ol
from openlineage.client.facet_v2 import (
    column_lineage_dataset,
    datasource_dataset,
    job_type_job,
    lifecycle_state_change_dataset,
    parent_run,
    processing_engine_run,
    schema_dataset,
    symlinks_dataset,
)

from emr_lineage import __version__
from emr_lineage.lineage.naming import dataset_identity
from emr_lineage.spark.capture.plan import DatasetRef, InputColumn, OutputRef, QueryLineage
from emr_lineage.spark.conf import ParentContext

PRODUCER = f"https://github.com/emr-lineage/emr-lineage/tree/{__version__}/emr_lineage/spark/capture"


@dataclass(frozen=True)
class RunRef:
    """A run that another run names as its parent."""

    namespace: str
    job_name: str
    run_id: str


def now() -> str:
    return datetime.now(UTC).isoformat()


def iso(epoch_seconds: float) -> str:
    return datetime.fromtimestamp(epoch_seconds, UTC).isoformat()


def job_type(processing: str, kind: str) -> dict:
    return {
        "jobType": job_type_job.JobTypeJobFacet(
            processingType=processing, integration="SPARK", jobType=kind, producer=PRODUCER
        )
    }


def parent_facet(parent: RunRef, root: RunRef | None = None) -> parent_run.ParentRunFacet:
    root = root or parent
    return parent_run.ParentRunFacet(
        run=parent_run.Run(runId=parent.run_id),
        job=parent_run.Job(namespace=parent.namespace, name=parent.job_name),
        root=parent_run.Root(
            run=parent_run.RootRun(runId=root.run_id),
            job=parent_run.RootJob(namespace=root.namespace, name=root.job_name),
        ),
        producer=PRODUCER,
    )


def orchestrator_parent(context: ParentContext | None) -> tuple[RunRef | None, RunRef | None]:
    """(parent, root) runs named by OPENLINEAGE_PARENT_* / spark.openlineage.parent*."""
    if context is None:
        return None, None
    parent = RunRef(context.parent_job_namespace, context.parent_job_name, context.parent_run_id)
    root = parent
    if context.root_run_id:
        root = RunRef(context.root_job_namespace, context.root_job_name, context.root_run_id)
    return parent, root


def application_event(
    state: str,
    app: RunRef,
    *,
    spark_version: str,
    streaming: bool = False,
    orchestrator: ParentContext | None = None,
    event_time: str | None = None,
) -> ol.RunEvent:
    run_facets: dict = {
        "processing_engine": processing_engine_run.ProcessingEngineRunFacet(
            version=spark_version, name="spark", openlineageAdapterVersion=__version__, producer=PRODUCER
        )
    }
    parent, root = orchestrator_parent(orchestrator)
    if parent is not None:
        run_facets["parent"] = parent_facet(parent, root)
    return ol.RunEvent(
        eventType=ol.RunState[state],
        eventTime=event_time or now(),
        run=ol.Run(runId=app.run_id, facets=run_facets),
        job=ol.Job(
            namespace=app.namespace,
            name=app.job_name,
            facets=job_type("STREAMING" if streaming else "BATCH", "APPLICATION"),
        ),
        producer=PRODUCER,
    )


def _symlinks(ref: DatasetRef) -> dict:
    if ref.table is None:
        return {}
    namespace, name = dataset_identity(ref.uri)
    # Like the Spark integration for the session catalog: the table's warehouse directory as
    # namespace ("file:/.../warehouse", "s3://bucket/warehouse"), "<db>.<table>" as name.
    parent_dir = ref.uri.rstrip("/").rsplit("/", 1)[0]
    identifier = symlinks_dataset.Identifier(
        namespace=parent_dir, name=f"{ref.table.database}.{ref.table.table}", type="TABLE"
    )
    return {"symlinks": symlinks_dataset.SymlinksDatasetFacet(identifiers=[identifier], producer=PRODUCER)}


def _schema(ref: DatasetRef) -> dict:
    if not ref.columns:
        return {}
    fields = [schema_dataset.SchemaDatasetFacetFields(name=c.name, type=c.type) for c in ref.columns]
    return {"schema": schema_dataset.SchemaDatasetFacet(fields=fields, producer=PRODUCER)}


def _input_field(column: InputColumn) -> column_lineage_dataset.InputField:
    namespace, name = dataset_identity(column.uri)
    return column_lineage_dataset.InputField(
        namespace=namespace,
        name=name,
        field=column.column,
        transformations=[
            column_lineage_dataset.Transformation(
                type=column.type, subtype=column.subtype, description="", masking=False
            )
        ],
    )


def _column_lineage(lineage: QueryLineage) -> dict:
    if not lineage.column_lineage:
        return {}
    fields = {
        name: column_lineage_dataset.Fields(inputFields=[_input_field(c) for c in columns])
        for name, columns in lineage.column_lineage.items()
    }
    return {
        "columnLineage": column_lineage_dataset.ColumnLineageDatasetFacet(
            fields=fields, dataset=[_input_field(c) for c in lineage.dataset_lineage], producer=PRODUCER
        )
    }


def _data_source(namespace: str) -> dict:
    return {"dataSource": datasource_dataset.DatasourceDatasetFacet(name=namespace, uri=namespace, producer=PRODUCER)}


def input_dataset(ref: DatasetRef) -> ol.InputDataset:
    namespace, name = dataset_identity(ref.uri)
    facets = {**_data_source(namespace), **_schema(ref), **_symlinks(ref)}
    return ol.InputDataset(namespace=namespace, name=name, facets=facets)


def output_dataset(ref: OutputRef, lineage: QueryLineage) -> ol.OutputDataset:
    namespace, name = dataset_identity(ref.uri)
    facets = {**_data_source(namespace), **_schema(ref), **_symlinks(ref), **_column_lineage(lineage)}
    if ref.lifecycle:
        facets["lifecycleStateChange"] = lifecycle_state_change_dataset.LifecycleStateChangeDatasetFacet(
            lifecycleStateChange=lifecycle_state_change_dataset.LifecycleStateChange[ref.lifecycle],
            producer=PRODUCER,
        )
    return ol.OutputDataset(namespace=namespace, name=name, facets=facets)


def action_job_name(app_job: str, lineage: QueryLineage) -> str:
    """``<app>.<node>[.<suffix>]``; the suffix is the last two path parts (or db_table) of the
    first output, as in the Spark integration's JobNameBuilder."""
    name = f"{app_job}.{lineage.node_name}"
    if lineage.outputs:
        output = lineage.outputs[0]
        if output.table is not None:
            suffix = f"{output.table.database}_{output.table.table}"
        else:
            suffix = "_".join(dataset_identity(output.uri)[1].strip("/").split("/")[-2:])
        name += "." + "".join(ch if ch.isalnum() else "_" for ch in suffix).lower()
    return name


def action_event(
    state: str,
    run_id: str,
    job_name: str,
    app: RunRef,
    lineage: QueryLineage,
    *,
    event_time: str,
    root: RunRef | None = None,
    processing: str = "BATCH",
    error: str | None = None,
) -> ol.RunEvent:
    run_facets: dict = {"parent": parent_facet(app, root)}
    if error is not None:
        from openlineage.client.facet_v2 import error_message_run

        run_facets["errorMessage"] = error_message_run.ErrorMessageRunFacet(
            message=error[:2000], programmingLanguage="JAVA", producer=PRODUCER
        )
    return ol.RunEvent(
        eventType=ol.RunState[state],
        eventTime=event_time,
        run=ol.Run(runId=run_id, facets=run_facets),
        job=ol.Job(namespace=app.namespace, name=job_name, facets=job_type(processing, "SQL_JOB")),
        inputs=[input_dataset(ref) for ref in lineage.inputs],
        outputs=[output_dataset(ref, lineage) for ref in lineage.outputs],
        producer=PRODUCER,
    )
