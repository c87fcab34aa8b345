"""Benchmark: build the lineage graph from ~1M synthetic OpenLineage events.

1,000 Spark applications x 100 actions. Each action run sends 10 events, as the Spark
listener does, partial and repeated: START (inputs), six RUNNING (one carrying the input
schema, others empty or carrying part of the outputs), COMPLETE (outputs with schema and
columnLineage facets) and a duplicate of START and of COMPLETE (redelivery). Each
application adds its own START and COMPLETE: 1,002,000 events. The events are shuffled
(out of order arrival) and each is decoded from its own JSON line, as ``load_events`` does.

Events are dicts in the JSON shape ``openlineage-python`` emits (same keys, facets with
``_producer``/``_schemaURL``). Generation is not measured. Two builds are run:

1. timed, without tracing: events/s;
2. under ``tracemalloc``: peak memory allocated by the build itself (the events already in
   memory are not counted); the process's peak RSS (``getrusage``) is reported too.

Usage: ``.venv/bin/python bench/graph_build.py [--apps 1000] [--actions 100] [--level application]
[--repeat 3] [--full-shuffle]``
Targets: >= 200,000 events/s and < 1 GiB.
"""

from __future__ import annotations

import argparse
import gc
import os
import random
import resource
import statistics
import sys
import time
import tracemalloc
import uuid
from typing import Any

from emr_lineage.lineage.graph.from_events import build_graph

PRODUCER = "https://github.com/OpenLineage/OpenLineage/tree/1.54.0/integration/spark"
SCHEMA_URL = "https://openlineage.io/spec/2-0-2/OpenLineage.json#/$defs/RunEvent"
NAMESPACE = "emr-lineage-bench"
LAKE = "s3://bench-lake"
TARGET_EVENTS_PER_SECOND = 200_000
TARGET_BYTES = 1 << 30


def _facet(name: str, **fields: Any) -> dict[str, Any]:
    return {
        "_producer": PRODUCER,
        "_schemaURL": f"https://openlineage.io/spec/facets/1-0-1/{name}.json#/$defs/{name}",
        **fields,
    }


def _schema(fields: list[str]) -> dict[str, Any]:
    return _facet("SchemaDatasetFacet", fields=[{"name": f, "type": "string"} for f in fields])


def _event(
    event_type: str, seconds: int, run: dict, job: dict, inputs: list | None = None, outputs: list | None = None
) -> dict:
    return {
        "eventType": event_type,
        "eventTime": f"2026-11-21T{seconds // 3600 % 24:02d}:{seconds // 60 % 60:02d}:{seconds % 60:02d}.000Z",
        "producer": PRODUCER,
        "schemaURL": SCHEMA_URL,
        "run": run,
        "job": job,
        "inputs": inputs or [],
        "outputs": outputs or [],
    }


def application_events(app_index: int, actions: int) -> list[dict[str, Any]]:
    app = f"app_{app_index:04d}"
    app_run = {"runId": str(uuid.uuid4()), "facets": {}}
    app_job = {
        "namespace": NAMESPACE,
        "name": app,
        "facets": {
            "jobType": _facet("JobTypeJobFacet", processingType="BATCH", integration="SPARK", jobType="APPLICATION")
        },
    }
    events = [_event("START", 0, app_run, app_job)]
    parent = _facet("ParentRunFacet", run={"runId": app_run["runId"]}, job={"namespace": NAMESPACE, "name": app})
    fields = ["order_id", "customer_id", "amount"]
    for step in range(actions):
        run = {"runId": str(uuid.uuid4()), "facets": {"parent": parent}}
        job = {
            "namespace": NAMESPACE,
            "name": f"{app}.execute_insert_into_hadoop_fs_relation_command.stage_{step + 1}",
            "facets": {
                "jobType": _facet("JobTypeJobFacet", processingType="BATCH", integration="SPARK", jobType="SQL_JOB")
            },
        }
        source = f"{app}/stage_{step}"
        target = f"{app}/stage_{step + 1}"
        inputs = [
            {"namespace": LAKE, "name": source, "facets": {}},
            {"namespace": LAKE, "name": "dim/customers", "facets": {}},
        ]
        inputs_with_schema = [{"namespace": LAKE, "name": source, "facets": {"schema": _schema(fields)}}]
        column_lineage = _facet(
            "ColumnLineageDatasetFacet",
            fields={
                f: {
                    "inputFields": [
                        {
                            "namespace": LAKE,
                            "name": source,
                            "field": f,
                            "transformations": [{"type": "DIRECT", "subtype": "IDENTITY"}],
                        }
                    ]
                }
                for f in fields
            },
        )
        output_partial = [{"namespace": LAKE, "name": target, "facets": {}}]
        outputs = [
            {
                "namespace": LAKE,
                "name": target,
                "facets": {"schema": _schema(fields), "columnLineage": column_lineage},
                "outputFacets": {},
            }
        ]
        t = 10 * step
        start = _event("START", t + 1, run, job, inputs=inputs)
        complete = _event("COMPLETE", t + 9, run, job, inputs=inputs, outputs=outputs)
        events += [
            start,
            _event("RUNNING", t + 2, run, job, inputs=inputs_with_schema),
            _event("RUNNING", t + 3, run, job),
            _event("RUNNING", t + 4, run, job, outputs=output_partial),
            _event("RUNNING", t + 5, run, job),
            _event("RUNNING", t + 6, run, job, inputs=inputs),
            _event("RUNNING", t + 7, run, job),
            complete,
            start,  # redelivered
            complete,  # redelivered
        ]
    events.append(_event("COMPLETE", 10 * actions + 10, app_run, app_job))
    return events


