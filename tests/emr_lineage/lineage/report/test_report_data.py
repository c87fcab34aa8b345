"""What the HTML report's page is given to draw (``report_data``): a Spark ML model saved as many datasets
is one node named for its folder, with its parts in the node's panel; no two datasets share a label
without the path part that tells them apart."""

from __future__ import annotations

import re
from pathlib import Path
from urllib.parse import quote

import pytest

from emr_lineage.lineage.graph.from_events import build_graph
from emr_lineage.lineage.report.html import report_data, write_html
from tests.emr_lineage.analysis.builders import app_run, at, dataset
from tests.emr_lineage.lineage.report.browser import body_tag, chromium, console_messages, without_wbr

LAKE = "s3://lake"
MODEL = f"{LAKE}/models/order_value_model"
# What the listener reports of a PipelineModel.save (the demo's train_model): the folder's metadata and
# each stage's metadata, and data for the stages that have some.
PARTS = [
    "metadata",
    "stages/0_SQLTransformer_384cbfadb4fe/metadata",
    "stages/1_StringIndexer_574dbd9a8755/data",
    "stages/1_StringIndexer_574dbd9a8755/metadata",
    "stages/2_StringIndexer_d3d503ec8717/data",
    "stages/2_StringIndexer_d3d503ec8717/metadata",
    "stages/5_LinearRegression_acefeb7f01a7/data",
    "stages/5_LinearRegression_acefeb7f01a7/metadata",
]
MODEL_ID = "dataset:s3://lake:models/order_value_model"


def _pipeline(parts: list[str] = PARTS, folder: str = MODEL) -> list[dict]:
    written = [dataset(f"{folder}/{part}", {"x": "string"}, output=True) for part in parts]
    read = [dataset(f"{folder}/{part}") for part in parts]
    return (
        app_run(
            "ingest",
            at(0),
            inputs=[dataset(f"{LAKE}/raw/orders")],
            outputs=[dataset(f"{LAKE}/clean/orders", output=True)],
        )
        + app_run("train_model", at(5), inputs=[dataset(f"{LAKE}/clean/orders")], outputs=written)
        + app_run(
            "score",
            at(10),
            inputs=[*read, dataset(f"{LAKE}/raw/orders")],
            outputs=[dataset(f"{LAKE}/curated/orders", output=True)],
        )
    )


def _datasets(data: dict) -> dict[str, dict]:
    return {node["id"]: node for node in data["nodes"] if node["type"] == "DATASET"}


def test_a_saved_model_is_one_node_named_for_its_folder_with_its_parts() -> None:
    data = report_data(build_graph(_pipeline()))
    datasets = _datasets(data)
    model = datasets[MODEL_ID]
    assert (model["label"], model["name"], model["namespace"]) == (
        "order_value_model",
        "models/order_value_model",
        "s3://lake",
    )
    assert [part["name"] for part in model["parts"]] == PARTS
    assert [part["id"] for part in model["parts"]] == [f"dataset:s3://lake:models/order_value_model/{p}" for p in PARTS]
    assert not any(node_id.startswith(MODEL_ID + "/") for node_id in datasets)
    assert {node["label"] for node in datasets.values()} & {"data", "metadata"} == set()
    edges = {(edge["source"], edge["target"]) for edge in data["edges"]}
    assert ("job:emr-lineage-dev:train_model", MODEL_ID) in edges and (MODEL_ID, "job:emr-lineage-dev:score") in edges
    assert not any(MODEL_ID + "/" in end for edge in edges for end in edge)
    assert len(data["edges"]) == len(edges)  # each once
    assert all(key in model for key in ("x", "y", "vx", "vy"))  # laid out as any node


def test_no_two_datasets_share_a_label_without_the_path_part_that_tells_them_apart() -> None:
    data = report_data(build_graph(_pipeline()))
    labels = {node["name"]: node["label"] for node in _datasets(data).values()}
    assert labels["raw/orders"] == "raw/orders"
    assert labels["clean/orders"] == "clean/orders"
    assert labels["curated/orders"] == "curated/orders"
    assert len(set(labels.values())) == len(labels)


def test_a_folder_that_is_not_spark_mls_layout_is_not_folded() -> None:
    """reports/metadata beside reports/summary is not a saved model: each stays a node, told apart."""
    events = app_run(
        "report",
        at(0),
        inputs=[dataset(f"{LAKE}/raw/orders")],
        outputs=[dataset(f"{LAKE}/reports/metadata", output=True), dataset(f"{LAKE}/reports/summary", output=True)],
    )
    labels = {node["name"]: node["label"] for node in _datasets(report_data(build_graph(events))).values()}
    assert labels == {"raw/orders": "orders", "reports/metadata": "reports/metadata", "reports/summary": "summary"}


def test_parts_written_by_different_jobs_are_not_one_save() -> None:
    events = app_run("a", at(0), outputs=[dataset(f"{MODEL}/metadata", output=True)]) + app_run(
        "b", at(5), outputs=[dataset(f"{MODEL}/data", output=True)]
    )
    labels = sorted(node["label"] for node in _datasets(report_data(build_graph(events))).values())
    assert labels == ["order_value_model/data", "order_value_model/metadata"]


@pytest.mark.browser
def test_the_panel_of_the_model_lists_its_parts(tmp_path: Path) -> None:
    """In Chromium: the model's node opened by its link, its parts listed in the panel, no script error."""
    graph = build_graph(_pipeline())
    path = write_html(tmp_path / "model.html", graph, title="model")
    done = chromium(tmp_path, "--dump-dom", f"{path.as_uri()}#node={quote(MODEL_ID)}")
    assert done.returncode == 0 and console_messages(done.stderr) == []
    body = body_tag(done.stdout)
    assert 'data-rendered="7"' in body and "data-errors" not in body  # 3 jobs, 4 datasets
    dom = without_wbr(done.stdout)
    parts = dom.split('class="parts"', 1)[1].split("</ul>", 1)[0]
    assert re.findall(r"<li>([^<]*)</li>", parts) == PARTS
