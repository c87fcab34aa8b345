"""around(): the part of a graph within N jobs of a node, walked along edges both ways."""

from __future__ import annotations

import pytest

from emr_lineage.lineage.graph.around import around
from emr_lineage.lineage.graph.model import GraphError, LineageGraph


@pytest.fixture
def chain() -> LineageGraph:
    """raw -> ingest -> clean -> report -> daily, and clean -> other -> side (a sibling reader)."""
    graph = LineageGraph()
    ds = {name: graph.add_dataset("s3://lake", name) for name in ("raw", "clean", "daily", "side")}
    jobs = {name: graph.add_job("ns", name) for name in ("ingest", "report", "other")}
    for source, target in [
        (ds["raw"], jobs["ingest"]),
        (jobs["ingest"], ds["clean"]),
        (ds["clean"], jobs["report"]),
        (jobs["report"], ds["daily"]),
        (ds["clean"], jobs["other"]),
        (jobs["other"], ds["side"]),
    ]:
        graph.add_edge(source, target)
    graph.column_edges = [
        {"source": "datasetField:s3://lake:raw:id", "target": "datasetField:s3://lake:clean:id", "transformation": ""},
        {
            "source": "datasetField:s3://lake:clean:id",
            "target": "datasetField:s3://lake:daily:id",
            "transformation": "",
        },
    ]
    return graph


def test_depth_zero_is_the_job_and_its_datasets(chain: LineageGraph) -> None:
    part = around(chain, "job:ns:ingest", 0)
    assert part.edges() == [("dataset:s3://lake:raw", "job:ns:ingest"), ("job:ns:ingest", "dataset:s3://lake:clean")]
    assert [e["target"] for e in part.column_edges] == ["datasetField:s3://lake:clean:id"]


def test_depth_counts_jobs_away_in_either_direction(chain: LineageGraph) -> None:
    part = around(chain, "job:ns:ingest", 1)
    assert part.jobs() == ["job:ns:ingest", "job:ns:other", "job:ns:report"]
    assert set(part.datasets()) == {f"dataset:s3://lake:{n}" for n in ("raw", "clean", "daily", "side")}
    assert len(part.column_edges) == 2


def test_a_dataset_start_reaches_its_readers_and_writers(chain: LineageGraph) -> None:
    assert around(chain, "dataset:s3://lake:clean", 0).jobs() == ["job:ns:ingest", "job:ns:other", "job:ns:report"]


def test_an_unknown_node_is_one_error_with_the_nearest_ids(chain: LineageGraph) -> None:
    with pytest.raises(GraphError, match=r"job:ns:ingst: not in the lineage read .*; did you mean job:ns:ingest\?$"):
        around(chain, "job:ns:ingst", 1)
    with pytest.raises(GraphError, match="expected job:<namespace>:<name> or dataset:<namespace>:<name>"):
        around(chain, "ingest", 1)