def generate(apps: int, actions: int, seed: int = 7, full_shuffle: bool = False) -> list[dict[str, Any]]:
    """Events out of order: each application's events shuffled, applications in random order.

    With ``full_shuffle`` the whole list is one random permutation (worst case for memory
    locality: consecutive events sit far apart in memory).
    """
    rng = random.Random(seed)
    order = list(range(apps))
    rng.shuffle(order)
    events: list[dict[str, Any]] = []
    for app_index in order:
        batch = application_events(app_index, actions)
        rng.shuffle(batch)
        events += batch
    if full_shuffle:
        rng.shuffle(events)
    return events


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--apps", type=int, default=1000)
    parser.add_argument("--actions", type=int, default=100)
    parser.add_argument("--level", choices=("application", "action"), default="application")
    parser.add_argument("--repeat", type=int, default=3, help="timed builds (the median is reported)")
    parser.add_argument(
        "--full-shuffle", action="store_true", help="one random permutation of all events (worst locality)"
    )
    args = parser.parse_args(argv)

    started = time.perf_counter()
    events = generate(args.apps, args.actions, full_shuffle=args.full_shuffle)
    print(f"machine: {os.cpu_count()} CPUs, load average {os.getloadavg()[0]:.1f}; Python {sys.version.split()[0]}")
    print(
        f"generated {len(events):,} events ({args.apps} applications x {args.actions} actions, "
        f"{'fully shuffled' if args.full_shuffle else 'shuffled per application'}) "
        f"in {time.perf_counter() - started:.1f}s (not measured)"
    )

    walls, cpus = [], []
    for _ in range(args.repeat):
        gc.collect()
        started, cpu_started = time.perf_counter(), time.process_time()
        graph = build_graph(events, level=args.level)
        walls.append(time.perf_counter() - started)
        cpus.append(time.process_time() - cpu_started)
        del graph
    elapsed = statistics.median(walls)
    rate = len(events) / elapsed
    print(
        f"build ({args.level} level, median of {args.repeat}): {elapsed:.2f}s wall = {rate:,.0f} events/s "
        f"(best {len(events) / min(walls):,.0f}/s; CPU time {statistics.median(cpus):.2f}s "
        f"= {len(events) / statistics.median(cpus):,.0f} events/s)"
    )

    gc.collect()
    tracemalloc.start()
    graph = build_graph(events, level=args.level)
    _, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024  # Linux reports KiB
    print(
        f"peak memory of the build (tracemalloc): {peak / 2**20:,.0f} MiB; "
        f"process peak RSS incl. the events: {rss / 2**20:,.0f} MiB"
    )

    assert len(graph.jobs()) == (args.apps if args.level == "application" else args.apps * (args.actions + 1))
    ok = rate >= TARGET_EVENTS_PER_SECOND and peak < TARGET_BYTES
    print(f"targets: >= {TARGET_EVENTS_PER_SECOND:,} events/s and < 1 GiB: {'met' if ok else 'NOT met'}")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
