"""OpenLineage events generated with openlineage-python, partial and cumulative as the Spark listener sends
them: the sample order pipeline and applications of chosen actions (the ``gen`` fixture of the conftest)."""

from __future__ import annotations

import datetime
import json
import uuid
from dataclasses import dataclass, field
from typing import Any

from openlineage.client.event_v2 import InputDataset, Job, OutputDataset, Run, RunEvent, RunState
from openlineage.client.facet_v2 import (
    column_lineage_dataset,
    job_type_job,
    parent_run,
    schema_dataset,
    symlinks_dataset,
)
from openlineage.client.serde import Serde

from emr_lineage.lineage.naming import dataset_identity
from tests.versions import OPENLINEAGE_VERSION

PRODUCER = f"https://github.com/OpenLineage/OpenLineage/tree/{OPENLINEAGE_VERSION}/integration/spark"


@dataclass
class Action:
    """One Spark action of a generated application."""

    name: str
    inputs: list[str]
    outputs: list[str]
    columns: dict[str, list[tuple[str, str]]] = field(default_factory=dict)  # out field -> [(in uri, in field)]
    table: tuple[str, str, str] | None = None  # (namespace, name, type) symlink of the first output


def _dataset_facets(uri: str, fields: list[str], action: Action | None = None, output: bool = False) -> dict[str, Any]:
    facets: dict[str, Any] = {
        "schema": schema_dataset.SchemaDatasetFacet(
            fields=[schema_dataset.SchemaDatasetFacetFields(name=f, type="string") for f in fields]
        )
    }
    if output and action is not None and action.table and uri == action.outputs[0]:
        ns, name, kind = action.table
        facets["symlinks"] = symlinks_dataset.SymlinksDatasetFacet(
            identifiers=[symlinks_dataset.Identifier(namespace=ns, name=name, type=kind)]
        )
    if output and action is not None and action.columns:
        column_fields = {}
        for out_field, sources in action.columns.items():
            input_fields = []
            for in_uri, in_field in sources:
                in_ns, in_name = dataset_identity(in_uri)
                input_fields.append(
                    column_lineage_dataset.InputField(
                        namespace=in_ns,
                        name=in_name,
                        field=in_field,
                        transformations=[column_lineage_dataset.Transformation(type="DIRECT", subtype="IDENTITY")],
                    )
                )
            column_fields[out_field] = column_lineage_dataset.Fields(inputFields=input_fields)
        facets["columnLineage"] = column_lineage_dataset.ColumnLineageDatasetFacet(fields=column_fields)
    return facets


def _time(offset: int) -> str:
    base = datetime.datetime(2026, 11, 21, 12, 0, tzinfo=datetime.UTC)
    return (base + datetime.timedelta(seconds=offset)).isoformat()


def application_events(
    app: str, namespace: str, actions: list[Action], orchestrator: tuple[str, str] | None = None
) -> list[dict[str, Any]]:
    """The events the Spark listener sends for one application, as JSON dicts.

    Application START/COMPLETE (jobType APPLICATION, optional orchestrator parent) and, per
    action, a START with the inputs only, a RUNNING with nothing, and a COMPLETE with the
    outputs and their facets: partial, cumulative events, as the real listener sends them.
    """
    app_run = str(uuid.uuid4())
    app_facets = {}
    if orchestrator:
        app_facets["parent"] = parent_run.ParentRunFacet(
            run=parent_run.Run(runId=str(uuid.uuid4())),
            job=parent_run.Job(namespace=orchestrator[0], name=orchestrator[1]),
        )
    app_job = Job(
        namespace=namespace,
        name=app,
        facets={
            "jobType": job_type_job.JobTypeJobFacet(processingType="BATCH", integration="SPARK", jobType="APPLICATION")
        },
    )
    events: list[Any] = [
        RunEvent(
            eventType=RunState.START,
            eventTime=_time(0),
            run=Run(runId=app_run, facets=app_facets),
            job=app_job,
            producer=PRODUCER,
        )
    ]
    for index, action in enumerate(actions):
        run = Run(
            runId=str(uuid.uuid4()),
            facets={
                "parent": parent_run.ParentRunFacet(
                    run=parent_run.Run(runId=app_run), job=parent_run.Job(namespace=namespace, name=app)
                )
            },
        )
        job = Job(
            namespace=namespace,
            name=f"{app}.{action.name}",
            facets={
                "jobType": job_type_job.JobTypeJobFacet(processingType="BATCH", integration="SPARK", jobType="SQL_JOB")
            },
        )
        fields = sorted({f for f in action.columns} | {"order_id", "amount"})
        inputs = [
            InputDataset(*dataset_identity(uri), facets=_dataset_facets(uri, ["order_id", "amount"]))
            for uri in action.inputs
        ]
        outputs = [
            OutputDataset(*dataset_identity(uri), facets=_dataset_facets(uri, fields, action, output=True))
            for uri in action.outputs
        ]
        events.append(
            RunEvent(
                eventType=RunState.START,
                eventTime=_time(10 * index + 1),
                run=run,
                job=job,
                inputs=inputs,
                producer=PRODUCER,
            )
        )
        events.append(
            RunEvent(eventType=RunState.RUNNING, eventTime=_time(10 * index + 2), run=run, job=job, producer=PRODUCER)
        )
        events.append(
            RunEvent(
                eventType=RunState.COMPLETE,
                eventTime=_time(10 * index + 3),
                run=run,
                job=job,
                outputs=outputs,
                producer=PRODUCER,
            )
        )
    events.append(
        RunEvent(
            eventType=RunState.COMPLETE,
            eventTime=_time(999),
            run=Run(runId=app_run, facets=app_facets),
            job=app_job,
            producer=PRODUCER,
        )
    )
    return [json.loads(Serde.to_json(event)) for event in events]


def sample_pipeline_events(
    lake: str, namespace: str = "emr-lineage-dev", table: tuple[str, str, str] | None = None
) -> list[dict[str, Any]]:
    """Events of the sample order pipeline (5 applications) with datasets under ``lake``. orders_clean and
    revenue_daily are written with a symlink naming their table, as the listener reports Iceberg tables: in the
    catalog of ``table`` (a Glue catalog: ``table/<zone>/<name>``), else the local Hadoop catalog in the lake
    (``<zone>.<name>``) or, on S3, a Hive metastore's."""
    lake = lake.rstrip("/")
    glue_or_local = table or (
        f"file:{lake}/warehouse" if lake.startswith("/") else "hive://metastore",
        "default.customer_ltv",
        "TABLE",
    )

    def catalog_table(zone: str, name: str) -> tuple[str, str, str]:
        if table:
            return table[0], f"table/{zone}/{name}", "TABLE"
        return (f"file:{lake}" if lake.startswith("/") else "hive://metastore"), f"{zone}.{name}", "TABLE"

    return (
        application_events(
            "ingest_orders",
            namespace,
            [
                Action(
                    "execute_insert_into_hadoop_fs_relation_command.clean_orders_clean",
                    [f"{lake}/raw/orders/"],
                    [f"{lake}/clean/orders_clean"],
                    table=catalog_table("clean", "orders_clean"),
                    columns={
                        "order_id": [(f"{lake}/raw/orders", "order_id")],
                        "amount": [(f"{lake}/raw/orders", "amount")],
                    },
                ),
            ],
        )
        + application_events(
            "revenue_daily",
            namespace,
            [
                Action(
                    "execute_insert_into_hadoop_fs_relation_command.curated_revenue_daily",
                    [f"{lake}/clean/orders_clean"],
                    [f"{lake}/curated/revenue_daily"],
                    table=catalog_table("curated", "revenue_daily"),
                    columns={"revenue": [(f"{lake}/clean/orders_clean", "amount")]},
                ),
            ],
        )
        + application_events(
            "customer_ltv",
            namespace,
            [
                Action(
                    "create_data_source_table_as_select_command.default_customer_ltv",
                    [f"{lake}/clean/orders_clean"],
                    [f"{lake}/warehouse/customer_ltv"],
                    table=glue_or_local,
                    columns={"ltv": [(f"{lake}/clean/orders_clean", "amount")]},
                ),
            ],
        )
        + application_events(
            "train_model",
            namespace,
            [
                Action(
                    "execute_insert_into_hadoop_fs_relation_command.models_order_value_model",
                    [f"{lake}/clean/orders_clean"],
                    [f"{lake}/models/order_value_model"],
                ),
            ],
        )
        + application_events(
            "score_stream",
            namespace,
            [
                Action(
                    "write_to_data_source_v2.curated_order_scores",
                    [f"{lake}/models/order_value_model", f"{lake}/raw/orders_stream/"],
                    [f"{lake}/curated/order_scores"],
                ),
            ],
        )
    )
